/* bigmap.h - coverage map layouts, counters and per-exec kernels (C11, libc only).
 *
 * Layouts (docs/DESIGN.md "Map layouts and counters"):
 *   flat      H slots of W-bit counters; slot = key & (H-1). Per-exec ops cover all H slots.
 *   twolevel  BigMap (DSN 2021, Listing 2): index table of H uint32 entries maps (key & (H-1))
 *             to a slot of a dense array of C counters; a new key takes used_key++. Per-exec
 *             ops cover [0, used_key) only. Stored encoding: an entry holds slot + 1 and 0 means
 *             unassigned (BigMap's -1), so zero-filled memory (a fresh mmap, a new file, a fresh
 *             SysV segment: all zeroed lazily by the kernel) is an empty index and creating a
 *             map writes none of it. bm_index_decode() gives BigMap's view (BM_UNASSIGNED = -1).
 *             Full: once used_key == C, every further new key maps to the overflow slot C-1
 *             (shared with the C-th key) and *overflow_keys counts those keys. Never an
 *             out-of-bounds write.
 *   exact     twolevel keyed by the full 64-bit key through an open-addressing (linear probing)
 *             table of H entries (C <= H): no collisions while the dense array has room; when
 *             the key table itself is full a new key shares slot C-1 uncounted by
 *             overflow_keys, counted by bm_ctl.table_full. The key table's empty marker is 0
 *             (BM_EMPTY_KEY), so it is lazy too; the key 0 itself lives in bm_ctl.special_slot.
 *
 * Counter widths 8/16/32/64, overflow policies wrap, neverzero (AFL++: c += 1; c += (c == 0)),
 * saturate. Update functions are static inline and specialised per layout/width/policy:
 *   bm_<layout>_update_u<W>_<wrap|nz|sat>(bm_map *m, uint64_t key)
 * Generic callers use m->update / m->update_many, chosen once at init (bm_update_fn_for()).
 *
 * Memory. A map is (a) counters: C (flat: H) counters of W bits, e.g. afl-fuzz's SysV shm;
 * (b) a shared control region (twolevel/exact only): bm_ctl header (used_key, overflow_keys,
 * ...) followed by the index table (and for exact the key table), e.g. a MAP_SHARED file so
 * that every forked child shares slot assignments; (c) a private trace array of C (flat: H)
 * bytes for the classified 8-bit buckets when W > 8 (for W == 8 the trace is the counters,
 * classified in place, as AFL does). bm_map_create() allocates all of it (mmap +
 * madvise(MADV_HUGEPAGE)) and writes only the 64-byte bm_ctl header of (b); bm_map_attach()
 * places (a) and (b) in caller memory (BM_F_INIT_SHARED | BM_F_SHARED_ZEROED: header only).
 *
 * Slot assignment is race-free across threads and processes sharing (b): the fast path is a
 * plain load of the index entry and one branch (0?), the -1 folded into the counter address; on 0
 * the slow path reserves a slot with a CAS loop on used_key (never past C) and publishes slot + 1
 * with a CAS (0 -> slot + 1) on the index entry. If that CAS loses,
 * the winner's slot is used and the reserved slot is left unreferenced: its counter stays zero
 * forever (a "hole" inside [0, used_key): harmless for every kernel, counted by
 * bm_map_holes()). Counter increments are plain (non-atomic) like AFL's.
 *
 * Classification: every width maps to AFL's 8-bit bucket byte: min(count, 255), then
 * {0,1,2,3,4-7,8-15,16-31,32-127,128-255} -> {0,1,2,4,8,16,32,64,128}.
 *
 * Per-exec kernels (bigmap.c), for flat and twolevel (exact uses the twolevel ones):
 *   reset, reset_nt (flat), classify, compare (vs an 8-bit virgin map, 0/1/2 like AFL's
 *   has_new_bits: 1 = new bucket of a known slot, 2 = new slot; virgin bits are cleared),
 *   classify_compare (merged, BigMap IV-E), hash (of the classified bytes up to the last
 *   non-zero one), count_nonzero (counters). Each runs through the active kernel variant
 *   (scalar / avx2 / avx512), chosen once from a cached CPU-feature check; forced scalar by
 *   bm_select_variant(BM_VARIANT_SCALAR), env AUTOTUNE_FORCE_SCALAR=1, or -DBM_FORCE_SCALAR.
 */
