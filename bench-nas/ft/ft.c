/*
 * FT: 3-D FFT PDE kernel (NPB specification, RNR-94-007 s.2.2.5).
 *
 * Solve the diffusion equation  du/dt = alpha del^2 u  spectrally: the
 * random initial field (compute_initial_conditions) is transformed once
 * with a forward 3-D FFT, then at each time step the spectrum is
 * multiplied by exp(-4 alpha pi^2 |k|^2) (evolve), transformed back and a
 * checksum of 1024 selected elements is taken (checksum).  The 3-D FFT
 * (fft) is done as 1-D FFTs along each dimension (cffts1/2/3) with a
 * Stockham radix-2 algorithm (cfftz/fftz2) on blocks of fftblock lines.
 * The checksums are compared with the official NPB values at relative
 * tolerance 1e-12 (NPB's FT epsilon).
 */
#include "npb-C.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#if CLASS == 'S'
#define NX 64
#define NY 64
#define NZ 64
#define MAXDIM 64
#define NITER_DEFAULT 6
#elif CLASS == 'W'
#define NX 128
#define NY 128
#define NZ 32
#define MAXDIM 128
#define NITER_DEFAULT 6
#elif CLASS == 'A'
#define NX 256
#define NY 256
#define NZ 128
#define MAXDIM 256
#define NITER_DEFAULT 6
#endif

#define NTOTAL ((long)NX * NY * NZ)
#define FFTBLOCK 16
#define FFTBLOCKPAD 18

#define SEED 314159265.0
#define A 1220703125.0
#define PI 3.141592653589793238
#define ALPHA 1.0e-6

typedef struct {
    double real;
    double imag;
} dcomplex;

/* Complex arithmetic is intrinsic in the original Fortran FT (and a macro in NPB's C
 * versions), not a routine: keep it out of the call structure the profiler sees. */
#define dcmplx(r, i) ((dcomplex){(r), (i)})

#define cadd(a, b) dcmplx((a).real + (b).real, (a).imag + (b).imag)
#define csub(a, b) dcmplx((a).real - (b).real, (a).imag - (b).imag)
#define cmul(a, b)                                                                                 \
    dcmplx((a).real *(b).real - (a).imag * (b).imag, (a).real * (b).imag + (a).imag * (b).real)
#define cmul2(a, s) dcmplx((a).real *(s), (a).imag *(s))
#define cconj(a) dcmplx((a).real, -(a).imag)

static int dims[3] = {NX, NY, NZ};
static int fftblock = FFTBLOCK;

/* Complex roots of unity for the FFT (u[0].real holds log2 of the
 * largest size). */
static dcomplex u[MAXDIM];
static dcomplex sums[NITER_DEFAULT + 1];

typedef dcomplex grid_t[NY][NX];
typedef double rgrid_t[NY][NX];

static grid_t *u0, *u1, *u2;
static rgrid_t *twiddle;

void init_ui(grid_t *u0, grid_t *u1, rgrid_t *twiddle, int d1, int d2, int d3);
void evolve(grid_t *u0, grid_t *u1, rgrid_t *twiddle, int d1, int d2, int d3);
void compute_initial_conditions(grid_t *u0, int d1, int d2, int d3);
void ipow46(double a, int exponent, double *result);
void setup(void);
void compute_indexmap(rgrid_t *twiddle, int d1, int d2, int d3);
void fft(int dir, grid_t *x1, grid_t *x2);
void cffts1(int is, int d1, int d2, int d3, grid_t *x, grid_t *xout, dcomplex y1[][FFTBLOCKPAD],
            dcomplex y2[][FFTBLOCKPAD]);
void cffts2(int is, int d1, int d2, int d3, grid_t *x, grid_t *xout, dcomplex y1[][FFTBLOCKPAD],
            dcomplex y2[][FFTBLOCKPAD]);
void cffts3(int is, int d1, int d2, int d3, grid_t *x, grid_t *xout, dcomplex y1[][FFTBLOCKPAD],
            dcomplex y2[][FFTBLOCKPAD]);
void fft_init(int n);
void cfftz(int is, int m, int n, dcomplex x[][FFTBLOCKPAD], dcomplex y[][FFTBLOCKPAD]);
void fftz2(int is, int l, int m, int n, int ny, int ny1, dcomplex u[], dcomplex x[][FFTBLOCKPAD],
           dcomplex y[][FFTBLOCKPAD]);
