/* IS-like: NAS IS makes its keys with four calls of randlc each (bench-nas/common/randdp.c,
 * built as a separate file as in IS): tens of millions of calls of a short routine on a
 * floating-point dependency chain, the case TAU's throttling is for. */
#include <stdlib.h>
#include "bench_clock.h"

double randlc(double *x, double a);

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000L;
    double seed = 314159265.0, a = 1220703125.0, sum = 0;
    long long t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
        double x = randlc(&seed, a);
        x += randlc(&seed, a);
        x += randlc(&seed, a);
        x += randlc(&seed, a);
        sum += x;
    }
    long long t1 = bench_now_ns();
    printf("result=%.6f ns=%lld\n", sum, t1 - t0);
    return 0;
}
