/* The paired harness of a bench-nas program (never instrumented): two copies of the program
 * in one process, plain (`main_plain`) and instrumented (`main_inst`), each in its own thread,
 * whose time steps alternate one by one (scripts/nas-paired builds it). The program
 * wraps each time step in NAS_STEP, which the build defines as
 * `nas_step_begin(); call; nas_step_end();`: a copy waits for its turn, times the step and
 * hands the turn to the other copy. So each plain step and the instrumented step after it run
 * a few milliseconds apart, and the machine's drift is common to both. Both threads run on the
 * CPU the process started on (`one_cpu`): on a two-vCPU Intel VM, left to the scheduler, the
 * copies of BT W differed by -20 % to +24 % from process to process (the instrumented one with
 * the runtime's defaults), as each process's threads happened to share a core or not (likely:
 * each core's own L2 kept one copy's arrays warm, or both evicted each other's); on one CPU,
 * 1.8 to 3.2 % in six processes.
 *
 *   nas-paired
 *
 * Prints on stderr one `step PLAIN_NS INST_NS` line per pair of steps (the programs' own
 * output goes to /dev/null).
 *
 * With NAS_TRUTH_ID set (an event id of the instrumented copy), that event is switched off
 * (its mode byte, the runtime's `__instrument_modes`) for the instrumented steps from
 * TRUTH_WARM on that fall in every other pair of steps, and put back as it was after each;
 * `off N` lines name those steps. The instrumented copy's steps less the plain ones, with the
 * event in the state the run keeps it in against switched off, are what its calls cost there,
 * in this process and phase: the ground truth's truth phase (ground_truth.c) on a real program
 * (`scripts/nas-paired --truth`). The steps hold the same work each, or near enough (Lua's and
 * SQLite's steps run the same script and statements).
 *
 * With NAS_TRUTH_ID=all and NAS_TRUTH_EVENTS=N, the ids below N are switched off together in
 * those steps, each put back after unless the runtime changed it: the instrumented steps with
 * every event off less their plain pairs are the floor (what the probes' switched-off checks and
 * the instrumented code's layout cost, which compensation cannot see), and the steps with the
 * events on less those off are what the probes cost over that floor (`--truth all`). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main_plain(void);
int main_inst(void);

#define MAX_STEPS 100000
enum { PLAIN, INST };

static long long step_ns[2][MAX_STEPS];
static int steps[2];

/* The truth steps (see the top comment): the event switched off in them, its mode byte before,
 * and which steps were. The modes are the runtime's (instrument_live's MODE_*, OFF being
 * instrument_contract::inline_count's) and TABLE_LEN its mode table's length (the contract's;
 * a test, paired_ground_truth.rs, holds them all to it). The first TRUTH_WARM steps are left
 * alone: the run throttles and estimates then. */
extern unsigned char __instrument_modes[];
enum { MODE_MEASURED = 0, MODE_OFF = 2, MODE_LENIENT = 4, TABLE_LEN = 1 << 22, TRUTH_WARM = 10 };
static long truth_id = -1;
static unsigned char truth_mode;
/* With NAS_TRUTH_ID=all: how many ids are switched off, and their modes before. */
static long truth_events;
static unsigned char *truth_modes;
static char truth_off[MAX_STEPS];

