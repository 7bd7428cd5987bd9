/* Inline counts (late placement on x86-64): step has a loop, so it keeps its events under the
 * small-routine rule. Called 100000 times from outer and 50000 times from inner, and 30000
 * times more from outer in each of argv[1] threads, it is throttled after 1000 calls on each
 * thread and from then on counted by its own entry code, without a probe call. With argv[2]
 * `direct`, the threads call step from their own start routine (too small to be instrumented),
 * so that a thread's first event is a call its entry code would count inline. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned step(unsigned x, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        x = x * 31 + i;
    return x;
}

__attribute__((noinline)) unsigned outer(unsigned calls) {
    unsigned s = 1;
    for (unsigned i = 0; i < calls; i++)
        s = step(s, 8 + (i & 15));
    return s;
}

__attribute__((noinline)) unsigned inner(unsigned calls) {
    unsigned s = 7;
    for (unsigned i = 0; i < calls; i++)
        s = step(s ^ i, 12) + 1;
    return s;
}

static void *worker(void *result) {
    *(unsigned *)result = outer(30000);
    return NULL;
}

static void *direct(void *result) {
    unsigned s = 3;
    for (unsigned i = 0; i < 30000; i++)
        s = step(s, 4);
    *(unsigned *)result = s;
    return NULL;
}

int main(int argc, char **argv) {
    unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    unsigned s = outer(100000) + inner(50000);
    pthread_t thread[2];
    unsigned result[2];
    void *(*start)(void *) = argc > 2 && argv[2][0] == 'd' ? direct : worker;
    for (unsigned t = 0; t < threads && t < 2; t++)
        pthread_create(&thread[t], NULL, start, &result[t]);
    for (unsigned t = 0; t < threads && t < 2; t++) {
        pthread_join(thread[t], NULL);
        s += result[t];
    }
    printf("%u\n", s);
    return 0;
}
