/* A routine whose calls are far apart: main does three times step()'s work between two calls
 * of it, so the windows of step's in-place estimation (a few dozen calls) hold three
 * times as much of main's work as of step's. A window bounded by an exit holds one gap of main's
 * work fewer or more than one bounded by entries; the estimate must not see that gap as probe
 * cost. The work is written out in both places (no routine of its own to instrument). */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

__attribute__((noinline)) void step(void) {
    for (unsigned i = 0; i < 1200; i++)
        sink += i;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    for (long i = 0; i < n; i++) {
        step();
        for (unsigned j = 0; j < 3600; j++)
            sink += j;
    }
    printf("done\n");
    return 0;
}
