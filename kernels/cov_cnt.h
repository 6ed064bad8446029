/* cov_cnt.h - a guard build's inline counters added into a map and zeroed (cov_sink.c's flush after
 * every execution, on a crash signal and at exit), in a header so that kernels/tests can check the
 * block kernel against the byte loop. */
#ifndef AUTOTUNE_COV_CNT_H
#define AUTOTUNE_COV_CNT_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Add the counters into the map (8-bit NeverZero: what the increments themselves would have done
 * there, a sum past 255 skipping 0 once; afl-fuzz zeroes its map before each run, so this is a
 * copy under afl) and zero them. */
static inline void cov_cnt_add_clear_bytes(uint8_t *restrict d, uint8_t *restrict c, size_t n) {
  for (size_t j = 0; j < n; j++) {
    uint8_t s = (uint8_t)(d[j] + c[j]);
    d[j] = (uint8_t)(s + (s < d[j])); /* d + c <= 510: one carry at most, and then s + 1 >= 1 */
    c[j] = 0;
  }
}

/* The same, a block of COV_CNT_BLOCK counters at a time, and a block whose counters are all 0 is
 * skipped: an execution runs a few percent of a program's blocks, and the counters of a
 * function's blocks are adjacent, so most blocks of counters stay 0 and neither they nor the map
 * are written (the map's bytes are 0 already under afl, or keep what they hold). A skipped block
 * costs its test; a non-zero one the same vector add as the plain loop. */
typedef uint8_t cov_cnt_v16 __attribute__((vector_size(16)));
#define COV_CNT_BLOCK 64
static inline void cov_cnt_add_clear(uint8_t *restrict d, uint8_t *restrict c, size_t n) {
  size_t j = 0;
  for (; j + COV_CNT_BLOCK <= n; j += COV_CNT_BLOCK) {
    cov_cnt_v16 cv[COV_CNT_BLOCK / 16], any = {0};
    memcpy(cv, c + j, COV_CNT_BLOCK);
    for (int k = 0; k < COV_CNT_BLOCK / 16; k++) any |= cv[k];
    uint64_t half[2];
    memcpy(half, &any, sizeof half);
    if (!(half[0] | half[1])) continue;
    cov_cnt_v16 dv[COV_CNT_BLOCK / 16];
    memcpy(dv, d + j, COV_CNT_BLOCK);
    for (int k = 0; k < COV_CNT_BLOCK / 16; k++) {
      cov_cnt_v16 s = dv[k] + cv[k];
      dv[k] = s - (cov_cnt_v16)(s < dv[k]); /* a lane that carried: s + 1 (the comparison is -1 there) */
    }
    memcpy(d + j, dv, COV_CNT_BLOCK);
    memset(c + j, 0, COV_CNT_BLOCK);
  }
  cov_cnt_add_clear_bytes(d + j, c + j, n - j);
}

#endif
