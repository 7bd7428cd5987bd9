/* A long-running program to watch with `instrument top`: `live STOPFILE [fork]` calls work()
 * (about 50 microseconds of arithmetic) until STOPFILE exists (at most 60 s), then prints how
 * many times it called it: the exact count a profile must match. With `fork`, it forks first
 * and parent and child both work; the parent prints "child PID" first and waits for the child.
 * It prints "started" once work() has run 100 times. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile double sink;

__attribute__((noinline)) void work(void) {
    double x = 0;
    for (int i = 0; i < 20000; i++)
        x += i * 0.5;
    sink = x;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) long work_until(const char *stop) {
    long calls = 0;
    double end = seconds() + 60;
    while (access(stop, F_OK) != 0 && seconds() < end) {
        for (int i = 0; i < 100; i++, calls++)
            work();
        if (calls == 100) {
            printf("started\n");
            fflush(stdout);
        }
    }
    return calls;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: live STOPFILE [fork]\n");
        return 2;
    }
    pid_t child = argc > 2 ? fork() : -1;
    if (child > 0)
        printf("child %d\n", (int)child);
    fflush(stdout);
    long calls = work_until(argv[1]);
    if (child > 0)
        waitpid(child, NULL, 0);
    printf("%s work %ld\n", child == 0 ? "child" : "main", calls);
    return 0;
}
