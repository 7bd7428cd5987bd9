/* Call-heavy work for compensation tests: main calls step() n times, each call continuing the
 * previous one's result (one loop-carried dependency chain, as randlc's seed in NPB IS), about
 * 25 ns of arithmetic per call: the probes cost about as much as the work they measure.
 *
 * With a second argument, main alternates rounds of n/16 calls of step with as many of an
 * uninstrumented copy of it, and prints the copy's rounds' wall time in ns to stderr
 * (`plain_ns N`): what the calls take without probes, in the same process and the same phases of
 * the machine. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile double sink;

__attribute__((noinline)) double step(double x) {
    for (int i = 0; i < 8; i++)
        x = x * 0.999999 + 0.5;
    return x;
}

__attribute__((noinline, annotate("no_instrument"))) double step_plain(double x) {
    for (int i = 0; i < 8; i++)
        x = x * 0.999999 + 0.5;
    return x;
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static double alternated(long n, double s) {
    long plain = 0;
    for (int round = 0; round < 16; round++) {
        long start = now_ns();
        for (long i = 0; i < n / 16; i++)
            s = step_plain(s);
        plain += now_ns() - start;
        for (long i = 0; i < n / 16; i++)
            s = step(s);
    }
    fprintf(stderr, "plain_ns %ld\n", plain);
    return s;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    double s = 1.0;
    if (argc > 2)
        s = alternated(n, s);
    else
        for (long i = 0; i < n; i++)
            s = step(s);
    sink = s;
    printf("done\n");
    return 0;
}
