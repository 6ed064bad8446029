/* bigmap_simd_body.h - the SIMD kernels that are the same for every vector width, written once.
 * Not a header of its own: bigmap_simd.c includes it once per instruction set, after defining
 * that set's vocabulary; it undefines the vocabulary at its end:
 *   SIMD_T, SIMD_VEC, SIMD_BYTES  the target attribute, the vector type, its bytes (V below)
 *   SIMD_FN(f), SIMD_FNW(f, W)    f with the set's suffix: compare512, run512_u8
 *   SIMD_KERNELS, SIMD_LABEL      the bm_kernels table it defines and its name
 *   vload(p) vstore(p, x) vstream(p, x) vor(a, b) vzero() vnz(x)
 *                                 unaligned load and store, non-temporal store, or, zero, any
 *                                 byte non-zero
 *   SIMD_MASK, vnzmask(x), vclz(k) a mask of the non-zero bytes (bit j: byte j), its leading zeros
 *   vbucket(x)                    AFL's count classes of V saturated bytes (min(count, 255))
 *   vcmp(b, virgin)               has_new_bits of V classified bytes; clears the virgin bits
 *   vsat_u8 .. vsat_u64 (p, i)    V counters from element i -> V saturated bytes
 * and the set's own count_nonzero (SIMD_FNW(count, W)), whose lane masks differ between the sets.
 * Blocks are skimmed four vectors at a time. */

/* One block of V saturated bytes x at element i: classify into dst, optionally compare. */
SIMD_T static inline int SIMD_FN(block)(SIMD_VEC x, uint8_t *dst, int in_place, uint8_t *virgin,
                                        size_t i, int cmp) {
  if (!vnz(x)) {
    /* keep already-zero trace lines clean: a read is cheaper than a write */
    if (!in_place && vnz(vload(dst + i))) vstore(dst + i, vzero());
    return 0;
  }
  SIMD_VEC b = vbucket(x);
  vstore(dst + i, b);
  return cmp ? vcmp(b, virgin + i) : 0;
}

