/* Two phases: first() is called just past the throttling threshold (the default rule's 1000
 * calls), so its in-place estimation starts; then main calls the next QUEUED routines (default
 * 1, at most 3: second(), third(), fourth()) in turn, each 1050 + N times (default N 3000000),
 * and nothing else: they are throttled while that estimation waits for calls of first() that
 * never come again, and queue behind it (with more than one, they challenge it in turn); no
 * timed exit, hence no periodic re-offer, gives the stalled estimation up. Each routine is
 * tiny, so all are throttled. Prints a checksum. Usage: phased [N [QUEUED]]. */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long long sink;

__attribute__((noinline)) void first(unsigned long long x) { sink += x * 3 + 1; }

__attribute__((noinline)) void second(unsigned long long x) { sink += x * 5 + 2; }

__attribute__((noinline)) void third(unsigned long long x) { sink += x * 7 + 3; }

__attribute__((noinline)) void fourth(unsigned long long x) { sink += x * 11 + 4; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 3000000;
    int queued = argc > 2 ? atoi(argv[2]) : 1;
    void (*const next[])(unsigned long long) = {second, third, fourth};
    if (queued < 1 || queued > 3) {
        fprintf(stderr, "phased: QUEUED must be 1 to 3\n");
        return 2;
    }
    for (unsigned long long i = 0; i < 1050; i++)
        first(i);
    for (long i = 0; i < 1050 + n; i++)
        for (int k = 0; k < queued; k++)
            next[k]((unsigned long long)i);
    printf("checksum %llu\n", sink);
    return 0;
}
