#ifndef MATRIX_H
#define MATRIX_H

typedef struct {
  int n;
  double *cells;
} matrix;

matrix *matrix_new(int n);
void matrix_fill(matrix *m, int seed);
matrix *matrix_mul(const matrix *a, const matrix *b);
double matrix_trace(const matrix *m);
double matrix_norm(const matrix *m);
void matrix_free(matrix *m);

#endif