/* classify (cmp 0) or classify_compare (cmp 1) of n W-bit counters */
#define SIMD_DEF_RUN(W)                                                                        \
  SIMD_T static inline int SIMD_FNW(run, W)(uint8_t *dst, const void *src, uint8_t *virgin,   \
                                            size_t n, int cmp) {                               \
    int ret = 0, in_place = (W == 8) && (const void *)dst == src;                              \
    size_t i = 0;                                                                               \
    if (W == 8) { /* skim 4 vectors at a time */                                               \
      for (; i + 4 * SIMD_BYTES <= n; i += 4 * SIMD_BYTES) {                                   \
        const uint8_t *s = (const uint8_t *)src + i;                                           \
        SIMD_VEC a0 = vload(s), a1 = vload(s + SIMD_BYTES), a2 = vload(s + 2 * SIMD_BYTES),     \
                 a3 = vload(s + 3 * SIMD_BYTES);                                               \
        if (!vnz(vor(vor(a0, a1), vor(a2, a3)))) {                                             \
          if (!in_place)                                                                        \
            for (int k = 0; k < 4; k++) vstore(dst + i + SIMD_BYTES * k, vzero());             \
          continue;                                                                             \
        }                                                                                       \
        ret = imax(ret, SIMD_FN(block)(a0, dst, in_place, virgin, i, cmp));                    \
        ret = imax(ret, SIMD_FN(block)(a1, dst, in_place, virgin, i + SIMD_BYTES, cmp));       \
        ret = imax(ret, SIMD_FN(block)(a2, dst, in_place, virgin, i + 2 * SIMD_BYTES, cmp));   \
        ret = imax(ret, SIMD_FN(block)(a3, dst, in_place, virgin, i + 3 * SIMD_BYTES, cmp));   \
      }                                                                                         \
    }                                                                                           \
    for (; i + SIMD_BYTES <= n; i += SIMD_BYTES)                                               \
      ret = imax(ret, SIMD_FN(block)(vsat_u##W(src, i), dst, in_place, virgin, i, cmp));       \
    if (i < n)                                                                                  \
      ret = imax(ret, scalar_rest(bm_width_index(W), dst + i, (const uint##W##_t *)src + i,     \
                                  cmp ? virgin + i : NULL, n - i, cmp));                        \
    return ret;                                                                                 \
  }                                                                                             \
  SIMD_T static void SIMD_FNW(classify, W)(uint8_t *dst, const void *src, size_t n) {          \
    SIMD_FNW(run, W)(dst, src, NULL, n, 0);                                                     \
  }                                                                                             \
  SIMD_T static int SIMD_FNW(cc, W)(uint8_t *dst, const void *src, uint8_t *virgin, size_t n) { \
    return SIMD_FNW(run, W)(dst, src, virgin, n, 1);                                            \
  }
SIMD_DEF_RUN(8)
SIMD_DEF_RUN(16)
SIMD_DEF_RUN(32)
SIMD_DEF_RUN(64)
#undef SIMD_DEF_RUN

/* has_new_bits of an already classified trace */
SIMD_T static int SIMD_FN(compare)(const uint8_t *t, uint8_t *virgin, size_t n) {
  int ret = 0;
  size_t i = 0;
  for (; i + 4 * SIMD_BYTES <= n; i += 4 * SIMD_BYTES) {
    SIMD_VEC a0 = vload(t + i), a1 = vload(t + i + SIMD_BYTES), a2 = vload(t + i + 2 * SIMD_BYTES),
             a3 = vload(t + i + 3 * SIMD_BYTES);
    if (!vnz(vor(vor(a0, a1), vor(a2, a3)))) continue;
    ret = imax(ret, vcmp(a0, virgin + i));
    ret = imax(ret, vcmp(a1, virgin + i + SIMD_BYTES));
    ret = imax(ret, vcmp(a2, virgin + i + 2 * SIMD_BYTES));
    ret = imax(ret, vcmp(a3, virgin + i + 3 * SIMD_BYTES));
  }
  for (; i + SIMD_BYTES <= n; i += SIMD_BYTES) {
    SIMD_VEC a = vload(t + i);
    if (vnz(a)) ret = imax(ret, vcmp(a, virgin + i));
  }
  return imax(ret, bm_compare_scalar(t + i, virgin + i, n - i));
}

/* the length of p[0, n) up to its last non-zero byte (0: all zero) */
SIMD_T static size_t SIMD_FN(last_nonzero)(const uint8_t *p, size_t n) {
  while (n >= SIMD_BYTES) {
    SIMD_MASK k = vnzmask(vload(p + n - SIMD_BYTES));
    if (k) return n - (size_t)vclz(k);
    n -= SIMD_BYTES;
  }
  return bm_last_nonzero_scalar(p, n);
}

/* memset 0 by non-temporal stores: the head up to a vector boundary and the tail by memset */
SIMD_T static void SIMD_FN(reset_nt)(void *p_, size_t bytes) {
  char *p = p_;
  size_t head = (size_t)(-(uintptr_t)p & (SIMD_BYTES - 1));
  if (head > bytes) head = bytes;
  memset(p, 0, head);
  p += head;
  bytes -= head;
  size_t i = 0;
  for (; i + SIMD_BYTES <= bytes; i += SIMD_BYTES) vstream(p + i, vzero());
  _mm_sfence();
  memset(p + i, 0, bytes - i);
}

const bm_kernels SIMD_KERNELS = {
    SIMD_LABEL,
    {SIMD_FNW(classify, 8), SIMD_FNW(classify, 16), SIMD_FNW(classify, 32), SIMD_FNW(classify, 64)},
    SIMD_FN(compare),
    {SIMD_FNW(cc, 8), SIMD_FNW(cc, 16), SIMD_FNW(cc, 32), SIMD_FNW(cc, 64)},
    SIMD_FN(last_nonzero),
    {SIMD_FNW(count, 8), SIMD_FNW(count, 16), SIMD_FNW(count, 32), SIMD_FNW(count, 64)},
    SIMD_FN(reset_nt),
};

/* the vocabulary ends with this instruction set */
#undef SIMD_ISA
#undef SIMD_T
#undef SIMD_VEC
#undef SIMD_BYTES
#undef SIMD_KERNELS
#undef SIMD_LABEL
#undef vload
#undef vstore
#undef vstream
#undef vor
#undef vzero
#undef vnz
#undef SIMD_MASK
#undef vnzmask
#undef vclz
#undef vbucket
#undef vcmp
#undef vsat_u8
#undef vsat_u16
#undef vsat_u32
#undef vsat_u64
