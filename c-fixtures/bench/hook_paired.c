/* The leaf's probe pair against the hand-written hook pair inside one process (built plain;
 * hook_leaf.c holds the leaf, compiled plainly, instrumented and with -finstrument-functions
 * against hand_hook.c): ROUNDS rounds of N calls of each copy, as leaf.c calls its leaf, in an
 * order that rotates from round to round, each timed alone. Prints one line per round, then
 * the three copies' results, which must be equal. */
#include <stdlib.h>
#include "bench_clock.h"

unsigned leaf_plain(unsigned);
unsigned leaf_instrumented(unsigned);
unsigned leaf_hooked(unsigned);

#define TIMED(leaf)                                                                               \
    static long long timed_##leaf(long n, unsigned *acc) {                                        \
        unsigned a = *acc;                                                                        \
        long long t0 = bench_now_ns();                                                            \
        for (long i = 0; i < n; i++)                                                              \
            a = leaf(a);                                                                          \
        long long t1 = bench_now_ns();                                                            \
        *acc = a;                                                                                 \
        return t1 - t0;                                                                           \
    }
TIMED(leaf_plain)
TIMED(leaf_instrumented)
TIMED(leaf_hooked)

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000L;
    long rounds = argc > 2 ? atol(argv[2]) : 60L;
    unsigned acc[3] = {1, 1, 1};
    for (long r = 0; r < rounds; r++) {
        long long ns[3];
        for (int k = 0; k < 3; k++) {
            int which = (int)((r + k) % 3);
            if (which == 0)
                ns[0] = timed_leaf_plain(n, &acc[0]);
            else if (which == 1)
                ns[1] = timed_leaf_instrumented(n, &acc[1]);
            else
                ns[2] = timed_leaf_hooked(n, &acc[2]);
        }
        printf("round=%ld plain=%lld instrumented=%lld hooked=%lld\n", r, ns[0], ns[1], ns[2]);
    }
    printf("result plain=%u instrumented=%u hooked=%u\n", acc[0], acc[1], acc[2]);
    return 0;
}
