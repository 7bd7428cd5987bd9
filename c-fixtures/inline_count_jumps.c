/* Inline counts across longjmp and fork (late placement on x86-64): step (with a loop, so it
 * keeps its events) is called 8 times by each of driver's iterations, inlined deep(), which
 * longjmps out every 97th; the process then forks, and parent and child each call driver
 * again for 5000 iterations. Every step call is counted: 200000 in each process's profile. */
#include <setjmp.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf env;

__attribute__((noinline)) unsigned step(unsigned x, unsigned n) {
    for (unsigned i = 0; i < n; i++)
        x = x * 31 + i;
    return x;
}

static unsigned deep(unsigned x, unsigned k) {
    unsigned s = 0;
    for (unsigned i = 0; i < 8; i++)
        s += step(x + i, 8 + (i & 3));
    if (k % 97 == 0)
        longjmp(env, 1);
    return s;
}

__attribute__((noinline)) unsigned driver(unsigned calls) {
    volatile unsigned s = 0;
    for (unsigned k = 1; k <= calls; k++) {
        if (setjmp(env) == 0)
            s += deep(s, k);
        else
            s += 1;
    }
    return s;
}

int main(void) {
    unsigned s = driver(20000);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child %u\n", driver(5000));
        return 0;
    }
    waitpid(pid, NULL, 0);
    printf("parent %u\n", s + driver(5000));
    return 0;
}
