/* An OSS-Fuzz-style harness for libarchive (autotune's bug benchmark), our own, doing what
 * libarchive's own contrib/oss-fuzz/libarchive_fuzzer.cc does in C: every read filter and every
 * read format libarchive was built with, the input served from memory in one block, then for each
 * entry its header and all its data, until the end or a fatal error (a retry goes on to the next
 * header). Nothing is written anywhere. C11. */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "archive.h"
#include "archive_entry.h"

struct block {
  const uint8_t *data;
  size_t len;
};

/* archive_read_open's reader: the whole input once, then the end */
static la_ssize_t read_block(struct archive *a, void *client, const void **buf) {
  struct block *b = client;
  (void)a;
  *buf = b->data;
  la_ssize_t n = (la_ssize_t)b->len;
  b->len = 0;
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uint8_t out[4096];
  struct block b = {data, size};
  struct archive *a = archive_read_new();
  if (a == NULL)
    return 0;
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  if (archive_read_open(a, &b, NULL, read_block, NULL) == ARCHIVE_OK) {
    struct archive_entry *entry;
    for (;;) {
      int r = archive_read_next_header(a, &entry);
      if (r == ARCHIVE_EOF || r == ARCHIVE_FATAL)
        break;
      if (r == ARCHIVE_RETRY)
        continue;
      la_ssize_t got;
      while ((got = archive_read_data(a, out, sizeof out)) > 0)
        ;
      if (got == ARCHIVE_FATAL)
        break;
    }
  }
  archive_read_free(a);
  return 0;
}
