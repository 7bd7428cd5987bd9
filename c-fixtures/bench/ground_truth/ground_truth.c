/* The ground truth's harness (never instrumented): one context of contexts.c, compiled plain
 * and instrumented into this executable, run alternately in short repetitions so that the
 * machine's drift is common to both and cancels in each repetition's difference.
 *
 *   ground_truth CONTEXT REPS TARGET_US [IDS ROUNDS [WAITS]]
 *
 * Picks n so that an instrumented run takes about TARGET_US, warms both variants up, then runs REPS
 * repetitions of the pair, the order alternating (plain first, then instrumented first) so
 * that a linear drift cancels too. Prints `context NAME n N`, one `rep PLAIN_NS INST_NS` line
 * per repetition, and `inst CALLS UNITS`: how many times the instrumented run_<context> ran and
 * the sum of their n (the profile's events divided among them).
 *
 * With IDS (a comma list of the kernel's event ids, children before their callers), what each of
 * those events costs in the state the run left it in, in this same process and phase: the
 * states S0 (every event's mode byte as the run left it), S1 (the first event switched off),
 * S2 (the first two), ... Sk (all), each a forced state of the runtime's mode table
 * (`__instrument_modes`, as states.c forces them), alternated with the plain kernel for ROUNDS
 * rounds in an order that reverses from round to round. Prints `settled MODE...` and one
 * `s PLAIN S0 S1 ... Sk` line (ns) per round; S(i-1) - Si is what event i costs there, what
 * compensation charged it should match (tests/src/bin/probe-context/truth.rs, `--truth`).
 * Where the first event settled counted through its probe (a callpath leaf), each round also
 * runs S0 with that event counted on the shadow stack untimed (`p NS`): P - S1 is its pathed
 * pair in place, which its pathed windows measure for every callpath parent's charge. The
 * runtime's estimations go on meanwhile and may set a mode for a window: a run they touch is
 * one of ROUNDS, and the medians take little from it.
 *
 * With WAITS (a comma list of mode bytes, one per id: the state each event waits in while
 * another is estimated, counted or, a callpath parent's, pathed) and at most TELESCOPE_MAX
 * events, each round also runs every combination of the events timed or waiting (`t NS...`, the
 * combination whose bit i is set having event i timed): whatever order the run's estimations
 * took, each of their window differences is one step of a chain through these states, and its
 * truth is the difference of two of them, measured here in the same process and phase. And the
 * all-waiting state with the events switched off one at a time, children first (`w W0 ... Wk`):
 * W(i) - W(i+1) is what event i's calls cost waiting, which compensation charges as its untimed
 * cost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static volatile double sink;
static const struct context *current;

/* Calls of the instrumented kernel and the sum of their n. */
static long inst_calls, inst_units;

extern unsigned char __instrument_modes[];

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

/* The mode bytes of a counted event, of one counted on the shadow stack untimed and of one
 * switched off (the runtime's switch::COUNTED, switch::PATHED and switch::OFF; a test,
 * paired_ground_truth.rs, holds them to instrument_live's). */
enum { COUNTED = 1, PATHED = 64, OFF = 2 };

/* Forces the first `off` of the `count` events `ids` switched off and the others into `settled`. */
static void force(const int *ids, const unsigned char *settled, int count, int off) {
    for (int i = 0; i < count; i++)
        __instrument_modes[ids[i]] = i < off ? OFF : settled[i];
}

enum { TELESCOPE_MAX = 4 };

/* Every combination of the events timed (mode 0) or in their waiting mode, and the all-waiting
 * state with its events switched off one at a time, children first: one run each, in an order
 * that reverses with the round. Prints `t NS...` by combination and `w NS...` by events off. */
static void telescope(const struct context *c, long n, const int *ids, const int *waits, int count, int r) {
    long long t[(1 << TELESCOPE_MAX) + TELESCOPE_MAX + 1];
    int combinations = 1 << count, states = combinations + count + 1;
    for (int k = 0; k < states; k++) {
        int s = (r & 1) ? states - 1 - k : k;
        unsigned char modes[TELESCOPE_MAX];
        for (int i = 0; i < count; i++)
            modes[i] = s < combinations && (s >> i & 1) ? 0 : (unsigned char)waits[i];
        force(ids, modes, count, s < combinations ? 0 : s - combinations);
        t[s] = timed(c->inst, n);
    }
    printf("t");
    for (int k = 0; k < combinations; k++)
        printf(" %lld", t[k]);
    printf("\nw");
    for (int k = combinations; k < states; k++)
        printf(" %lld", t[k]);
    printf("\n");
}

/* The truth phase (see the top comment): `rounds` rounds of the plain kernel and the states
 * S0 .. S(count) of the events `ids`, n units each; leaves the events as the run left them. */
static void truth(const struct context *c, long n, const int *ids, const int *waits, int count, int rounds) {
    unsigned char settled[MAX];
    printf("settled");
    for (int i = 0; i < count; i++)
        printf(" %d", settled[i] = __instrument_modes[ids[i]]);
    printf("\n");
    long long t[MAX + 2];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k <= count + 1; k++) {
            int s = (r & 1) ? count + 1 - k : k;
            if (s == count + 1) {
                t[s] = timed(c->plain, n);
                continue;
            }
            force(ids, settled, count, s);
            t[s] = timed(c->inst, n);
        }
        printf("s %lld", t[count + 1]);
        for (int s = 0; s <= count; s++)
            printf(" %lld", t[s]);
        printf("\n");
        if (settled[0] == COUNTED) {
            force(ids, settled, count, 0);
            __instrument_modes[ids[0]] = PATHED;
            printf("p %lld\n", timed(c->inst, n));
        }
        if (waits && count <= TELESCOPE_MAX)
            telescope(c, n, ids, waits, count, r);
    }
    force(ids, settled, count, 0);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc == 5 || argc > 7) {
        fprintf(stderr, "usage: %s CONTEXT REPS TARGET_US [IDS ROUNDS [WAITS]]\n", argv[0]);
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
    if (argc >= 6) {
        int ids[MAX], waits[MAX], count = parse(argv[4], ids);
        if (argc == 7 && parse(argv[6], waits) != count) {
            fprintf(stderr, "%s: WAITS does not give %d modes\n", argv[0], count);
            return 2;
        }
        /* Its runs count as none of the measured ones (`inst` is printed). */
        current = NULL;
        truth(c, n, ids, argc == 7 ? waits : NULL, count, atoi(argv[5]));
    }
    return 0;
}
