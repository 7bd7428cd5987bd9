#include "matrix.h"

#include <stdio.h>

int main(void) {
  matrix *a = matrix_new(64);
  matrix *b = matrix_new(64);
  matrix_fill(a, 1);
  matrix_fill(b, 2);
  for (int round = 0; round < 3; round++) {
    matrix *c = matrix_mul(a, b);
    printf("round %d: trace %.1f norm %.3f\n", round, matrix_trace(c), matrix_norm(c));
    matrix_free(a);
    a = c;
  }
  matrix_free(a);
  matrix_free(b);
  return 0;
}
