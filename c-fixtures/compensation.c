/* Call-heavy work for compensation tests: main calls step() n times, each call continuing the
 * previous one's result (one loop-carried dependency chain, as randlc's seed in NPB IS), about
 * 25 ns of arithmetic per call: the probes cost about as much as the work they measure. */
#include <stdio.h>
#include <stdlib.h>

volatile double sink;

__attribute__((noinline)) double step(double x) {
    for (int i = 0; i < 8; i++)
        x = x * 0.999999 + 0.5;
    return x;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double s = 1.0;
    for (long i = 0; i < n; i++)
        s = step(s);
    sink = s;
    printf("done\n");
    return 0;
}
