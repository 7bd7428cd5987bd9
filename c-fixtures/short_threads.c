/* Thousands of short-lived threads: THREADS threads (argv[1], default 2000), 8 at a time, each
 * calling work() 3 times. The profile has work: 3 x THREADS calls and THREADS + 1 threads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void work(void) { __atomic_fetch_add(&sink, 1, __ATOMIC_RELAXED); }

__attribute__((noinline)) void *short_lived(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++)
        work();
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2000;
    for (int started = 0; started < threads; started += 8) {
        pthread_t t[8];
        int n = threads - started < 8 ? threads - started : 8;
        for (int i = 0; i < n; i++)
            pthread_create(&t[i], NULL, short_lived, NULL);
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
    }
    printf("sink=%ld\n", sink);
    return 0;
}
