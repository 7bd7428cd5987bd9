/* The ground truth's harness (never instrumented): one context of contexts.c, compiled plain
 * and instrumented into this executable, run alternately in short repetitions so that the
 * machine's drift is common to both and cancels in each repetition's difference.
 *
 *   ground_truth CONTEXT REPS TARGET_US
 *
 * Picks n so that an instrumented run takes about TARGET_US, warms both variants up, then runs REPS
 * repetitions of the pair, the order alternating (plain first, then instrumented first) so
 * that a linear drift cancels too. Prints `context NAME n N`, one `rep PLAIN_NS INST_NS` line
 * per repetition, and `inst CALLS UNITS`: how many times the instrumented run_<context> ran and
 * the sum of their n (the profile's events divided among them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static volatile double sink;
static const struct context *current;

/* Calls of the instrumented kernel and the sum of their n. */
static long inst_calls, inst_units;

static long long timed(kernel k, long n) {
    long long start = now_ns();
    sink = k(n);
    long long ns = now_ns() - start;
    if (current && k == current->inst)
        inst_calls++, inst_units += n;
    return ns;
}

/* The n for which the kernel takes about target_us (at least 16). The first call is not
 * timed: it holds the kernel's one-time set-up (misses fills a 64 MiB table), which made n
 * twenty times too small there. */
static long calibrate(kernel k, long target_us) {
    long n = 16;
    timed(k, n);
    for (;;) {
        long long ns = timed(k, n);
        if (ns >= target_us * 1000LL / 4 || n > (1L << 40))
            return ns >= target_us * 1000LL ? n : (long)((double)n * target_us * 1000.0 / (double)ns);
        n *= 4;
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s CONTEXT REPS TARGET_US\n", argv[0]);
        return 2;
    }
    const struct context *c = find_context(argv[1]);
    if (!c) {
        fprintf(stderr, "%s: unknown context %s\n", argv[0], argv[1]);
        return 2;
    }
    current = c;
    int reps = atoi(argv[2]);
    long n = calibrate(c->inst, atol(argv[3]));
    printf("context %s n %ld\n", c->name, n);
    for (int w = 0; w < 2; w++)
        timed(c->plain, n), timed(c->inst, n);
    for (int r = 0; r < reps; r++) {
        long long plain, inst;
        if (r % 2 == 0) {
            plain = timed(c->plain, n);
            inst = timed(c->inst, n);
        } else {
            inst = timed(c->inst, n);
            plain = timed(c->plain, n);
        }
        printf("rep %lld %lld\n", plain, inst);
    }
    printf("inst %ld %ld\n", inst_calls, inst_units);
    return 0;
}
