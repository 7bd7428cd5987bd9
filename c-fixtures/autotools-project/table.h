#ifndef TABLE_H
#define TABLE_H

#include <stddef.h>

struct entry {
  char *word;
  unsigned count;
};

struct table {
  struct entry *entries;
  size_t used, size;
};

void table_init(struct table *t);
void table_add(struct table *t, const char *word);
void table_sort(struct table *t);
void table_free(struct table *t);

#endif
