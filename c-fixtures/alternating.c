/* A parent that calls two children in turn, so that in a callpath profile every entry of a
 * child steps from the parent's node past its cache (its last step was to the other child):
 * with N as the argument, pair() runs N times and left() and right() N times each. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

__attribute__((noinline)) void left(void) { sink = sink * 3 + 1; }
__attribute__((noinline)) void right(void) { sink = sink * 5 + 2; }

__attribute__((noinline)) void pair(void) {
    left();
    right();
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    for (long i = 0; i < n; i++)
        pair();
    printf("sink=%u\n", sink);
    return 0;
}
