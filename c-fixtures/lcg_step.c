/* A 46-bit linear congruential step done in doubles, as NPB's generator does it: the seed and
 * the multiplier are each split into 23-bit halves by the same chain of operations, which the
 * plain -O2 build pairs into vector instructions (LLVM's SLP vectoriser, seeded from the value
 * the routine returns). Early placement must leave that pairing alone: an exit guard that split
 * the returning block from the computation used to leave the routine scalar. */
#include <stdio.h>

#define R23 0x1p-23
#define T23 0x1p23
#define R46 0x1p-46
#define T46 0x1p46

__attribute__((noinline)) double lcg_step(double *seed, double a) {
    double a1 = (int)(R23 * a), a2 = a - T23 * a1;
    double x1 = (int)(R23 * *seed), x2 = *seed - T23 * x1;
    double t1 = a1 * x2 + a2 * x1;
    double z = t1 - T23 * (int)(R23 * t1);
    double t3 = T23 * z + a2 * x2;
    *seed = t3 - T46 * (int)(R46 * t3);
    return R46 * *seed;
}

int main(void) {
    double seed = 314159265.0, sum = 0.0;
    for (int i = 0; i < 1000; i++)
        sum += lcg_step(&seed, 1220703125.0);
    printf("%.9f\n", sum);
    return 0;
}
