/* bigmap_ops.c - kernel variant selection and the per-exec kernels of each layout. */
#include <stdlib.h>
#include <string.h>

#include "bigmap.h"
#include "bigmap_internal.h"
#include "cpu.h"

/* ---- variant selection ------------------------------------------------------------------ */
static const bm_kernels *variant_table(bm_variant v) {
  switch (v) {
    case BM_VARIANT_SCALAR: return &bm_kernels_scalar;
#ifdef BM_HAVE_X86_SIMD
    case BM_VARIANT_AVX2: return (bm_cpu_features() & (BM_CPU_AVX2 | BM_CPU_POPCNT)) == (BM_CPU_AVX2 | BM_CPU_POPCNT) ? &bm_kernels_avx2 : NULL;
    case BM_VARIANT_AVX512:
      return (bm_cpu_features() & (BM_CPU_AVX512 | BM_CPU_POPCNT)) == (BM_CPU_AVX512 | BM_CPU_POPCNT) ? &bm_kernels_avx512 : NULL;
#endif
    default: return NULL;
  }
}

const bm_kernels *bm_kernels_get(bm_variant v) {
  const bm_kernels *k = variant_table(v);
  return k && k->name ? k : NULL;
}

static bm_variant best_variant(void) {
  const char *e = getenv("AUTOTUNE_FORCE_SCALAR");
  if (e && *e && strcmp(e, "0") != 0) return BM_VARIANT_SCALAR;
  if (bm_kernels_get(BM_VARIANT_AVX512)) return BM_VARIANT_AVX512;
  if (bm_kernels_get(BM_VARIANT_AVX2)) return BM_VARIANT_AVX2;
  return BM_VARIANT_SCALAR;
}

/* Cached active variant (+1, so 0 means "not chosen yet"). */
static int active_plus1;

bm_variant bm_active_variant(void) {
  int a = __atomic_load_n(&active_plus1, __ATOMIC_ACQUIRE);
  if (a) return (bm_variant)(a - 1);
  bm_variant v = best_variant();
  __atomic_store_n(&active_plus1, (int)v + 1, __ATOMIC_RELEASE);
  return v;
}

const bm_kernels *bm_kernels_active(void) { return bm_kernels_get(bm_active_variant()); }

int bm_select_variant(bm_variant v) {
  if (v == BM_VARIANT_AUTO) v = best_variant();
  if (!bm_kernels_get(v)) return BM_E_VARIANT;
  __atomic_store_n(&active_plus1, (int)v + 1, __ATOMIC_RELEASE);
  return BM_OK;
}

const char *bm_variant_name(bm_variant v) {
  switch (v) {
    case BM_VARIANT_SCALAR: return "scalar";
    case BM_VARIANT_AVX2: return "avx2";
    case BM_VARIANT_AVX512: return "avx512";
    default: return "auto";
  }
}

/* ---- per-exec kernels ------------------------------------------------------------------- */
static size_t span(const bm_map *m) { return (size_t)bm_map_used(m); }
static unsigned wi(const bm_map *m) { return bm_width_index(m->width_bits); }

static void reset_n(bm_map *m, size_t n) { memset(m->counters, 0, n * (m->width_bits / 8)); }

static void classify_n(bm_map *m, size_t n) {
  bm_kernels_active()->classify[wi(m)](m->trace, m->counters, n);
}

static int classify_compare_n(bm_map *m, uint8_t *virgin, size_t n) {
  return bm_kernels_active()->classify_compare[wi(m)](m->trace, m->counters, virgin, n);
}

/* The used region of every layout (bm_map_used: H slots of a flat map). */
void bm_reset(bm_map *m) { reset_n(m, span(m)); }
void bm_flat_reset_nt(bm_map *m) {
  bm_kernels_active()->reset_nt(m->counters, m->capacity * (m->width_bits / 8));
}
void bm_classify(bm_map *m) { classify_n(m, span(m)); }
int bm_compare(bm_map *m, uint8_t *virgin) {
  return bm_kernels_active()->compare(m->trace, virgin, span(m));
}
int bm_classify_compare(bm_map *m, uint8_t *virgin) { return classify_compare_n(m, virgin, span(m)); }
uint64_t bm_hash(const bm_map *m) { return bm_hash_bytes(m->trace, span(m)); }
uint64_t bm_count_nonzero(const bm_map *m) {
  return bm_kernels_active()->count_nonzero[wi(m)](m->counters, span(m));
}
