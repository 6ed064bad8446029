/* bigmap.c - map lifetime, slot assignment slow paths, update dispatch, validation. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* MAP_ANONYMOUS, MADV_HUGEPAGE */
#endif
#include "bigmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

int bm_config_check(const bm_config *cfg) {
  if (!cfg) return BM_E_CONFIG;
  if ((unsigned)cfg->layout > BM_EXACT || (unsigned)cfg->policy > BM_SATURATE) return BM_E_CONFIG;
  if (cfg->width_bits != 8 && cfg->width_bits != 16 && cfg->width_bits != 32 &&
      cfg->width_bits != 64)
    return BM_E_CONFIG;
  if (!is_pow2(cfg->index_slots) || cfg->index_slots > BM_MAX_SLOTS) return BM_E_CONFIG;
  if (cfg->layout != BM_FLAT && (cfg->capacity < 1 || cfg->capacity > BM_MAX_SLOTS))
    return BM_E_CONFIG;
  /* exact: a full key table must imply a full dense array (see bm_exact_lookup_slow) */
  if (cfg->layout == BM_EXACT && cfg->capacity > cfg->index_slots) return BM_E_CONFIG;
  return BM_OK;
}

static uint64_t dense_slots(const bm_config *cfg) {
  return cfg->layout == BM_FLAT ? cfg->index_slots : cfg->capacity;
}

size_t bm_counters_bytes(const bm_config *cfg) {
  return (size_t)dense_slots(cfg) * (cfg->width_bits / 8);
}

size_t bm_shared_bytes(const bm_config *cfg) {
  if (cfg->layout == BM_FLAT) return 0;
  size_t n = sizeof(bm_ctl) + (size_t)cfg->index_slots * sizeof(uint32_t);
  if (cfg->layout == BM_EXACT) {
    n = (n + 7) & ~(size_t)7;
    n += (size_t)cfg->index_slots * sizeof(uint64_t);
  }
  return n;
}

size_t bm_trace_bytes(const bm_config *cfg) {
  return cfg->width_bits == 8 ? 0 : (size_t)dense_slots(cfg);
}

const char *bm_strerror(int err) {
  switch (err) {
    case BM_OK: return "ok";
    case BM_E_CONFIG: return "invalid map configuration (layout, width 8/16/32/64, policy, "
                             "index slots a power of two <= 2^31, capacity 1..2^31, exact: capacity <= index slots)";
    case BM_E_NOMEM: return "cannot allocate the map";
    case BM_E_SHARED: return "the shared region does not match the map configuration";
    case BM_E_VARIANT: return "kernel variant not supported by this CPU or build";
    default: return "unknown error";
  }
}

/* ---- allocation ------------------------------------------------------------------------- */
#define BM_HUGE (2u << 20)

/* Anonymous mapping, zeroed, 2 MiB-aligned when at least 2 MiB, then advised for huge pages.
 * *advice: unchanged for small regions (no huge page can back them), else 1 if madvise took
 * and 0 if it failed (kept at 0 once any region failed). */
static void *region_alloc(size_t bytes, size_t *mapped, int advise, int *advice) {
  size_t len = (bytes + 4095) & ~(size_t)4095;
  if (len == 0) len = 4096;
  int big = len >= BM_HUGE;
  size_t total = big ? len + BM_HUGE : len;
  char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  char *q = p;
  if (big) { /* trim to a 2 MiB-aligned start */
    uintptr_t a = ((uintptr_t)p + BM_HUGE - 1) & ~(uintptr_t)(BM_HUGE - 1);
    q = (char *)a;
    if (q > p) munmap(p, (size_t)(q - p));
    size_t tail = (size_t)((p + total) - (q + len));
    if (tail) munmap(q + len, tail);
  }
  *mapped = len;
  if (advise && big) {
#ifdef MADV_HUGEPAGE
    int ok = madvise(q, len, MADV_HUGEPAGE) == 0;
#else
    int ok = 0;
#endif
    *advice = *advice == 0 ? 0 : ok;
  }
  return q;
}

static void region_free(void *p, size_t mapped) {
  if (p) munmap(p, mapped);
}

/* The header only: an all-zero index (BM_INDEX_EMPTY) and key table (BM_EMPTY_KEY) are empty,
 * so the pages of both stay untouched until a key lands there. */
