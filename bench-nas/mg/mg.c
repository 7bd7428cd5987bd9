/*
 * MG: Multigrid kernel (NPB specification, RNR-94-007 s.2.2.4; NPB 3 class
 * sizes).
 *
 * Four V-cycles of a simple multigrid solver for the discrete Poisson
 * problem  del^2 u = v  on a periodic nx*ny*nz grid, where v is zero
 * except at +1/-1 at the ten largest/smallest points of a random field
 * (zran3).  The operators A (resid), P (rprj3), Q (interp) and the
 * smoother S (psinv) are the 27-point stencils of the specification.  The
 * L2 norm of the final residual (norm2u3) is checked against the official
 * NPB value with relative tolerance 1e-8.
 *
 * Arrays are stored with one ghost layer on every side, C order
 * [i3][i2][i1]; comm3 refreshes the periodic ghost layers.
 */
#include "npb-C.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#if CLASS == 'S'
#define NX_DEFAULT 32
#define NIT_DEFAULT 4
#define LT_DEFAULT 5
#define VERIFY_VALUE 0.5307707005734e-04
#elif CLASS == 'W'
#define NX_DEFAULT 128
#define NIT_DEFAULT 4
#define LT_DEFAULT 7
#define VERIFY_VALUE 0.6467329375339e-05
#elif CLASS == 'A'
#define NX_DEFAULT 256
#define NIT_DEFAULT 4
#define LT_DEFAULT 8
#define VERIFY_VALUE 0.2433365309069e-05
#endif

#define MAXLEVEL LT_DEFAULT
#define M (NX_DEFAULT + 2)
#define MM 10

static int nx[MAXLEVEL + 1], ny[MAXLEVEL + 1], nz[MAXLEVEL + 1];
static int m1[MAXLEVEL + 1], m2[MAXLEVEL + 1], m3[MAXLEVEL + 1];
static int lt, lb;
static int is1, is2, is3, ie1, ie2, ie3;

/* per-level grids */
static double *u[MAXLEVEL + 1];
static double *r[MAXLEVEL + 1];
static double *v;

void setup(int *n1, int *n2, int *n3, int k);
void mg3P(double *u[], double *v, double *r[], double a[4], double c[4], int n1, int n2, int n3,
          int k);
void psinv(void *or, void *ou, int n1, int n2, int n3, double c[4], int k);
void resid(void *ou, void *ov, void *or, int n1, int n2, int n3, double a[4], int k);
void rprj3(void *or, int m1k, int m2k, int m3k, void *os, int m1j, int m2j, int m3j, int k);
void interp(void *oz, int mm1, int mm2, int mm3, void *ou, int n1, int n2, int n3, int k);
void norm2u3(void *or, int n1, int n2, int n3, double *rnm2, double *rnmu, int nx, int ny, int nz);
void comm3(void *ou, int n1, int n2, int n3, int kk);
void zran3(void *oz, int n1, int n2, int n3, int nx, int ny, int k);
void zero3(void *oz, int n1, int n2, int n3);
double power(double a, int n);
void bubble(double ten[][2], int j1[][2], int j2[][2], int j3[][2], int m, int ind);

