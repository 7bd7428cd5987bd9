/* Five kernels of one loop, called equally often: each becomes hot (and reaches every power of
 * four of its calls) within a call of the others, as the solvers of a stencil code do. With
 * compensation on, each must get its probe cost measured in place, not only the ones whose
 * offer found no other estimation under way (70000 calls: offers at 2^14 and 2^16 only). */
#include <stdio.h>
#include <stdlib.h>

volatile double sink;

__attribute__((noinline)) double k1(double x) { return x * 1.000001 + 0.25; }
__attribute__((noinline)) double k2(double x) { return x * 0.999999 - 0.125; }
__attribute__((noinline)) double k3(double x) { return x * 1.0000005 + 0.0625; }
__attribute__((noinline)) double k4(double x) { return x * 0.9999995 - 0.03125; }
__attribute__((noinline)) double k5(double x) { return x * 1.0000002 + 0.5; }

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 70000;
    double a = 1.0, b = 2.0, c = 3.0, d = 4.0, e = 5.0;
    for (long i = 0; i < n; i++) {
        a = k1(a);
        b = k2(b);
        c = k3(c);
        d = k4(d);
        e = k5(e);
    }
    sink = a + b + c + d + e;
    printf("done\n");
    return 0;
}
