/* Direct recursion: down(10) recurses to depth 10 and busy-waits 30 ms at the bottom, so down
 * has 11 calls and an inclusive time of ~30 ms (not 11 x 30 ms). Mutual recursion: is_even(7)
 * alternates with is_odd: 4 calls of is_odd, 4 of is_even. */
#include <stdio.h>
#include <time.h>
#include "include/instrument.h"

/* A helper, not part of the measured call structure. */
INSTRUMENT_OFF static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void wait_ms(double ms) {
    double end = now_ms() + ms;
    while (now_ms() < end) {
    }
}

__attribute__((noinline)) int down(int n) {
    if (n == 0) {
        wait_ms(30);
        return 0;
    }
    return 1 + down(n - 1);
}

int is_odd(int n);
__attribute__((noinline)) int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
__attribute__((noinline)) int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }

int main(void) {
    printf("depth=%d odd=%d\n", down(10), is_odd(7));
    return 0;
}
