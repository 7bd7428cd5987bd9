double mean(const double *v, int n);
double stddev(const double *v, int n);
