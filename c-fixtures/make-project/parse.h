int parse_numbers(const char *text, double *out, int max);
