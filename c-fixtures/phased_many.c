/* Like phased.c, with three routines queued behind the stalled estimation: first() is called
 * just past the throttling threshold (the default rule's 1000 calls), so its in-place
 * estimation starts and then waits for calls that never come; then main calls second(), third()
 * and fourth() in turn, N times each (default 1000000) and nothing else, so that all three are
 * throttled while that estimation waits, queue behind it, and challenge it in turn. Each routine
 * is tiny, so all four are throttled. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long long sink;

__attribute__((noinline)) void first(unsigned long long x) { sink += x * 3 + 1; }

__attribute__((noinline)) void second(unsigned long long x) { sink += x * 5 + 2; }

__attribute__((noinline)) void third(unsigned long long x) { sink += x * 7 + 3; }

__attribute__((noinline)) void fourth(unsigned long long x) { sink += x * 11 + 4; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    for (unsigned long long i = 0; i < 1050; i++)
        first(i);
    for (long i = 0; i < n; i++) {
        second((unsigned long long)i);
        third((unsigned long long)i);
        fourth((unsigned long long)i);
    }
    printf("checksum %llu\n", sink);
    return 0;
}
