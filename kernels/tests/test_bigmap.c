/* test_bigmap.c - C tests of the BigMap runtime: main and the paper's examples. */
#include <stdlib.h>
#include <string.h>

#include "../bigmap.h"
#include "../bigmap_internal.h"
#include "test_util.h"

unsigned long t_passed, t_failed;
uint64_t t_rng_state;

static bm_map make(bm_layout layout, unsigned w, bm_policy pol, uint64_t h, uint64_t c) {
  bm_config cfg = {layout, w, pol, h, c};
  bm_map m;
  int rc = bm_map_create(&m, &cfg, 0);
  CHECK(rc == BM_OK, "bm_map_create: %s", bm_strerror(rc));
  if (rc != BM_OK) exit(1);
  return m;
}

static void check_valid(const bm_map *m, const char *ctx) {
  const char *why = NULL;
  int ok = bm_validate(m, &why);
  CHECK(ok, "%s: bm_validate: %s", ctx, why);
}

/* DSN'21 Figure 5. Derivation from the figure and section IV-B:
 *  - (a) trace: the test runs A -> B -> A -> B -> C, i.e. the edges AB, BA, AB, BC, with the
 *    random edge ids E_AB = 7, E_BA = 1, E_BC = 9 in a map of 10 slots.
 *  - Steps (rows of (b) and (c)): initialize, reset, A->B, B->A, A->B, B->C, classify, compare,
 *    reset (before the next test).
 *  - Our layouts need a power-of-two H, so H = 16: ids 7, 1, 9 are below 10, so key & 15 gives
 *    the same slots; entries 10..15 must stay at their initial values throughout.
 *  - Flat (b): the hit count is at the edge id. Two-level (c): index_bitmap[E] gets used_key++ on
 *    first sight (AB -> 0, BA -> 1, BC -> 2); counts go to the dense slot; used_key column is
 *    0 0 1 2 2 3 3 3 3; the final reset clears only the used region and keeps the index.
 *  - classify leaves 2 and 1 unchanged (buckets {2} and {1}); compare against a fresh virgin map
 *    (all 0xFF) reports new coverage (2) and clears those virgin bits. */
enum { F5_STEPS = 9 };
static const char *const f5_names[F5_STEPS] = {"initialize", "reset", "A->B", "B->A", "A->B",
                                               "B->C", "classify", "compare", "reset"};
static const int f5_flat[F5_STEPS][10] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 0},
    {0, 1, 0, 0, 0, 0, 0, 1, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 2, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 2, 0, 1},
    {0, 1, 0, 0, 0, 0, 0, 2, 0, 1}, {0, 1, 0, 0, 0, 0, 0, 2, 0, 1}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
static const int f5_index[F5_STEPS][10] = {
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
    {-1, -1, -1, -1, -1, -1, -1, 0, -1, -1},  {-1, 1, -1, -1, -1, -1, -1, 0, -1, -1},
    {-1, 1, -1, -1, -1, -1, -1, 0, -1, -1},   {-1, 1, -1, -1, -1, -1, -1, 0, -1, 2},
    {-1, 1, -1, -1, -1, -1, -1, 0, -1, 2},    {-1, 1, -1, -1, -1, -1, -1, 0, -1, 2},
    {-1, 1, -1, -1, -1, -1, -1, 0, -1, 2}};
