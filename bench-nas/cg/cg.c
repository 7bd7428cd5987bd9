/*
 * CG: Conjugate Gradient kernel (NPB specification, RNR-94-007 s.2.2.3).
 *
 * Estimate the smallest eigenvalue of a large sparse symmetric positive
 * definite matrix with inverse power iteration; each outer iteration solves
 * A z = x with 25 unpreconditioned CG iterations (conj_grad).  The matrix
 * is built by makea from NONZER-sparse random vectors (sprnvc, vecset) and
 * assembled into compressed row storage by sparse.  zeta is checked against
 * the official NPB value with relative tolerance 1e-10.
 */
#include "npb-C.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#if CLASS == 'S'
#define NA 1400
#define NONZER 7
#define NITER 15
#define SHIFT 10.0
#define ZETA_VERIFY_VALUE 8.5971775078648
#elif CLASS == 'W'
#define NA 7000
#define NONZER 8
#define NITER 15
#define SHIFT 12.0
#define ZETA_VERIFY_VALUE 10.362595087124
#elif CLASS == 'A'
#define NA 14000
#define NONZER 11
#define NITER 15
#define SHIFT 20.0
#define ZETA_VERIFY_VALUE 17.130235054029
#endif

#define RCOND 1.0e-1
#define NZ (NA * (NONZER + 1) * (NONZER + 1))
#define NAZ (NA * (NONZER + 1))

static int colidx[NZ];
static int rowstr[NA + 1];
static int iv[NA];
static int arow[NA];
static int acol[NA][NONZER + 1];
static double aelt[NA][NONZER + 1];
static double a[NZ];
static double x[NA + 2];
static double z[NA + 2];
static double p[NA + 2];
static double q[NA + 2];
static double r[NA + 2];

static int naa, nzz;
static int firstrow, lastrow, firstcol, lastcol;
static double amult, tran;

void conj_grad(int colidx[], int rowstr[], double x[], double z[], double a[], double p[],
               double q[], double r[], double *rnorm);
void makea(int n, int nz, double a[], int colidx[], int rowstr[], int firstrow, int lastrow,
           int firstcol, int lastcol, int arow[], int acol[][NONZER + 1], double aelt[][NONZER + 1],
           int iv[]);
void sparse(double a[], int colidx[], int rowstr[], int n, int nz, int nozer, int arow[],
            int acol[][NONZER + 1], double aelt[][NONZER + 1], int firstrow, int lastrow,
            int nzloc[], double rcond, double shift);
void sprnvc(int n, int nz, int nn1, double v[], int iv[]);
int icnvrt(double x, int ipwr2);
void vecset(int n, double v[], int iv[], int *nzv, int i, double val);

