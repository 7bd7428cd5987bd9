/* exit(3) at call depth 5: main -> level(4) -> level(3) -> level(2) -> level(1) -> level(0),
 * which calls exit. Five frames are open when the runtime writes the profile. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void level(int n) {
    if (n == 0) {
        puts("exiting from depth 5");
        fflush(stdout);
        exit(3);
    }
    level(n - 1);
    puts("unreachable");
}

int main(void) {
    level(4);
    return 0;
}
