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
 * With NAS_TRUTH_ID set (an event id of the instrumented copy, or several separated by commas),
 * that event (those events together) is switched off (its mode byte, the runtime's
 * `__instrument_modes`) for the instrumented steps from TRUTH_WARM on that fall in every other
 * pair of steps, and put back as it was after each; `off N` lines name those steps. The
 * instrumented copy's steps less the plain ones, with the event in the state the run keeps it
 * in against switched off, are what its calls cost there, in this process and phase: the
 * ground truth's truth phase (ground_truth.c) on a real program
 * (`scripts/nas-paired --truth`). The steps hold the same work each, or near enough (Lua's and
 * SQLite's steps run the same script and statements).
 *
 * With NAS_TRUTH_ID=all and NAS_TRUTH_EVENTS=N, the ids below N are switched off together in
 * those steps, each put back after unless the runtime changed it: the instrumented steps with
 * every event off less their plain pairs are the floor (what the probes' switched-off checks and
 * the instrumented code's layout cost, which compensation cannot see), and the steps with the
 * events on less those off are what the probes cost over that floor (`--truth all`).
 *
 * With NAS_TRUTH_MODE=counted (or inline), the truth steps count their events through the probe
 * (or inline, where their code can) instead of switching them off: the steps on less those are
 * what timing costs over that way of counting, which is what an estimation's timed windows less
 * its counted (or inline) ones measure in place; the steps so counted less the plain ones, with
 * NAS_TRUTH_ID=all, what counting so costs over the plain code. */
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
enum { MODE_MEASURED = 0, MODE_COUNTED = 1, MODE_OFF = 2, MODE_LENIENT = 4, MODE_INLINE = 17 };
enum { TABLE_LEN = 1 << 22, TRUTH_WARM = 10 };
/* The truth events' ids, how many, and their modes before each truth step; whether they are a
 * list NAS_TRUTH_ID named (a step is a truth step only with all of them steady) rather than
 * every id (`all`: each left alone when it is not). */
static long *truth_ids;
static long truth_count;
static unsigned char *truth_modes;
static int truth_listed;
/* The mode the truth steps put their events in (NAS_TRUTH_MODE, see the top comment). */
static unsigned char truth_to = MODE_OFF;
static char truth_off[MAX_STEPS];
/* Per truth step with every event (`all`): how many an estimation held in one of its modes, left
 * on (`steady`). Their probes ran in the step, so its floor holds them. */
static int truth_held[MAX_STEPS];

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

/* Switches the truth events off for instrumented step `step` when it is one of the off steps
 * (not when a listed one is in an estimation's mode then: `steady`; with every event, those in
 * one stay on). */
static void truth_begin(int step) {
    if (copy != INST || truth_count == 0 || step < TRUTH_WARM || step >= MAX_STEPS ||
        (step - TRUTH_WARM) / 2 % 2 == 0)
        return;
    for (long i = 0; truth_listed && i < truth_count; i++)
        if (!steady(__instrument_modes[truth_ids[i]]))
            return;
    truth_off[step] = 1;
    for (long i = 0; i < truth_count; i++) {
        truth_modes[i] = __instrument_modes[truth_ids[i]];
        if (steady(truth_modes[i]))
            __instrument_modes[truth_ids[i]] = truth_to;
        else
            truth_held[step]++;
    }
}

/* Puts the truth events' modes back after an off step, unless the runtime changed one meanwhile. */
static void truth_end(int step) {
    if (copy != INST || step >= MAX_STEPS || !truth_off[step])
        return;
    for (long i = 0; i < truth_count; i++)
        if (__instrument_modes[truth_ids[i]] == truth_to)
            __instrument_modes[truth_ids[i]] = truth_modes[i];
}

/* The truth events from NAS_TRUTH_ID: `all` with NAS_TRUTH_EVENTS=N (the ids below N), or ids
 * separated by commas. Ids past the mode table have no byte: a list with one, or with anything
 * but ids, is ignored. */
static void truth_events_from(const char *truth, const char *events) {
    if (!truth || !*truth)
        return;
    int all = strcmp(truth, "all") == 0;
    long count = all ? (events ? atol(events) : 0) : 1;
    for (const char *c = truth; !all && *c; c++)
        count += *c == ',';
    if (count <= 0 || count > TABLE_LEN)
        return;
    long *ids = malloc(count * sizeof *ids);
    unsigned char *modes = malloc(count);
    if (!ids || !modes)
        return;
    char *next = (char *)truth;
    for (long i = 0; i < count; i++) {
        char *start = next;
        ids[i] = all ? i : strtol(start, &next, 10);
        if (ids[i] < 0 || ids[i] >= TABLE_LEN || (!all && (next == start || (*next && *next != ','))))
            return;
        next += !all && *next == ',';
    }
    truth_ids = ids;
    truth_modes = modes;
    truth_count = count;
    truth_listed = !all;
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
    truth_events_from(getenv("NAS_TRUTH_ID"), getenv("NAS_TRUTH_EVENTS"));
    const char *mode = getenv("NAS_TRUTH_MODE");
    if (mode && strcmp(mode, "counted") == 0)
        truth_to = MODE_COUNTED;
    else if (mode && strcmp(mode, "inline") == 0)
        truth_to = MODE_INLINE;
    const char *throttle = getenv("INSTRUMENT_THROTTLE");
    unthrottled = throttle && (strcmp(throttle, "0") == 0 || strcmp(throttle, "off") == 0);
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
            fprintf(stderr, "off %d %d\n", i, truth_held[i]);
    if (failed)
        fprintf(stderr, "nas-paired: a copy of the program failed\n");
    return failed;
}
