/* Drives the zlib sources the real-build tests and the intrusion benchmark fetch (zlib ships
 * no program): deflates a pseudo-random text of N KiB at level 6 through a small output
 * buffer, inflates it back, checks the round trip and prints the sizes and a checksum. The
 * text is built from a fixed seed, so the output is the same on every run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK 16384

static unsigned long seed = 12345;

static unsigned next_random(void) {
  seed = seed * 6364136223846793005UL + 1442695040888963407UL;
  return (unsigned)(seed >> 33);
}

/* Words from a small vocabulary, so the text compresses as prose does. */
static void fill_text(unsigned char *text, size_t size) {
  static const char *words[] = {"profile", "inline", "probe",   "routine", "the",
                                "of",      "loop",   "compile", "measure", "time",
                                "call",    "and",    "a",       "stack",   "clock"};
  size_t at = 0;
  while (at < size) {
    const char *word = words[next_random() % 15];
    size_t length = strlen(word);
    for (size_t i = 0; i < length && at < size; i++)
      text[at++] = (unsigned char)word[i];
    if (at < size)
      text[at++] = next_random() % 11 == 0 ? '\n' : ' ';
  }
}

/* Runs `step` (deflate or inflate) over `size` bytes of `in` into `out` through a small output
 * buffer until the stream ends; returns the bytes written, or exits with `error`. */
static size_t pump(z_stream *s, int (*step)(z_streamp, int), int flush, const unsigned char *in,
                   size_t size, unsigned char *out, size_t room, int error) {
  s->next_in = (unsigned char *)in;
  s->avail_in = (uInt)size;
  size_t written = 0;
  int status;
  do {
    s->next_out = out + written;
    s->avail_out = (uInt)(room - written < CHUNK ? room - written : CHUNK);
    status = step(s, flush);
    written = (size_t)(s->next_out - out);
  } while (status == Z_OK);
  if (status != Z_STREAM_END)
    exit(error);
  return written;
}

static size_t deflate_all(const unsigned char *in, size_t size, unsigned char *out,
                          size_t room) {
  z_stream s;
  memset(&s, 0, sizeof s);
  if (deflateInit(&s, 6) != Z_OK)
    exit(2);
  size_t written = pump(&s, deflate, Z_FINISH, in, size, out, room, 3);
  deflateEnd(&s);
  return written;
}

static size_t inflate_all(const unsigned char *in, size_t size, unsigned char *out,
                          size_t room) {
  z_stream s;
  memset(&s, 0, sizeof s);
  if (inflateInit(&s) != Z_OK)
    exit(4);
  size_t written = pump(&s, inflate, Z_NO_FLUSH, in, size, out, room, 5);
  inflateEnd(&s);
  return written;
}

int main(int argc, char **argv) {
  size_t size = (size_t)(argc > 1 ? atol(argv[1]) : 1024) * 1024;
  unsigned char *text = malloc(size), *packed = malloc(size + size / 2 + 1024);
  unsigned char *back = malloc(size);
  if (!text || !packed || !back)
    return 1;
  fill_text(text, size);
  size_t packed_size = deflate_all(text, size, packed, size + size / 2 + 1024);
  size_t back_size = inflate_all(packed, packed_size, back, size);
  if (back_size != size || memcmp(text, back, size) != 0)
    return 6;
  printf("%zu bytes -> %zu bytes, adler32 %08lx\n", size, packed_size,
         adler32(0, back, (uInt)back_size));
  free(text);
  free(packed);
  free(back);
  return 0;
}