#ifndef AUTOTUNE_BIGMAP_H
#define AUTOTUNE_BIGMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decoded "no slot" (BigMap's -1): what bm_index_decode() returns for an unassigned entry. */
#define BM_UNASSIGNED 0xFFFFFFFFu
/* Stored index entries (m->index[e], bm_ctl.special_slot): slot + 1; 0 = unassigned. */
#define BM_INDEX_EMPTY 0u
/* exact layout: the empty marker of the key table; the key 0 itself is kept in
 * bm_ctl.special_slot instead of the table. */
#define BM_EMPTY_KEY 0ull
/* "!BMCTL02" little-endian; version 02: index entries store slot + 1 (01 stored the slot and
 * 0xFFFFFFFF for unassigned, and the key table's empty marker was UINT64_MAX). */
#define BM_CTL_MAGIC 0x32304c54434d4221ull
#define BM_MAX_SLOTS (1u << 31)             /* H and C are at most 2^31 */

typedef enum { BM_FLAT = 0, BM_TWOLEVEL = 1, BM_EXACT = 2 } bm_layout;
typedef enum { BM_WRAP = 0, BM_NEVERZERO = 1, BM_SATURATE = 2 } bm_policy;
typedef enum {
  BM_VARIANT_AUTO = -1,
  BM_VARIANT_SCALAR = 0,
  BM_VARIANT_AVX2 = 1,
  BM_VARIANT_AVX512 = 2
} bm_variant;

/* Error codes (negative returns); bm_strerror() names them. */
enum {
  BM_OK = 0,
  BM_E_CONFIG = -1,   /* bad layout/width/policy/sizes */
  BM_E_NOMEM = -2,    /* allocation failed */
  BM_E_SHARED = -3,   /* attached shared region has a wrong magic/geometry */
  BM_E_VARIANT = -4   /* requested kernel variant not supported by this CPU/build */
};

/* bm_map_create / bm_map_attach flags */
#define BM_F_NO_HUGEPAGE 1u  /* create: do not madvise(MADV_HUGEPAGE) */
#define BM_F_INIT_SHARED 2u  /* attach: initialise the shared region (first user), else validate */
#define BM_F_ZERO_COUNTERS 4u /* attach: zero the counters */
#define BM_F_SHARED_ZEROED 8u /* attach with BM_F_INIT_SHARED: the shared region is known to be
                                 all zero (fresh mmap / new file / fresh shm): write only its
                                 header, touch none of the index or key table pages */

typedef struct bm_config {
  bm_layout layout;
  unsigned width_bits;   /* 8, 16, 32, 64 */
  bm_policy policy;
  uint64_t index_slots;  /* H, power of two in [1, 2^31]: flat counters / index / key-table entries */
  uint64_t capacity;     /* C in [1, 2^31]: dense slots (twolevel, exact); ignored for flat (= H) */
} bm_config;

/* Header of the shared control region (twolevel, exact). 64 bytes, followed by the index table
 * (H uint32) and, for exact, the key table (H uint64, 8-aligned). */
typedef struct bm_ctl {
  uint64_t magic;
  uint32_t layout, width_bits;
  uint64_t index_slots, capacity;
  uint32_t used_key;      /* next free dense slot, <= capacity */
  uint32_t overflow_keys; /* keys mapped to the overflow slot C-1 because the array was full */
  uint32_t special_slot;  /* exact: slot + 1 of the key 0 (BM_INDEX_EMPTY until seen) */
  uint32_t table_full;    /* exact: lookups of a new key that found the key table full */
  uint32_t reserved[4];
} bm_ctl;

