/* spin(ms) busy-waits a known time on CLOCK_MONOTONIC. main calls spin(100) once and
 * spin(20) five times: spin's inclusive time is 200 ms, main's exclusive time is nearly 0. */
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
    spin(100);
    for (int i = 0; i < 5; i++)
        spin(20);
    puts("done");
    return 0;
}
