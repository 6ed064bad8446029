/* bigmap_internal.h - shared between the kernel files; not part of the API. */
#ifndef AUTOTUNE_BIGMAP_INTERNAL_H
#define AUTOTUNE_BIGMAP_INTERNAL_H
#include "bigmap.h"

extern const bm_kernels bm_kernels_scalar;
extern const bm_kernels bm_kernels_avx2;   /* defined when BM_HAVE_X86_SIMD */
extern const bm_kernels bm_kernels_avx512; /* defined when BM_HAVE_X86_SIMD */

#if defined(__x86_64__) && !defined(BM_FORCE_SCALAR)
#define BM_HAVE_X86_SIMD 1
#endif

int bm_compare_scalar(const uint8_t *t, uint8_t *v, size_t n);
size_t bm_last_nonzero_scalar(const uint8_t *p, size_t n);
void bm_reset_nt_scalar(void *p, size_t bytes);
/* The hash of exactly p[0, n) (no trimming). */
uint64_t bm_hash_prefix(const uint8_t *p, size_t n);
#endif
