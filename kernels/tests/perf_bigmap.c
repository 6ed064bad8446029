/* perf_bigmap.c - timing of the per-exec kernels per variant (`make perf`; not a test).
 * Usage: perf_bigmap [hit_keys=5000] [reps=100] [slots_log2=21]
 * Each figure is the best of `reps` runs of one kernel on a map freshly reset and filled with
 * the same hits (hit_keys random keys, half of them hit twice), virgin map in steady state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bigmap.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t rng = 42;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

enum { OPS = 5 };
static const char *const op_names[OPS] = {"classify_compare", "compare", "hash", "count_nonzero",
                                          "reset"};

static void run(bm_layout layout, unsigned w, size_t slots, const uint64_t *keys, size_t nkeys,
                int reps) {
  bm_config cfg = {layout, w, BM_NEVERZERO, slots, layout == BM_FLAT ? 0 : slots};
  bm_map m;
  if (bm_map_create(&m, &cfg, 0) != BM_OK) exit(1);
  uint8_t *virgin = malloc(m.capacity);
  memset(virgin, 0xff, m.capacity);
  double scalar[OPS] = {0};
  for (int v = BM_VARIANT_SCALAR; v <= BM_VARIANT_AVX512; v++) {
    if (bm_select_variant((bm_variant)v) != BM_OK) continue;
    double best[OPS];
    volatile uint64_t sink = 0;
    for (int op = 0; op < OPS; op++) {
      best[op] = 1e30;
      for (int r = 0; r < reps; r++) {
        bm_reset(&m);
        bm_update_many(&m, keys, nkeys);
        bm_update_many(&m, keys, nkeys / 2);
        if (op == 1 || op == 2) bm_classify(&m);
        double t0 = now_ns();
        switch (op) {
          case 0: sink += (uint64_t)bm_classify_compare(&m, virgin); break;
          case 1: sink += (uint64_t)bm_compare(&m, virgin); break;
          case 2: sink += bm_hash(&m); break;
          case 3: sink += bm_count_nonzero(&m); break;
          default: bm_reset(&m); break;
        }
        double t = now_ns() - t0;
        if (t < best[op]) best[op] = t;
      }
      if (v == BM_VARIANT_SCALAR) scalar[op] = best[op];
      if (sink == 1) printf(" ");  /* keep the results alive */
      printf("%-8s u%-2u slots=%-8llu used=%-8llu %-7s %-16s %10.2f us  x%.2f vs scalar\n",
             layout == BM_FLAT ? "flat" : "twolevel", w, (unsigned long long)slots,
             (unsigned long long)bm_map_used(&m), bm_variant_name((bm_variant)v), op_names[op],
             best[op] / 1e3, scalar[op] / best[op]);
    }
  }
  bm_select_variant(BM_VARIANT_AUTO);
  free(virgin);
  bm_map_destroy(&m);
}

int main(int argc, char **argv) {
  size_t nkeys = argc > 1 ? (size_t)atol(argv[1]) : 5000;
  int reps = argc > 2 ? atoi(argv[2]) : 100;
  unsigned lg = argc > 3 ? (unsigned)atoi(argv[3]) : 21;
  size_t slots = (size_t)1 << lg;
  uint64_t *keys = malloc((nkeys + 1) * sizeof *keys);
  for (size_t i = 0; i < nkeys; i++) keys[i] = next();
  for (unsigned w = 8; w <= 64; w *= 2) {
    run(BM_FLAT, w, slots, keys, nkeys, reps);
    run(BM_TWOLEVEL, w, slots, keys, nkeys, reps);
  }
  free(keys);
  return 0;
}
