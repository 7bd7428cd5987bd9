/* Recursive fib: every call is a routine entry and exit; 2*fib(n+1)-1 calls. */
#include <stdlib.h>
#include "bench_clock.h"

__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 30;
    long long t0 = bench_now_ns();
    long r = fib(n);
    long long t1 = bench_now_ns();
    printf("result=%ld ns=%lld\n", r, t1 - t0);
    return 0;
}
