/* test_cnt.c - the guard build's counter flush (cov_cnt.h): the block kernel, which skips blocks of
 * zero counters, against the byte loop, over lengths, offsets, densities and map contents that carry. */
#include <stdlib.h>
#include <string.h>

#include "../cov_cnt.h"
#include "test_util.h"

enum { CNT_MAX = 4 * COV_CNT_BLOCK + 37 };

/* Counters: 0, or 1..255 with probability num / 64 per byte, in runs (a function's blocks are
 * adjacent) when runs is set; the map: 0, or anything (a later flush into a map that holds counts). */
static void fill(uint8_t *c, uint8_t *d, size_t n, unsigned num, int runs, int map_full) {
  uint8_t on = 0;
  for (size_t i = 0; i < n; i++) {
    if (!runs || i % 8 == 0) on = (uint8_t)((t_rand() & 63) < num);
    c[i] = on ? (uint8_t)(1 + t_rand() % 255) : 0;
    d[i] = map_full ? (uint8_t)t_rand() : 0;
  }
}

void test_cnt_flush(void) {
  static uint8_t c1[CNT_MAX + 16], c2[CNT_MAX + 16], d1[CNT_MAX + 16], d2[CNT_MAX + 16];
  unsigned long cases = 0, mismatches = 0;
  for (size_t n = 0; n <= CNT_MAX; n += (n < 2 * COV_CNT_BLOCK + 2 ? 1 : 7))
    for (size_t off = 0; off < 3; off++)
      for (unsigned num = 0; num <= 64; num += 16)
        for (int shape = 0; shape < 4; shape++) {
          uint8_t *c = c1 + off, *d = d1 + (2 - off);
          fill(c, d, n, num, shape & 1, shape & 2);
          memcpy(c2, c, n);
          memcpy(d2, d, n);
          cov_cnt_add_clear(d, c, n);
          cov_cnt_add_clear_bytes(d2, c2, n);
          int same = memcmp(d, d2, n) == 0 && memcmp(c, c2, n) == 0;
          for (size_t i = 0; i < n; i++) same &= c[i] == 0;
          mismatches += !same;
          cases++;
        }
  CHECK(mismatches == 0, "%lu of %lu flushes differ from the byte loop", mismatches, cases);
  /* the NeverZero carry: 255 + 1 = 1 and 200 + 100 = 45 (300 - 256 + 1), never 0 */
  uint8_t c[COV_CNT_BLOCK] = {1, 100, 0}, d[COV_CNT_BLOCK] = {255, 200, 7};
  cov_cnt_add_clear(d, c, sizeof c);
  CHECK(d[0] == 1 && d[1] == 45 && d[2] == 7 && c[0] == 0 && c[1] == 0, "carry: %u %u %u", d[0], d[1], d[2]);
}
