/* OpenMP fixture with a known imbalance, for the OMPT tool. Three parallel regions on 2 threads:
 * thread 0 busy-waits 10 ms and thread 1 40 ms, so thread 0 waits about 30 ms in each region's
 * implicit barrier (90 ms). Between the regions the initial thread works alone for 20 ms, so the
 * worker is idle about 20 ms twice (40 ms). In a fourth region thread 1 holds a lock for 40 ms
 * while thread 0 waits for it (about 39 ms: it leaves the barrier 1 ms later), then both meet at
 * an explicit barrier after thread 0 spent 25 ms more, where thread 1 waits about 25 ms. */
#include <omp.h>
#include <stdio.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms) {
    double end = now_ms() + ms;
    while (now_ms() < end)
        ;
}

__attribute__((noinline)) void unbalanced(void) {
#pragma omp parallel num_threads(2)
    spin(omp_get_thread_num() == 0 ? 10 : 40);
}

__attribute__((noinline)) void contended(void) {
    omp_lock_t lock;
    omp_init_lock(&lock);
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
            omp_set_lock(&lock);
#pragma omp barrier
            spin(40);
            omp_unset_lock(&lock);
        } else {
#pragma omp barrier
            spin(1);
            omp_set_lock(&lock);
            omp_unset_lock(&lock);
            spin(25);
        }
#pragma omp barrier
    }
    omp_destroy_lock(&lock);
}

int main(void) {
    for (int round = 0; round < 3; round++) {
        unbalanced();
        if (round < 2)
            spin(20);
    }
    contended();
    printf("done\n");
    return 0;
}
