/* bigmap_simd.c - AVX2 and AVX-512 kernel variants (placeholder until filled in). */
#include "bigmap.h"
#include "bigmap_internal.h"
#ifdef BM_HAVE_X86_SIMD
const bm_kernels bm_kernels_avx2 = {0};
const bm_kernels bm_kernels_avx512 = {0};
#endif
