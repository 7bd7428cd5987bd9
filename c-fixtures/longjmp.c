/* returns_twice: catcher() calls setjmp, then thrower(3) recurses to depth 3 and longjmps back,
 * skipping three exit probes. catcher runs twice (2 calls), thrower 8 calls in all. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
volatile int sink;

__attribute__((noinline)) void thrower(int n) {
    if (n == 0)
        longjmp(env, 1);
    thrower(n - 1);
    sink++;
}

__attribute__((noinline)) int catcher(void) {
    if (setjmp(env) == 0) {
        thrower(3);
        return 0;
    }
    return 1;
}

int main(void) {
    int caught = catcher() + catcher();
    printf("caught=%d\n", caught);
    return 0;
}