int main(void) {
    int k, it;
    double t, tinit, mflops;
    double a[4], c[4];
    double rnm2, rnmu, epsilon;
    int n1, n2, n3, nit;
    double nn, verify_value, err;
    logical verified;
    int i;

    timer_clear(0);
    timer_clear(1);
    timer_start(0);

    printf("\n\n NAS Parallel Benchmarks (bench-nas C version) - MG Benchmark\n\n");

    lt = LT_DEFAULT;
    nit = NIT_DEFAULT;
    nx[lt] = NX_DEFAULT;
    ny[lt] = NX_DEFAULT;
    nz[lt] = NX_DEFAULT;

    /* Coefficients of the operators A and S (S(a) smoother for classes
     * S, W, A). */
    a[0] = -8.0 / 3.0;
    a[1] = 0.0;
    a[2] = 1.0 / 6.0;
    a[3] = 1.0 / 12.0;

    c[0] = -3.0 / 8.0;
    c[1] = +1.0 / 32.0;
    c[2] = -1.0 / 64.0;
    c[3] = 0.0;

    lb = 1;
    k = lt;

    setup(&n1, &n2, &n3, k);

    for (i = lb; i <= lt; i++) {
        size_t sz = (size_t)m1[i] * m2[i] * m3[i];
        u[i] = malloc(sz * sizeof(double));
        r[i] = malloc(sz * sizeof(double));
        if (!u[i] || !r[i]) {
            fprintf(stderr, "MG: out of memory\n");
            return 1;
        }
    }
    v = malloc((size_t)n1 * n2 * n3 * sizeof(double));
    if (!v) {
        fprintf(stderr, "MG: out of memory\n");
        return 1;
    }

    zero3(u[lt], n1, n2, n3);
    zran3(v, n1, n2, n3, nx[lt], ny[lt], k);

    norm2u3(v, n1, n2, n3, &rnm2, &rnmu, nx[lt], ny[lt], nz[lt]);

    printf(" Size: %4dx%4dx%4d  (class %c)\n", nx[lt], ny[lt], nz[lt], CLASS);
    printf(" Iterations: %3d\n", nit);
    printf("\n");

    resid(u[lt], v, r[lt], n1, n2, n3, a, k);
    norm2u3(r[lt], n1, n2, n3, &rnm2, &rnmu, nx[lt], ny[lt], nz[lt]);

    /* One untimed iteration to touch all code and data pages. */
    mg3P(u, v, r, a, c, n1, n2, n3, k);
    resid(u[lt], v, r[lt], n1, n2, n3, a, k);

    setup(&n1, &n2, &n3, k);
    zero3(u[lt], n1, n2, n3);
    zran3(v, n1, n2, n3, nx[lt], ny[lt], k);

    timer_stop(0);
    tinit = timer_read(0);
    printf(" Initialization time: %15.3f seconds\n\n", tinit);

    timer_start(1);

    resid(u[lt], v, r[lt], n1, n2, n3, a, k);
    norm2u3(r[lt], n1, n2, n3, &rnm2, &rnmu, nx[lt], ny[lt], nz[lt]);

    for (it = 1; it <= nit; it++) {
        if ((it == 1) || (it == nit) || ((it % 5) == 0))
            printf("  iter %3d\n", it);
        mg3P(u, v, r, a, c, n1, n2, n3, k);
        resid(u[lt], v, r[lt], n1, n2, n3, a, k);
    }

    norm2u3(r[lt], n1, n2, n3, &rnm2, &rnmu, nx[lt], ny[lt], nz[lt]);

    timer_stop(1);
    t = timer_read(1);

    verified = FALSE;
    verify_value = VERIFY_VALUE;
    epsilon = 1.0e-8;

    printf("\n Benchmark completed\n");
    err = fabs(rnm2 - verify_value) / verify_value;
    if (err <= epsilon) {
        verified = TRUE;
        printf(" VERIFICATION SUCCESSFUL\n");
        printf(" L2 Norm is %20.13E\n", rnm2);
        printf(" Error is   %20.13E\n", err);
    } else {
        verified = FALSE;
        printf(" VERIFICATION FAILED\n");
        printf(" L2 Norm is             %20.13E\n", rnm2);
        printf(" The correct L2 Norm is %20.13E\n", verify_value);
    }

    nn = 1.0 * nx[lt] * ny[lt] * nz[lt];
    if (t != 0.0)
        mflops = 58.0 * nit * nn * 1.0e-6 / t;
    else
        mflops = 0.0;

    print_results("MG", CLASS, nx[lt], ny[lt], nz[lt], nit, t, mflops, "          floating point",
                  verified);

    for (i = lb; i <= lt; i++) {
        free(u[i]);
        free(r[i]);
    }
    free(v);
    return verified ? 0 : 1;
}

