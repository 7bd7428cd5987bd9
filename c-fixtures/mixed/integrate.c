/* The C half of the mixed-language fixture: Fortran calls `integrate` (bind(c)), which calls
 * back into the Fortran integrand once per sample point, and `report_c` calls the Fortran
 * routine `fortran_log` by its bind(c) name. */
#include <stdio.h>

double integrand(const double *x);   /* Fortran, bind(c) */
void fortran_log(const int *value);   /* Fortran, bind(c) */

static double midpoint(double a, double h, int i) { return a + (i + 0.5) * h; }

double integrate(double a, double b, int n) {
  double h = (b - a) / n, sum = 0;
  for (int i = 0; i < n; i++) {
    double x = midpoint(a, h, i);
    sum += integrand(&x);
  }
  return sum * h;
}

void report_c(int n) {
  printf("C reports n = %d\n", n);
  fflush(stdout);
  fortran_log(&n);
}