static const int f5_dense[F5_STEPS][10] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, {2, 1, 0, 0, 0, 0, 0, 0, 0, 0}, {2, 1, 1, 0, 0, 0, 0, 0, 0, 0},
    {2, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {2, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
static const int f5_used[F5_STEPS] = {0, 0, 1, 2, 2, 3, 3, 3, 3};

/* After classify the trace holds the buckets; for 8-bit maps that is the counter array. */
static uint64_t shown(const bm_map *m, uint64_t i, int step) {
  return step >= 6 && step <= 7 ? m->trace[i] : bm_counter_get(m, i);
}

static void figure5_run(bm_layout layout, unsigned w, bm_variant v) {
  enum { EAB = 7, EBA = 1, EBC = 9 };
  const uint64_t trace[4] = {EAB, EBA, EAB, EBC};
  bm_select_variant(v);
  bm_map m = make(layout, w, BM_NEVERZERO, 16, 16);
  uint8_t virgin[16];
  memset(virgin, 0xff, sizeof virgin);
  char ctx[128];
  for (int step = 0; step < F5_STEPS; step++) {
    int ret = -1;
    if (step == 1 || step == 8) bm_reset(&m);
    else if (step >= 2 && step <= 5) bm_update(&m, trace[step - 2]);
    else if (step == 6) bm_classify(&m);
    else if (step == 7) ret = bm_compare(&m, virgin);
    snprintf(ctx, sizeof ctx, "figure 5 %s u%u %s step %s", layout == BM_FLAT ? "flat" : "twolevel",
             w, bm_variant_name(v), f5_names[step]);
    for (int i = 0; i < 16; i++) {
      if (layout == BM_FLAT) {
        CHECK_EQ_U64(shown(&m, i, step), i < 10 ? f5_flat[step][i] : 0, ctx);
      } else {
        CHECK_EQ_U64(bm_index_get(&m, i), i < 10 ? (uint32_t)f5_index[step][i] : BM_UNASSIGNED, ctx);
        CHECK_EQ_U64(shown(&m, i, step), i < 10 ? f5_dense[step][i] : 0, ctx);
      }
    }
    if (layout != BM_FLAT) CHECK_EQ_U64(bm_map_used(&m), f5_used[step], ctx);
    if (step == 7) {
      CHECK(ret == 2, "%s: compare returned %d, want 2 (new keys)", ctx, ret);
      /* virgin bits of the buckets seen are cleared, nothing else */
      int s_ab = layout == BM_FLAT ? EAB : 0, s_ba = layout == BM_FLAT ? EBA : 1,
          s_bc = layout == BM_FLAT ? EBC : 2;
      for (int i = 0; i < 16; i++) {
        uint8_t want = i == s_ab ? (uint8_t)~2 : (i == s_ba || i == s_bc) ? (uint8_t)~1 : 0xff;
        CHECK_EQ_U64(virgin[i], want, ctx);
      }
      CHECK(bm_compare(&m, virgin) == 0, "%s: same trace again is not new", ctx);
    }
    check_valid(&m, ctx);
  }
  bm_map_destroy(&m);
}

void test_figure5(void) {
  for (int v = BM_VARIANT_SCALAR; v <= BM_VARIANT_AVX512; v++) {
    if (!bm_kernels_get((bm_variant)v)) continue;
    for (unsigned w = 8; w <= 64; w *= 2) {
      figure5_run(BM_FLAT, w, (bm_variant)v);
      figure5_run(BM_TWOLEVEL, w, (bm_variant)v);
    }
  }
  bm_select_variant(BM_VARIANT_AUTO);
}

/* DSN'21 section IV-D: P1 = A->B->C (edges AB, BC; used_key 2, map {1,1}),
 * P2 = A->B->C->D (AB, BC, CD; used_key 3, {1,1,1}), P3 = A->B->C again (used_key stays 3,
 * {1,1,0}). Hashing [0, used_key) would give hash(P1) != hash(P3); hashing up to the last
 * non-zero slot gives hash(P1) == hash(P3) != hash(P2). Block ids are arbitrary: A=3 B=12 C=5 D=9
 * with AFL's edge key (prev >> 1) ^ cur. */
static uint64_t run_path(bm_map *m, const uint64_t *blocks, int n) {
  bm_reset(m);
  for (int i = 1; i < n; i++) bm_update(m, (blocks[i - 1] >> 1) ^ blocks[i]);
  bm_classify(m);
  return bm_hash(m);
}

void test_hash_example(void) {
  const uint64_t A = 3, B = 12, C = 5, D = 9;
  const uint64_t p1[] = {A, B, C}, p2[] = {A, B, C, D}, p3[] = {A, B, C};
  for (int v = BM_VARIANT_SCALAR; v <= BM_VARIANT_AVX512; v++) {
    if (bm_select_variant((bm_variant)v) != BM_OK) continue;
    for (unsigned w = 8; w <= 64; w *= 2) {
      bm_map m = make(BM_TWOLEVEL, w, BM_NEVERZERO, 1u << 10, 64);
      uint64_t h1 = run_path(&m, p1, 3);
      CHECK_EQ_U64(bm_map_used(&m), 2, "P1 used_key");
      uint64_t naive1 = bm_hash_prefix(m.trace, bm_map_used(&m));
      uint64_t h2 = run_path(&m, p2, 4);
      CHECK_EQ_U64(bm_map_used(&m), 3, "P2 used_key");
      uint64_t h3 = run_path(&m, p3, 3);
      CHECK_EQ_U64(bm_map_used(&m), 3, "P3 used_key");
      CHECK_EQ_U64(m.trace[0], 1, "P3 map[0]");
      CHECK_EQ_U64(m.trace[1], 1, "P3 map[1]");
      CHECK_EQ_U64(m.trace[2], 0, "P3 map[2]");
      uint64_t naive3 = bm_hash_prefix(m.trace, bm_map_used(&m));
      CHECK(h1 == h3, "u%u %s: hash(P1) %016" PRIx64 " != hash(P3) %016" PRIx64, w,
            bm_variant_name((bm_variant)v), h1, h3);
      CHECK(h1 != h2, "u%u: hash(P1) == hash(P2)", w);
      CHECK(naive1 != naive3, "u%u: hashing [0, used_key) should differ (the paper's pitfall)", w);
      bm_map_destroy(&m);
    }
  }
  bm_select_variant(BM_VARIANT_AUTO);
  /* the hash depends on the content, not only on the length */
  uint8_t a[40] = {0}, b[40] = {0};
  a[33] = 1;
  b[33] = 2;
  CHECK(bm_hash_bytes(a, 40) != bm_hash_bytes(b, 40), "hash sees a byte in the tail lane");
  a[0] = 1;
  b[0] = 1;
  b[33] = 1;
  CHECK(bm_hash_bytes(a, 40) == bm_hash_bytes(b, 40), "equal content hashes equal");
  CHECK(bm_hash_bytes(a, 40) == bm_hash_bytes(a, 34), "trailing zeros are ignored");
}

int main(void) {
  t_rng_state = 20260601;
  printf("bigmap: active kernel variant %s\n", bm_variant_name(bm_active_variant()));
  test_figure5();
  test_hash_example();
  test_overflow();
  test_full();
  test_validate();
  test_shared_processes();
  test_threads();
  test_differential();
  test_variants();
  test_lazy_index();
  test_cnt_flush();
  printf("%lu passed, %lu failed\n", t_passed, t_failed);
  return t_failed ? 1 : 0;
}
