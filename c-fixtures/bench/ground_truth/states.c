/* The ground truth's waiting-state harness (never instrumented): one context of contexts.c,
 * compiled plain and instrumented into this executable, the instrumented one run in several
 * forced states of its events' mode bytes (the runtime's `__instrument_modes`, which the
 * instrumented code reads), all alternated with the plain one in one process.
 *
 *   states CONTEXT ROUNDS TARGET_US IDS STATE...
 *
 * IDS is a comma list of event ids, each STATE a comma list of their mode bytes (0 measured,
 * 1 counted, 17 counted inline, 64 counted on the shadow stack untimed). Each round runs the
 * plain kernel and the instrumented one in every state, in an order that reverses from round to
 * round, and prints `r PLAIN STATE1 STATE2 ...` (ns). What each state costs over the plain code,
 * and what each change of one event's state costs, per call of the context's kernel, is what
 * in-place estimation measures in windows; here with no window at all (scripts/gt-states).
 * Run it with a fixed compensation strategy (not inplace, whose windows set modes too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

extern unsigned char __instrument_modes[];

static volatile double sink;

static long long timed(kernel k, long n) {
    long long start = now_ns();
    sink = k(n);
    return now_ns() - start;
}

static void set_state(const int *ids, int n, const int *modes) {
    for (int i = 0; i < n; i++)
        __instrument_modes[ids[i]] = (unsigned char)modes[i];
}

int main(int argc, char **argv) {
    if (argc < 6 || argc - 5 > MAX) {
        fprintf(stderr, "usage: %s CONTEXT ROUNDS TARGET_US IDS STATE...\n", argv[0]);
        return 2;
    }
    const struct context *c = find_context(argv[1]);
    if (!c) {
        fprintf(stderr, "%s: unknown context %s\n", argv[0], argv[1]);
        return 2;
    }
    int rounds = atoi(argv[2]), ids[MAX], states[MAX][MAX], count = argc - 5;
    long target_us = atol(argv[3]), n = 16;
    int events = parse(argv[4], ids);
    for (int s = 0; s < count; s++)
        if (parse(argv[5 + s], states[s]) != events) {
            fprintf(stderr, "%s: state %s does not give %d modes\n", argv[0], argv[5 + s], events);
            return 2;
        }
    timed(c->inst, n);
    for (long long ns; (ns = timed(c->inst, n)) < target_us * 250LL; n *= 4) {
    }
    n = (long)((double)n * target_us * 1000.0 / (double)timed(c->inst, n));
    printf("context %s n %ld\n", c->name, n);
    long long t[MAX + 1];
    for (int r = -2; r < rounds; r++) {
        for (int i = 0; i <= count; i++) {
            int s = (r & 1) ? count - i : i;
            if (s == count) {
                t[count] = timed(c->plain, n);
                continue;
            }
            set_state(ids, events, states[s]);
            t[s] = timed(c->inst, n);
        }
        if (r < 0)
            continue;
        printf("r %lld", t[count]);
        for (int s = 0; s < count; s++)
            printf(" %lld", t[s]);
        printf("\n");
    }
    int measured[MAX] = {0};
    set_state(ids, events, measured);
    return 0;
}