void bm_shared_init_zeroed(void *shared, const bm_config *cfg) {
  bm_ctl *ctl = shared;
  memset(ctl, 0, sizeof *ctl);
  ctl->layout = cfg->layout;
  ctl->width_bits = cfg->width_bits;
  ctl->index_slots = cfg->index_slots;
  ctl->capacity = cfg->capacity;
  ctl->special_slot = BM_INDEX_EMPTY;
  __atomic_store_n(&ctl->magic, BM_CTL_MAGIC, __ATOMIC_RELEASE);
}

void bm_shared_init(void *shared, const bm_config *cfg) {
  memset(shared, 0, bm_shared_bytes(cfg));
  bm_shared_init_zeroed(shared, cfg);
}

static void wire(bm_map *m, const bm_config *cfg, void *counters, void *shared) {
  m->layout = cfg->layout;
  m->width_bits = cfg->width_bits;
  m->policy = cfg->policy;
  m->index_slots = cfg->index_slots;
  m->index_mask = cfg->index_slots - 1;
  m->capacity = dense_slots(cfg);
  m->counters = counters;
  m->update = bm_update_fn_for(cfg->layout, cfg->width_bits, cfg->policy);
  m->update_many = bm_update_many_fn_for(cfg->layout, cfg->width_bits, cfg->policy);
  if (cfg->layout == BM_FLAT) {
    static uint32_t zero_overflow; /* never written: flat maps have no overflow */
    m->used_key = NULL;
    m->overflow_keys = &zero_overflow;
    return;
  }
  m->ctl = shared;
  m->index = (uint32_t *)(m->ctl + 1);
  m->used_key = &m->ctl->used_key;
  m->overflow_keys = &m->ctl->overflow_keys;
  if (cfg->layout == BM_EXACT) {
    size_t off = (sizeof(bm_ctl) + (size_t)cfg->index_slots * sizeof(uint32_t) + 7) & ~(size_t)7;
    m->keys = (uint64_t *)((char *)shared + off);
  }
}

static int alloc_trace(bm_map *m, const bm_config *cfg, int advise, int *advised) {
  size_t tb = bm_trace_bytes(cfg);
  if (tb == 0) {
    m->trace = m->counters;
    return BM_OK;
  }
  m->alloc_trace = region_alloc(tb, &m->alloc_trace_bytes, advise, advised);
  if (!m->alloc_trace) return BM_E_NOMEM;
  m->trace = m->alloc_trace;
  return BM_OK;
}

int bm_map_create(bm_map *m, const bm_config *cfg, unsigned flags) {
  memset(m, 0, sizeof *m);
  int rc = bm_config_check(cfg);
  if (rc) return rc;
  int advise = !(flags & BM_F_NO_HUGEPAGE), advised = -1; /* -1: no region large enough */
  void *c = region_alloc(bm_counters_bytes(cfg), &m->alloc_counters_bytes, advise, &advised);
  if (!c) return BM_E_NOMEM;
  m->alloc_counters = c;
  void *s = NULL;
  if (cfg->layout != BM_FLAT) {
    s = region_alloc(bm_shared_bytes(cfg), &m->alloc_shared_bytes, advise, &advised);
    if (!s) {
      bm_map_destroy(m);
      return BM_E_NOMEM;
    }
    m->alloc_shared = s;
    bm_shared_init_zeroed(s, cfg); /* a fresh anonymous mapping reads as zero */
  }
  wire(m, cfg, c, s);
  if ((rc = alloc_trace(m, cfg, advise, &advised)) != BM_OK) {
    bm_map_destroy(m);
    return rc;
  }
  m->flags = flags;
  m->hugepage_advised = advised == 1;
  return BM_OK;
}

