/*
 * randlc / vranlc: the NPB pseudo-random number generator.
 *
 * The generator is the linear congruential recursion
 *     x_{k+1} = a * x_k  (mod 2^46)
 * and returns x_{k+1} * 2^-46 in (0,1).  As described in the NPB report
 * (RNR-94-007, section 2.1), the product is formed exactly in IEEE double
 * precision by splitting both factors into 23-bit halves.
 *
 * These are ordinary external functions on purpose (never inline): the
 * profiling project measures the overhead of calls to them.
 */
#include "npb-C.h"

static const double r23 = 1.1920928955078125e-07; /* 2^-23 */
static const double r46 = 1.1920928955078125e-07 * 1.1920928955078125e-07;
static const double t23 = 8388608.0;             /* 2^23 */
static const double t46 = 8388608.0 * 8388608.0; /* 2^46 */

double randlc(double *x, double a) {
    double t1, t2, t3, t4, a1, a2, x1, x2, z;

    /* Break A into two parts such that A = 2^23 * A1 + A2. */
    t1 = r23 * a;
    a1 = (int)t1;
    a2 = a - t23 * a1;

    /* Break X into two parts such that X = 2^23 * X1 + X2, compute
     * Z = A1 * X2 + A2 * X1 (mod 2^23), and then
     * X = 2^23 * Z + A2 * X2 (mod 2^46). */
    t1 = r23 * (*x);
    x1 = (int)t1;
    x2 = *x - t23 * x1;
    t1 = a1 * x2 + a2 * x1;
    t2 = (int)(r23 * t1);
    z = t1 - t23 * t2;
    t3 = t23 * z + a2 * x2;
    t4 = (int)(r46 * t3);
    *x = t3 - t46 * t4;

    return r46 * (*x);
}

/* Generate n successive values of the sequence into y[0..n-1]; x is
 * updated to the last seed. */
void vranlc(int n, double *x, double a, double y[]) {
    double t1, t2, t3, t4, a1, a2, x1, x2, z;
    double xx = *x;
    int i;

    t1 = r23 * a;
    a1 = (int)t1;
    a2 = a - t23 * a1;

    for (i = 0; i < n; i++) {
        t1 = r23 * xx;
        x1 = (int)t1;
        x2 = xx - t23 * x1;
        t1 = a1 * x2 + a2 * x1;
        t2 = (int)(r23 * t1);
        z = t1 - t23 * t2;
        t3 = t23 * z + a2 * x2;
        t4 = (int)(r46 * t3);
        xx = t3 - t46 * t4;
        y[i] = r46 * xx;
    }
    *x = xx;
}
