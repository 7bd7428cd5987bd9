/* A throttled routine of known duration: `throttled_spin [N]` calls spin() N times (default
 * 120000), each busy-waiting 2 microseconds on CLOCK_MONOTONIC: under TAU's 10 microsecond
 * limit, so it is throttled after the rule's calls (INSTRUMENT_THROTTLE_CALLS) and its later
 * calls are estimated, which must come to about 2 microseconds each. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "include/instrument.h"

INSTRUMENT_OFF static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void spin(long long ns) {
  long long end = now_ns() + ns;
  while (now_ns() < end) {
  }
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 120000;
  for (long i = 0; i < n; i++)
    spin(2000);
  puts("done");
  return 0;
}
