/* An in-place estimation whose thread ends: a worker calls first() just past the throttling
 * threshold (TAU's rule: 100000 calls), so the estimation of first() starts on it and the worker
 * ends before its windows are done; then main calls second() N times (default 300000). Each
 * routine is tiny, so both are throttled. Prints a checksum. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long long sink;

__attribute__((noinline)) void first(unsigned long long x) { sink += x * 3 + 1; }

__attribute__((noinline)) void second(unsigned long long x) { sink += x * 5 + 2; }

static void *worker(void *arg) {
    (void)arg;
    for (unsigned long long i = 0; i < 100050; i++)
        first(i);
    return NULL;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 300000;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    for (long i = 0; i < n; i++)
        second((unsigned long long)i);
    printf("checksum %llu\n", sink);
    return 0;
}
