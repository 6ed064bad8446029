/* test_diff.c - every SIMD variant equals the scalar reference (seeded random maps). */
#include <stdlib.h>
#include <string.h>

#include "../bigmap.h"
#include "../bigmap_internal.h"
#include "test_util.h"

static const unsigned widths[4] = {8, 16, 32, 64};

/* Random counters: mostly zero blocks (like real maps), some small, some large values. */
static void fill(void *p, unsigned w, size_t n, int density) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = t_rand(), v;
    if ((r & 0xff) >= (uint64_t)density) v = 0;
    else if ((r >> 8) & 1) v = (r >> 16) & 0xff;
    else v = t_rand(); /* any value, often > 255 */
    switch (w) {
      case 8: ((uint8_t *)p)[i] = (uint8_t)v; break;
      case 16: ((uint16_t *)p)[i] = (uint16_t)v; break;
      case 32: ((uint32_t *)p)[i] = (uint32_t)v; break;
      default: ((uint64_t *)p)[i] = v; break;
    }
  }
  /* sometimes zero a long run, so that all-zero vector blocks are exercised */
  if (n > 200 && (t_rand() & 1)) memset((char *)p + (w / 8) * (n / 3), 0, (w / 8) * (n / 3));
}

static void fill_virgin(uint8_t *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = t_rand();
    v[i] = (r & 3) ? 0xff : (uint8_t)(r >> 8);
  }
}

static void diff_one(const bm_kernels *k, unsigned w, size_t n, int density) {
  const bm_kernels *s = &bm_kernels_scalar;
  unsigned wi = bm_width_index(w);
  size_t bytes = n * (w / 8) + 64;
  /* exact-size heap buffers (plus guard), so ASan catches any overread past n */
  uint8_t *src = malloc(bytes), *src2 = malloc(bytes), *t1 = malloc(n + 1), *t2 = malloc(n + 1),
          *v1 = malloc(n + 1), *v2 = malloc(n + 1);
  fill(src, w, n, density);
  memcpy(src2, src, bytes);
  fill_virgin(v1, n);
  memcpy(v2, v1, n);
  char ctx[128];
  snprintf(ctx, sizeof ctx, "%s u%u n=%zu density=%d", k->name, w, n, density);

  CHECK_EQ_U64(k->count_nonzero[wi](src, n), s->count_nonzero[wi](src, n), ctx);

  /* classify (8-bit: in place on a copy, like the map does) */
  if (w == 8) {
    s->classify[0](src2, src2, n);
    memcpy(t2, src, n);
    k->classify[0](t2, t2, n);
    CHECK(memcmp(t2, src2, n) == 0, "%s: classify u8 in place differs", ctx);
    memcpy(src2, src, n);
  } else {
    memset(t1, 0xAA, n);
    memset(t2, 0x55, n);
    s->classify[wi](t1, src, n);
    k->classify[wi](t2, src, n);
    CHECK(memcmp(t1, t2, n) == 0, "%s: classify differs", ctx);
  }

  /* classify_compare: return value, trace and virgin map */
  int r1, r2;
  if (w == 8) {
    memcpy(t1, src, n);
    memcpy(t2, src, n);
    r1 = s->classify_compare[0](t1, t1, v1, n);
    r2 = k->classify_compare[0](t2, t2, v2, n);
  } else {
    r1 = s->classify_compare[wi](t1, src, v1, n);
    r2 = k->classify_compare[wi](t2, src, v2, n);
  }
  CHECK(r1 == r2, "%s: classify_compare returned %d vs %d", ctx, r2, r1);
  CHECK(memcmp(t1, t2, n) == 0, "%s: classify_compare trace differs", ctx);
  CHECK(memcmp(v1, v2, n) == 0, "%s: classify_compare virgin differs", ctx);

  /* compare on the classified trace against a fresh random virgin */
  fill_virgin(v1, n);
  memcpy(v2, v1, n);
  r1 = s->compare(t1, v1, n);
  r2 = k->compare(t1, v2, n);
  CHECK(r1 == r2, "%s: compare returned %d vs %d", ctx, r2, r1);
  CHECK(memcmp(v1, v2, n) == 0, "%s: compare virgin differs", ctx);
  CHECK(s->compare(t1, v1, n) == 0 && k->compare(t1, v2, n) == 0, "%s: second compare", ctx);

  /* last non-zero, with the tail zeroed at a random point */
  size_t cut = n ? (size_t)(t_rand() % (n + 1)) : 0;
  memset(t1 + cut, 0, n - cut);
  CHECK_EQ_U64(k->last_nonzero(t1, n), s->last_nonzero(t1, n), ctx);

  /* non-temporal reset of an unaligned range */
  memset(src2, 0x5a, bytes);
  k->reset_nt(src2 + 1, bytes - 2);
  int zero = src2[0] == 0x5a && src2[bytes - 1] == 0x5a;
  for (size_t i = 1; i + 1 < bytes; i++) zero &= src2[i] == 0;
  CHECK(zero, "%s: reset_nt", ctx);
  free(src);
  free(src2);
  free(t1);
  free(t2);
  free(v1);
  free(v2);
}

