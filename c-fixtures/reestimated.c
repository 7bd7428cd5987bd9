/* A tiny routine throttled under an instrumented caller that keeps returning: `reestimated MS`
 * calls batch() until MS milliseconds have passed (default 5000), each batch calling step()
 * 50000 times. batch()'s exits are timed, so every 50 ms the runtime estimates step() again
 * in place. Built with -DCROWDED, each batch also calls eight rare routines once: throttled
 * together, an estimation of one of them may need more calls than the run gives it (a throttled
 * event's windows may spend 12 500 of its calls), and step() still has to be estimated again as
 * its rest between estimations allows. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) unsigned long long step(unsigned long long x) {
  return x * 6364136223846793005ULL + 1442695040888963407ULL;
}

#ifdef CROWDED
#define RARE(n)                                                                                    \
  __attribute__((noinline)) unsigned long long rare_##n(unsigned long long x) {                   \
    return (x ^ (x >> (n + 7))) + n;                                                               \
  }
RARE(0)
RARE(1)
RARE(2)
RARE(3)
RARE(4)
RARE(5)
RARE(6)
RARE(7)

#define RARE_CALLS(x) rare_0(rare_1(rare_2(rare_3(rare_4(rare_5(rare_6(rare_7(x))))))))
#else
#define RARE_CALLS(x) (x)
#endif

__attribute__((noinline)) unsigned long long batch(unsigned long long x) {
  for (int i = 0; i < 50000; i++)
    x = step(x);
  return RARE_CALLS(x);
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
