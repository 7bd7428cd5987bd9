/* Errors that longjmp past a throttled catcher, as an interpreter's do (Lua's luaD_throw and
 * luaD_rawrunprotected): protected() calls setjmp around work(), CALLS times, and every
 * EVERY-th call fail() longjmps back to it at once: 20 fail calls, each skipping its exit.
 * protected() is too small for an event in the default build (its landing's probe names no
 * event) and, built with --instrument-min-instructions=0, is throttled (counted, without a
 * frame); work() is throttled. Prints the errors caught. */
#include <setjmp.h>
#include <stdio.h>

#define CALLS 400000
#define EVERY 20000

static jmp_buf env;
volatile unsigned sink;

__attribute__((noinline)) void work(int n) {
    for (int i = 0; i < n; i++)
        sink = sink * 31 + (unsigned)i;
}

__attribute__((noreturn, noinline)) void fail(int n) {
    for (int i = 0; i < n; i++)
        sink += (unsigned)i;
    longjmp(env, 1);
}

__attribute__((noinline)) int protected(int i) {
    if (setjmp(env) == 0) {
        if (i % EVERY == 0)
            fail(8);
        work(50);
        return 0;
    }
    return 1;
}

int main(void) {
    int caught = 0;
    for (int i = 0; i < CALLS; i++)
        caught += protected(i);
    printf("caught=%d\n", caught);
    return 0;
}
