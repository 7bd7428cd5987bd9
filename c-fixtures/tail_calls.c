/* Two routines that call each other in tail position, ten million calls deep: the plain build
 * runs them as jumps in constant stack; a build whose switched-off or throttled routines ran a
 * probed body (a call, then the guarded exit) would need a frame per call and overflow an
 * 8 MiB stack. `tail_calls [N]` prints the result of N calls. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long ping(long n, long acc);

__attribute__((noinline)) long pong(long n, long acc) {
    if (n == 0)
        return acc;
    return ping(n - 1, acc + (n & 3));
}

__attribute__((noinline)) long ping(long n, long acc) {
    if (n == 0)
        return acc;
    return pong(n - 1, acc ^ n);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    printf("%ld\n", ping(n, 0));
    return 0;
}