int main(void) {
    int i, j, k, it;
    double zeta;
    double rnorm;
    double norm_temp1, norm_temp2;
    double t, mflops;
    logical verified;
    double zeta_verify_value, epsilon, err;

    firstrow = 0;
    lastrow = NA - 1;
    firstcol = 0;
    lastcol = NA - 1;
    zeta_verify_value = ZETA_VERIFY_VALUE;

    printf("\n\n NAS Parallel Benchmarks (bench-nas C version) - CG Benchmark\n\n");
    printf(" Size: %11d\n", NA);
    printf(" Iterations: %5d\n", NITER);

    naa = NA;
    nzz = NZ;

    /* Initialize the random number generator. */
    tran = 314159265.0;
    amult = 1220703125.0;
    zeta = randlc(&tran, amult);

    makea(naa, nzz, a, colidx, rowstr, firstrow, lastrow, firstcol, lastcol, arow, acol, aelt, iv);

    /* Shift column indices to local numbering (a no-op serially). */
    for (j = 0; j < lastrow - firstrow + 1; j++)
        for (k = rowstr[j]; k < rowstr[j + 1]; k++)
            colidx[k] = colidx[k] - firstcol;

    for (i = 0; i < NA + 1; i++)
        x[i] = 1.0;
    for (j = 0; j < lastcol - firstcol + 1; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = 0.0;
        p[j] = 0.0;
    }
    zeta = 0.0;

    /* One untimed iteration to touch code and data pages. */
    for (it = 1; it <= 1; it++) {
        conj_grad(colidx, rowstr, x, z, a, p, q, r, &rnorm);
        norm_temp1 = 0.0;
        norm_temp2 = 0.0;
        for (j = 0; j < lastcol - firstcol + 1; j++) {
            norm_temp1 = norm_temp1 + x[j] * z[j];
            norm_temp2 = norm_temp2 + z[j] * z[j];
        }
        norm_temp2 = 1.0 / sqrt(norm_temp2);
        for (j = 0; j < lastcol - firstcol + 1; j++)
            x[j] = norm_temp2 * z[j];
    }

    /* Reset the starting vector. */
    for (i = 0; i < NA + 1; i++)
        x[i] = 1.0;
    zeta = 0.0;

    timer_clear(1);
    timer_start(1);

    for (it = 1; it <= NITER; it++) {
        conj_grad(colidx, rowstr, x, z, a, p, q, r, &rnorm);

        /* zeta = shift + 1/(x.z); x = z/||z|| */
        norm_temp1 = 0.0;
        norm_temp2 = 0.0;
        for (j = 0; j < lastcol - firstcol + 1; j++) {
            norm_temp1 = norm_temp1 + x[j] * z[j];
            norm_temp2 = norm_temp2 + z[j] * z[j];
        }
        norm_temp2 = 1.0 / sqrt(norm_temp2);
        zeta = SHIFT + 1.0 / norm_temp1;
        if (it == 1)
            printf("\n   iteration           ||r||                 zeta\n");
        printf("    %5d       %20.14E%20.13f\n", it, rnorm, zeta);

        for (j = 0; j < lastcol - firstcol + 1; j++)
            x[j] = norm_temp2 * z[j];
    }

    timer_stop(1);
    t = timer_read(1);

    printf(" Benchmark completed\n");
    epsilon = 1.0e-10;
    err = fabs(zeta - zeta_verify_value) / zeta_verify_value;
    if (err <= epsilon) {
        verified = TRUE;
        printf(" VERIFICATION SUCCESSFUL\n");
        printf(" Zeta is    %20.13E\n", zeta);
        printf(" Error is   %20.13E\n", err);
    } else {
        verified = FALSE;
        printf(" VERIFICATION FAILED\n");
        printf(" Zeta                %20.13E\n", zeta);
        printf(" The correct zeta is %20.13E\n", zeta_verify_value);
    }

    if (t != 0.0) {
        mflops = (double)(2 * NITER * NA) *
                 (3.0 + (double)(NONZER * (NONZER + 1)) +
                  25.0 * (5.0 + (double)(NONZER * (NONZER + 1))) + 3.0) /
                 t / 1000000.0;
    } else {
        mflops = 0.0;
    }

    print_results("CG", CLASS, NA, 0, 0, NITER, t, mflops, "          floating point", verified);
    return verified ? 0 : 1;
}

/* Solve A z = x approximately with 25 CG iterations; return ||x - A z||. */
void conj_grad(int colidx[], int rowstr[], double x[], double z[], double a[], double p[],
               double q[], double r[], double *rnorm) {
    int j, k;
    int cgit, cgitmax = 25;
    double d, sum, rho, rho0, alpha, beta;

    rho = 0.0;

    for (j = 0; j < naa + 1; j++) {
        q[j] = 0.0;
        z[j] = 0.0;
        r[j] = x[j];
        p[j] = r[j];
    }

    /* rho = r.r */
    for (j = 0; j < lastcol - firstcol + 1; j++)
        rho = rho + r[j] * r[j];

    for (cgit = 1; cgit <= cgitmax; cgit++) {
        /* q = A.p */
        for (j = 0; j < lastrow - firstrow + 1; j++) {
            sum = 0.0;
            for (k = rowstr[j]; k < rowstr[j + 1]; k++)
                sum = sum + a[k] * p[colidx[k]];
            q[j] = sum;
        }

        /* d = p.q */
        d = 0.0;
        for (j = 0; j < lastcol - firstcol + 1; j++)
            d = d + p[j] * q[j];

        alpha = rho / d;
        rho0 = rho;

        /* z = z + alpha*p; r = r - alpha*q */
        rho = 0.0;
        for (j = 0; j < lastcol - firstcol + 1; j++) {
            z[j] = z[j] + alpha * p[j];
            r[j] = r[j] - alpha * q[j];
        }

        /* rho = r.r */
        for (j = 0; j < lastcol - firstcol + 1; j++)
            rho = rho + r[j] * r[j];

        beta = rho / rho0;

        /* p = r + beta*p */
        for (j = 0; j < lastcol - firstcol + 1; j++)
            p[j] = r[j] + beta * p[j];
    }

    /* Residual norm ||x - A.z|| computed explicitly. */
    sum = 0.0;
    for (j = 0; j < lastrow - firstrow + 1; j++) {
        d = 0.0;
        for (k = rowstr[j]; k < rowstr[j + 1]; k++)
            d = d + a[k] * z[colidx[k]];
        r[j] = d;
    }
    for (j = 0; j < lastcol - firstcol + 1; j++) {
        d = x[j] - r[j];
        sum = sum + d * d;
    }
    *rnorm = sqrt(sum);
}

