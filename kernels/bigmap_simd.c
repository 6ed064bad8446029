/* bigmap_simd.c - AVX2 and AVX-512 kernel variants.
 *
 * Compiled with the default flags: every function carries __attribute__((target(...))), so one
 * plain build holds all variants and bm_kernels_get() picks one from the cached CPU check.
 * Each kernel works on bytes of min(count, 255) ("saturated bytes") so the same bucket lookup
 * (two nibble shuffles) and virgin compare serve every counter width. All-zero blocks (most of
 * a map) are skipped after one test, without touching the virgin map; for 8-bit maps 256 bytes
 * are tested at a time. Tails shorter than a vector go to the scalar reference. */
#include <string.h>

#include "bigmap.h"
#include "bigmap_internal.h"

#ifdef BM_HAVE_X86_SIMD
#include <immintrin.h>

static inline int imax(int a, int b) { return a > b ? a : b; }

/* The tail shorter than a vector: the scalar reference. */
static inline int scalar_rest(unsigned wi, uint8_t *dst, const void *src, uint8_t *virgin,
                              size_t n, int cmp) {
  if (cmp) return bm_kernels_scalar.classify_compare[wi](dst, src, virgin, n);
  bm_kernels_scalar.classify[wi](dst, src, n);
  return 0;
}

#define BM_CAT_(a, b, c, d) a##b##c##d
#define BM_CAT(a, b, c, d) BM_CAT_(a, b, c, d)
#define SIMD_FN(f) BM_CAT(f, SIMD_ISA, , )
#define SIMD_FNW(f, W) BM_CAT(f, SIMD_ISA, _u, W)

#define LO_NIBBLE_BUCKETS 0, 1, 2, 4, 8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 16, 16
#define HI_NIBBLE_BUCKETS                                                                   \
  0, 32, 64, 64, 64, 64, 64, 64, (char)128, (char)128, (char)128, (char)128, (char)128,      \
      (char)128, (char)128, (char)128

/* The bucket of each byte's low nibble in nibbles (x for the low nibble, x >> 4 for the high one)
 * by TABLE, one shuffle: the half of a bucket function that every width W (512, 256) writes alike;
 * BCAST broadcasts the 128-bit table to all lanes. */
#define NIBBLE_BUCKET(W, BCAST, TABLE, nibbles)                                                    \
  _mm##W##_shuffle_epi8(BCAST(_mm_setr_epi8(TABLE)),                                              \
                        _mm##W##_and_si##W(nibbles, _mm##W##_set1_epi8(0x0f)))

/* ========================================= AVX-512 ====================================== */
#define T512 __attribute__((target("avx512f,avx512bw,popcnt")))

T512 static inline __m512i b512_bucket(__m512i x) {
  __m512i lo = NIBBLE_BUCKET(512, _mm512_broadcast_i32x4, LO_NIBBLE_BUCKETS, x);
  __m512i hi =
      NIBBLE_BUCKET(512, _mm512_broadcast_i32x4, HI_NIBBLE_BUCKETS, _mm512_srli_epi16(x, 4));
  return _mm512_mask_mov_epi8(hi, _mm512_cmplt_epu8_mask(x, _mm512_set1_epi8(16)), lo);
}

/* has_new_bits on 64 classified bytes b; clears the virgin bits. */
T512 static inline int b512_cmp(__m512i b, uint8_t *virgin) {
  __m512i v = _mm512_loadu_si512((const void *)virgin);
  __mmask64 kn = _mm512_test_epi8_mask(b, v);
  if (!kn) return 0;
  __mmask64 kff = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(-1));
  _mm512_storeu_si512((void *)virgin, _mm512_andnot_si512(b, v));
  return (kn & kff) ? 2 : 1;
}

/* 64 counters -> 64 saturated bytes */
T512 static inline __m512i sat512_u8(const void *p, size_t i) {
  return _mm512_loadu_si512((const char *)p + i);
}
T512 static inline __m512i sat512_u16(const void *p, size_t i) {
  const __m512i *q = (const __m512i *)((const uint16_t *)p + i);
  __m256i a = _mm512_cvtusepi16_epi8(_mm512_loadu_si512(q));
  __m256i b = _mm512_cvtusepi16_epi8(_mm512_loadu_si512(q + 1));
  return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}
