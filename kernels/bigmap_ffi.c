/* bigmap_ffi.c - plain exported entry points for FFI callers (autotune/runtime/binding.py). */
#include "bigmap.h"

void *bm_ffi_counters(const bm_map *m) { return m->counters; }
uint8_t *bm_ffi_trace(const bm_map *m) { return m->trace; }
uint32_t *bm_ffi_index(const bm_map *m) { return m->index; }
uint64_t *bm_ffi_keys(const bm_map *m) { return m->keys; }
uint64_t bm_ffi_used(const bm_map *m) { return bm_map_used(m); }
uint64_t bm_ffi_overflow_keys(const bm_map *m) { return *m->overflow_keys; }
uint64_t bm_ffi_table_full(const bm_map *m) { return m->ctl ? m->ctl->table_full : 0; }
int bm_ffi_hugepage_advised(const bm_map *m) { return m->hugepage_advised; }
void bm_ffi_update_many(bm_map *m, const uint64_t *keys, size_t n) { m->update_many(m, keys, n); }
void bm_ffi_update(bm_map *m, uint64_t key) { m->update(m, key); }

/* Range kernels of one variant (for differential tests and benchmarks); -1 if unsupported. */
static const bm_kernels *pick(int variant) { return bm_kernels_get((bm_variant)variant); }

int bm_ffi_classify(int variant, unsigned width_bits, uint8_t *dst, const void *src, size_t n) {
  const bm_kernels *k = pick(variant);
  if (!k) return -1;
  k->classify[bm_width_index(width_bits)](dst, src, n);
  return 0;
}
int bm_ffi_classify_compare(int variant, unsigned width_bits, uint8_t *dst, const void *src,
                            uint8_t *virgin, size_t n) {
  const bm_kernels *k = pick(variant);
  return k ? k->classify_compare[bm_width_index(width_bits)](dst, src, virgin, n) : -1;
}
int bm_ffi_compare(int variant, const uint8_t *trace, uint8_t *virgin, size_t n) {
  const bm_kernels *k = pick(variant);
  return k ? k->compare(trace, virgin, n) : -1;
}
int64_t bm_ffi_count_nonzero(int variant, unsigned width_bits, const void *src, size_t n) {
  const bm_kernels *k = pick(variant);
  return k ? (int64_t)k->count_nonzero[bm_width_index(width_bits)](src, n) : -1;
}
int64_t bm_ffi_last_nonzero(int variant, const uint8_t *p, size_t n) {
  const bm_kernels *k = pick(variant);
  return k ? (int64_t)k->last_nonzero(p, n) : -1;
}
