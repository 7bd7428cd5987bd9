/* A routine called once that calls 300 distinct routines once each, then busy-waits 2 ms: with
 * callpaths on, each call creates a callpath node (fresh memory), which must not show in
 * setup's time (tests/tests/callpaths.rs compares it with the flat profile's). */
#include <stdio.h>
#include <time.h>

static volatile long sink;

#define LEAF(n) __attribute__((noinline)) void leaf_##n(void) { sink += n; }
#define LEAF10(p) LEAF(p##0) LEAF(p##1) LEAF(p##2) LEAF(p##3) LEAF(p##4) LEAF(p##5) LEAF(p##6) LEAF(p##7) LEAF(p##8) LEAF(p##9)
#define LEAF100(p) LEAF10(p##0) LEAF10(p##1) LEAF10(p##2) LEAF10(p##3) LEAF10(p##4) LEAF10(p##5) LEAF10(p##6) LEAF10(p##7) LEAF10(p##8) LEAF10(p##9)
LEAF100(1)
LEAF100(2)
LEAF100(3)

#define CALL(n) leaf_##n();
#define CALL10(p) CALL(p##0) CALL(p##1) CALL(p##2) CALL(p##3) CALL(p##4) CALL(p##5) CALL(p##6) CALL(p##7) CALL(p##8) CALL(p##9)
#define CALL100(p) CALL10(p##0) CALL10(p##1) CALL10(p##2) CALL10(p##3) CALL10(p##4) CALL10(p##5) CALL10(p##6) CALL10(p##7) CALL10(p##8) CALL10(p##9)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) void setup(void) {
    CALL100(1)
    CALL100(2)
    CALL100(3)
    double end = now_ms() + 2.0;
    while (now_ms() < end)
        ;
}

int main(void) {
    setup();
    printf("sink %ld\n", (long)sink);
    return 0;
}
