/* bigmap_scalar.c - scalar reference kernels, the bucket table and the trace hash. */
#include <string.h>

#include "bigmap.h"
#include "bigmap_internal.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* AFL's buckets {0,1,2,3,4-7,8-15,16-31,32-127,128-255} -> {0,1,2,4,8,16,32,64,128}. */
#define R4(v) v, v, v, v
#define R8(v) R4(v), R4(v)
#define R16(v) R8(v), R8(v)
#define R32(v) R16(v), R16(v)
#define R64(v) R32(v), R32(v)
const uint8_t bm_bucket_table[256] = {
    0, 1, 2, 4, R4(8), R8(16), R16(32), R64(64), R32(64), R64(128), R64(128)};

static inline uint64_t load64(const void *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* Compare one classified byte with its virgin byte; returns the has_new_bits level. */
static inline int cmp_byte(uint8_t t, uint8_t *v) {
  if (!(t & *v)) return 0;
  int r = *v == 0xff ? 2 : 1;
  *v &= (uint8_t)~t;
  return r;
}

static inline int max_i(int a, int b) { return a > b ? a : b; }

/* has_new_bits on one 8-byte word of classified bytes: the common case (nothing new) is one
 * AND and one branch; the per-byte work runs only when something is new. */
static inline int cmp_word(uint64_t b, uint8_t *v) {
  uint64_t vw = load64(v);
  if (__builtin_expect(!(b & vw), 1)) return 0;
  int ret = 0;
  for (int j = 0; j < 8; j++) ret = max_i(ret, cmp_byte((uint8_t)(b >> (8 * j)), v + j));
  return ret;
}

/* Bucket bytes of 8 counters as one little-endian word. */
static inline uint64_t classify8_u8(const uint8_t *s) {
  uint64_t b = 0;
  for (int j = 0; j < 8; j++) b |= (uint64_t)bm_bucket_table[s[j]] << (8 * j);
  return b;
}

/* ---- 8-bit ---------------------------------------------------------------------------- */
static void classify_u8(uint8_t *dst, const void *src_, size_t n) {
  const uint8_t *src = src_;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if (!load64(src + i)) {
      if (dst != src) memset(dst + i, 0, 8);
      continue;
    }
    for (size_t j = i; j < i + 8; j++) dst[j] = bm_bucket_table[src[j]];
  }
  for (; i < n; i++) dst[i] = bm_bucket_table[src[i]];
}

static inline int any32(const uint8_t *p) {
  return (load64(p) | load64(p + 8) | load64(p + 16) | load64(p + 24)) != 0;
}

int bm_compare_scalar(const uint8_t *t, uint8_t *v, size_t n) {
  int ret = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    if (!any32(t + i)) continue;
    for (size_t j = i; j < i + 32; j += 8) ret = max_i(ret, cmp_word(load64(t + j), v + j));
  }
  for (; i < n; i++) ret = max_i(ret, cmp_byte(t[i], v + i));
  return ret;
}

/* 32-byte blocks: an all-zero block is skipped after one test (virgin untouched); inside a
 * non-zero block every word is classified and compared without further branches on zero. */
static int classify_compare_u8(uint8_t *dst, const void *src_, uint8_t *v, size_t n) {
  const uint8_t *src = src_;
  int ret = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    if (!any32(src + i)) {
      if (dst != src) memset(dst + i, 0, 32);
      continue;
    }
    for (size_t j = i; j < i + 32; j += 8) {
      uint64_t b = classify8_u8(src + j);
      memcpy(dst + j, &b, 8);
      ret = max_i(ret, cmp_word(b, v + j));
    }
  }
  for (; i < n; i++) {
    uint8_t b = bm_bucket_table[src[i]];
    dst[i] = b;
    ret = max_i(ret, cmp_byte(b, v + i));
  }
  return ret;
}

static uint64_t count_nonzero_u8(const void *src_, size_t n) {
  const uint8_t *src = src_;
  uint64_t c = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = load64(src + i);
    if (!w) continue;
    for (size_t j = 0; j < 8; j++) c += ((w >> (8 * j)) & 0xff) != 0;
  }
  for (; i < n; i++) c += src[i] != 0;
  return c;
}