typedef struct bm_map bm_map;
typedef void (*bm_update_fn)(bm_map *m, uint64_t key);
typedef void (*bm_update_many_fn)(bm_map *m, const uint64_t *keys, size_t n);

struct bm_map {
  bm_layout layout;
  unsigned width_bits;
  bm_policy policy;
  unsigned flags;
  uint64_t index_slots;    /* H */
  uint64_t index_mask;     /* H - 1 */
  uint64_t capacity;       /* C (flat: H) */
  void *counters;          /* C counters of width_bits */
  uint8_t *trace;          /* classified bytes: == counters when width 8 */
  bm_ctl *ctl;             /* shared control region (NULL for flat) */
  uint32_t *index;         /* H entries (twolevel, exact), stored as slot + 1 (0 = unassigned) */
  uint64_t *keys;          /* H keys (exact) */
  uint32_t *used_key;      /* -> ctl->used_key; NULL for flat (use bm_map_used()) */
  uint32_t *overflow_keys; /* -> ctl->overflow_keys; flat: -> a constant 0 */
  bm_update_fn update;
  bm_update_many_fn update_many;
  /* allocation bookkeeping (0 when caller-provided) */
  void *alloc_counters, *alloc_shared, *alloc_trace;
  size_t alloc_counters_bytes, alloc_shared_bytes, alloc_trace_bytes;
  int hugepage_advised;    /* 1: madvise(MADV_HUGEPAGE) took on every allocated region of at
                              least 2 MiB (and there was one); bm_map_hugepage_bytes() says how
                              much is backed by huge pages now */
};

/* ---- sizes, lifetime ---------------------------------------------------------------------- */
int bm_config_check(const bm_config *cfg);             /* BM_OK or BM_E_CONFIG */
size_t bm_counters_bytes(const bm_config *cfg);        /* C * W/8 (flat: H * W/8) */
size_t bm_shared_bytes(const bm_config *cfg);          /* 0 for flat */
size_t bm_trace_bytes(const bm_config *cfg);           /* 0 for width 8, else C (flat: H) */
int bm_map_create(bm_map *m, const bm_config *cfg, unsigned flags);
/* counters: bm_counters_bytes(cfg) bytes; shared: bm_shared_bytes(cfg) bytes (8-aligned) or
 * NULL for flat. The trace array (W > 8) is allocated privately. */
int bm_map_attach(bm_map *m, const bm_config *cfg, void *counters, void *shared, unsigned flags);
void bm_map_destroy(bm_map *m);
/* Initialise a shared region of bm_shared_bytes(cfg) bytes: bm_shared_init() zeroes all of it
 * (memory of unknown contents); bm_shared_init_zeroed() writes only the header and requires the
 * rest to be zero already (fresh anonymous mmap, a newly created/truncated file, fresh SysV shm). */
void bm_shared_init(void *shared, const bm_config *cfg);
void bm_shared_init_zeroed(void *shared, const bm_config *cfg);
const char *bm_strerror(int err);
/* Heap-allocated handle for FFI callers (ctypes): NULL on error, *err set if err != NULL. */
bm_map *bm_map_new(int layout, unsigned width_bits, int policy, uint64_t index_slots,
                   uint64_t capacity, unsigned flags, int *err);
void bm_map_free(bm_map *m);
/* Bytes of the map's memory backed by transparent huge pages now (from /proc/self/smaps);
 * -1 if unknown. */
long bm_map_hugepage_bytes(const bm_map *m);
/* Invariant checker: 1 if consistent, else 0 with *reason set (static string). O(H + C). */
int bm_validate(const bm_map *m, const char **reason);
/* Dense slots in [0, used) that no index entry refers to (lost CAS races). O(H + C). */
uint64_t bm_map_holes(const bm_map *m);

/* Slots the per-exec ops cover: flat H; twolevel/exact used_key. (A bm_map holds no pointer
 * to itself: it may be copied by value.) */
