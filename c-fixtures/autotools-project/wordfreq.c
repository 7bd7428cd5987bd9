/* Counts the words of its standard input and prints the most frequent ones. */
#include "config.h"
#include "table.h"

#include <ctype.h>
#include <stdio.h>

static int next_word(FILE *in, char *word, size_t size) {
  int c;
  size_t n = 0;
  while ((c = getc(in)) != EOF && !isalpha(c))
    ;
  while (c != EOF && isalpha(c)) {
    if (n + 1 < size)
      word[n++] = (char)tolower(c);
    c = getc(in);
  }
  word[n] = '\0';
  return n > 0;
}

int main(void) {
  struct table t;
  char word[64];
  table_init(&t);
  while (next_word(stdin, word, sizeof word))
    table_add(&t, word);
  table_sort(&t);
  for (size_t i = 0; i < t.used && i < 5; i++)
    printf("%u %s\n", t.entries[i].count, t.entries[i].word);
  printf("%zu distinct words, sizeof(long) = %d\n", t.used, SIZEOF_LONG);
  table_free(&t);
  return 0;
}