/* Grid sizes of every level (each coarser level halves every dimension). */
void setup(int *n1, int *n2, int *n3, int k) {
    int ax;
    int mi[MAXLEVEL + 1][3];
    int ng[MAXLEVEL + 1][3];

    ng[lt][0] = nx[lt];
    ng[lt][1] = ny[lt];
    ng[lt][2] = nz[lt];
    for (ax = 0; ax < 3; ax++) {
        for (k = lt - 1; k >= 1; k--) {
            ng[k][ax] = ng[k + 1][ax] / 2;
        }
    }
    for (k = lt; k >= 1; k--) {
        nx[k] = ng[k][0];
        ny[k] = ng[k][1];
        nz[k] = ng[k][2];
    }

    for (k = lt; k >= 1; k--) {
        for (ax = 0; ax < 3; ax++) {
            mi[k][ax] = 2 + ng[k][ax];
        }
        m1[k] = mi[k][0];
        m2[k] = mi[k][1];
        m3[k] = mi[k][2];
    }

    k = lt;
    is1 = 2 + ng[k][0] - ng[lt][0];
    ie1 = 1 + ng[k][0];
    *n1 = 3 + ie1 - is1;
    is2 = 2 + ng[k][1] - ng[lt][1];
    ie2 = 1 + ng[k][1];
    *n2 = 3 + ie2 - is2;
    is3 = 2 + ng[k][2] - ng[lt][2];
    ie3 = 1 + ng[k][2];
    *n3 = 3 + ie3 - is3;
}

/* One V-cycle: restrict residuals down to the coarsest level, smooth,
 * then interpolate corrections back up, smoothing at each level. */
void mg3P(double *u[], double *v, double *r[], double a[4], double c[4], int n1, int n2, int n3,
          int k) {
    int j;

    /* Down cycle: restrict the residual from fine to coarse grids. */
    for (k = lt; k >= lb + 1; k--) {
        j = k - 1;
        rprj3(r[k], m1[k], m2[k], m3[k], r[j], m1[j], m2[j], m3[j], k);
    }

    k = lb;
    /* Approximate solution on the coarsest grid. */
    zero3(u[k], m1[k], m2[k], m3[k]);
    psinv(r[k], u[k], m1[k], m2[k], m3[k], c, k);

    for (k = lb + 1; k <= lt - 1; k++) {
        j = k - 1;
        /* Prolongate from level k-1 to k. */
        zero3(u[k], m1[k], m2[k], m3[k]);
        interp(u[j], m1[j], m2[j], m3[j], u[k], m1[k], m2[k], m3[k], k);
        /* Residual for level k. */
        resid(u[k], r[k], r[k], m1[k], m2[k], m3[k], a, k);
        /* Smooth. */
        psinv(r[k], u[k], m1[k], m2[k], m3[k], c, k);
    }

    j = lt - 1;
    k = lt;
    interp(u[j], m1[j], m2[j], m3[j], u[lt], n1, n2, n3, k);
    resid(u[lt], v, r[lt], n1, n2, n3, a, k);
    psinv(r[lt], u[lt], n1, n2, n3, c, k);
}

/* Smoother: u = u + S r, with S the 27-point operator with coefficients
 * c[0..3] (c[3] == 0 is assumed). */
void psinv(void *or, void *ou, int n1, int n2, int n3, double c[4], int k) {
    double (*r)[n2][n1] = (double (*)[n2][n1])or;
    double (*u)[n2][n1] = (double (*)[n2][n1])ou;
    int i3, i2, i1;
    double r1[M], r2[M];

    for (i3 = 1; i3 < n3 - 1; i3++) {
        for (i2 = 1; i2 < n2 - 1; i2++) {
            for (i1 = 0; i1 < n1; i1++) {
                r1[i1] =
                    r[i3][i2 - 1][i1] + r[i3][i2 + 1][i1] + r[i3 - 1][i2][i1] + r[i3 + 1][i2][i1];
                r2[i1] = r[i3 - 1][i2 - 1][i1] + r[i3 - 1][i2 + 1][i1] + r[i3 + 1][i2 - 1][i1] +
                         r[i3 + 1][i2 + 1][i1];
            }
            for (i1 = 1; i1 < n1 - 1; i1++) {
                u[i3][i2][i1] = u[i3][i2][i1] + c[0] * r[i3][i2][i1] +
                                c[1] * (r[i3][i2][i1 - 1] + r[i3][i2][i1 + 1] + r1[i1]) +
                                c[2] * (r2[i1] + r1[i1 - 1] + r1[i1 + 1]);
            }
        }
    }

    comm3(u, n1, n2, n3, k);
}

