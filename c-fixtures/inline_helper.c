/* A static helper near the inliner's threshold: the plain -O2 build inlines it into main. The
 * probes of early placement must not push it over the threshold (their calls are free to the
 * inliner), so the instrumented build inlines it too and still counts its 200 calls. */
#include <stdio.h>

static int helper(int *a, int n, int k) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        if (a[i] > k)
            s += a[i] * 3 - k;
        else if (a[i] < -k)
            s -= a[i] ^ k;
        else
            s += i;
        if (s > 100000)
            s /= 7;
    }
    for (int i = 0; i < n; i += 2) {
        s += a[i] & k;
        if (s & 1)
            s ^= 0x55;
        else
            s += 3;
    }
    for (int i = 0; i < n; i += 3) {
        s -= a[i] | k;
        if (s & 2)
            s ^= 0x33;
        else
            s -= 5;
    }
    return s;
}

int a[1000];

int main(int argc, char **argv) {
    (void)argv;
    for (int i = 0; i < 1000; i++)
        a[i] = (i * 7919) % 2001 - 1000;
    int t = 0;
    for (int r = 0; r < 100; r++)
        t += helper(a, 1000, r) + helper(a, 500, argc);
    printf("%d\n", t);
    return 0;
}
