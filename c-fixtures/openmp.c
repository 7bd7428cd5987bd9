/* OpenMP fixture: a parallel loop of 1000 iterations on 4 threads, each calling work() once,
 * with a static schedule: every thread runs work() exactly 250 times. The pool's 3 workers are
 * idle (outside every event) when the program exits. */
#include <stdio.h>

__attribute__((noinline)) double work(int i) {
    double s = 0;
    for (int k = 0; k < 1000; k++)
        s += (double)k * i;
    return s;
}

int main(void) {
    double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total) num_threads(4)
    for (int i = 0; i < 1000; i++)
        total += work(i);
    printf("total %.1f\n", total);
    return 0;
}
