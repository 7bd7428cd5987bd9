/* IS-like key generation, the plain and the instrumented variant in one process (built plain;
 * is_like_keys.c holds the kernel): ROUNDS rounds of N keys each, the variants' order in ABBA
 * pattern (plain first in rounds 0 and 3 of every four), each run timed alone. Prints one line
 * per round, then both variants' results, which must be equal. */
#include <stdlib.h>
#include "bench_clock.h"

double keys_plain(long n, double *seed);
double keys_instrumented(long n, double *seed);

static long long timed(double (*keys)(long, double *), long n, double *seed, double *sum) {
    long long t0 = bench_now_ns();
    *sum += keys(n, seed);
    return bench_now_ns() - t0;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 50000L;
    long rounds = argc > 2 ? atol(argv[2]) : 400L;
    double seed_plain = 314159265.0, seed_instrumented = 314159265.0;
    double sum_plain = 0, sum_instrumented = 0;
    for (long r = 0; r < rounds; r++) {
        long long plain, instrumented;
        if (r % 4 == 0 || r % 4 == 3) {
            plain = timed(keys_plain, n, &seed_plain, &sum_plain);
            instrumented = timed(keys_instrumented, n, &seed_instrumented, &sum_instrumented);
        } else {
            instrumented = timed(keys_instrumented, n, &seed_instrumented, &sum_instrumented);
            plain = timed(keys_plain, n, &seed_plain, &sum_plain);
        }
        printf("round=%ld plain=%lld instrumented=%lld\n", r, plain, instrumented);
    }
    printf("result plain=%.6f instrumented=%.6f\n", sum_plain, sum_instrumented);
    return 0;
}
