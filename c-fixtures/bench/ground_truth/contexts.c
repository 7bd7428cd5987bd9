/* The ground truth's kernels: one routine per kind of code a probe can land in, each with a
 * driver `run_<context>(n)` that runs n units of it (a fixed number of calls each, so the events
 * of a run are exactly proportional to n) and returns a checksum. This file is
 * compiled twice into one executable (tests/src/bin/probe-context.rs): plain with
 * GT_SUFFIX=_plain and instrumented with GT_SUFFIX=_inst, so both variants run in one process
 * and can be alternated in short repetitions (ground_truth.c).
 *
 *   chain      a floating-point dependency chain (NPB's randlc): the core waits on the chain
 *   madd       eight independent multiply-adds: the core is busy with independent work
 *   misses     four independent random increments in a 64 MiB table: cache misses in flight
 *   inlined    a vectorisable loop calling a small inlinable routine (early placement keeps
 *              the call and its probes; late placement sees no routine)
 *   branchy    an integer routine with data-dependent branches
 *   recursion  a recursive routine (fib)
 *   in_chain   a short routine called inside a long dependency chain of its caller (NPB IS's
 *              key generation: four randlc calls per key)
 *   block      a 5x5 block update called in a loop over blocks (NPB BT's matmul_sub)
 *   syscall    a routine that makes a system call
 *   nested     three routines each calling the next once (xz's match finder)
 *   siblings   a line routine calling three different block routines in turn at each point
 *              (NPB BT's solve_line: matvec_sub, matmul_sub, binvcrhs)
 *   dispatch   an interpreter's dispatch: one routine calling seven handler routines in turn,
 *              each calling a shared helper (SQLite's sqlite3VdbeExec, Lua's luaV_execute) */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef GT_SUFFIX
#error "compile with -DGT_SUFFIX=_plain or -DGT_SUFFIX=_inst"
#endif
#define GT_CAT2(a, b) a##b
#define GT_CAT(a, b) GT_CAT2(a, b)
#define GT(name) GT_CAT(name, GT_SUFFIX)
#define GT_STR2(x) #x
#define GT_STR(x) GT_STR2(x)

/* GT_PAD=N puts N bytes of padding before this object's code: probe-context --layouts moves the
 * instrumented kernels by it, so that an error that comes from where the code lies (branch
 * predictor and cache aliasing, which no run-time method sees) shows as spread across layouts
 * rather than as one layout's bias. */
#ifdef GT_PAD
__asm__(".text\n.skip " GT_STR(GT_PAD) ", 0x90\n");
#endif
#define NOINLINE __attribute__((noinline))

