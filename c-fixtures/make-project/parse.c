#include <stdlib.h>
#include "parse.h"

int parse_numbers(const char *text, double *out, int max) {
    int n = 0;
    char *end;
    while (n < max) {
        double v = strtod(text, &end);
        if (end == text)
            break;
        out[n++] = v;
        text = end;
    }
    return n;
}
