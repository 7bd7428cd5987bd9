/* Kernel timing for the benchmark fixtures: CLOCK_MONOTONIC around the measured kernel only,
 * so process start-up and the profiler's exit work are not counted. */
#include <stdio.h>
#include <time.h>

static long long bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
