/* spin(ms) busy-waits a known time on CLOCK_MONOTONIC. main calls spin(100) once and
 * spin(20) five times: spin's inclusive time is 200 ms, main's exclusive time is nearly 0.
 * main also prints (on stderr) the time the six calls took as seen from the caller, which on
 * a loaded machine includes the preemptions the probes see too. */
#include <stdio.h>
#include <time.h>
#include "include/instrument.h"

/* A helper, not part of the measured call structure. */
INSTRUMENT_OFF static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void spin(double ms) {
    double end = now_ms() + ms;
    while (now_ms() < end) {
    }
}

int main(void) {
    double start = now_ms();
    spin(100);
    for (int i = 0; i < 5; i++)
        spin(20);
    fprintf(stderr, "spun %.6f ms\n", now_ms() - start);
    puts("done");
    return 0;
}
