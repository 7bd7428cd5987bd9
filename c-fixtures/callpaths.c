/* Known callpaths (run with INSTRUMENT_CALLPATH=K).
 * main calls a() twice and b() once; a() calls c() three times; b() calls c() once and a() once;
 * two threads each run worker(), which calls a() once. Merged over the threads:
 *   k=1: a 5, c 16, b 1
 *   k=2: main=>a 2, main=>b 1, a=>c 15, b=>c 1, b=>a 1, worker=>a 2
 *   k=3: main=>a=>c 6, main=>b=>c 1, main=>b=>a 1, b=>a=>c 3
 *   all: main=>b=>a=>c 3 as well.
 * rec(3) recurses to rec(0): k=2 main=>rec 1, rec=>rec 3.
 * through(): an indirect call, through a function pointer, of leaf(): main=>leaf 1.
 * qsort calls back cmp() from uninstrumented libc: main=>cmp as often as cmp runs.
 * Per worker thread: worker=>a 1, a=>c 3. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) void c(void) { sink++; }
__attribute__((noinline)) void a(void) { c(); c(); c(); }
__attribute__((noinline)) void b(void) { c(); a(); }
__attribute__((noinline)) int rec(int n) { return n == 0 ? 0 : 1 + rec(n - 1); }
__attribute__((noinline)) void leaf(void) { sink += 2; }
__attribute__((noinline)) int cmp(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

void (*volatile pointer)(void) = leaf;

__attribute__((noinline)) void *worker(void *arg) {
    (void)arg;
    a();
    return NULL;
}

int main(void) {
    a();
    a();
    b();
    int depth = rec(3);
    pointer();
    int v[8] = {5, 3, 7, 1, 8, 2, 6, 4};
    qsort(v, 8, sizeof v[0], cmp);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sink=%d depth=%d first=%d\n", sink, depth, v[0]);
    return 0;
}