/* ---- wide counters: blocks of 8/(W/8)... simply 8 counters, skipped when all zero ------- */
#define WIDE(W)                                                                             \
  static void classify_u##W(uint8_t *dst, const void *src_, size_t n) {                     \
    const uint##W##_t *src = src_;                                                          \
    for (size_t i = 0; i < n; i++) dst[i] = bm_bucket(src[i]);                              \
  }                                                                                          \
  static int classify_compare_u##W(uint8_t *dst, const void *src_, uint8_t *v, size_t n) {  \
    const uint##W##_t *src = src_;                                                          \
    int ret = 0;                                                                             \
    size_t i = 0;                                                                            \
    for (; i + 8 <= n; i += 8) {                                                            \
      uint##W##_t any = 0;                                                                  \
      for (size_t j = i; j < i + 8; j++) any |= src[j];                                    \
      if (!any) {                                                                            \
        memset(dst + i, 0, 8);                                                              \
        continue;                                                                            \
      }                                                                                      \
      uint64_t b = 0;                                                                        \
      for (int j = 0; j < 8; j++) b |= (uint64_t)bm_bucket(src[i + j]) << (8 * j);          \
      memcpy(dst + i, &b, 8);                                                                \
      ret = max_i(ret, cmp_word(b, v + i));                                                 \
    }                                                                                        \
    for (; i < n; i++) {                                                                    \
      uint8_t b = bm_bucket(src[i]);                                                        \
      dst[i] = b;                                                                            \
      ret = max_i(ret, cmp_byte(b, v + i));                                                 \
    }                                                                                        \
    return ret;                                                                              \
  }                                                                                          \
  static uint64_t count_nonzero_u##W(const void *src_, size_t n) {                          \
    const uint##W##_t *src = src_;                                                          \
    uint64_t c = 0;                                                                          \
    for (size_t i = 0; i < n; i++) c += src[i] != 0;                                        \
    return c;                                                                                \
  }
WIDE(16)
WIDE(32)
WIDE(64)

size_t bm_last_nonzero_scalar(const uint8_t *p, size_t n) {
  while (n >= 8 && !load64(p + n - 8)) n -= 8;
  while (n && !p[n - 1]) n--;
  return n;
}

void bm_reset_nt_scalar(void *p_, size_t bytes) {
#if defined(__x86_64__)
  /* SSE2 streaming stores are part of the x86-64 baseline. */
  char *p = p_;
  size_t head = (size_t)(-(uintptr_t)p & 15);
  if (head > bytes) head = bytes;
  memset(p, 0, head);
  p += head;
  bytes -= head;
  __m128i z = _mm_setzero_si128();
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16) _mm_stream_si128((__m128i *)(p + i), z);
  _mm_sfence();
  memset(p + i, 0, bytes - i);
#else
  memset(p_, 0, bytes);
#endif
}

const bm_kernels bm_kernels_scalar = {
    "scalar",
    {classify_u8, classify_u16, classify_u32, classify_u64},
    bm_compare_scalar,
    {classify_compare_u8, classify_compare_u16, classify_compare_u32, classify_compare_u64},
    bm_last_nonzero_scalar,
    {count_nonzero_u8, count_nonzero_u16, count_nonzero_u32, count_nonzero_u64},
    bm_reset_nt_scalar,
};

/* ---- the trace hash ---------------------------------------------------------------------
 * Of the bytes p[0, n) and n: 32-byte blocks feed four independent multiply-xorshift chains
 * (each word xored with its block's offset times a constant; all-zero blocks, most of a sparse
 * flat map, are skipped); the remaining words go to the first chain, a zero-padded final partial
 * word to the second; a 64-bit finaliser mixes the chains and n. */
#define HK1 0x9e3779b97f4a7c15ull
#define HK2 0xbf58476d1ce4e5b9ull
#define HK3 0x94d049bb133111ebull

static inline uint64_t lane(uint64_t h, uint64_t w) {
  h = (h ^ w) * HK2;
  return h ^ (h >> 31);
}

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t bm_hash_prefix(const uint8_t *p, size_t n) {
  uint64_t a = HK1, b = HK2, c = HK3, d = HK1 ^ n;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) { /* four independent chains; all-zero blocks are skipped, */
    uint64_t w0 = load64(p + i), w1 = load64(p + i + 8), w2 = load64(p + i + 16),
             w3 = load64(p + i + 24); /* the others carry their offset, so positions count */
    if (!(w0 | w1 | w2 | w3)) continue;
    uint64_t pos = (uint64_t)i * HK1;
    a = lane(a, w0 ^ pos);
    b = lane(b, w1 ^ pos);
    c = lane(c, w2 ^ pos);
    d = lane(d, w3 ^ pos);
  }
  for (; i + 8 <= n; i += 8) a = lane(a, load64(p + i));
  if (i < n) {
    uint64_t w = 0;
    memcpy(&w, p + i, n - i);
    b = lane(b, w);
  }
  uint64_t h = rotl(a, 1) ^ rotl(b, 17) ^ rotl(c, 31) ^ rotl(d, 47) ^ (n * HK3);
  h ^= h >> 33;
  h *= HK2;
  h ^= h >> 29;
  h *= HK3;
  return h ^ (h >> 32);
}

uint64_t bm_hash_bytes(const uint8_t *p, size_t n) {
  return bm_hash_prefix(p, bm_kernels_active()->last_nonzero(p, n));
}