static inline uint64_t bm_map_used(const bm_map *m) {
  return m->layout == BM_FLAT ? m->capacity : __atomic_load_n(m->used_key, __ATOMIC_ACQUIRE);
}

/* ---- index encoding ----------------------------------------------------------------------- */
static inline uint32_t bm_index_encode(uint32_t slot) { return slot + 1u; }
/* Stored entry -> slot; BM_INDEX_EMPTY -> BM_UNASSIGNED (BigMap's -1), by uint32 wrap-around. */
static inline uint32_t bm_index_decode(uint32_t stored) { return stored - 1u; }
/* The slot of index entry e as BigMap shows it (BM_UNASSIGNED if none), for tests and display. */
static inline uint32_t bm_index_get(const bm_map *m, uint64_t e) {
  return bm_index_decode(__atomic_load_n(&m->index[e], __ATOMIC_RELAXED));
}

/* The count in dense slot i, whatever the counter width; for checks and tests, not the hot path. */
static inline uint64_t bm_counter_get(const bm_map *m, uint64_t i) {
  switch (m->width_bits) {
    case 8: return ((const uint8_t *)m->counters)[i];
    case 16: return ((const uint16_t *)m->counters)[i];
    case 32: return ((const uint32_t *)m->counters)[i];
    default: return ((const uint64_t *)m->counters)[i];
  }
}

/* ---- update (hot path) -------------------------------------------------------------------- */
/* Slow paths (bigmap.c): take a slot for index entry e / for a 64-bit key. */
uint32_t bm_twolevel_assign(bm_map *m, uint64_t e);
uint32_t bm_exact_lookup_slow(bm_map *m, uint64_t key);

/* slot + 1 of a key (never 0): on the fast path the stored entry itself. The update functions
 * address counters + (slot1 - 1) in 64 bits, which folds into the load/store's displacement
 * (-W/8): the fast path is one load, one branch, and no more instructions than storing the raw
 * slot with a 0xFFFFFFFF marker took. */
static inline uint64_t bm_twolevel_slot1(bm_map *m, uint64_t key) {
  uint64_t e = key & m->index_mask;
  uint32_t s = __atomic_load_n(&m->index[e], __ATOMIC_RELAXED);
  if (__builtin_expect(s != BM_INDEX_EMPTY, 1)) return s;
  return (uint64_t)bm_twolevel_assign(m, e) + 1u;
}
static inline uint32_t bm_twolevel_slot(bm_map *m, uint64_t key) {
  return (uint32_t)(bm_twolevel_slot1(m, key) - 1u);
}

/* The key table's home position of a key (a 64-bit finaliser, so structured keys spread). */
static inline uint64_t bm_key_mix(uint64_t k) {
  k ^= k >> 32;
  k *= 0xd6e8feb86659fd93ull;
  k ^= k >> 32;
  k *= 0xd6e8feb86659fd93ull;
  k ^= k >> 32;
  return k;
}

static inline uint64_t bm_exact_slot1(bm_map *m, uint64_t key) {
  uint64_t i = bm_key_mix(key) & m->index_mask;
  if (__builtin_expect(__atomic_load_n(&m->keys[i], __ATOMIC_ACQUIRE) == key, 1)) {
    uint32_t s = __atomic_load_n(&m->index[i], __ATOMIC_ACQUIRE);
    if (__builtin_expect(s != BM_INDEX_EMPTY, 1)) return s;
  }
  return (uint64_t)bm_exact_lookup_slow(m, key) + 1u;
}
static inline uint32_t bm_exact_slot(bm_map *m, uint64_t key) {
  return (uint32_t)(bm_exact_slot1(m, key) - 1u);
}

#define BM_INC_wrap(T, p) (*(p) = (T)(*(p) + 1u))
/* neverzero: c + 1, plus the carry out of it (AFL++'s add/adc: 4 instructions for 8 bits, where
 * testing the sum for 0 took 7) */