/* Residual r = v - A u, with A the 27-point operator with coefficients
 * a[0..3] (a[1] == 0 is assumed).  v and r may be the same array. */
void resid(void *ou, void *ov, void *or, int n1, int n2, int n3, double a[4], int k) {
    double (*u)[n2][n1] = (double (*)[n2][n1])ou;
    double (*v)[n2][n1] = (double (*)[n2][n1])ov;
    double (*r)[n2][n1] = (double (*)[n2][n1])or;
    int i3, i2, i1;
    double u1[M], u2[M];

    for (i3 = 1; i3 < n3 - 1; i3++) {
        for (i2 = 1; i2 < n2 - 1; i2++) {
            for (i1 = 0; i1 < n1; i1++) {
                u1[i1] =
                    u[i3][i2 - 1][i1] + u[i3][i2 + 1][i1] + u[i3 - 1][i2][i1] + u[i3 + 1][i2][i1];
                u2[i1] = u[i3 - 1][i2 - 1][i1] + u[i3 - 1][i2 + 1][i1] + u[i3 + 1][i2 - 1][i1] +
                         u[i3 + 1][i2 + 1][i1];
            }
            for (i1 = 1; i1 < n1 - 1; i1++) {
                r[i3][i2][i1] = v[i3][i2][i1] - a[0] * u[i3][i2][i1] -
                                a[2] * (u2[i1] + u1[i1 - 1] + u1[i1 + 1]) -
                                a[3] * (u2[i1 - 1] + u2[i1 + 1]);
            }
        }
    }

    comm3(r, n1, n2, n3, k);
}

/* Restriction s = P r from the fine grid k to the coarse grid k-1 (full
 * weighting, 27-point). */
void rprj3(void *or, int m1k, int m2k, int m3k, void *os, int m1j, int m2j, int m3j, int k) {
    double (*r)[m2k][m1k] = (double (*)[m2k][m1k])or;
    double (*s)[m2j][m1j] = (double (*)[m2j][m1j])os;
    int j3, j2, j1, i3, i2, i1, d1, d2, d3, j;
    double x1[M], y1[M], x2, y2;

    if (m1k == 3)
        d1 = 2;
    else
        d1 = 1;
    if (m2k == 3)
        d2 = 2;
    else
        d2 = 1;
    if (m3k == 3)
        d3 = 2;
    else
        d3 = 1;

    for (j3 = 1; j3 < m3j - 1; j3++) {
        i3 = 2 * j3 - d3;
        for (j2 = 1; j2 < m2j - 1; j2++) {
            i2 = 2 * j2 - d2;
            for (j1 = 1; j1 < m1j; j1++) {
                i1 = 2 * j1 - d1;
                x1[i1] = r[i3 + 1][i2][i1] + r[i3 + 1][i2 + 2][i1] + r[i3][i2 + 1][i1] +
                         r[i3 + 2][i2 + 1][i1];
                y1[i1] =
                    r[i3][i2][i1] + r[i3 + 2][i2][i1] + r[i3][i2 + 2][i1] + r[i3 + 2][i2 + 2][i1];
            }
            for (j1 = 1; j1 < m1j - 1; j1++) {
                i1 = 2 * j1 - d1;
                y2 = r[i3][i2][i1 + 1] + r[i3 + 2][i2][i1 + 1] + r[i3][i2 + 2][i1 + 1] +
                     r[i3 + 2][i2 + 2][i1 + 1];
                x2 = r[i3 + 1][i2][i1 + 1] + r[i3 + 1][i2 + 2][i1 + 1] + r[i3][i2 + 1][i1 + 1] +
                     r[i3 + 2][i2 + 1][i1 + 1];
                s[j3][j2][j1] = 0.5 * r[i3 + 1][i2 + 1][i1 + 1] +
                                0.25 * (r[i3 + 1][i2 + 1][i1] + r[i3 + 1][i2 + 1][i1 + 2] + x2) +
                                0.125 * (x1[i1] + x1[i1 + 2] + y2) + 0.0625 * (y1[i1] + y1[i1 + 2]);
            }
        }
    }

    j = k - 1;
    comm3(s, m1j, m2j, m3j, j);
}

