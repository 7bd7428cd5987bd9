/* Two phases: first() is called just past the throttling threshold (the default rule's 1000
 * calls), so its in-place estimation starts; second() is then called as often, throttled while that
 * estimation waits for calls of first() that never come again, and queued behind it; then main
 * calls second() N more times (default 3000000) and nothing else: no timed exit, hence no
 * periodic re-offer, gives the stalled estimation up. Each routine is tiny, so both are
 * throttled. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long long sink;

__attribute__((noinline)) void first(unsigned long long x) { sink += x * 3 + 1; }

__attribute__((noinline)) void second(unsigned long long x) { sink += x * 5 + 2; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 3000000;
    for (unsigned long long i = 0; i < 1050; i++)
        first(i);
    for (long i = 0; i < 1050 + n; i++)
        second((unsigned long long)i);
    printf("checksum %llu\n", sink);
    return 0;
}
