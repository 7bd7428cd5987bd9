/* A call statement to an uninstrumented leaf, executed n times: with call-statement events
 * only, the cost of a call-statement event is what instrumentation adds per call. */
#include <stdlib.h>
#include "bench_clock.h"

__attribute__((noinline, annotate("no_instrument"))) unsigned leaf(unsigned x) { return x * 2654435761u + 1; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000000L;
    unsigned acc = 1;
    long long t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
        acc = leaf(acc);
    long long t1 = bench_now_ns();
    printf("result=%u ns=%lld\n", acc, t1 - t0);
    return 0;
}
