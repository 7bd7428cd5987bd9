#include <stdio.h>
#include "parse.h"
#include "stats.h"

int main(void) {
    double v[16];
    int n = parse_numbers("2 4 4 4 5 5 7 9", v, 16);
    printf("n=%d mean=%.2f stddev=%.2f\n", n, mean(v, n), stddev(v, n));
    return 0;
}