/* Whole maps at the dense array's capacity: every variant gives the same result. */
static void diff_layout_at_capacity(bm_variant v, unsigned w) {
  const uint64_t cap = 3000; /* not a multiple of any vector width */
  bm_config cfg = {BM_TWOLEVEL, w, BM_NEVERZERO, 1u << 14, cap};
  bm_map a, b;
  CHECK(bm_map_create(&a, &cfg, 0) == BM_OK && bm_map_create(&b, &cfg, 0) == BM_OK, "create");
  for (int i = 0; i < 20000; i++) {
    uint64_t key = t_rand() & 0x3fff, hits = 1 + (t_rand() % 3 == 0 ? t_rand() % 400 : 0);
    for (uint64_t h = 0; h < hits; h++) {
      bm_update(&a, key);
      bm_update(&b, key);
    }
  }
  CHECK_EQ_U64(bm_map_used(&a), cap, "dense array full");
  uint8_t *va = malloc(cap), *vb = malloc(cap);
  fill_virgin(va, cap);
  memcpy(vb, va, cap);
  bm_select_variant(BM_VARIANT_SCALAR);
  int ra = bm_classify_compare(&a, va);
  uint64_t ha = bm_hash(&a), ca = bm_count_nonzero(&a);
  bm_select_variant(v);
  int rb = bm_classify_compare(&b, vb);
  uint64_t hb = bm_hash(&b), cb = bm_count_nonzero(&b);
  char ctx[64];
  snprintf(ctx, sizeof ctx, "%s u%u at capacity", bm_variant_name(v), w);
  CHECK(ra == rb, "%s: %d vs %d", ctx, rb, ra);
  CHECK(memcmp(va, vb, cap) == 0 && memcmp(a.trace, b.trace, cap) == 0, "%s: maps differ", ctx);
  CHECK_EQ_U64(hb, ha, ctx);
  CHECK_EQ_U64(cb, ca, ctx);
  bm_flat_reset_nt(&b); /* on a twolevel map: clears all C slots */
  CHECK_EQ_U64(bm_count_nonzero(&b), 0, ctx);
  free(va);
  free(vb);
  bm_map_destroy(&a);
  bm_map_destroy(&b);
  bm_select_variant(BM_VARIANT_AUTO);
}

void test_differential(void) {
  static const size_t lengths[] = {0,   1,   7,   8,   15,  31,   32,   33,   63,   64,
                                   65,  95,  127, 128, 129, 191,  255,  256,  257,  511,
                                   777, 1000, 1023, 4097, 65536 + 13};
  static const int densities[] = {0, 3, 40, 256};
  int variants = 0;
  for (int v = BM_VARIANT_AVX2; v <= BM_VARIANT_AVX512; v++) {
    const bm_kernels *k = bm_kernels_get((bm_variant)v);
    if (!k) {
      printf("differential: %s not available here, skipped\n", bm_variant_name((bm_variant)v));
      continue;
    }
    variants++;
    for (int wi = 0; wi < 4; wi++) {
      for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
        for (size_t di = 0; di < sizeof densities / sizeof densities[0]; di++)
          for (int rep = 0; rep < 3; rep++) diff_one(k, widths[wi], lengths[li], densities[di]);
      diff_layout_at_capacity((bm_variant)v, widths[wi]);
    }
  }
  printf("differential: %d SIMD variant(s) checked against scalar\n", variants);
}

void test_variants(void) {
  CHECK(bm_kernels_get(BM_VARIANT_SCALAR) != NULL, "scalar always available");
  CHECK(bm_select_variant(BM_VARIANT_SCALAR) == BM_OK, "select scalar");
  CHECK(bm_active_variant() == BM_VARIANT_SCALAR, "scalar active");
  setenv("AUTOTUNE_FORCE_SCALAR", "1", 1);
  CHECK(bm_select_variant(BM_VARIANT_AUTO) == BM_OK, "auto");
  CHECK(bm_active_variant() == BM_VARIANT_SCALAR, "AUTOTUNE_FORCE_SCALAR=1 forces scalar");
  unsetenv("AUTOTUNE_FORCE_SCALAR");
  bm_select_variant(BM_VARIANT_AUTO);
#ifdef BM_FORCE_SCALAR
  CHECK(bm_active_variant() == BM_VARIANT_SCALAR, "BM_FORCE_SCALAR build is scalar");
  CHECK(bm_kernels_get(BM_VARIANT_AVX2) == NULL, "no avx2 in a scalar build");
#endif
  for (int v = BM_VARIANT_SCALAR; v <= BM_VARIANT_AVX512; v++)
    if (!bm_kernels_get((bm_variant)v))
      CHECK(bm_select_variant((bm_variant)v) == BM_E_VARIANT, "unsupported variant refused");
}
