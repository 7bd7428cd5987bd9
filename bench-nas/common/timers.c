/* Wall-clock timers in the style of NPB (timer_clear/start/stop/read). */
#define _POSIX_C_SOURCE 199309L
#include "npb-C.h"
#include <time.h>

#define NTIMERS 64

double wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1.0e-9 * (double)ts.tv_nsec;
}

static double start_t[NTIMERS];
static double elapsed_t[NTIMERS];

void timer_clear(int n) { elapsed_t[n] = 0.0; }

void timer_start(int n) { start_t[n] = wtime(); }

void timer_stop(int n) {
    double now = wtime();
    elapsed_t[n] += now - start_t[n];
}

double timer_read(int n) { return elapsed_t[n]; }
