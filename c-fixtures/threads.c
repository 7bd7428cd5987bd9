/* Two threads each call work() 1000 times; main calls work() 10 times itself.
 * The merged profile has work: 2010 calls and 3 threads. */
#include <pthread.h>
#include <stdio.h>

volatile long sink;

__attribute__((noinline)) void work(void) { __atomic_fetch_add(&sink, 1, __ATOMIC_RELAXED); }

__attribute__((noinline)) void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++)
        work();
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 10; i++)
        work();
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sink=%ld\n", sink);
    return 0;
}