NOINLINE static double GT(randlc)(double *x, double a) {
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

double GT(run_chain)(long n) {
    double x = 314159265.0, sum = 0;
    for (long i = 0; i < n; i++)
        sum += GT(randlc)(&x, 1220703125.0);
    return sum;
}

NOINLINE static void GT(madd)(double *restrict y, const double *restrict x, double a) {
    for (int i = 0; i < 8; i++)
        y[i] = y[i] * 0.999 + a * x[i];
}

double GT(run_madd)(long n) {
    static double x[8], y[8];
    for (int i = 0; i < 8; i++)
        x[i] = 1e-3 * i, y[i] = 0;
    for (long i = 0; i < n; i++)
        GT(madd)(y, x, 1.0 + 1e-9 * (double)(i & 15));
    return y[3];
}

#define SLOTS (1L << 24)
NOINLINE static void GT(misses)(unsigned *counts, unsigned long *seed) {
    for (int k = 0; k < 4; k++) {
        *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
        counts[(*seed >> 20) & (SLOTS - 1)]++;
    }
}

double GT(run_misses)(long n) {
    static unsigned *counts;
    static unsigned long seed = 1;
    if (!counts) {
        /* Every page touched once here, so that repetitions measure misses, not page faults.
         * Not with zeros: the compiler turns malloc and a zero memset into calloc, whose fresh
         * pages are touched first by the kernel, at a page fault each (about 1 us here). */
        counts = malloc(SLOTS * sizeof *counts);
        memset(counts, 1, SLOTS * sizeof *counts);
    }
    for (long i = 0; i < n; i++)
        GT(misses)(counts, &seed);
    return counts[seed & (SLOTS - 1)];
}

static inline float GT(scale)(float v, float a) { return v * a + 1.0f; }

/* n passes over 256 floats: 256 calls of scale each. */
double GT(run_inlined)(long n) {
    static float in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (float)i;
    for (long pass = 0; pass < n; pass++)
        for (int i = 0; i < 256; i++)
            out[i] = GT(scale)(in[i], 1.0001f + (float)(pass & 7));
    return out[111];
}

NOINLINE static unsigned GT(branchy)(unsigned v) {
    unsigned steps = 0;
    for (int k = 0; k < 6; k++) {
        if (v & 1)
            v = 3 * v + 1;
        else if (v & 2)
            v ^= v >> 3;
        else
            v >>= 1;
        steps += v & 3;
    }
    return steps;
}

double GT(run_branchy)(long n) {
    unsigned long sum = 0, x = 88172645463325252UL;
    for (long i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sum += GT(branchy)((unsigned)x);
    }
    return (double)sum;
}

NOINLINE static long GT(fib)(int k) { return k < 2 ? k : GT(fib)(k - 1) + GT(fib)(k - 2); }

/* n calls of fib(12), 465 calls each (the argument is read from memory each time, so that
 * the pure call cannot be hoisted out of the loop). */
static volatile int GT(depth) = 12;
double GT(run_recursion)(long n) {
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += GT(fib)(GT(depth));
    return (double)sum;
}

/* n keys of four randlc calls each, feeding a chain of the caller's own arithmetic. */
double GT(run_in_chain)(long n) {
    double seed = 314159265.0, a = 1220703125.0, acc = 0;
    for (long i = 0; i < n; i++) {
        double x = GT(randlc)(&seed, a);
        x += GT(randlc)(&seed, a);
        x += GT(randlc)(&seed, a);
        x += GT(randlc)(&seed, a);
        acc = acc * 0.5 + (double)(long)(x * 256.0);
    }
    return acc;
}

NOINLINE static void GT(block)(double a[5][5], double b[5][5], double c[5][5]) {
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            c[i][j] = c[i][j] - a[i][0] * b[0][j] - a[i][1] * b[1][j] - a[i][2] * b[2][j] -
                      a[i][3] * b[3][j] - a[i][4] * b[4][j];
}

#define BLOCKS 64
double GT(run_block)(long n) {
    static double a[BLOCKS][5][5], b[BLOCKS][5][5], c[BLOCKS][5][5];
    for (int k = 0; k < BLOCKS; k++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                a[k][i][j] = 1e-3 * (i + j + k), b[k][i][j] = 1e-3 * (i * j), c[k][i][j] = 0;
    for (long i = 0; i < n; i++)
        GT(block)(a[i % BLOCKS], b[(i + 1) % BLOCKS], c[i % BLOCKS]);
    return c[5][2][3];
}

NOINLINE static long GT(sys)(void) { return syscall(SYS_getppid); }

double GT(run_syscall)(long n) {
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += GT(sys)();
    return (double)(sum != 0);
}

/* A chain of three routines each calling the next once, the last through a pointer (xz's
 * match finder: lzma_lzma_optimum_fast -> lzma_mf_find -> mf->find): every caller returns after
 * one call of its child, and the leaf walks a short hash chain in a 256 KiB table. */
#define NEST_SLOTS (1u << 16)
NOINLINE static unsigned GT(nest_leaf)(const unsigned *table, unsigned pos) {
    unsigned best = 0;
    for (int k = 0; k < 4; k++) {
        unsigned v = table[pos & (NEST_SLOTS - 1)];
        best += (v ^ pos) & 7;
        pos = v;
    }
    return best;
}

typedef unsigned (*GT(finder))(const unsigned *, unsigned);
static GT(finder) volatile GT(find_with) = GT(nest_leaf);

NOINLINE static unsigned GT(nest_find)(const unsigned *table, unsigned pos) {
    unsigned hash = (pos * 2654435761u) >> 16;
    return GT(find_with)(table, hash) + (hash & 1);
}

NOINLINE static unsigned GT(nest_top)(const unsigned *table, unsigned pos) {
    unsigned length = GT(nest_find)(table, pos);
    return length > 12 ? length : length + (pos & 3);
}

double GT(run_nested)(long n) {
    static unsigned table[NEST_SLOTS];
    unsigned long seed = 7;
    for (unsigned i = 0; i < NEST_SLOTS; i++) {
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        table[i] = (unsigned)(seed >> 33);
    }
    unsigned long sum = 0;
    for (long i = 0; i < n; i++)
        sum += GT(nest_top)(table, (unsigned)i * 7919u);
    return (double)sum;
}

/* A line of LINE points, each calling three different block routines in turn (NPB BT's
 * solve_line: matvec_sub, matmul_sub, binvcrhs): siblings under one caller, so that every
 * call steps to another callpath node than the call before it. Each update keeps its values
 * bounded (half the old value plus a source term), so nothing drifts towards subnormals. */
#define LINE 8
NOINLINE static void GT(sib_matvec)(double a[5][5], const double *x, double *y) {
    for (int i = 0; i < 5; i++)
        y[i] = 0.5 * y[i] + 1.0 -
               1e-3 * (a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2] + a[i][3] * x[3] + a[i][4] * x[4]);
}

NOINLINE static void GT(sib_matmul)(double a[5][5], double b[5][5], double c[5][5]) {
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++)
            c[i][j] = 0.5 * c[i][j] + 1.0 -
                      1e-3 * (a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] +
                              a[i][3] * b[3][j] + a[i][4] * b[4][j]);
}

