/* A chain of throttled routines: main calls top() N times (default 1000000), top() calls mid()
 * once, mid() calls work() once, and work() runs a dependent chain of W shift-xor-multiplies
 * (default 40, about a hundred nanoseconds): all three are throttled, and with callpaths top and mid stay
 * on the stack untimed while work's calls are counted under them. Prints a checksum, the same
 * for the plain and instrumented builds. */
#include <stdio.h>
#include <stdlib.h>

static int steps = 40;

__attribute__((noinline)) unsigned long long work(unsigned long long x) {
  for (int i = 0; i < steps; i++) {
    x ^= x >> 29;
    x *= 0x9e3779b97f4a7c15ULL;
  }
  return x;
}

__attribute__((noinline)) unsigned long long mid(unsigned long long x) { return work(x ^ 0x9e37u) + 1; }

__attribute__((noinline)) unsigned long long top(unsigned long long x) { return mid(x + 7) >> 1; }

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (argc > 2)
    steps = atoi(argv[2]);
  unsigned long long sum = 0, x = 2718281828;
  for (long i = 0; i < n; i++) {
    x = top(x);
    sum += x & 0xffff;
  }
  printf("checksum %llu\n", sum);
  return 0;
}
