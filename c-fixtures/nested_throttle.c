/* Throttled routines that call throttled routines: main calls outer() N times (default
 * 400000), each outer() calls leaf() K times (default 8); both are tiny, so both are throttled,
 * outer() first counted while leaf() is already counted inside it (with K = 1, at about the
 * same call). Prints a checksum, the same for the plain and instrumented builds. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 2718281828;

__attribute__((noinline)) unsigned long long leaf(unsigned long long x) {
  return x * 6364136223846793005ULL + 1442695040888963407ULL;
}

static int leaves = 8;

__attribute__((noinline)) unsigned long long outer(void) {
  for (int i = 0; i < leaves; i++)
    state = leaf(state);
  return state >> 33;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 400000;
  if (argc > 2)
    leaves = atoi(argv[2]);
  unsigned long long sum = 0;
  for (long i = 0; i < n; i++)
    sum += outer();
  printf("checksum %llu\n", sum);
  return 0;
}
