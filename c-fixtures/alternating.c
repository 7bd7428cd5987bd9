/* A parent that calls its children in turn: with N as the first argument and C (1 to 7, by
 * default 7) as the second, cycle() runs N times and calls the first C of seven children in
 * order. A callpath node caches its last six steps, so with seven children every entry of a
 * child steps from the parent's node past its cache (its cached steps were to the six others),
 * and with six or fewer none does after the first of each. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

#define CHILD(name, a, b)                                                                         \
    __attribute__((noinline)) void name(void) { sink = sink * a + b; }
CHILD(c1, 3, 1)
CHILD(c2, 5, 2)
CHILD(c3, 7, 3)
CHILD(c4, 9, 4)
CHILD(c5, 11, 5)
CHILD(c6, 13, 6)
CHILD(c7, 15, 7)

__attribute__((noinline)) void cycle(int children) {
    c1();
    if (children > 1)
        c2();
    if (children > 2)
        c3();
    if (children > 3)
        c4();
    if (children > 4)
        c5();
    if (children > 5)
        c6();
    if (children > 6)
        c7();
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int children = argc > 2 ? atoi(argv[2]) : 7;
    if (children < 1 || children > 7)
        children = 7;
    for (long i = 0; i < n; i++)
        cycle(children);
    printf("sink=%u\n", sink);
    return 0;
}
