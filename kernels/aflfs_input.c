/* aflfs_input.c - the fork server's test cases (afl's @@ file, else shared memory, else stdin),
 * one input through the harness, a child's warm-up, and the run without a fork server. */
#include "aflfs_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

const char *aflfs_file_argument(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-') return argv[i];
  return NULL;
}

static size_t read_all(aflfs_state *s, int fd) {
  size_t n = 0;
  for (;;) {
    if (n == s->buf_cap) {
      size_t cap = s->buf_cap ? s->buf_cap * 2 : 4096;
      uint8_t *b = realloc(s->buf, cap);
      if (!b) aflfs_fatal(NULL, "out of memory reading a test case");
      s->buf = b;
      s->buf_cap = cap;
    }
    ssize_t r = read(fd, s->buf + n, s->buf_cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  return n;
}

/* The next test case, copied to a heap block of exactly its size (so a sanitizer sees reads
 * past its end, as under libFuzzer). The caller frees it. */
static uint8_t *next_input(aflfs_state *s, size_t *len) {
  const uint8_t *src;
  size_t n;
  if (s->shm_in) {
    uint32_t l;
    memcpy(&l, s->shm_in, 4);
    n = l > AFLFS_MAX_INPUT ? AFLFS_MAX_INPUT : l;
    src = s->shm_in + 4;
  } else if (s->file) {
    int fd = open(s->file, O_RDONLY | O_CLOEXEC);
    n = 0;
    if (fd >= 0) {
      n = read_all(s, fd);
      close(fd);
    }
    src = s->buf;
  } else {
    (void)lseek(0, 0, SEEK_SET);
    n = read_all(s, 0);
    src = s->buf;
  }
  uint8_t *copy = malloc(n ? n : 1);
  if (!copy) aflfs_fatal(NULL, "out of memory copying a test case of %zu bytes", n);
  if (n) memcpy(copy, src, n);
  *len = n;
  return copy;
}

/* One input: per-thread history and call stack reset (cov_exec_begin), wide counters of the
 * used slots zeroed, the harness, then the wide counters saturated into afl's map. */
void aflfs_run_one(aflfs_state *s, cov_test_one_fn test_one) {
  size_t len;
  uint8_t *data = next_input(s, &len);
  cov_exec_begin();
  if (s->wide) memset(s->wide, 0, (size_t)bm_map_used(&s->map) * (s->cfg.map.width_bits / 8));
  test_one(data, len);
  cov_exec_end();
  if (s->cfg.union_mask) cov_events_to_map(s->afl_map, s->cfg.map_bytes, s->cfg.union_mask);
  if (s->wide) aflfs_export_wide(s);
  free(data);
}

/* Before its first input a child runs the harness once on 4 zero bytes and forgets that run's
 * coverage, as AFL++'s libFuzzer driver does (utils/aflpp_driver: one call on a 4-byte input after
 * the fork server starts, its coverage cleared by the first __AFL_LOOP). One-time initialisation
 * inside LLVMFuzzerTestOneInput (static tables, lazily registered codecs) then never shows as the
 * first input's coverage in each new child: without it afl-fuzz 4.04c saw variable edges on
 * libtiff's guard build (stability 99.79 %, 4 variable bytes; AFL++'s own build 100 %) and spent
 * its long calibration on them. It runs after afl has the child's pid, so afl's timeout covers it
 * as it covers AFL++'s call (a harness that hangs on it is killed, never waited for). afl cleared
 * its map before the request that started this child; the warm-up's counts are cleared here
 * (afl's map; the wide counters are zeroed per input). */
void aflfs_warm_up(aflfs_state *s, cov_test_one_fn test_one) {
  static const uint8_t dummy[4];
  cov_exec_begin();
  test_one(dummy, sizeof dummy);
  cov_exec_end();
  memset(s->afl_map, 0, (size_t)s->cfg.map_bytes);
}

/* __AFL_SHM_ID without a fork server (afl-showmap's single-file mode execs the target directly,
 * as does afl-fuzz with AFL_NO_FORKSRV): each file argument (else stdin) runs once, its
 * coverage lands in afl's map. */
void aflfs_run_direct(aflfs_state *s, cov_test_one_fn test_one, int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i <= argc; i++) {
    if (i < argc && argv[i][0] == '-') continue;
    if (i == argc && ran) break;
    s->file = i < argc ? argv[i] : NULL; /* i == argc: stdin, when no file was given */
    aflfs_run_one(s, test_one);
    ran = 1;
  }
  exit(0);
}
