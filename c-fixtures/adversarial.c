/* What an adversarial program does to the runtime: `adversarial MODE`.
 *   alarm N      a SIGALRM every 50 us whose handler calls on_alarm(), while main calls work()
 *                N times; prints how many times the handler ran
 *   threads      creates and joins 8 threads over and over, until a signal ends it
 *   fd           opens /dev/null and prints the descriptor it got
 *   chdir        changes to / and calls work()
 *   landlock     forbids itself (Landlock) to create, rename, remove or read files, calls work();
 *                prints "sandboxed" (or "no landlock" where the kernel has none)
 * Each mode's plain and instrumented builds behave the same (output, exit status). */
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

static int landlock_mode(void) {
    struct landlock_ruleset_attr attr = {
        .handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REFER |
                             LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                             LANDLOCK_ACCESS_FS_WRITE_FILE,
    };
    long ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        printf("no landlock\n");
        return 0;
    }
    work();
    printf("sandboxed\n");
    return 0;
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
    if (strcmp(mode, "landlock") == 0)
        return landlock_mode();
    fprintf(stderr, "usage: adversarial alarm [N]|threads|fd|chdir|landlock\n");
    return 2;
}
