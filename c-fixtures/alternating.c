/* A parent that calls its children in turn: with N as the first argument and C (2 or 3, by
 * default 3) as the second, cycle() runs N times and calls left(), then middle() when C is 3,
 * then right(). A callpath node caches its last two steps, so with three children every entry
 * of a child steps from the parent's node past its cache (its two cached steps were to the
 * other children), and with two none does after the first of each. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

__attribute__((noinline)) void left(void) { sink = sink * 3 + 1; }
__attribute__((noinline)) void middle(void) { sink = sink * 7 + 3; }
__attribute__((noinline)) void right(void) { sink = sink * 5 + 2; }

__attribute__((noinline)) void cycle(int children) {
    left();
    if (children == 3)
        middle();
    right();
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int children = argc > 2 ? atoi(argv[2]) : 3;
    for (long i = 0; i < n; i++)
        cycle(children);
    printf("sink=%u\n", sink);
    return 0;
}
