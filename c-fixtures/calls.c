/* Known call structure. main: 1 call, calls a() 3 times and c() once (4 child calls).
 * a: 3 calls, each calls b() twice (6 child calls). b: 6 calls, each calls c() once.
 * c: 7 calls, no children. skipped(): marked INSTRUMENT_OFF, calls c() once more (8 in all),
 * which is then a child of main. gnu_off() is marked no_instrument_function, as for gcc's
 * -finstrument-functions, and calls c() once more (9 in all). */
#include <stdio.h>
#include "include/instrument.h"

volatile int sink;

__attribute__((noinline)) void c(void) { sink++; }
__attribute__((noinline)) void b(void) { c(); }
__attribute__((noinline)) void a(void) { b(); b(); }
__attribute__((noinline)) INSTRUMENT_OFF void skipped(void) { c(); }
__attribute__((noinline, no_instrument_function)) void gnu_off(void) { c(); }

int main(void) {
    for (int i = 0; i < 3; i++)
        a();
    c();
    skipped();
    gnu_off();
    printf("sink=%d\n", sink);
    return 0;
}
