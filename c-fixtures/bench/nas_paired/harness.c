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
 * output goes to /dev/null). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main_plain(void);
int main_inst(void);

#define MAX_STEPS 100000
enum { PLAIN, INST };

static long long step_ns[2][MAX_STEPS];
static int steps[2];
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

void nas_step_begin(void) {
    sem_wait(&turn[copy]);
    started = now_ns();
}

void nas_step_end(void) {
    long long ns = now_ns() - started;
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
    if (failed)
        fprintf(stderr, "nas-paired: a copy of the program failed\n");
    return failed;
}