#define BM_INC_nz(T, p)                                                                  \
  do {                                                                                   \
    T s_;                                                                                \
    T carry_ = (T)__builtin_add_overflow(*(p), (T)1, &s_);                               \
    *(p) = (T)(s_ + carry_);                                                             \
  } while (0)
#define BM_INC_sat(T, p)                                                                 \
  do {                                                                                   \
    T c_ = *(p);                                                                         \
    *(p) = (T)(c_ + (c_ != (T)~(T)0));                                                   \
  } while (0)

#define BM_DEF_UPDATE(W, POL)                                                            \
  static inline void bm_flat_update_u##W##_##POL(bm_map *m, uint64_t key) {             \
    uint##W##_t *p_ = (uint##W##_t *)m->counters + (key & m->index_mask);                \
    BM_INC_##POL(uint##W##_t, p_);                                                       \
  }                                                                                      \
  /* a new key: assign and count out of line, entered by a tail call, so that the fast path   \
   * keeps nothing live across a call (no callee-saved register to save) */                 \
  static inline void bm_twolevel_update_u##W##_##POL(bm_map *m, uint64_t key) {         \
    uint64_t e_ = key & m->index_mask;                                                   \
    uint32_t s_ = __atomic_load_n(&m->index[e_], __ATOMIC_RELAXED);                      \
    if (__builtin_expect(s_ == BM_INDEX_EMPTY, 0)) {                                     \
      bm_twolevel_new_u##W##_##POL(m, e_);                                               \
      return;                                                                            \
    }                                                                                    \
    uint##W##_t *p_ = (uint##W##_t *)m->counters + ((uint64_t)s_ - 1u);                  \
    BM_INC_##POL(uint##W##_t, p_);                                                       \
  }                                                                                      \
  static inline void bm_exact_update_u##W##_##POL(bm_map *m, uint64_t key) {            \
    uint##W##_t *p_ = (uint##W##_t *)m->counters + (bm_exact_slot1(m, key) - 1u);        \
    BM_INC_##POL(uint##W##_t, p_);                                                       \
  }

/* twolevel, the key's index entry e unassigned when looked at: its slot (bm_twolevel_assign), then
 * the count (bigmap.c) */
#define BM_DECL_NEW(W, POL) void bm_twolevel_new_u##W##_##POL(bm_map *m, uint64_t e);
#define BM_DECL_NEW_W(W) BM_DECL_NEW(W, wrap) BM_DECL_NEW(W, nz) BM_DECL_NEW(W, sat)
BM_DECL_NEW_W(8)
BM_DECL_NEW_W(16)
BM_DECL_NEW_W(32)
BM_DECL_NEW_W(64)

#define BM_DEF_UPDATE_W(W) BM_DEF_UPDATE(W, wrap) BM_DEF_UPDATE(W, nz) BM_DEF_UPDATE(W, sat)
BM_DEF_UPDATE_W(8)
BM_DEF_UPDATE_W(16)
BM_DEF_UPDATE_W(32)
BM_DEF_UPDATE_W(64)

/* The specialised (non-inline copies of the) update functions, chosen once. */
bm_update_fn bm_update_fn_for(bm_layout layout, unsigned width_bits, bm_policy policy);
bm_update_many_fn bm_update_many_fn_for(bm_layout layout, unsigned width_bits, bm_policy policy);
static inline void bm_update(bm_map *m, uint64_t key) { m->update(m, key); }
static inline void bm_update_many(bm_map *m, const uint64_t *keys, size_t n) {
  m->update_many(m, keys, n);
}

/* ---- classification ----------------------------------------------------------------------- */
extern const uint8_t bm_bucket_table[256];
static inline uint8_t bm_bucket(uint64_t count) {
  return bm_bucket_table[count > 255 ? 255 : count];
}

/* ---- per-exec kernels on a map ------------------------------------------------------------ */
/* Each covers the map's used region, bm_map_used(m) slots: all H of a flat map, [0, used_key) of
 * a twolevel or exact one. virgin: an 8-bit map of (flat) H / (twolevel, exact) C bytes, initially
 * all 0xFF. */
