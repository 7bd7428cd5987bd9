/* Known loops and call statements (build with --instrument-events=functions,loops,callsites).
 * nested(): outer loop 1 execution x 10 iterations; inner loop 10 executions, 50 iterations.
 * search(3): a while(1) loop left by break: 4 iterations.  countdown(4): do-while, 4 iterations.
 * roots(n): n iterations, each a call statement to libm's sqrt (not instrumented).
 * paced(): 4 iterations, each calling the uninstrumented wait_ms(25): loop time 100 ms, all of
 * it in the call statement. The first argument sets n (default 100). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "include/instrument.h"

volatile double sink;

INSTRUMENT_OFF static void wait_ms(double ms) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double end = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 + ms, now;
    do {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    } while (now < end);
}

__attribute__((noinline)) void nested(void) {
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < 5; j++)
            sink += i * j;
}

__attribute__((noinline)) int search(int target) {
    int i = 0;
    while (1) {
        if (i == target)
            break;
        i++;
    }
    return i;
}

__attribute__((noinline)) int countdown(int n) {
    int k = 0;
    do {
        k++;
    } while (--n > 0);
    return k;
}

__attribute__((noinline)) double roots(int n) {
    double s = 0;
    for (int i = 1; i <= n; i++)
        s += sqrt((double)i);
    return s;
}

__attribute__((noinline)) void paced(void) {
    for (int k = 0; k < 4; k++)
        wait_ms(25);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100;
    nested();
    int found = search(3);
    int counted = countdown(4);
    double r = roots(n);
    paced();
    printf("%d %d %.3f\n", found, counted, r);
    return 0;
}
