/* A tiny routine throttled under an instrumented caller that keeps returning: `reestimated MS`
 * calls batch() until MS milliseconds have passed (default 5000), each batch calling step()
 * 50000 times. batch()'s exits are timed, so every 50 ms the runtime estimates step() again
 * in place. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) unsigned long long step(unsigned long long x) {
  return x * 6364136223846793005ULL + 1442695040888963407ULL;
}

__attribute__((noinline)) unsigned long long batch(unsigned long long x) {
  for (int i = 0; i < 50000; i++)
    x = step(x);
  return x;
}

static double milliseconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
  double ms = argc > 1 ? atof(argv[1]) : 5000, end = milliseconds() + ms;
  unsigned long long x = 1;
  long batches = 0;
  while (milliseconds() < end) {
    x = batch(x);
    batches++;
  }
  printf("%ld batches, checksum %llu\n", batches, x);
  return 0;
}
