/* What an adversarial program does to the runtime: `adversarial MODE`.
 *   alarm N      a SIGALRM every 50 us whose handler calls on_alarm(), while main calls work()
 *                N times; prints how many times the handler ran
 *   threads      creates and joins 8 threads over and over, until a signal ends it
 *   fd           opens /dev/null and prints the descriptor it got
 *   chdir        changes to / and calls work()
 * Each mode's plain and instrumented builds behave the same (output, exit status). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile long counter;
static volatile sig_atomic_t alarms;

__attribute__((noinline)) void work(void) { counter++; }

__attribute__((noinline)) void on_alarm(void) { alarms++; }

static void handler(int signal) {
    (void)signal;
    on_alarm();
}

static int alarm_mode(long calls) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval every = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &every, NULL);
    for (long i = 0; i < calls; i++)
        work();
    struct itimerval stop = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &stop, NULL);
    printf("alarms %ld\n", (long)alarms);
    return 0;
}

__attribute__((noinline)) void *worker(void *unused) {
    (void)unused;
    for (int i = 0; i < 100; i++)
        work();
    return NULL;
}

static int threads_mode(void) {
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pthread_t threads[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&threads[i], NULL, worker, NULL);
        for (int i = 0; i < 8; i++)
            pthread_join(threads[i], NULL);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "alarm") == 0)
        return alarm_mode(argc > 2 ? atol(argv[2]) : 20000000);
    if (strcmp(mode, "threads") == 0)
        return threads_mode();
    if (strcmp(mode, "fd") == 0) {
        int fd = open("/dev/null", O_RDONLY);
        printf("fd %d\n", fd);
        return 0;
    }
    if (strcmp(mode, "chdir") == 0) {
        if (chdir("/") != 0)
            return 3;
        work();
        printf("in /\n");
        return 0;
    }
    fprintf(stderr, "usage: adversarial alarm [N]|threads|fd|chdir\n");
    return 2;
}
