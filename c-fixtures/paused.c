/* A routine throttled just before a pause: main calls batch(x, FIRST) (FIRST 2000 by default:
 * step() is throttled at its 1000th call, when the runtime starts estimating it in place),
 * busy-waits 80 ms without a probe, calls batch(x, 1) (its timed exit is the first after the
 * runtime's 50 ms deadline, which finds the estimation stale), then batch(x, 50000) until MS
 * milliseconds have passed (default 300). Run `paused MS FIRST` with throttling off and FIRST
 * just past 16384, the first power of four at which a measured routine is estimated, and the
 * pause comes while step's first estimation runs. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "include/instrument.h"

__attribute__((noinline)) unsigned long long step(unsigned long long x) {
    return x * 6364136223846793005ULL + 1442695040888963407ULL;
}

__attribute__((noinline)) unsigned long long batch(unsigned long long x, int n) {
    for (int i = 0; i < n; i++)
        x = step(x);
    return x;
}

/* A helper, not part of the measured call structure. */
INSTRUMENT_OFF static double milliseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
    double ms = argc > 1 ? atof(argv[1]) : 300;
    int first = argc > 2 ? atoi(argv[2]) : 2000;
    unsigned long long x = batch(1, first);
    double pause = milliseconds() + 80;
    while (milliseconds() < pause) {
    }
    x = batch(x, 1);
    double end = milliseconds() + ms;
    long batches = 0;
    while (milliseconds() < end) {
        x = batch(x, 50000);
        batches++;
    }
    printf("%ld batches, checksum %llu\n", batches, x);
    return 0;
}
