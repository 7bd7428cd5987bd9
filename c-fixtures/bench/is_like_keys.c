/* IS-like key generation, compiled twice into one program (is_like_paired.c): plainly as
 * KEYS = keys_plain and instrumented as KEYS = keys_instrumented, each calling its own copy of
 * randlc (bench-nas/common/randdp.c built with RANDLC's name), so that the two variants
 * alternate in one process and the machine's drift falls on both alike. */
double RANDLC(double *x, double a);

double KEYS(long n, double *seed) {
    double a = 1220703125.0, sum = 0;
    for (long i = 0; i < n; i++) {
        double x = RANDLC(seed, a);
        x += RANDLC(seed, a);
        x += RANDLC(seed, a);
        x += RANDLC(seed, a);
        sum += x;
    }
    return sum;
}
