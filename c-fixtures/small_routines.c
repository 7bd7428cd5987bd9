/* Late placement's small-routine rule (INSTRUMENT_MIN_INSTRUCTIONS, 200 by default): tiny has no
 * loop, no recursion and a handful of instructions, so it gets no events and its time is
 * main's; looping, countdown and big are as small or smaller in source but have a loop, a
 * recursion or over 200 instructions, and keep theirs. */
#include <stdio.h>

__attribute__((noinline)) unsigned tiny(unsigned x) { return x * 2654435761u + 1; }

__attribute__((noinline)) unsigned looping(unsigned n) {
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++)
        s = s * 31 + i;
    return s;
}

__attribute__((noinline)) unsigned countdown(unsigned n) { return n == 0 ? 1 : countdown(n - 1) * 3 + n; }

#define MIX(x) x = (x ^ (x >> 13)) * 2654435761u + 7;
#define MIX8(x) MIX(x) MIX(x) MIX(x) MIX(x) MIX(x) MIX(x) MIX(x) MIX(x)
/* 80 mixing steps of four instructions each, with no loop. */
__attribute__((noinline)) unsigned big(unsigned x) {
    MIX8(x) MIX8(x) MIX8(x) MIX8(x) MIX8(x) MIX8(x) MIX8(x) MIX8(x) MIX8(x) MIX8(x)
    return x;
}

int main(void) {
    unsigned acc = 1;
    for (unsigned i = 0; i < 1000; i++)
        acc = tiny(acc);
    for (unsigned i = 0; i < 10; i++)
        acc += looping(100 + i) + big(acc);
    acc += countdown(20);
    printf("%u\n", acc);
    return 0;
}
