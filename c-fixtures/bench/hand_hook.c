/* The reference probe pair of `instrument bench probes`: a minimal hand-written
 * -finstrument-functions hook, the least a measured profiler's pair can do. The runtime's clock
 * reads (rdtsc at entry, rdtscp at exit), a thread-local stack of (routine, start), and per
 * routine a record (calls, inclusive ticks) in a direct-mapped table; nothing else (no modes,
 * no overflow checks, no compensation, no output). Compiled with the leaf fixture, which is
 * built with -finstrument-functions (so rdtscp is the builtin: the header's __rdtscp is an
 * inline function, which that flag would instrument too). */
#include <stdint.h>
#include <x86intrin.h>

#define SLOTS 4096
#define DEPTH 1024

struct record {
    void *routine;
    uint64_t calls, ticks;
};
struct frame {
    void *routine;
    uint64_t start;
};

static struct record records[SLOTS];
static __thread struct frame stack[DEPTH];
static __thread unsigned depth;

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *routine, void *site) {
    (void)site;
    struct frame *f = &stack[depth++ & (DEPTH - 1)];
    f->routine = routine;
    f->start = __rdtsc();
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *routine, void *site) {
    unsigned aux;
    uint64_t now = __builtin_ia32_rdtscp(&aux);
    (void)site;
    struct frame *f = &stack[--depth & (DEPTH - 1)];
    struct record *r = &records[((uintptr_t)routine >> 4) & (SLOTS - 1)];
    r->routine = routine;
    r->calls++;
    r->ticks += now - f->start;
}