NOINLINE static void GT(sib_solve)(double b[5][5], double *r) {
    for (int p = 0; p < 5; p++) {
        r[p] = (r[p] + 1.0) / (4.0 + b[p][p] * b[p][p]);
        for (int i = p + 1; i < 5; i++)
            r[i] -= 1e-3 * b[i][p] * r[p];
    }
}

NOINLINE static void GT(sib_line)(double a[][5][5], double c[][5][5], double r[][5]) {
    for (int i = 1; i < LINE; i++) {
        GT(sib_matvec)(a[i], r[i - 1], r[i]);
        GT(sib_matmul)(a[i], c[i - 1], c[i]);
        GT(sib_solve)(c[i], r[i]);
    }
}

/* n lines: 1 + 3 (LINE - 1) calls each. */
double GT(run_siblings)(long n) {
    static double a[LINE][5][5], c[LINE][5][5], r[LINE][5];
    for (int k = 0; k < LINE; k++)
        for (int i = 0; i < 5; i++) {
            r[k][i] = 0.5;
            for (int j = 0; j < 5; j++)
                a[k][i][j] = 1e-2 * (i + j + k), c[k][i][j] = 1e-2 * (i * j);
        }
    for (long i = 0; i < n; i++)
        GT(sib_line)(a, c, r);
    return r[3][2] + c[5][1][2];
}

/* An interpreter's dispatch: a program of seven operations run by one routine, each operation
 * a handler routine of its own that calls a shared helper. The dispatcher steps to seven
 * children in turn, one more than a callpath node caches (rt/src/callpath.rs), as SQLite's
 * statement loop does in an insert; the handlers are parents of the helper. */
NOINLINE static unsigned GT(op_helper)(unsigned x) { return x ^ (x >> 7); }
NOINLINE static unsigned GT(op_add)(unsigned x) { return GT(op_helper)(x) + 0x9e3779b9u; }
NOINLINE static unsigned GT(op_mul)(unsigned x) { return GT(op_helper)(x) * 2654435761u; }
NOINLINE static unsigned GT(op_xor)(unsigned x) { return GT(op_helper)(x) ^ 0x5bd1e995u; }
NOINLINE static unsigned GT(op_rot)(unsigned x) { return GT(op_helper)((x << 5) | (x >> 27)); }
NOINLINE static unsigned GT(op_neg)(unsigned x) { return ~GT(op_helper)(x); }
NOINLINE static unsigned GT(op_shl)(unsigned x) { return GT(op_helper)(x) + (x << 3); }
NOINLINE static unsigned GT(op_sub)(unsigned x) { return GT(op_helper)(x) - 0x7f4a7c15u; }

NOINLINE static unsigned GT(dispatch_run)(unsigned x) {
    x = GT(op_add)(x);
    x = GT(op_mul)(x);
    x = GT(op_xor)(x);
    x = GT(op_rot)(x);
    x = GT(op_neg)(x);
    x = GT(op_shl)(x);
    return GT(op_sub)(x);
}

/* n programs: 15 calls each. */
double GT(run_dispatch)(long n) {
    unsigned x = 1;
    for (long i = 0; i < n; i++)
        x = GT(dispatch_run)(x);
    return (double)x;
}
