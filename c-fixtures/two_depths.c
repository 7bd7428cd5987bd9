/* A routine called from two depths in turn: run calls leaf, then wrap, which calls leaf. A tally
 * window (rt/src/tally.rs) tallies the calls from the depth it opened at; a call from the other
 * depth takes the counted path and ends it after one tallied call, where its counted neighbours
 * hold a whole window: such windows are void (inplace's `void_tally`), and every call is still
 * counted and charged to its caller. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

__attribute__((noinline)) void leaf(unsigned i) {
    sink = sink * 31 + i;
}

__attribute__((noinline)) void wrap(unsigned i) {
    leaf(i);
}

__attribute__((noinline)) void run(unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        leaf(i);
        wrap(i);
    }
}

int main(int argc, char **argv) {
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 20;
    for (unsigned r = 0; r < rounds; r++)
        run(20000);
    printf("%u\n", sink);
    return 0;
}