T512 static inline __m512i sat512_u32(const void *p, size_t i) {
  const __m512i *q = (const __m512i *)((const uint32_t *)p + i);
  __m512i r = _mm512_castsi128_si512(_mm512_cvtusepi32_epi8(_mm512_loadu_si512(q)));
  r = _mm512_inserti32x4(r, _mm512_cvtusepi32_epi8(_mm512_loadu_si512(q + 1)), 1);
  r = _mm512_inserti32x4(r, _mm512_cvtusepi32_epi8(_mm512_loadu_si512(q + 2)), 2);
  return _mm512_inserti32x4(r, _mm512_cvtusepi32_epi8(_mm512_loadu_si512(q + 3)), 3);
}
T512 static inline __m512i sat512_u64(const void *p, size_t i) {
  const __m512i *q = (const __m512i *)((const uint64_t *)p + i);
  __m128i x[4];
  for (int k = 0; k < 4; k++)
    x[k] = _mm_unpacklo_epi64(_mm512_cvtusepi64_epi8(_mm512_loadu_si512(q + 2 * k)),
                              _mm512_cvtusepi64_epi8(_mm512_loadu_si512(q + 2 * k + 1)));
  __m512i r = _mm512_castsi128_si512(x[0]);
  r = _mm512_inserti32x4(r, x[1], 1);
  r = _mm512_inserti32x4(r, x[2], 2);
  return _mm512_inserti32x4(r, x[3], 3);
}

/* count_nonzero: per vector, the non-zero lanes' test mask */
#define DEF512_COUNT(W)                                                                          \
  T512 static uint64_t count512_u##W(const void *src, size_t n) {                             \
    const uint##W##_t *s = src;                                                                \
    uint64_t c = 0;                                                                            \
    size_t i = 0, step = 64 / (W / 8);                                                         \
    for (; i + step <= n; i += step) {                                                         \
      __m512i x = _mm512_loadu_si512((const void *)(s + i));                                   \
      c += (uint64_t)__builtin_popcountll((unsigned long long)_mm512_test_epi##W##_mask(x, x)); \
    }                                                                                          \
    return c + bm_kernels_scalar.count_nonzero[bm_width_index(W)](s + i, n - i);               \
  }
DEF512_COUNT(8)
DEF512_COUNT(16)
DEF512_COUNT(32)
DEF512_COUNT(64)

#define SIMD_ISA 512
#define SIMD_T T512
#define SIMD_VEC __m512i
#define SIMD_BYTES 64
#define SIMD_KERNELS bm_kernels_avx512
#define SIMD_LABEL "avx512"
#define vload(p) _mm512_loadu_si512((const void *)(p))
#define vstore(p, x) _mm512_storeu_si512((void *)(p), x)
#define vstream(p, x) _mm512_stream_si512((void *)(p), x)
#define vor(a, b) _mm512_or_si512(a, b)
#define vzero() _mm512_setzero_si512()
#define vnz(x) (_mm512_test_epi8_mask(x, x) != 0)
#define SIMD_MASK __mmask64
#define vnzmask(x) _mm512_test_epi8_mask(x, x)
#define vclz(k) __builtin_clzll((unsigned long long)(k))
#define vbucket b512_bucket
#define vcmp b512_cmp
#define vsat_u8 sat512_u8
#define vsat_u16 sat512_u16
#define vsat_u32 sat512_u32
#define vsat_u64 sat512_u64
#include "bigmap_simd_body.h"

/* ========================================== AVX2 ======================================== */
#define T256 __attribute__((target("avx2,popcnt")))

T256 static inline int nz256(__m256i x) { return !_mm256_testz_si256(x, x); }

T256 static inline __m256i b256_bucket(__m256i x) {
  __m256i lo = NIBBLE_BUCKET(256, _mm256_broadcastsi128_si256, LO_NIBBLE_BUCKETS, x);
  __m256i hi =
      NIBBLE_BUCKET(256, _mm256_broadcastsi128_si256, HI_NIBBLE_BUCKETS, _mm256_srli_epi16(x, 4));
  __m256i small = _mm256_cmpeq_epi8(_mm256_and_si256(x, _mm256_set1_epi8((char)0xf0)),
                                    _mm256_setzero_si256());
  return _mm256_blendv_epi8(hi, lo, small);
}

T256 static inline int b256_cmp(__m256i b, uint8_t *virgin) {
  __m256i v = _mm256_loadu_si256((const __m256i *)virgin);
  if (_mm256_testz_si256(b, v)) return 0;
  __m256i ff = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(-1));
  _mm256_storeu_si256((__m256i *)virgin, _mm256_andnot_si256(b, v));
  return _mm256_testz_si256(b, ff) ? 1 : 2; /* v == 0xff there, so b & v == b */
}

/* 32 counters -> 32 saturated bytes */
T256 static inline __m256i sat256_u8(const void *p, size_t i) {
  return _mm256_loadu_si256((const __m256i *)((const uint8_t *)p + i));
}
T256 static inline __m256i sat256_u16(const void *p, size_t i) {
  const __m256i *q = (const __m256i *)((const uint16_t *)p + i);
  const __m256i c255 = _mm256_set1_epi16(255);
  __m256i a = _mm256_min_epu16(_mm256_loadu_si256(q), c255);
  __m256i b = _mm256_min_epu16(_mm256_loadu_si256(q + 1), c255);
  return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
}
T256 static inline __m256i sat256_u32(const void *p, size_t i) {
  const __m256i *q = (const __m256i *)((const uint32_t *)p + i);
  const __m256i c255 = _mm256_set1_epi32(255);
  __m256i a = _mm256_min_epu32(_mm256_loadu_si256(q), c255);
  __m256i b = _mm256_min_epu32(_mm256_loadu_si256(q + 1), c255);
  __m256i c = _mm256_min_epu32(_mm256_loadu_si256(q + 2), c255);
  __m256i d = _mm256_min_epu32(_mm256_loadu_si256(q + 3), c255);
  __m256i w = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, d));
  return _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