int bm_map_attach(bm_map *m, const bm_config *cfg, void *counters, void *shared, unsigned flags) {
  memset(m, 0, sizeof *m);
  int rc = bm_config_check(cfg);
  if (rc) return rc;
  if (!counters || (cfg->layout != BM_FLAT && !shared)) return BM_E_CONFIG;
  if (cfg->layout != BM_FLAT) {
    if ((uintptr_t)shared & 7) return BM_E_CONFIG;
    if (flags & BM_F_INIT_SHARED) {
      if (flags & BM_F_SHARED_ZEROED)
        bm_shared_init_zeroed(shared, cfg);
      else
        bm_shared_init(shared, cfg);
    } else {
      const bm_ctl *ctl = shared;
      if (__atomic_load_n(&ctl->magic, __ATOMIC_ACQUIRE) != BM_CTL_MAGIC ||
          ctl->layout != (uint32_t)cfg->layout || ctl->index_slots != cfg->index_slots ||
          ctl->capacity != cfg->capacity)
        return BM_E_SHARED;
    }
  }
  if (flags & BM_F_ZERO_COUNTERS) memset(counters, 0, bm_counters_bytes(cfg));
  wire(m, cfg, counters, shared);
  int advised = -1;
  if ((rc = alloc_trace(m, cfg, !(flags & BM_F_NO_HUGEPAGE), &advised)) != BM_OK) return rc;
  m->flags = flags;
  m->hugepage_advised = 0; /* caller memory: not ours to advise */
  return BM_OK;
}

void bm_map_destroy(bm_map *m) {
  if (!m) return;
  region_free(m->alloc_counters, m->alloc_counters_bytes);
  region_free(m->alloc_shared, m->alloc_shared_bytes);
  region_free(m->alloc_trace, m->alloc_trace_bytes);
  memset(m, 0, sizeof *m);
}

bm_map *bm_map_new(int layout, unsigned width_bits, int policy, uint64_t index_slots,
                   uint64_t capacity, unsigned flags, int *err) {
  bm_config cfg = {(bm_layout)layout, width_bits, (bm_policy)policy, index_slots, capacity};
  bm_map *m = malloc(sizeof *m);
  int rc = m ? bm_map_create(m, &cfg, flags) : BM_E_NOMEM;
  if (err) *err = rc;
  if (rc != BM_OK) {
    free(m);
    return NULL;
  }
  return m;
}

void bm_map_free(bm_map *m) {
  bm_map_destroy(m);
  free(m);
}

/* Sum AnonHugePages of the smaps entries overlapping the map's allocated regions. */
long bm_map_hugepage_bytes(const bm_map *m) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  const void *rs[3] = {m->alloc_counters, m->alloc_shared, m->alloc_trace};
  size_t rl[3] = {m->alloc_counters_bytes, m->alloc_shared_bytes, m->alloc_trace_bytes};
  char line[512];
  long total = 0;
  int inside = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = 0;
      for (int i = 0; i < 3; i++) {
        uintptr_t a = (uintptr_t)rs[i];
        if (a && a < hi && a + rl[i] > lo) inside = 1;
      }
      continue;
    }
    long kb;
    if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) total += kb * 1024;
  }
  fclose(f);
  return total;
}

