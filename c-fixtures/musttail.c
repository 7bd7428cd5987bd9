/* musttail: count_down tail-calls itself through a guaranteed tail call; the exit probe must go
 * before the call. count_down(5) makes 6 calls. */
#include <stdio.h>

__attribute__((noinline)) int count_down(int n, int acc) {
    if (n == 0)
        return acc;
    __attribute__((musttail)) return count_down(n - 1, acc + n);
}

int main(void) {
    printf("sum=%d\n", count_down(5, 0));
    return 0;
}
