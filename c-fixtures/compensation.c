/* Call-heavy work for compensation tests: main calls step() n times; each step does ~50 ns of
 * independent arithmetic, so the probes cost about as much as the work they measure. */
#include <stdio.h>
#include <stdlib.h>

volatile double sink;

__attribute__((noinline)) double step(double x) {
    double a = x, b = x + 1, c = x + 2, d = x + 3;
    for (int i = 0; i < 24; i++) {
        a = a * 1.0000001 + 0.5;
        b = b * 0.9999999 + 0.25;
        c = c * 1.0000002 - 0.125;
        d = d * 0.9999998 + 0.0625;
    }
    return a + b + c + d;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double s = 0;
    for (long i = 0; i < n; i++)
        s += step((double)(i & 1023));
    sink = s;
    printf("done\n");
    return 0;
}
