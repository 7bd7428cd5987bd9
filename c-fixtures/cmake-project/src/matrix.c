#include "matrix.h"

#include <math.h>
#include <stdlib.h>

matrix *matrix_new(int n) {
  matrix *m = malloc(sizeof *m);
  m->n = n;
  m->cells = calloc((size_t)n * n, sizeof *m->cells);
  return m;
}

void matrix_fill(matrix *m, int seed) {
  for (int i = 0; i < m->n * m->n; i++)
    m->cells[i] = (double)((i * 31 + seed * 17) % 11) - 5.0;
}

matrix *matrix_mul(const matrix *a, const matrix *b) {
  matrix *c = matrix_new(a->n);
  for (int i = 0; i < a->n; i++)
    for (int k = 0; k < a->n; k++)
      for (int j = 0; j < a->n; j++)
        c->cells[i * a->n + j] += a->cells[i * a->n + k] * b->cells[k * a->n + j];
  return c;
}

double matrix_trace(const matrix *m) {
  double t = 0;
  for (int i = 0; i < m->n; i++)
    t += m->cells[i * m->n + i];
  return t;
}

double matrix_norm(const matrix *m) {
  double s = 0;
  for (int i = 0; i < m->n * m->n; i++)
    s += m->cells[i] * m->cells[i];
  return sqrt(s);
}

void matrix_free(matrix *m) {
  free(m->cells);
  free(m);
}
