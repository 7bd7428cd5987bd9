/* What the ground truth's harnesses share (ground_truth.c, states.c; never instrumented): the
 * contexts of contexts.c, each compiled plain and instrumented, and the clock they are timed
 * with. */
#ifndef GROUND_TRUTH_HARNESS_H
#define GROUND_TRUTH_HARNESS_H
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONTEXTS(X) X(chain) X(madd) X(misses) X(inlined) X(branchy) X(recursion) X(in_chain) X(block) X(syscall) X(nested) X(siblings) X(dispatch)
#define DECLARE(name) double run_##name##_plain(long n); double run_##name##_inst(long n);
CONTEXTS(DECLARE)

typedef double (*kernel)(long);
struct context {
    const char *name;
    kernel plain, inst;
};
#define ENTRY(name) {#name, run_##name##_plain, run_##name##_inst},
static const struct context contexts[] = {CONTEXTS(ENTRY)};

/* The context called `name`, or NULL. */
static const struct context *find_context(const char *name) {
    for (size_t i = 0; i < sizeof contexts / sizeof *contexts; i++)
        if (strcmp(contexts[i].name, name) == 0)
            return &contexts[i];
    return NULL;
}

enum { MAX = 16 };

/* Parses a comma list of at most MAX integers into out; returns how many. */
static int parse(const char *s, int *out) {
    int k = 0;
    while (*s && k < MAX) {
        char *end;
        out[k++] = (int)strtol(s, &end, 10);
        s = *end ? end + 1 : end;
    }
    return k;
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
#endif