/* u64: saturate each lane (x >> 8 != 0 -> 255), pair vectors into dwords (a | b << 32), pack to
 * bytes, then restore the memory order with one cross-lane dword permute and one byte shuffle. */
T256 static inline __m256i sat64x4(const __m256i *q) {
  __m256i x = _mm256_loadu_si256(q);
  __m256i small = _mm256_cmpeq_epi64(_mm256_srli_epi64(x, 8), _mm256_setzero_si256());
  return _mm256_blendv_epi8(_mm256_set1_epi64x(255), x, small);
}
T256 static inline __m256i sat256_u64(const void *p, size_t i) {
  const __m256i *q = (const __m256i *)((const uint64_t *)p + i);
  __m256i ab = _mm256_or_si256(sat64x4(q), _mm256_slli_epi64(sat64x4(q + 1), 32));
  __m256i cd = _mm256_or_si256(sat64x4(q + 2), _mm256_slli_epi64(sat64x4(q + 3), 32));
  __m256i ef = _mm256_or_si256(sat64x4(q + 4), _mm256_slli_epi64(sat64x4(q + 5), 32));
  __m256i gh = _mm256_or_si256(sat64x4(q + 6), _mm256_slli_epi64(sat64x4(q + 7), 32));
  /* bytes per 128-bit lane: [a0 b0 a1 b1 c0 d0 c1 d1 e0 f0 e1 f1 g0 h0 g1 h1] and the same with
   * counters 2, 3 in the high lane */
  __m256i w = _mm256_packus_epi16(_mm256_packus_epi32(ab, cd), _mm256_packus_epi32(ef, gh));
  w = _mm256_permutevar8x32_epi32(w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  const __m256i order = _mm256_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15,
                                         0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15);
  return _mm256_shuffle_epi8(w, order);
}

/* count_nonzero: per vector, the zero lanes' movemask; non-zero = lanes - zero lanes */
#define DEF256_COUNT(W, CMPEQ, MOVEMASK, CAST, BITS_PER_LANE)                                  \
  T256 static uint64_t count256_u##W(const void *src, size_t n) {                             \
    const uint##W##_t *s = src;                                                                \
    uint64_t c = 0;                                                                            \
    size_t i = 0, step = 32 / (W / 8);                                                         \
    const __m256i z = _mm256_setzero_si256();                                                  \
    for (; i + step <= n; i += step) {                                                         \
      __m256i x = _mm256_loadu_si256((const __m256i *)(s + i));                                \
      unsigned zero = (unsigned)MOVEMASK(CAST(CMPEQ(x, z)));                                   \
      c += step - (uint64_t)__builtin_popcount(zero) / BITS_PER_LANE;                          \
    }                                                                                          \
    return c + bm_kernels_scalar.count_nonzero[bm_width_index(W)](s + i, n - i);               \
  }
#define NOCAST(x) (x)
DEF256_COUNT(8, _mm256_cmpeq_epi8, _mm256_movemask_epi8, NOCAST, 1)
DEF256_COUNT(16, _mm256_cmpeq_epi16, _mm256_movemask_epi8, NOCAST, 2)
DEF256_COUNT(32, _mm256_cmpeq_epi32, _mm256_movemask_ps, _mm256_castsi256_ps, 1)
DEF256_COUNT(64, _mm256_cmpeq_epi64, _mm256_movemask_pd, _mm256_castsi256_pd, 1)

#define SIMD_ISA 256
#define SIMD_T T256
#define SIMD_VEC __m256i
#define SIMD_BYTES 32
#define SIMD_KERNELS bm_kernels_avx2
#define SIMD_LABEL "avx2"
#define vload(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define vstore(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
#define vstream(p, x) _mm256_stream_si256((__m256i *)(void *)(p), x)
#define vor(a, b) _mm256_or_si256(a, b)
#define vzero() _mm256_setzero_si256()
#define vnz(x) nz256(x)
#define SIMD_MASK unsigned
#define vnzmask(x) (~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_setzero_si256())))
#define vclz(k) __builtin_clz(k)
#define vbucket b256_bucket
#define vcmp b256_cmp
#define vsat_u8 sat256_u8
#define vsat_u16 sat256_u16
#define vsat_u32 sat256_u32
#define vsat_u64 sat256_u64
#include "bigmap_simd_body.h"
#endif /* BM_HAVE_X86_SIMD */