/* Prolongation u = u + Q z from the coarse grid k-1 to the fine grid k
 * (trilinear interpolation). */
void interp(void *oz, int mm1, int mm2, int mm3, void *ou, int n1, int n2, int n3, int k) {
    double (*z)[mm2][mm1] = (double (*)[mm2][mm1])oz;
    double (*u)[n2][n1] = (double (*)[n2][n1])ou;
    int i3, i2, i1, d1 = 0, d2 = 0, d3 = 0, t1 = 0, t2 = 0, t3 = 0;
    double z1[M], z2[M], z3[M];

    (void)k;
    if (n1 != 3 && n2 != 3 && n3 != 3) {
        for (i3 = 0; i3 < mm3 - 1; i3++) {
            for (i2 = 0; i2 < mm2 - 1; i2++) {
                for (i1 = 0; i1 < mm1; i1++) {
                    z1[i1] = z[i3][i2 + 1][i1] + z[i3][i2][i1];
                    z2[i1] = z[i3 + 1][i2][i1] + z[i3][i2][i1];
                    z3[i1] = z[i3 + 1][i2 + 1][i1] + z[i3 + 1][i2][i1] + z1[i1];
                }
                for (i1 = 0; i1 < mm1 - 1; i1++) {
                    u[2 * i3][2 * i2][2 * i1] += z[i3][i2][i1];
                    u[2 * i3][2 * i2][2 * i1 + 1] += 0.5 * (z[i3][i2][i1 + 1] + z[i3][i2][i1]);
                }
                for (i1 = 0; i1 < mm1 - 1; i1++) {
                    u[2 * i3][2 * i2 + 1][2 * i1] += 0.5 * z1[i1];
                    u[2 * i3][2 * i2 + 1][2 * i1 + 1] += 0.25 * (z1[i1] + z1[i1 + 1]);
                }
                for (i1 = 0; i1 < mm1 - 1; i1++) {
                    u[2 * i3 + 1][2 * i2][2 * i1] += 0.5 * z2[i1];
                    u[2 * i3 + 1][2 * i2][2 * i1 + 1] += 0.25 * (z2[i1] + z2[i1 + 1]);
                }
                for (i1 = 0; i1 < mm1 - 1; i1++) {
                    u[2 * i3 + 1][2 * i2 + 1][2 * i1] += 0.25 * z3[i1];
                    u[2 * i3 + 1][2 * i2 + 1][2 * i1 + 1] += 0.125 * (z3[i1] + z3[i1 + 1]);
                }
            }
        }
    } else {
        /* A dimension with a single interior point never occurs for the
         * cubic power-of-two grids of classes S, W and A. */
        (void)d1;
        (void)d2;
        (void)d3;
        (void)t1;
        (void)t2;
        (void)t3;
        fprintf(stderr, "interp: degenerate grid not supported\n");
        exit(EXIT_FAILURE);
    }
}

/* L2 norm (rnm2, normalised by the number of points) and max norm (rnmu)
 * of the interior of r. */
void norm2u3(void *or, int n1, int n2, int n3, double *rnm2, double *rnmu, int nx, int ny, int nz) {
    double (*r)[n2][n1] = (double (*)[n2][n1])or;
    double s, a;
    int i3, i2, i1;
    double dn;

    dn = 1.0 * nx * ny * nz;
    s = 0.0;
    *rnmu = 0.0;
    for (i3 = 1; i3 < n3 - 1; i3++) {
        for (i2 = 1; i2 < n2 - 1; i2++) {
            for (i1 = 1; i1 < n1 - 1; i1++) {
                s = s + r[i3][i2][i1] * r[i3][i2][i1];
                a = fabs(r[i3][i2][i1]);
                if (a > *rnmu)
                    *rnmu = a;
            }
        }
    }
    *rnm2 = sqrt(s / dn);
}

