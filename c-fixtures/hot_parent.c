/* A hot routine with a child: main calls parent() 100000 times, parent calls leaf() once each
 * time. With callpaths and compensation on, estimating parent's probe cost in place (its counted
 * windows keep it on the shadow stack) must not put leaf's calls on a path main => leaf that
 * the program never takes. */
#include <stdio.h>
#include <stdlib.h>

volatile double sink;

__attribute__((noinline)) double leaf(double x) { return x * 1.000001 + 0.25; }

__attribute__((noinline)) double parent(double x) { return leaf(x) * 0.999999; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    double s = 1.0;
    for (long i = 0; i < n; i++)
        s = parent(s);
    sink = s;
    printf("done\n");
    return 0;
}