/*
 * Generate the sparse matrix: the sum over i of
 *   size_i * x_i x_i^T,   x_i a random vector with NONZER+1 nonzeros
 * (one of them at position i, value 0.5), with geometrically decreasing
 * size_i from 1 to RCOND, plus (RCOND - SHIFT) on the diagonal.
 */
void makea(int n, int nz, double a[], int colidx[], int rowstr[], int firstrow, int lastrow,
           int firstcol, int lastcol, int arow[], int acol[][NONZER + 1], double aelt[][NONZER + 1],
           int iv[]) {
    int iouter, ivelt, nzv, nn1;
    int ivc[NONZER + 1];
    double vc[NONZER + 1];

    (void)firstcol;
    (void)lastcol;

    /* nn1 is the smallest power of two not less than n. */
    nn1 = 1;
    do {
        nn1 = 2 * nn1;
    } while (nn1 < n);

    /* Generate nonzero positions and save them for sparse. */
    for (iouter = 0; iouter < n; iouter++) {
        nzv = NONZER;
        sprnvc(n, nzv, nn1, vc, ivc);
        vecset(n, vc, ivc, &nzv, iouter + 1, 0.5);
        arow[iouter] = nzv;
        for (ivelt = 0; ivelt < nzv; ivelt++) {
            acol[iouter][ivelt] = ivc[ivelt] - 1;
            aelt[iouter][ivelt] = vc[ivelt];
        }
    }

    /* Assemble, summing duplicates (iv is workspace). */
    sparse(a, colidx, rowstr, n, nz, NONZER, arow, acol, aelt, firstrow, lastrow, iv, RCOND, SHIFT);
}

