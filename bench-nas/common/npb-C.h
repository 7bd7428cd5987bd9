/*
 * Shared declarations for the C kernels of bench-nas.
 * Written from the NPB specification (RNR-94-007, NAS-95-020); no NPB
 * source was used.
 */
#ifndef BENCH_NAS_NPB_C_H
#define BENCH_NAS_NPB_C_H

/* Problem class, selected at build time with -DCLASS_S, -DCLASS_W or
 * -DCLASS_A (the Makefile passes -DCLASS_$(CLASS)). */
#if defined(CLASS_S)
#define CLASS 'S'
#elif defined(CLASS_W)
#define CLASS 'W'
#elif defined(CLASS_A)
#define CLASS 'A'
#else
#error "define one of CLASS_S, CLASS_W, CLASS_A"
#endif

typedef int logical;
#define TRUE 1
#define FALSE 0

/* randdp.c: the NPB linear congruential generator
 *   x_{k+1} = a * x_k  mod 2^46
 * implemented in double precision arithmetic exactly as specified. */
double randlc(double *x, double a);
void vranlc(int n, double *x, double a, double y[]);

/* wtime.c / timers.c */
double wtime(void);
void timer_clear(int n);
void timer_start(int n);
void timer_stop(int n);
double timer_read(int n);

/* print_results.c; npb_nprocs > 0 adds a "Processes" line (MPI kernels) */
extern int npb_nprocs;
void print_results(const char *name, char class_, int n1, int n2, int n3, int niter, double t,
                   double mops, const char *optype, logical verified);

#endif