/* turn[c]: copy c may run its next step. */
static sem_t turn[2];
static atomic_int finished[2];
static __thread int copy = -1;
static __thread long long started;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Whether an event in mode `mode` may be switched off for a step: with throttling off, only
 * from the modes a measured event stays in (MODE_MEASURED, or MODE_LENIENT where an estimation
 * was given up): every other mode is an estimation's, which the runtime ends on its own. Switched
 * off from one (waiting counted in the estimations' queue, say) and put back after, an event
 * whose turn came meanwhile found itself switched off, left it so (an outside switch), and was
 * put back counted for the rest of the run: in three SQLite processes of four, every call
 * timed, the truth of `vdbeSorterCompareInt` read 5 to 8 ns a call with 13 of its 17 million
 * calls counted, against 40 to 42 in the fourth. With throttling on a counted mode is also a
 * throttled event's own, so every mode is taken as it is. */
static int unthrottled;
static int steady(unsigned char mode) {
    return !unthrottled || mode == MODE_MEASURED || mode == MODE_LENIENT;
}

/* Switches the truth event off for instrumented step `step` when it is one of the off steps
 * (not when it is in an estimation's mode then: `steady`; with every event, those in one stay
 * on). */
static void truth_begin(int step) {
    if (copy != INST || (truth_id < 0 && truth_events == 0) || step < TRUTH_WARM || step >= MAX_STEPS ||
        (step - TRUTH_WARM) / 2 % 2 == 0)
        return;
    if (truth_id >= 0) {
        truth_mode = __instrument_modes[truth_id];
        if (!steady(truth_mode))
            return;
        __instrument_modes[truth_id] = MODE_OFF;
    }
    truth_off[step] = 1;
    for (long id = 0; id < truth_events; id++) {
        truth_modes[id] = __instrument_modes[id];
        if (steady(truth_modes[id]))
            __instrument_modes[id] = MODE_OFF;
    }
}

/* Puts the truth event's mode back after an off step, unless the runtime changed it meanwhile. */
static void truth_end(int step) {
    if (copy != INST || step >= MAX_STEPS || !truth_off[step])
        return;
    if (truth_id >= 0 && __instrument_modes[truth_id] == MODE_OFF)
        __instrument_modes[truth_id] = truth_mode;
    for (long id = 0; id < truth_events; id++)
        if (__instrument_modes[id] == MODE_OFF)
            __instrument_modes[id] = truth_modes[id];
}

void nas_step_begin(void) {
    sem_wait(&turn[copy]);
    truth_begin(steps[copy]);
    started = now_ns();
}

void nas_step_end(void) {
    long long ns = now_ns() - started;
    truth_end(steps[copy]);
    if (steps[copy] < MAX_STEPS)
        step_ns[copy][steps[copy]++] = ns;
    /* The other copy's turn, unless it has no more steps to take. */
    sem_post(&turn[finished[!copy] ? copy : !copy]);
}

static void *run(void *which) {
    copy = (int)(long)which;
    int status = copy == PLAIN ? main_plain() : main_inst();
    finished[copy] = 1;
    /* The other copy may be waiting for a turn this one will not hand over any more. */
    sem_post(&turn[!copy]);
    return (void *)(long)status;
}

/* Keeps the process (and the threads it starts) on the CPU it runs on now. */
static void one_cpu(void) {
    cpu_set_t set;
    int cpu = sched_getcpu();
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("nas-paired: sched_setaffinity (the copies may run on different CPUs)");
}

int main(void) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull < 0 || dup2(devnull, STDOUT_FILENO) < 0) {
        perror("nas-paired: /dev/null");
        return 2;
    }
    one_cpu();
    const char *truth = getenv("NAS_TRUTH_ID");
    /* Ids past the mode table have no byte. */
    if (truth && *truth && strcmp(truth, "all") != 0 && atol(truth) >= 0 && atol(truth) < TABLE_LEN)
        truth_id = atol(truth);
    const char *throttle = getenv("INSTRUMENT_THROTTLE");
    unthrottled = throttle && (strcmp(throttle, "0") == 0 || strcmp(throttle, "off") == 0);
    const char *events = getenv("NAS_TRUTH_EVENTS");
    if (truth && strcmp(truth, "all") == 0 && events && atol(events) > 0 && atol(events) <= TABLE_LEN) {
        truth_events = atol(events);
        truth_modes = malloc(truth_events);
        truth_events = truth_modes ? truth_events : 0;
    }
    sem_init(&turn[PLAIN], 0, 1);
    sem_init(&turn[INST], 0, 0);
    pthread_t threads[2];
    for (long c = 0; c < 2; c++)
        if (pthread_create(&threads[c], NULL, run, (void *)c) != 0) {
            fprintf(stderr, "nas-paired: cannot start a thread\n");
            return 2;
        }
    int failed = 0;
    for (int c = 0; c < 2; c++) {
        void *status;
        pthread_join(threads[c], &status);
        failed |= status != NULL;
    }
    int pairs = steps[PLAIN] < steps[INST] ? steps[PLAIN] : steps[INST];
    for (int i = 0; i < pairs; i++)
        fprintf(stderr, "step %lld %lld\n", step_ns[PLAIN][i], step_ns[INST][i]);
    for (int i = 0; i < pairs; i++)
        if (truth_off[i])
            fprintf(stderr, "off %d\n", i);
    if (failed)
        fprintf(stderr, "nas-paired: a copy of the program failed\n");
    return failed;
}