/* Assemble the outer products into compressed row storage. */
void sparse(double a[], int colidx[], int rowstr[], int n, int nz, int nozer, int arow[],
            int acol[][NONZER + 1], double aelt[][NONZER + 1], int firstrow, int lastrow,
            int nzloc[], double rcond, double shift) {
    int nrows;
    int i, j, j1, j2, nza, k, kk, nzrow, jcol;
    double size, scale, ratio, va;
    logical cont40;

    (void)nozer;
    nrows = lastrow - firstrow + 1;

    /* Count the triples in each row. */
    for (j = 0; j < nrows + 1; j++)
        rowstr[j] = 0;
    for (i = 0; i < n; i++) {
        for (nza = 0; nza < arow[i]; nza++) {
            j = acol[i][nza] + 1;
            rowstr[j] = rowstr[j] + arow[i];
        }
    }
    rowstr[0] = 0;
    for (j = 1; j < nrows + 1; j++)
        rowstr[j] = rowstr[j] + rowstr[j - 1];
    nza = rowstr[nrows] - 1;

    if (nza > nz) {
        printf("Space for matrix elements exceeded in sparse\n");
        printf("nza, nzmax = %d, %d\n", nza, nz);
        exit(EXIT_FAILURE);
    }

    /* Preload data pages. */
    for (j = 0; j < nrows; j++) {
        for (k = rowstr[j]; k < rowstr[j + 1]; k++) {
            a[k] = 0.0;
            colidx[k] = -1;
        }
        nzloc[j] = 0;
    }

    /* Generate the actual values by summing duplicates. */
    size = 1.0;
    ratio = pow(rcond, (1.0 / (double)(n)));

    for (i = 0; i < n; i++) {
        for (nza = 0; nza < arow[i]; nza++) {
            j = acol[i][nza];

            scale = size * aelt[i][nza];
            for (nzrow = 0; nzrow < arow[i]; nzrow++) {
                jcol = acol[i][nzrow];
                va = aelt[i][nzrow] * scale;

                /* Add rcond*I to bound the smallest eigenvalue from below,
                 * and shift the spectrum. */
                if (jcol == j && j == i) {
                    va = va + rcond - shift;
                }

                cont40 = FALSE;
                for (k = rowstr[j]; k < rowstr[j + 1]; k++) {
                    if (colidx[k] > jcol) {
                        /* Insert colidx here, keeping the row ordered. */
                        for (kk = rowstr[j + 1] - 2; kk >= k; kk--) {
                            if (colidx[kk] > -1) {
                                a[kk + 1] = a[kk];
                                colidx[kk + 1] = colidx[kk];
                            }
                        }
                        colidx[k] = jcol;
                        a[k] = 0.0;
                        cont40 = TRUE;
                        break;
                    } else if (colidx[k] == -1) {
                        colidx[k] = jcol;
                        cont40 = TRUE;
                        break;
                    } else if (colidx[k] == jcol) {
                        /* Mark the duplicated entry. */
                        nzloc[j] = nzloc[j] + 1;
                        cont40 = TRUE;
                        break;
                    }
                }
                if (cont40 == FALSE) {
                    printf("internal error in sparse: i=%d\n", i);
                    exit(EXIT_FAILURE);
                }
                a[k] = a[k] + va;
            }
        }
        size = size * ratio;
    }

    /* Remove empty entries and compact the rows. */
    for (j = 1; j < nrows; j++)
        nzloc[j] = nzloc[j] + nzloc[j - 1];

    for (j = 0; j < nrows; j++) {
        if (j > 0) {
            j1 = rowstr[j] - nzloc[j - 1];
        } else {
            j1 = 0;
        }
        j2 = rowstr[j + 1] - nzloc[j];
        nza = rowstr[j];
        for (k = j1; k < j2; k++) {
            a[k] = a[nza];
            colidx[k] = colidx[nza];
            nza = nza + 1;
        }
    }
    for (j = 1; j < nrows + 1; j++)
        rowstr[j] = rowstr[j] - nzloc[j - 1];
}

/* Generate a sparse n-vector with nz distinct random nonzero positions
 * (1-based, from a power-of-two range nn1 with rejection). */
void sprnvc(int n, int nz, int nn1, double v[], int iv[]) {
    int nzv, ii, i;
    double vecelt, vecloc;

    nzv = 0;
    while (nzv < nz) {
        vecelt = randlc(&tran, amult);

        /* Generate an integer between 1 and n in a portable manner. */
        vecloc = randlc(&tran, amult);
        i = icnvrt(vecloc, nn1) + 1;
        if (i > n)
            continue;

        /* Was this integer generated already? */
        logical was_gen = FALSE;
        for (ii = 0; ii < nzv; ii++) {
            if (iv[ii] == i) {
                was_gen = TRUE;
                break;
            }
        }
        if (was_gen)
            continue;
        v[nzv] = vecelt;
        iv[nzv] = i;
        nzv = nzv + 1;
    }
}

/* Scale a double in [0,1) to an integer in [0, ipwr2). */
int icnvrt(double x, int ipwr2) { return (int)(ipwr2 * x); }

/* Set v(i) = val in the sparse vector (iv, v), appending if absent. */
void vecset(int n, double v[], int iv[], int *nzv, int i, double val) {
    int k;
    logical set;

    (void)n;
    set = FALSE;
    for (k = 0; k < *nzv; k++) {
        if (iv[k] == i) {
            v[k] = val;
            set = TRUE;
        }
    }
    if (set == FALSE) {
        v[*nzv] = val;
        iv[*nzv] = i;
        *nzv = *nzv + 1;
    }
}
