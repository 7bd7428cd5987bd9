/* A routine whose calls miss the cache (four random increments in a 64 MiB table), called from a
 * long loop (sweep) and from a caller that returns after three calls (burst). Counting such a
 * call costs tens of nanoseconds in place, against about two in a tight loop: the in-place
 * estimation measures that with tally windows (rt/src/tally.rs), whose executions must still be
 * counted exactly and charged to the caller they came from, also when that caller returns while
 * a window runs. */
#include <stdio.h>
#include <stdlib.h>

#define SLOTS (1L << 24)
static unsigned *table;
static unsigned long seed = 1;

__attribute__((noinline)) void touch(void) {
    for (int k = 0; k < 4; k++) {
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        table[(seed >> 20) & (SLOTS - 1)]++;
    }
}

__attribute__((noinline)) void sweep(long n) {
    for (long i = 0; i < n; i++)
        touch();
}

__attribute__((noinline)) void burst(void) {
    touch();
    touch();
    touch();
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 40;
    table = calloc(SLOTS, sizeof *table);
    for (long r = 0; r < rounds; r++) {
        sweep(20000);
        for (int b = 0; b < 2000; b++)
            burst();
    }
    printf("%u\n", table[seed & (SLOTS - 1)]);
    return 0;
}