/* ---- slot assignment (slow paths) ------------------------------------------------------- */
/* Reserve the next dense slot, never past C. Returns BM_UNASSIGNED when the array is full. */
static uint32_t take_slot(bm_map *m) {
  uint32_t u = __atomic_load_n(m->used_key, __ATOMIC_RELAXED);
  while (u < m->capacity) {
    if (__atomic_compare_exchange_n(m->used_key, &u, u + 1, 1, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      return u;
  }
  return BM_UNASSIGNED;
}

/* Publish a slot for the stored entry *entry (BM_INDEX_EMPTY before) as slot + 1; returns the
 * slot the entry ends up with. */
static uint32_t publish(bm_map *m, uint32_t *entry) {
  uint32_t s = take_slot(m), expected = BM_INDEX_EMPTY;
  int overflow = s == BM_UNASSIGNED;
  if (overflow) s = (uint32_t)(m->capacity - 1);
  if (__atomic_compare_exchange_n(entry, &expected, bm_index_encode(s), 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    if (overflow) __atomic_fetch_add(m->overflow_keys, 1, __ATOMIC_RELAXED);
    return s;
  }
  /* lost the race: the reserved slot (if any) stays an unreferenced hole */
  return bm_index_decode(expected);
}

/* The slot of a stored entry, publishing one if it has none. */
static uint32_t slot_of(bm_map *m, uint32_t *entry) {
  uint32_t s = __atomic_load_n(entry, __ATOMIC_ACQUIRE);
  return s != BM_INDEX_EMPTY ? bm_index_decode(s) : publish(m, entry);
}

uint32_t bm_twolevel_assign(bm_map *m, uint64_t e) { return slot_of(m, &m->index[e]); }

uint32_t bm_exact_lookup_slow(bm_map *m, uint64_t key) {
  if (key == BM_EMPTY_KEY) return slot_of(m, &m->ctl->special_slot);
  uint64_t i = bm_key_mix(key) & m->index_mask;
  for (uint64_t probes = 0; probes < m->index_slots; probes++, i = (i + 1) & m->index_mask) {
    uint64_t k = __atomic_load_n(&m->keys[i], __ATOMIC_ACQUIRE);
    if (k == BM_EMPTY_KEY) {
      uint64_t expected = BM_EMPTY_KEY;
      if (__atomic_compare_exchange_n(&m->keys[i], &expected, key, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE))
        k = key;
      else
        k = expected; /* someone claimed it first: maybe with our key */
    }
    if (k == key) return slot_of(m, &m->index[i]);
  }
  /* The key table is full: count it, and share the overflow slot without remembering. */
  __atomic_fetch_add(&m->ctl->table_full, 1, __ATOMIC_RELAXED);
  return (uint32_t)(m->capacity - 1);
}

#define BM_DEF_NEW(W, POL)                                                                  \
  void bm_twolevel_new_u##W##_##POL(bm_map *m, uint64_t e) {                                \
    uint##W##_t *p_ = (uint##W##_t *)m->counters + bm_twolevel_assign(m, e);                \
    BM_INC_##POL(uint##W##_t, p_);                                                          \
  }
#define BM_DEF_NEW_W(W) BM_DEF_NEW(W, wrap) BM_DEF_NEW(W, nz) BM_DEF_NEW(W, sat)
BM_DEF_NEW_W(8)
BM_DEF_NEW_W(16)
BM_DEF_NEW_W(32)
BM_DEF_NEW_W(64)

/* ---- update function tables ------------------------------------------------------------- */
#define BM_NONINLINE(L, W, POL)                                                             \
  static void L##_u##W##_##POL##_fn(bm_map *m, uint64_t key) {                             \
    bm_##L##_update_u##W##_##POL(m, key);                                                  \
  }                                                                                         \
  static void L##_u##W##_##POL##_many(bm_map *m, const uint64_t *keys, size_t n) {          \
    for (size_t i = 0; i < n; i++) bm_##L##_update_u##W##_##POL(m, keys[i]);               \
  }
#define BM_NONINLINE_W(L, W) BM_NONINLINE(L, W, wrap) BM_NONINLINE(L, W, nz) BM_NONINLINE(L, W, sat)
#define BM_NONINLINE_L(L) \
  BM_NONINLINE_W(L, 8) BM_NONINLINE_W(L, 16) BM_NONINLINE_W(L, 32) BM_NONINLINE_W(L, 64)
BM_NONINLINE_L(flat)
BM_NONINLINE_L(twolevel)
BM_NONINLINE_L(exact)

#define ROW(L, W, S) {L##_u##W##_wrap_##S, L##_u##W##_nz_##S, L##_u##W##_sat_##S}
#define LAYOUT(L, S) {ROW(L, 8, S), ROW(L, 16, S), ROW(L, 32, S), ROW(L, 64, S)}
static const bm_update_fn update_fns[3][4][3] = {LAYOUT(flat, fn), LAYOUT(twolevel, fn),
                                                 LAYOUT(exact, fn)};
static const bm_update_many_fn update_many_fns[3][4][3] = {
    LAYOUT(flat, many), LAYOUT(twolevel, many), LAYOUT(exact, many)};

bm_update_fn bm_update_fn_for(bm_layout layout, unsigned width_bits, bm_policy policy) {
  return update_fns[layout][bm_width_index(width_bits)][policy];
}

bm_update_many_fn bm_update_many_fn_for(bm_layout layout, unsigned width_bits, bm_policy policy) {
  return update_many_fns[layout][bm_width_index(width_bits)][policy];
}

/* ---- validation ------------------------------------------------------------------------- */
#define FAIL(msg)             \
  do {                        \
    if (reason) *reason = msg; \
    return 0;                 \
  } while (0)

/* refs[s] = number of index entries referring to dense slot s (saturating at 255). */
static uint8_t *slot_refs(const bm_map *m) {
  uint8_t *refs = calloc(m->capacity, 1);
  if (!refs) return NULL;
  for (uint64_t e = 0; e < m->index_slots; e++) {
    uint32_t s = bm_index_get(m, e);
    if (s != BM_UNASSIGNED && s < m->capacity && refs[s] < 255) refs[s]++;
  }
  if (m->layout == BM_EXACT) {
    uint32_t s = bm_index_decode(m->ctl->special_slot);
    if (s != BM_UNASSIGNED && s < m->capacity && refs[s] < 255) refs[s]++;
  }
  return refs;
}