/* Periodic boundary exchange on the ghost layers. */
void comm3(void *ou, int n1, int n2, int n3, int kk) {
    double (*u)[n2][n1] = (double (*)[n2][n1])ou;
    int i1, i2, i3;

    (void)kk;
    for (i3 = 1; i3 < n3 - 1; i3++) {
        for (i2 = 1; i2 < n2 - 1; i2++) {
            u[i3][i2][0] = u[i3][i2][n1 - 2];
            u[i3][i2][n1 - 1] = u[i3][i2][1];
        }
    }
    for (i3 = 1; i3 < n3 - 1; i3++) {
        for (i1 = 0; i1 < n1; i1++) {
            u[i3][0][i1] = u[i3][n2 - 2][i1];
            u[i3][n2 - 1][i1] = u[i3][1][i1];
        }
    }
    for (i2 = 0; i2 < n2; i2++) {
        for (i1 = 0; i1 < n1; i1++) {
            u[0][i2][i1] = u[n3 - 2][i2][i1];
            u[n3 - 1][i2][i1] = u[1][i2][i1];
        }
    }
}

/*
 * Right-hand side: fill the grid with the NPB random sequence
 * (a = 5^13, seed 314159265, one value per grid point in Fortran order),
 * then set the ten largest points to +1, the ten smallest to -1 and all
 * others to 0.
 */
void zran3(void *oz, int n1, int n2, int n3, int nx, int ny, int k) {
    double (*z)[n2][n1] = (double (*)[n2][n1])oz;
    int i0, mm0, mm1;
    int i1, i2, i3, d1, e1, e2, e3;
    double xx, x0, x1, a1, a2, ai;
    double ten[MM][2], best;
    int i, j1[MM][2], j2[MM][2], j3[MM][2];
    int jg[4][MM][2];
    const double a = pow(5.0, 13.0);
    const double x = 314159265.0;

    a1 = power(a, nx);
    a2 = power(a, nx * ny);

    zero3(z, n1, n2, n3);

    i = is1 - 2 + nx * (is2 - 2 + ny * (is3 - 2));

    ai = power(a, i);
    d1 = ie1 - is1 + 1;
    e1 = ie1 - is1 + 2;
    e2 = ie2 - is2 + 2;
    e3 = ie3 - is3 + 2;
    (void)e1;
    x0 = x;
    randlc(&x0, ai);
    for (i3 = 1; i3 < e3; i3++) {
        x1 = x0;
        for (i2 = 1; i2 < e2; i2++) {
            xx = x1;
            vranlc(d1, &xx, a, &(z[i3][i2][1]));
            randlc(&x1, a1);
        }
        randlc(&x0, a2);
    }

    /* Keep the MM largest and MM smallest values (sorted lists). */
    for (i = 0; i < MM; i++) {
        ten[i][1] = 0.0;
        j1[i][1] = 0;
        j2[i][1] = 0;
        j3[i][1] = 0;
        ten[i][0] = 1.0;
        j1[i][0] = 0;
        j2[i][0] = 0;
        j3[i][0] = 0;
    }

    for (i3 = 1; i3 < n3 - 1; i3++) {
        for (i2 = 1; i2 < n2 - 1; i2++) {
            for (i1 = 1; i1 < n1 - 1; i1++) {
                if (z[i3][i2][i1] > ten[0][1]) {
                    ten[0][1] = z[i3][i2][i1];
                    j1[0][1] = i1;
                    j2[0][1] = i2;
                    j3[0][1] = i3;
                    bubble(ten, j1, j2, j3, MM, 1);
                }
                if (z[i3][i2][i1] < ten[0][0]) {
                    ten[0][0] = z[i3][i2][i1];
                    j1[0][0] = i1;
                    j2[0][0] = i2;
                    j3[0][0] = i3;
                    bubble(ten, j1, j2, j3, MM, 0);
                }
            }
        }
    }

    /* Global positions of the selected points (one process here). */
    i1 = MM - 1;
    i0 = MM - 1;
    for (i = MM - 1; i >= 0; i--) {
        best = 0.0;
        if (best < ten[i1][1]) {
            jg[0][i][1] = 0;
            jg[1][i][1] = is1 - 2 + j1[i1][1];
            jg[2][i][1] = is2 - 2 + j2[i1][1];
            jg[3][i][1] = is3 - 2 + j3[i1][1];
            i1 = i1 - 1;
        } else {
            jg[0][i][1] = 0;
            jg[1][i][1] = 0;
            jg[2][i][1] = 0;
            jg[3][i][1] = 0;
        }
        best = 1.0;
        if (best > ten[i0][0]) {
            jg[0][i][0] = 0;
            jg[1][i][0] = is1 - 2 + j1[i0][0];
            jg[2][i][0] = is2 - 2 + j2[i0][0];
            jg[3][i][0] = is3 - 2 + j3[i0][0];
            i0 = i0 - 1;
        } else {
            jg[0][i][0] = 0;
            jg[1][i][0] = 0;
            jg[2][i][0] = 0;
            jg[3][i][0] = 0;
        }
    }

    mm1 = 0;
    mm0 = 0;

    zero3(z, n1, n2, n3);
    for (i = MM - 1; i >= mm0; i--) {
        z[jg[3][i][0]][jg[2][i][0]][jg[1][i][0]] = -1.0;
    }
    for (i = MM - 1; i >= mm1; i--) {
        z[jg[3][i][1]][jg[2][i][1]][jg[1][i][1]] = +1.0;
    }
    comm3(z, n1, n2, n3, k);
}

