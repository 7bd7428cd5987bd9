/* Hot recursive routines for in-place estimation. `fib n`: n calls of fib(12), 465 calls
 * each, whose activations nest twelve deep (estimated: its windows end at exits that leave no
 * activation open). `deep n`: n calls of a recursion 50000 deep (within the shadow stack),
 * whose outermost activation holds all of its calls (its estimation is given up, MAX_OVERRUN).
 * Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) long fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }

/* Not an accumulator the optimiser could turn into a loop. */
__attribute__((noinline)) long down(long n) {
    if (n == 0)
        return 0;
    long r = down(n - 1);
    return r ^ (r >> 3) ^ n;
}

static volatile int depth = 12;

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: recursive_hot fib|deep N\n");
        return 2;
    }
    long n = atol(argv[2]), sum = 0;
    for (long i = 0; i < n; i++)
        sum += strcmp(argv[1], "fib") == 0 ? fib(depth) : down(50000);
    printf("sum=%ld\n", sum);
    return 0;
}