int ilog2(int n);
void checksum(int i, grid_t *u1, int d1, int d2, int d3);
void verify(int d1, int d2, int d3, int nt, logical *verified, char *class_);

int main(void) {
    int i, iter;
    double total_time, mflops;
    logical verified;
    char class_;
    int niter = NITER_DEFAULT;

    printf("\n\n NAS Parallel Benchmarks (bench-nas C version) - FT Benchmark\n\n");
    printf(" Size                : %4dx%4dx%4d\n", NX, NY, NZ);
    printf(" Iterations          :     %10d\n", niter);
    printf("\n");

    u0 = malloc(sizeof(grid_t) * NZ);
    u1 = malloc(sizeof(grid_t) * NZ);
    u2 = malloc(sizeof(grid_t) * NZ);
    twiddle = malloc(sizeof(rgrid_t) * NZ);
    if (!u0 || !u1 || !u2 || !twiddle) {
        fprintf(stderr, "FT: out of memory\n");
        return 1;
    }

    for (i = 0; i < 4; i++)
        timer_clear(i);
    setup();
    init_ui(u0, u1, twiddle, dims[0], dims[1], dims[2]);
    compute_indexmap(twiddle, dims[0], dims[1], dims[2]);
    compute_initial_conditions(u1, dims[0], dims[1], dims[2]);
    fft_init(dims[0]);
    fft(1, u1, u0);

    /* Start over from the beginning; in FT everything is timed. */
    for (i = 0; i < 4; i++)
        timer_clear(i);
    timer_start(0);

    compute_indexmap(twiddle, dims[0], dims[1], dims[2]);
    compute_initial_conditions(u1, dims[0], dims[1], dims[2]);
    fft_init(dims[0]);
    fft(1, u1, u0);

    for (iter = 1; iter <= niter; iter++) {
        evolve(u0, u1, twiddle, dims[0], dims[1], dims[2]);
        fft(-1, u1, u2);
        checksum(iter, u2, dims[0], dims[1], dims[2]);
    }

    verify(NX, NY, NZ, niter, &verified, &class_);

    timer_stop(0);
    total_time = timer_read(0);

    if (total_time != 0.0) {
        mflops = 1.0e-6 * (double)NTOTAL *
                 (14.8157 + 7.19641 * log((double)NTOTAL) +
                  (5.23518 + 7.21113 * log((double)NTOTAL)) * niter) /
                 total_time;
    } else {
        mflops = 0.0;
    }
    print_results("FT", class_, NX, NY, NZ, niter, total_time, mflops, "          floating point",
                  verified);

    free(u0);
    free(u1);
    free(u2);
    free(twiddle);
    return verified ? 0 : 1;
}

/* Touch all arrays once. */
void init_ui(grid_t *u0, grid_t *u1, rgrid_t *twiddle, int d1, int d2, int d3) {
    int i, j, k;

    for (k = 0; k < d3; k++) {
        for (j = 0; j < d2; j++) {
            for (i = 0; i < d1; i++) {
                u0[k][j][i] = dcmplx(0.0, 0.0);
                u1[k][j][i] = dcmplx(0.0, 0.0);
                twiddle[k][j][i] = 0.0;
            }
        }
    }
}

/* One time step: u0 = u0 * twiddle (so u0 holds the spectrum at the
 * current time), u1 = u0 for the inverse transform. */
void evolve(grid_t *u0, grid_t *u1, rgrid_t *twiddle, int d1, int d2, int d3) {
    int i, j, k;

    for (k = 0; k < d3; k++) {
        for (j = 0; j < d2; j++) {
            for (i = 0; i < d1; i++) {
                u0[k][j][i] = cmul2(u0[k][j][i], twiddle[k][j][i]);
                u1[k][j][i] = u0[k][j][i];
            }
        }
    }
}

/* Fill u0 with the NPB random sequence (seed 314159265, a = 5^13):
 * real and imaginary parts consecutively, x fastest, then y, then z.
 * The start of each z plane is found by jumping ahead with ipow46. */
