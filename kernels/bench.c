/* bench.c - time the per-exec map work of a layout/size/width on this host (C11).
 *
 * Replays a key trace (per execution: a list of (hashed key, hit count) records, as in the
 * probe's traces/<metric>.bin) into a BigMap (bigmap.h) and times, for every execution:
 *   reset             bm_reset (flat: memset of all H counters; twolevel: [0, used_key))
 *   update            every hit of every record: bm_<layout>_update_u<W>_<policy>(key)
 *   classify_compare  bm_classify_compare against an 8-bit virgin map (AFL has_new_bits)
 *   hash              bm_hash (of the classified bytes up to the last non-zero one)
 * with clock_gettime(CLOCK_MONOTONIC) between the phases; the timer's own cost (median of
 * back-to-back readings) is subtracted from each phase.
 *
 * The hits of one record are replayed back to back (the trace keeps no interleaving), which
 * is friendlier to the caches than the real order; the update figure is a lower bound.
 *
 * Protocol: the map is created once; every record is updated once and the map reset
 * ("priming", so twolevel slot assignment is done before timing, as after a fuzzer's first
 * minutes); `warmup_rounds` untimed rounds; then `rounds` timed rounds. A round runs
 * executions of the trace cyclically until it has run at least `min_execs` executions and
 * lasted at least `round_ns` nanoseconds (or it has run `max_execs` executions). Per round,
 * out[] receives AT_BENCH_FIELDS doubles: mean ns per exec of each phase, the total, the
 * executions run and the hits replayed.
 *
 * Exposed to Python with ctypes (autotune/measure/native.py); built as its own shared
 * library with the bigmap sources.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigmap.h"

#define AT_BENCH_FIELDS 7 /* reset, update, classify_compare, hash, total, execs, hits */
#define AT_BENCH_E_ARGS (-10)

typedef struct at_bench_spec {
  int32_t layout;          /* a bm_layout */
  uint32_t width_bits;     /* 8, 16, 32, 64 */
  int32_t policy;          /* BM_WRAP, BM_NEVERZERO, BM_SATURATE */
  uint32_t flags;          /* bm_map_create flags (BM_F_NO_HUGEPAGE) */
  uint64_t index_slots;    /* H */
  uint64_t capacity;       /* C (twolevel) */
  uint32_t warmup_rounds;
  uint32_t rounds;
  uint64_t round_ns;       /* minimum duration of a round */
  uint64_t min_execs;      /* minimum executions per round (>= 1) */
  uint64_t max_execs;      /* maximum executions per round (0 = no limit) */
} at_bench_spec;

typedef struct at_bench_info {
  double timer_overhead_ns; /* subtracted from every phase */
  uint64_t used_key;        /* slots the per-exec ops cover (flat: H) */
  uint64_t overflow_keys;   /* twolevel: keys mapped to the overflow slot */
  int64_t hugepage_bytes;   /* -1 if unknown */
  uint64_t sink;            /* folds the kernels' results so they are not optimised away */
  char variant[16];         /* kernel variant name (scalar/avx2/avx512) */
} at_bench_info;

typedef struct at_trace {
  uint64_t n_execs;
  const uint64_t *offsets; /* n_execs + 1 record offsets */
  const uint32_t *keys;    /* hashed keys (hk32) */
  const uint32_t *counts;  /* hits of the key in that execution */
} at_trace;

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Median cost of one clock_gettime reading. */
static double timer_overhead_ns(void) {
  enum { N = 1001 };
  uint64_t d[N];
  for (int i = 0; i < N; i++) {
    uint64_t a = now_ns();
    uint64_t b = now_ns();
    d[i] = b - a;
  }
  qsort(d, N, sizeof d[0], cmp_u64);
  return (double)d[N / 2];
}

/* Replay of one execution's hits, specialised per layout/width/policy (inline updates). */
typedef void (*replay_fn)(bm_map *m, const uint32_t *keys, const uint32_t *counts, size_t n);

#define AT_DEF_REPLAY(L, W, POL)                                                          \
  static void replay_##L##_u##W##_##POL(bm_map *m, const uint32_t *keys,                  \
                                         const uint32_t *counts, size_t n) {              \
    for (size_t i = 0; i < n; i++) {                                                      \
      uint64_t k = keys[i];                                                               \
      for (uint32_t c = counts[i]; c != 0; c--) bm_##L##_update_u##W##_##POL(m, k);       \
    }                                                                                     \
  }
#define AT_DEF_REPLAY_W(L, W) AT_DEF_REPLAY(L, W, wrap) AT_DEF_REPLAY(L, W, nz) AT_DEF_REPLAY(L, W, sat)
#define AT_DEF_REPLAY_L(L) AT_DEF_REPLAY_W(L, 8) AT_DEF_REPLAY_W(L, 16) AT_DEF_REPLAY_W(L, 32) AT_DEF_REPLAY_W(L, 64)
AT_DEF_REPLAY_L(flat)
AT_DEF_REPLAY_L(twolevel)
AT_DEF_REPLAY_L(exact)

#define AT_ROW(L, W) {replay_##L##_u##W##_wrap, replay_##L##_u##W##_nz, replay_##L##_u##W##_sat}
#define AT_LAYOUT(L) {AT_ROW(L, 8), AT_ROW(L, 16), AT_ROW(L, 32), AT_ROW(L, 64)}
static const replay_fn replay_table[][4][3] = {AT_LAYOUT(flat), AT_LAYOUT(twolevel), AT_LAYOUT(exact)};
#define AT_N_LAYOUTS (sizeof replay_table / sizeof replay_table[0]) /* indexed by bm_layout */

