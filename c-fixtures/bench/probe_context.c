/* What a probe pair costs in place depends on the code around it (tests/src/bin/probe-context.rs
 * measures it against the start-up calibration). One routine per kind of code, called N times
 * from main:
 *   latency    a floating-point dependency chain (NPB's randlc): the core waits on the chain
 *   throughput a 5x5 block update (BT's matmul_sub): independent multiply-adds fill the core
 *   memory     four independent random increments in a 128 MiB array (IS's key counting):
 *              several cache misses in flight at once */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) double latency(double *x, double a) {
    const double r23 = 1.1920928955078125e-07, t23 = 8388608.0, r46 = r23 * r23, t46 = t23 * t23;
    double t1 = r23 * a, a1 = (int)t1, a2 = a - t23 * a1;
    t1 = r23 * *x;
    double x1 = (int)t1, x2 = *x - t23 * x1;
    t1 = a1 * x2 + a2 * x1;
    double t2 = (int)(r23 * t1), z = t1 - t23 * t2;
    double t3 = t23 * z + a2 * x2, t4 = (int)(r46 * t3);
    *x = t3 - t46 * t4;
    return r46 * *x;
}

__attribute__((noinline)) void throughput(double a[5][5], double b[5][5], double c[5][5]) {
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            c[i][j] = c[i][j] - a[i][0] * b[0][j] - a[i][1] * b[1][j] - a[i][2] * b[2][j] -
                      a[i][3] * b[3][j] - a[i][4] * b[4][j];
}

#define SLOTS (1L << 24)
__attribute__((noinline)) void memory(unsigned *counts, unsigned long *seed) {
    for (int k = 0; k < 4; k++) {
        *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
        counts[(*seed >> 20) & (SLOTS - 1)]++;
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s latency|throughput|memory CALLS\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    double check = 0;
    if (strcmp(argv[1], "latency") == 0) {
        double x = 314159265.0;
        for (long i = 0; i < n; i++)
            check += latency(&x, 1220703125.0);
    } else if (strcmp(argv[1], "throughput") == 0) {
        static double a[5][5], b[5][5], c[5][5];
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                a[i][j] = 1e-3 * (i + j), b[i][j] = 1e-3 * (i * j);
        for (long i = 0; i < n; i++)
            throughput(a, b, c);
        check = c[2][3];
    } else if (strcmp(argv[1], "memory") == 0) {
        unsigned *counts = calloc(SLOTS, sizeof *counts);
        unsigned long seed = 1;
        for (long i = 0; i < n; i++)
            memory(counts, &seed);
        for (long i = 0; i < SLOTS; i += 4097)
            check += counts[i];
        free(counts);
    } else {
        fprintf(stderr, "%s: unknown workload %s\n", argv[0], argv[1]);
        return 2;
    }
    printf("%s %ld %.6e\n", argv[1], n, check);
    return 0;
}
