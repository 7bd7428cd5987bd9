/* Values live across probe calls in every register the probe convention preserves. Under early
 * placement on x86-64 the probes are called with preserve_most: a routine's arguments stay in
 * their argument registers across its entry probe, its result in rax across its exit probe, and
 * a loop's values across its exit probe. Each probe path (timed, counted, switched off, and the
 * in-place windows' boundaries) must give them back intact, so the output is the plain build's. */
#include <stdint.h>
#include <stdio.h>

__attribute__((noinline)) uint64_t six(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,
                                       uint64_t f) {
    return (a * 3 + b) ^ (c * 5 + d) ^ (e * 7 + f);
}

__attribute__((noinline)) uint64_t looped(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    for (uint64_t i = 0; i < (a & 3) + 1; i++) {
        a = a * 0x9E3779B97F4A7C15ull + b;
        b ^= a >> 17;
        c += a ^ d;
        d = (d << 7) | (d >> 57);
    }
    return a ^ b ^ c ^ d;
}

__attribute__((noinline)) double scaled(double x, uint64_t k) { return x * 1.0000001 + (double)(k & 7); }

int main(void) {
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
    double x = 0.5;
    for (int n = 0; n < 300000; n++) {
        a = six(a, b, c, d, e, f);
        b = looped(b, c, d, e);
        c += six(f, e, d, c, b, a);
        x = scaled(x, a);
        d ^= looped(c, d, e, f);
        e += a >> 3;
        f ^= b << 1;
    }
    printf("%llx %llx %llx %llx %llx %llx %.6f\n", (unsigned long long)a, (unsigned long long)b,
           (unsigned long long)c, (unsigned long long)d, (unsigned long long)e, (unsigned long long)f, x);
    return 0;
}