/* One execution; adds the per-phase nanoseconds to acc[0..3]; returns hits replayed. */
static uint64_t run_exec(bm_map *m, replay_fn replay, const at_trace *t, uint64_t e, uint8_t *virgin,
                         double overhead, double acc[4], uint64_t *sink) {
  const size_t lo = (size_t)t->offsets[e], n = (size_t)(t->offsets[e + 1] - t->offsets[e]);
  uint64_t t0 = now_ns();
  bm_reset(m);
  uint64_t t1 = now_ns();
  replay(m, t->keys + lo, t->counts + lo, n);
  uint64_t t2 = now_ns();
  int r = bm_classify_compare(m, virgin);
  uint64_t t3 = now_ns();
  uint64_t h = bm_hash(m);
  uint64_t t4 = now_ns();
  *sink += h + (uint64_t)r;
  acc[0] += (double)(t1 - t0) - overhead;
  acc[1] += (double)(t2 - t1) - overhead;
  acc[2] += (double)(t3 - t2) - overhead;
  acc[3] += (double)(t4 - t3) - overhead;
  uint64_t hits = 0;
  for (size_t i = 0; i < n; i++) hits += t->counts[lo + i];
  return hits;
}

static int check_trace(const at_trace *t) {
  if (!t || t->n_execs == 0 || !t->offsets || !t->keys || !t->counts) return 0;
  if (t->offsets[0] != 0) return 0;
  for (uint64_t e = 0; e < t->n_execs; e++)
    if (t->offsets[e + 1] < t->offsets[e]) return 0;
  return 1;
}

/* Run the benchmark. out: spec->rounds * AT_BENCH_FIELDS doubles. Returns BM_OK or an error
 * (bigmap's BM_E_*, or AT_BENCH_E_ARGS for a bad spec/trace). */
int at_bench_run(const at_bench_spec *spec, const at_trace *trace, double *out, at_bench_info *info) {
  if (!spec || !out || !info || !check_trace(trace)) return AT_BENCH_E_ARGS;
  if (spec->layout < 0 || (size_t)spec->layout >= AT_N_LAYOUTS) return AT_BENCH_E_ARGS;
  if (spec->policy < BM_WRAP || spec->policy > BM_SATURATE || spec->rounds == 0) return AT_BENCH_E_ARGS;
  bm_config cfg = {.layout = (bm_layout)spec->layout,
                   .width_bits = spec->width_bits,
                   .policy = (bm_policy)spec->policy,
                   .index_slots = spec->index_slots,
                   .capacity = spec->layout == BM_FLAT ? spec->index_slots : spec->capacity};
  if (bm_config_check(&cfg) != BM_OK) return BM_E_CONFIG;
  bm_map m;
  int rc = bm_map_create(&m, &cfg, spec->flags);
  if (rc != BM_OK) return rc;
  const uint64_t virgin_bytes = m.capacity;
  uint8_t *virgin = malloc((size_t)virgin_bytes);
  if (!virgin) {
    bm_map_destroy(&m);
    return BM_E_NOMEM;
  }
  memset(virgin, 0xFF, (size_t)virgin_bytes);
  replay_fn replay = replay_table[spec->layout][bm_width_index(spec->width_bits)][spec->policy];

  /* Priming: assign every key its slot (twolevel), then clear the counters. */
  const uint64_t n_records = trace->offsets[trace->n_execs];
  for (uint64_t i = 0; i < n_records; i++) bm_update(&m, trace->keys[i]);
  bm_reset(&m);

  memset(info, 0, sizeof *info);
  const double overhead = timer_overhead_ns();
  info->timer_overhead_ns = overhead;
  const uint64_t min_execs = spec->min_execs ? spec->min_execs : 1;
  uint64_t e = 0, sink = 0;
  const uint32_t total_rounds = spec->warmup_rounds + spec->rounds;
  for (uint32_t r = 0; r < total_rounds; r++) {
    double acc[4] = {0, 0, 0, 0};
    uint64_t execs = 0, hits = 0;
    const uint64_t start = now_ns();
    for (;;) {
      hits += run_exec(&m, replay, trace, e, virgin, overhead, acc, &sink);
      execs++;
      e = e + 1 == trace->n_execs ? 0 : e + 1;
      if (spec->max_execs && execs >= spec->max_execs) break;
      if (execs >= min_execs && now_ns() - start >= spec->round_ns) break;
    }
    if (r < spec->warmup_rounds) continue;
    double *o = out + (size_t)(r - spec->warmup_rounds) * AT_BENCH_FIELDS;
    double total = 0;
    for (int p = 0; p < 4; p++) {
      o[p] = acc[p] / (double)execs;
      total += o[p];
    }
    o[4] = total;
    o[5] = (double)execs;
    o[6] = (double)hits;
  }
  info->used_key = bm_map_used(&m);
  info->overflow_keys = *m.overflow_keys;
  info->hugepage_bytes = bm_map_hugepage_bytes(&m);
  info->sink = sink;
  const char *vn = bm_variant_name(bm_active_variant());
  strncpy(info->variant, vn ? vn : "unknown", sizeof info->variant - 1);
  free(virgin);
  bm_map_destroy(&m);
  return BM_OK;
}

/* For ctypes: the layout of the structs as seen by C, so Python can check its mirror. */
uint32_t at_bench_abi(uint32_t what) {
  switch (what) {
    case 0: return (uint32_t)sizeof(at_bench_spec);
    case 1: return (uint32_t)sizeof(at_bench_info);
    case 2: return (uint32_t)sizeof(at_trace);
    case 3: return AT_BENCH_FIELDS;
    default: return 0;
  }
}
