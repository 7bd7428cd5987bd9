/* The bundled example of `instrument demo`: a small program with a known call structure.
 * main calls fill once, sort once (which recurses), checksum once, and fib(25) recursively. */
#include <stdio.h>
#include <stdlib.h>

#define N 200000

static unsigned next_random(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

static void fill(int *a, int n) {
    unsigned state = 42;
    for (int i = 0; i < n; i++)
        a[i] = (int)(next_random(&state) % 1000000);
}

static void swap(int *a, int i, int j) {
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static int partition(int *a, int lo, int hi) {
    int pivot = a[(lo + hi) / 2];
    swap(a, (lo + hi) / 2, hi);
    int store = lo;
    for (int i = lo; i < hi; i++)
        if (a[i] < pivot)
            swap(a, i, store++);
    swap(a, store, hi);
    return store;
}

static void quicksort(int *a, int lo, int hi) {
    if (lo >= hi)
        return;
    int p = partition(a, lo, hi);
    quicksort(a, lo, p - 1);
    quicksort(a, p + 1, hi);
}

static long checksum(const int *a, int n) {
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum = sum * 31 + a[i];
    return sum;
}

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void) {
    int *a = malloc(N * sizeof *a);
    if (!a)
        return 1;
    fill(a, N);
    quicksort(a, 0, N - 1);
    printf("sorted %d numbers, checksum %ld, fib(25) = %d\n", N, checksum(a, N), fib(25));
    free(a);
    return 0;
}
