/* One loop execution (of one iteration) per call of inner(): with loop events only, the cost
 * of a loop event is what instrumentation adds per call. */
#include <stdlib.h>
#include "bench_clock.h"

__attribute__((noinline)) unsigned inner(unsigned x, int k) {
    for (int i = 0; i < k; i++)
        x = x * 2654435761u + 1;
    return x;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000000L;
    int k = argc > 2 ? atoi(argv[2]) : 1;
    unsigned acc = 1;
    long long t0 = bench_now_ns();
    for (long i = 0; i < n; i++)
        acc = inner(acc, k);
    long long t1 = bench_now_ns();
    printf("result=%u ns=%lld\n", acc, t1 - t0);
    return 0;
}
