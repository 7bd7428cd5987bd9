#include "config.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>
#ifdef HAVE_STRINGS_H
#include <strings.h>
#endif

void table_init(struct table *t) {
  t->used = 0;
  t->size = 16;
  t->entries = calloc(t->size, sizeof *t->entries);
}

static size_t find(const struct table *t, const char *word) {
  for (size_t i = 0; i < t->used; i++)
    if (strcasecmp(t->entries[i].word, word) == 0)
      return i;
  return t->used;
}

void table_add(struct table *t, const char *word) {
  size_t i = find(t, word);
  if (i == t->used) {
    if (t->used == t->size) {
      t->size *= 2;
      t->entries = realloc(t->entries, t->size * sizeof *t->entries);
    }
    t->entries[t->used].word = strdup(word);
    t->entries[t->used].count = 0;
    t->used++;
  }
  t->entries[i].count++;
}

static int by_count(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  if (x->count != y->count)
    return x->count < y->count ? 1 : -1;
  return strcmp(x->word, y->word);
}

void table_sort(struct table *t) { qsort(t->entries, t->used, sizeof *t->entries, by_count); }

void table_free(struct table *t) {
  for (size_t i = 0; i < t->used; i++)
    free(t->entries[i].word);
  free(t->entries);
}