/* a^n (mod 2^46) by binary exponentiation with randlc. */
double power(double a, int n) {
    double aj;
    int nj;
    double pw;

    pw = 1.0;
    nj = n;
    aj = a;
    while (nj != 0) {
        if ((nj % 2) == 1)
            randlc(&pw, aj);
        randlc(&aj, aj);
        nj = nj / 2;
    }
    return pw;
}

/* Keep ten[.][ind] sorted after replacing its first entry: ascending for
 * the largest values (ind 1), descending for the smallest (ind 0). */
void bubble(double ten[][2], int j1[][2], int j2[][2], int j3[][2], int m, int ind) {
    double temp;
    int i, j_temp;

    if (ind == 1) {
        for (i = 0; i < m - 1; i++) {
            if (ten[i][ind] > ten[i + 1][ind]) {
                temp = ten[i + 1][ind];
                ten[i + 1][ind] = ten[i][ind];
                ten[i][ind] = temp;
                j_temp = j1[i + 1][ind];
                j1[i + 1][ind] = j1[i][ind];
                j1[i][ind] = j_temp;
                j_temp = j2[i + 1][ind];
                j2[i + 1][ind] = j2[i][ind];
                j2[i][ind] = j_temp;
                j_temp = j3[i + 1][ind];
                j3[i + 1][ind] = j3[i][ind];
                j3[i][ind] = j_temp;
            } else {
                return;
            }
        }
    } else {
        for (i = 0; i < m - 1; i++) {
            if (ten[i][ind] < ten[i + 1][ind]) {
                temp = ten[i + 1][ind];
                ten[i + 1][ind] = ten[i][ind];
                ten[i][ind] = temp;
                j_temp = j1[i + 1][ind];
                j1[i + 1][ind] = j1[i][ind];
                j1[i][ind] = j_temp;
                j_temp = j2[i + 1][ind];
                j2[i + 1][ind] = j2[i][ind];
                j2[i][ind] = j_temp;
                j_temp = j3[i + 1][ind];
                j3[i + 1][ind] = j3[i][ind];
                j3[i][ind] = j_temp;
            } else {
                return;
            }
        }
    }
}

/* Zero the whole array including ghost layers. */
void zero3(void *oz, int n1, int n2, int n3) {
    double (*z)[n2][n1] = (double (*)[n2][n1])oz;
    int i1, i2, i3;

    for (i3 = 0; i3 < n3; i3++)
        for (i2 = 0; i2 < n2; i2++)
            for (i1 = 0; i1 < n1; i1++)
                z[i3][i2][i1] = 0.0;
}