void compute_initial_conditions(grid_t *u0, int d1, int d2, int d3) {
    double x0, start, an, starts[NZ];
    int j, k;

    (void)d1;
    (void)d2;
    start = SEED;
    ipow46(A, 0, &an);
    randlc(&start, an);
    ipow46(A, 2 * NX * NY, &an);

    starts[0] = start;
    for (k = 1; k < d3; k++) {
        randlc(&start, an);
        starts[k] = start;
    }

    for (k = 0; k < d3; k++) {
        x0 = starts[k];
        for (j = 0; j < dims[1]; j++) {
            vranlc(2 * NX, &x0, A, (double *)&u0[k][j][0]);
        }
    }
}

/* result = a^exponent (mod 2^46), by repeated squaring with randlc. */
void ipow46(double a, int exponent, double *result) {
    double q, r;
    int n, n2;

    *result = 1;
    if (exponent == 0)
        return;
    q = a;
    r = 1;
    n = exponent;

    while (n > 1) {
        n2 = n / 2;
        if (n2 * 2 == n) {
            randlc(&q, q);
            n = n2;
        } else {
            randlc(&r, q);
            n = n - 1;
        }
    }
    randlc(&r, q);
    *result = r;
}

void setup(void) {
    fftblock = FFTBLOCK;
    if (fftblock > NZ)
        fftblock = NZ;
}

/* twiddle = exp(-4 alpha pi^2 (kx^2 + ky^2 + kz^2)) with the wave numbers
 * folded to [-n/2, n/2). */
void compute_indexmap(rgrid_t *twiddle, int d1, int d2, int d3) {
    int i, j, k, kk, kk2, jj, kj2, ii;
    double ap;

    ap = -4.0 * ALPHA * PI * PI;
    for (k = 0; k < d3; k++) {
        kk = ((k + NZ / 2) % NZ) - NZ / 2;
        kk2 = kk * kk;
        for (j = 0; j < d2; j++) {
            jj = ((j + NY / 2) % NY) - NY / 2;
            kj2 = jj * jj + kk2;
            for (i = 0; i < d1; i++) {
                ii = ((i + NX / 2) % NX) - NX / 2;
                twiddle[k][j][i] = exp(ap * (double)(ii * ii + kj2));
            }
        }
    }
}

/* 3-D FFT of x1 into x2 (x1 is used as scratch). */
void fft(int dir, grid_t *x1, grid_t *x2) {
    static dcomplex y1[MAXDIM][FFTBLOCKPAD];
    static dcomplex y2[MAXDIM][FFTBLOCKPAD];

    if (dir == 1) {
        cffts1(1, dims[0], dims[1], dims[2], x1, x1, y1, y2);
        cffts2(1, dims[0], dims[1], dims[2], x1, x1, y1, y2);
        cffts3(1, dims[0], dims[1], dims[2], x1, x2, y1, y2);
    } else {
        cffts3(-1, dims[0], dims[1], dims[2], x1, x1, y1, y2);
        cffts2(-1, dims[0], dims[1], dims[2], x1, x1, y1, y2);
        cffts1(-1, dims[0], dims[1], dims[2], x1, x2, y1, y2);
    }
}

/* 1-D FFTs along the first (x) dimension, fftblock lines at a time. */
void cffts1(int is, int d1, int d2, int d3, grid_t *x, grid_t *xout, dcomplex y1[][FFTBLOCKPAD],
            dcomplex y2[][FFTBLOCKPAD]) {
    int logd1;
    int i, j, k, jj;

    logd1 = ilog2(d1);
    for (k = 0; k < d3; k++) {
        for (jj = 0; jj <= d2 - fftblock; jj += fftblock) {
            for (j = 0; j < fftblock; j++)
                for (i = 0; i < d1; i++)
                    y1[i][j] = x[k][j + jj][i];
            cfftz(is, logd1, d1, y1, y2);
            for (j = 0; j < fftblock; j++)
                for (i = 0; i < d1; i++)
                    xout[k][j + jj][i] = y1[i][j];
        }
    }
}