void bm_reset(bm_map *m);
void bm_classify(bm_map *m);
int bm_compare(bm_map *m, uint8_t *virgin);
int bm_classify_compare(bm_map *m, uint8_t *virgin);
uint64_t bm_hash(const bm_map *m);
uint64_t bm_count_nonzero(const bm_map *m);
/* All H (flat) / C (twolevel, exact) counters zeroed with non-temporal stores (no cache pollution). */
void bm_flat_reset_nt(bm_map *m);

/* ---- range kernels and variants ----------------------------------------------------------- */
/* Width index wi: 0 = 8, 1 = 16, 2 = 32, 3 = 64 bits. For wi == 0, dst may equal src (in place).
 * classify:          dst[i] = bucket(src[i]) for i < n.
 * compare:           trace vs virgin, 0/1/2, clears virgin bits (AFL has_new_bits).
 * classify_compare:  classify then compare, in one pass.
 * last_nonzero:      index + 1 of the last non-zero byte of p[0, n), 0 if none.
 * count_nonzero:     non-zero counters in src[0, n).
 * reset_nt:          zero `bytes` bytes with non-temporal stores. */
typedef struct bm_kernels {
  const char *name;
  void (*classify[4])(uint8_t *dst, const void *src, size_t n);
  int (*compare)(const uint8_t *trace, uint8_t *virgin, size_t n);
  int (*classify_compare[4])(uint8_t *dst, const void *src, uint8_t *virgin, size_t n);
  size_t (*last_nonzero)(const uint8_t *p, size_t n);
  uint64_t (*count_nonzero[4])(const void *src, size_t n);
  void (*reset_nt)(void *p, size_t bytes);
} bm_kernels;

/* NULL if the variant is not compiled in or the CPU lacks it. */
const bm_kernels *bm_kernels_get(bm_variant v);
const bm_kernels *bm_kernels_active(void);
int bm_select_variant(bm_variant v); /* BM_OK or BM_E_VARIANT; AUTO = best (respects env) */
bm_variant bm_active_variant(void);
const char *bm_variant_name(bm_variant v);
static inline unsigned bm_width_index(unsigned width_bits) {
  return width_bits == 8 ? 0u : width_bits == 16 ? 1u : width_bits == 32 ? 2u : 3u;
}

/* The trace hash: a multiply-xorshift over 8-byte words (4 independent lanes), of the bytes
 * p[0, last_nonzero) plus that length. Identical for every variant. */
uint64_t bm_hash_bytes(const uint8_t *p, size_t n);

/* ---- FFI helpers (bigmap_ffi.c): plain functions for ctypes ---------------------------- */
void *bm_ffi_counters(const bm_map *m);
uint8_t *bm_ffi_trace(const bm_map *m);
uint32_t *bm_ffi_index(const bm_map *m);
uint64_t *bm_ffi_keys(const bm_map *m);
uint64_t bm_ffi_used(const bm_map *m);
uint64_t bm_ffi_overflow_keys(const bm_map *m);
uint64_t bm_ffi_table_full(const bm_map *m);
int bm_ffi_hugepage_advised(const bm_map *m);
void bm_ffi_update_many(bm_map *m, const uint64_t *keys, size_t n);
void bm_ffi_update(bm_map *m, uint64_t key);
int bm_ffi_classify(int variant, unsigned width_bits, uint8_t *dst, const void *src, size_t n);
int bm_ffi_classify_compare(int variant, unsigned width_bits, uint8_t *dst, const void *src,
                            uint8_t *virgin, size_t n);
int bm_ffi_compare(int variant, const uint8_t *trace, uint8_t *virgin, size_t n);
int64_t bm_ffi_count_nonzero(int variant, unsigned width_bits, const void *src, size_t n);
int64_t bm_ffi_last_nonzero(int variant, const uint8_t *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
