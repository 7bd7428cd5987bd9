/* The cost floor: two reads of the clock as the runtime reads it (rdtsc at an
 * entry, rdtscp at an exit), back to back, n times. */
#include <stdlib.h>
#include <x86intrin.h>
#include "bench_clock.h"

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000000L;
    unsigned long long acc = 0;
    unsigned aux;
    long long t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        acc += __rdtsc();
        acc ^= __rdtscp(&aux);
    }
    long long t1 = bench_now_ns();
    printf("result=%llu ns=%lld\n", acc & 1, t1 - t0);
    return 0;
}