/* 1-D FFTs along the second (y) dimension. */
void cffts2(int is, int d1, int d2, int d3, grid_t *x, grid_t *xout, dcomplex y1[][FFTBLOCKPAD],
            dcomplex y2[][FFTBLOCKPAD]) {
    int logd2;
    int i, j, k, ii;

    logd2 = ilog2(d2);
    for (k = 0; k < d3; k++) {
        for (ii = 0; ii <= d1 - fftblock; ii += fftblock) {
            for (j = 0; j < d2; j++)
                for (i = 0; i < fftblock; i++)
                    y1[j][i] = x[k][j][i + ii];
            cfftz(is, logd2, d2, y1, y2);
            for (j = 0; j < d2; j++)
                for (i = 0; i < fftblock; i++)
                    xout[k][j][i + ii] = y1[j][i];
        }
    }
}

/* 1-D FFTs along the third (z) dimension. */
void cffts3(int is, int d1, int d2, int d3, grid_t *x, grid_t *xout, dcomplex y1[][FFTBLOCKPAD],
            dcomplex y2[][FFTBLOCKPAD]) {
    int logd3;
    int i, j, k, ii;

    logd3 = ilog2(d3);
    for (j = 0; j < d2; j++) {
        for (ii = 0; ii <= d1 - fftblock; ii += fftblock) {
            for (k = 0; k < d3; k++)
                for (i = 0; i < fftblock; i++)
                    y1[k][i] = x[k][j][i + ii];
            cfftz(is, logd3, d3, y1, y2);
            for (k = 0; k < d3; k++)
                for (i = 0; i < fftblock; i++)
                    xout[k][j][i + ii] = y1[k][i];
        }
    }
}

/* Roots of unity arranged so that each FFT stage reads them with stride
 * one: the ln roots exp(i pi j / ln) of a stage are at u[ln .. 2 ln-1]. */
void fft_init(int n) {
    int m, ku, i, j, ln;
    double t, ti;

    m = ilog2(n);
    u[0] = dcmplx((double)m, 0.0);
    ku = 2;
    ln = 1;

    for (j = 1; j <= m; j++) {
        t = PI / ln;
        for (i = 0; i <= ln - 1; i++) {
            ti = i * t;
            u[i + ku - 1] = dcmplx(cos(ti), sin(ti));
        }
        ku = ku + ln;
        ln = 2 * ln;
    }
}

/* Stockham FFT of the fftblock columns of x (length n = 2^m); is = 1 for
 * the forward, -1 for the inverse transform.  Result in x, y is scratch. */
void cfftz(int is, int m, int n, dcomplex x[][FFTBLOCKPAD], dcomplex y[][FFTBLOCKPAD]) {
    int i, j, l, mx;

    mx = (int)(u[0].real);
    if ((is != 1 && is != -1) || m < 1 || m > mx) {
        printf("CFFTZ: Either U has not been initialized, or else\n"
               "one of the input parameters is invalid%5d%5d%5d\n",
               is, m, mx);
        exit(EXIT_FAILURE);
    }

    for (l = 1; l <= m; l += 2) {
        fftz2(is, l, m, n, fftblock, FFTBLOCKPAD, u, x, y);
        if (l == m) {
            /* Copy y to x. */
            for (j = 0; j < n; j++)
                for (i = 0; i < fftblock; i++)
                    x[j][i] = y[j][i];
            break;
        }
        fftz2(is, l + 1, m, n, fftblock, FFTBLOCKPAD, u, y, x);
    }
}

/* Stage l of the Stockham FFT, from x into y. */
void fftz2(int is, int l, int m, int n, int ny, int ny1, dcomplex u[], dcomplex x[][FFTBLOCKPAD],
           dcomplex y[][FFTBLOCKPAD]) {
    int k, n1, li, lj, lk, ku, i, j, i11, i12, i21, i22;
    dcomplex u1, x11, x21;

    (void)ny1;
    n1 = n / 2;
    lk = 1 << (l - 1);
    li = 1 << (m - l);
    lj = 2 * lk;
    ku = li;

    for (i = 0; i <= li - 1; i++) {
        i11 = i * lk;
        i12 = i11 + n1;
        i21 = i * lj;
        i22 = i21 + lk;
        if (is >= 1) {
            u1 = u[ku + i];
        } else {
            u1 = cconj(u[ku + i]);
        }

        for (k = 0; k <= lk - 1; k++) {
            for (j = 0; j < ny; j++) {
                x11 = x[i11 + k][j];
                x21 = x[i12 + k][j];
                y[i21 + k][j] = cadd(x11, x21);
                y[i22 + k][j] = cmul(u1, csub(x11, x21));
            }
        }
    }
}

