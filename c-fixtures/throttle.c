/* Throttling: `throttle [N] [SLOW]` calls next_random() N times (default 20 million), as
 * NAS IS calls randlc for its keys, and slow_step() SLOW times (default 0), each spinning for
 * 20 microseconds (over TAU's 10 microsecond limit, so never throttled). Prints a checksum, the
 * same for the plain and instrumented builds. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long state = 314159265;

__attribute__((noinline)) double next_random(void) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(state >> 11) * (1.0 / 9007199254740992.0);
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) double slow_step(void) {
  double end = seconds() + 20e-6, x = 0;
  while (seconds() < end)
    x += 1;
  return x > 0;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000;
  long slow = argc > 2 ? atol(argv[2]) : 0;
  double sum = 0;
  for (long i = 0; i < n; i++)
    sum += next_random();
  double steps = 0;
  for (long i = 0; i < slow; i++)
    steps += slow_step();
  printf("%.6f %.0f\n", sum / (n > 0 ? n : 1), steps);
  return 0;
}