int bm_validate(const bm_map *m, const char **reason) {
  if (reason) *reason = "ok";
  if (!m || !m->counters) FAIL("no map");
  bm_config cfg = {m->layout, m->width_bits, m->policy, m->index_slots, m->capacity};
  if (bm_config_check(&cfg) != BM_OK) FAIL("bad configuration");
  if (m->index_mask != m->index_slots - 1) FAIL("index_mask != index_slots - 1");
  if (!m->trace) FAIL("no trace array");
  if (m->width_bits == 8 && m->trace != (uint8_t *)m->counters) FAIL("8-bit trace is not in place");
  if (m->width_bits != 8 && m->trace == (uint8_t *)m->counters) FAIL("wide trace aliases counters");
  if (m->update != bm_update_fn_for(m->layout, m->width_bits, m->policy))
    FAIL("update function does not match layout/width/policy");
  if (m->layout == BM_FLAT) {
    if (m->capacity != m->index_slots) FAIL("flat capacity != index slots");
    if (m->used_key) FAIL("flat map with a used_key");
    if (*m->overflow_keys != 0) FAIL("flat overflow_keys != 0");
    return 1;
  }
  const bm_ctl *ctl = m->ctl;
  if (!ctl || ctl->magic != BM_CTL_MAGIC) FAIL("shared region magic");
  if (ctl->index_slots != m->index_slots || ctl->capacity != m->capacity ||
      ctl->layout != (uint32_t)m->layout)
    FAIL("shared region geometry differs from the map");
  if (m->used_key != &ctl->used_key || m->overflow_keys != &ctl->overflow_keys)
    FAIL("used_key/overflow_keys do not point into the shared region");
  uint32_t used = ctl->used_key;
  if (used > m->capacity) FAIL("used_key > capacity");
  if (ctl->overflow_keys && used != m->capacity) FAIL("overflow keys while the array is not full");
  uint32_t special = bm_index_decode(ctl->special_slot);
  if (m->layout == BM_EXACT && special != BM_UNASSIGNED && special >= used)
    FAIL("special slot beyond used_key");
  for (uint64_t e = 0; e < m->index_slots; e++) {
    uint32_t s = bm_index_get(m, e);
    if (s != BM_UNASSIGNED && s >= used) FAIL("index entry refers beyond used_key");
    if (m->layout == BM_EXACT) {
      uint64_t k = m->keys[e];
      if (k == BM_EMPTY_KEY && s != BM_UNASSIGNED) FAIL("slot assigned to an empty key entry");
      if (k != BM_EMPTY_KEY) { /* reachable from its home without crossing an empty entry */
        uint64_t i = bm_key_mix(k) & m->index_mask;
        while (i != e) {
          if (m->keys[i] == BM_EMPTY_KEY) FAIL("key not reachable from its home position");
          if (m->keys[i] == k) FAIL("duplicate key in the key table");
          i = (i + 1) & m->index_mask;
        }
      }
    }
  }
  uint8_t *refs = slot_refs(m);
  if (!refs) FAIL("out of memory while validating");
  const char *bad = NULL;
  for (uint64_t s = 0; s < m->capacity && !bad; s++) {
    if (refs[s] > 1 && !(s == m->capacity - 1 && used == m->capacity))
      bad = "two index entries share a slot that is not the overflow slot";
    else if (s == m->capacity - 1 && used == m->capacity && refs[s] > 1 + ctl->overflow_keys)
      bad = "overflow slot shared by more keys than overflow_keys + 1";
    else if (refs[s] == 0 && bm_counter_get(m, s) != 0)
      bad = s < used ? "an unreferenced slot (hole) has a non-zero counter"
                     : "a counter beyond used_key is non-zero";
  }
  free(refs);
  if (bad) FAIL(bad);
  return 1;
}

uint64_t bm_map_holes(const bm_map *m) {
  if (m->layout == BM_FLAT) return 0;
  uint8_t *refs = slot_refs(m);
  if (!refs) return 0;
  uint64_t holes = 0, used = bm_map_used(m);
  for (uint64_t s = 0; s < used; s++) holes += refs[s] == 0;
  free(refs);
  return holes;
}