int ilog2(int n) {
    int nn, lg;
    if (n == 1)
        return 0;
    lg = 1;
    nn = 2;
    while (nn < n) {
        nn = nn * 2;
        lg = lg + 1;
    }
    return lg;
}

/* Sum of 1024 elements at pseudo-random positions, divided by the grid
 * size (the inverse FFT is unnormalised). */
void checksum(int i, grid_t *u1, int d1, int d2, int d3) {
    int j, q, r, s;
    dcomplex chk = dcmplx(0.0, 0.0);

    (void)d1;
    (void)d2;
    (void)d3;
    for (j = 1; j <= 1024; j++) {
        q = j % NX;
        r = (3 * j) % NY;
        s = (5 * j) % NZ;
        chk = cadd(chk, u1[s][r][q]);
    }
    chk = dcmplx(chk.real / (double)NTOTAL, chk.imag / (double)NTOTAL);

    printf(" T =%5d     Checksum =%22.12E%22.12E\n", i, chk.real, chk.imag);
    sums[i] = chk;
}

/* Compare the checksums with the official NPB values. */
void verify(int d1, int d2, int d3, int nt, logical *verified, char *class_) {
    int i;
    double err, epsilon;

    /* Official NPB checksums (real, imaginary) for T = 1..6. */
    static const double vdata_real_s[6] = {5.546087004964e+02, 5.546385409189e+02,
                                           5.546148406171e+02, 5.545423607415e+02,
                                           5.544255039624e+02, 5.542683411902e+02};
    static const double vdata_imag_s[6] = {4.845363331978e+02, 4.865304269511e+02,
                                           4.883910722336e+02, 4.901273169046e+02,
                                           4.917475857993e+02, 4.932597244941e+02};
    static const double vdata_real_w[6] = {5.673612178944e+02, 5.631436885271e+02,
                                           5.594024089970e+02, 5.560698047020e+02,
                                           5.530898991250e+02, 5.504159734538e+02};
    static const double vdata_imag_w[6] = {5.293246849175e+02, 5.282149986629e+02,
                                           5.270996558037e+02, 5.260027904925e+02,
                                           5.249400845633e+02, 5.239212247086e+02};
    static const double vdata_real_a[6] = {5.046735008193e+02, 5.059412319734e+02,
                                           5.069376896287e+02, 5.077892868474e+02,
                                           5.085233095391e+02, 5.091487099959e+02};
    static const double vdata_imag_a[6] = {5.114047905510e+02, 5.098809666433e+02,
                                           5.098144042213e+02, 5.101336130759e+02,
                                           5.104914655194e+02, 5.107917842803e+02};
    const double *vr = NULL, *vi = NULL;

    epsilon = 1.0e-12;
    *verified = TRUE;
    *class_ = 'U';

    if (d1 == 64 && d2 == 64 && d3 == 64 && nt == 6) {
        *class_ = 'S';
        vr = vdata_real_s;
        vi = vdata_imag_s;
    } else if (d1 == 128 && d2 == 128 && d3 == 32 && nt == 6) {
        *class_ = 'W';
        vr = vdata_real_w;
        vi = vdata_imag_w;
    } else if (d1 == 256 && d2 == 256 && d3 == 128 && nt == 6) {
        *class_ = 'A';
        vr = vdata_real_a;
        vi = vdata_imag_a;
    }

    if (vr == NULL) {
        *verified = FALSE;
    } else {
        for (i = 1; i <= nt; i++) {
            double dr = sums[i].real - vr[i - 1];
            double di = sums[i].imag - vi[i - 1];
            err = sqrt(dr * dr + di * di) / sqrt(vr[i - 1] * vr[i - 1] + vi[i - 1] * vi[i - 1]);
            if (!(err <= epsilon)) {
                *verified = FALSE;
                printf(" Checksum %d differs from the reference by %.3e "
                       "(ref %22.12E%22.12E)\n",
                       i, err, vr[i - 1], vi[i - 1]);
            }
        }
    }

    if (*class_ != 'U') {
        if (*verified)
            printf(" Result verification successful\n");
        else
            printf(" Result verification failed\n");
    }
    printf(" class = %c\n", *class_);
}
