/* cov_ids.c - the metrics' names, block ids and seeds, the registration of instrumented modules
 * (trace-pc-guard guards, inline 8-bit counters, inline edges), build kinds and what each can
 * serve. See cov.h for the definitions; docs/DESIGN.md "Keys, ids and metrics". */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cov.h"
#include "cov_internal.h"

/* ngram-N has id N - 1: ngram builds (cov_ngram_build_metric) and autotune cc's AUTOTUNE_CC_NGRAM
 * rely on it */
_Static_assert(COV_M_NGRAM2 == 1 && COV_M_NGRAM8 == 7, "ngram-N has id N - 1");
_Static_assert(COV_N_METRICS < 32, "metric masks are 32-bit (COV_ALL_METRICS)");

const char *const cov_metric_names[COV_N_METRICS] = {
#define COV_M_NAME(ID, NAME, KEY, WIN, CX) NAME,
    COV_METRICS(COV_M_NAME)
#undef COV_M_NAME
};

const cov_metric_info cov_metric_infos[COV_N_METRICS] = {
#define COV_M_INFO(ID, NAME, KEY, WIN, CX) {COV_KEYFN_##KEY, WIN, CX},
    COV_METRICS(COV_M_INFO)
#undef COV_M_INFO
};

int cov_metric_id(const char *name) {
  for (int i = 0; i < COV_N_METRICS; i++)
    if (strcmp(name, cov_metric_names[i]) == 0) return i;
  return -1;
}

uint32_t cov_metric_mask_parse(const char *list, const char **bad, size_t *bad_len) {
  if (strcmp(list, "all") == 0) return COV_ALL_METRICS;
  uint32_t mask = 0;
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    int id = -1;
    for (int i = 0; i < COV_N_METRICS; i++)
      if (strlen(cov_metric_names[i]) == len && strncmp(p, cov_metric_names[i], len) == 0) id = i;
    if (id < 0) {
      if (bad) *bad = p;
      if (bad_len) *bad_len = len;
      return 0;
    }
    mask |= 1u << id;
    if (!e) break;
    p = e + 1;
  }
  if (!mask && bad) {
    *bad = list;
    *bad_len = 0;
  }
  return mask;
}

/* ---- ids ---------------------------------------------------------------------------------- */
uint64_t cov_mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t cov_splitmix64(uint64_t x) { return splitmix64(x); }

pthread_mutex_t cov_init_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t cov_seed_v;
uint32_t cov_seed_epoch = 1;
static uint32_t cov_nguards;
uint32_t *cov_R;
uint32_t cov_R_cap;
uint64_t *cov_T;
uint32_t cov_T_cap;
static int cov_ids_ready;
int cov_tables_full;
uint32_t cov_guard_limit;

static void cov_ids_init_locked(void) {
  if (cov_ids_ready) return;
  cov_ids_ready = 1;
  const char *s = getenv("AUTOTUNE_SEED");
  if (s && *s) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!errno && *end == 0 && s[0] != '-') cov_seed_v = v; /* else: reported by the config */
  }
  void *p = mmap(NULL, (size_t)COV_R_CAP * 4, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    cov_R = p;
    cov_R_cap = COV_R_CAP;
  }
  p = mmap(NULL, (size_t)COV_R_CAP * 8, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    cov_T = p;
    cov_T_cap = COV_R_CAP;
  }
}

uint32_t cov_block_id(uint32_t g) { return rid(g); }
uint32_t cov_guard_count(void) { return __atomic_load_n(&cov_nguards, __ATOMIC_ACQUIRE); }
uint64_t cov_seed(void) { return cov_seed_v; }

uint64_t cov_gen = 1; /* >= 1: cov_no_thread's gen (0) never matches */

void cov_set_seed(uint64_t seed) {
  pthread_mutex_lock(&cov_init_lock);
  cov_ids_init_locked();
  cov_seed_v = seed;
  uint32_t n = cov_nguards < cov_R_cap ? cov_nguards : (cov_R_cap ? cov_R_cap - 1 : 0);
  for (uint32_t g = 1; g <= n; g++) cov_R[g] = (uint32_t)cov_splitmix64(seed ^ g);
  __atomic_fetch_add(&cov_seed_epoch, 1, __ATOMIC_ACQ_REL);
  pthread_mutex_unlock(&cov_init_lock);
  cov_gen_bump();
}

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
  if (start == stop || *start) return;
  pthread_mutex_lock(&cov_init_lock);
  cov_ids_init_locked();
  for (uint32_t *x = start; x < stop; x++) {
    uint32_t g = cov_nguards + 1;
    if (g < cov_R_cap) cov_R[g] = (uint32_t)cov_splitmix64(cov_seed_v ^ g);
    if (g < cov_T_cap) cov_T[g] = mix64(g);
    if (g >= cov_R_cap || g >= cov_T_cap) { /* before g is published: leave the fast hooks */
      cov_tables_full = 1;
      hook_select();
    }
    *x = cov_guard_limit && g > cov_guard_limit ? 0 : g;
    __atomic_store_n(&cov_nguards, g, __ATOMIC_RELEASE);
  }
  hook_select(); /* the tables may be new */
  pthread_mutex_unlock(&cov_init_lock);
}

/* ---- inline 8-bit counters (AUTOTUNE_CC_INSTRUMENT=guard) ---------------------------------- */
/* -fsanitize-coverage=inline-8bit-counters: clang increments one byte per block inline (no call,
 * 8-bit; made NeverZero, 255 + 1 = 1 as AFL++'s PCGUARD counts, by the guard kind's pass plugin
 * kernels/plugin/autotune_counters.cpp) in the module's __sancov_cntrs section and registers the
 * section here. The
 * guard metric's slot of counter i (over all modules, in registration order) is i + 1, as a
 * trace-pc-guard build's guard g has slot g. The map sink adds them into its counters (a
 * copy under afl-fuzz, which zeroes its map before each run) and zeroes them after every
 * execution (cov_exec_end), on a crash signal and at exit() during an execution. */
cov_cnt_region cov_cnt[COV_CNT_REGIONS];
uint32_t cov_ncnt_regions;
uint32_t cov_ncounters;
static int cov_cnt_lost; /* a region beyond COV_CNT_REGIONS (not counted) */

/* kernels/guard_counters.ld's marks (autotune cc links every guard program with it; weak: 0 in a
 * link without it): the section's first page, whose byte 0 no block counts, and the end of the
 * counters proper; the section itself runs on to a page boundary 8 MiB + 4 KiB further. */
extern uint8_t autotune_cnt_page[] __attribute__((weak));
extern uint8_t autotune_cnt_used[] __attribute__((weak));
uint8_t *cov_cnt_page; /* that page when the counters registered are the script's section, else NULL */
size_t cov_cnt_span;   /* the section's bytes from that page: what afl's segment may cover */

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
  if (start >= stop) return;
  uint8_t *page = autotune_cnt_page, *used = autotune_cnt_used;
  int own_pages = page && start == page && used > start && used <= stop;
  size_t span = (size_t)(stop - start);
  if (own_pages) { /* the counters proper: byte 0 is slot 0's, the tail is room for afl's segment */
    start = page + 1;
    stop = used;
    if (start >= stop) return;
  }
  pthread_mutex_lock(&cov_init_lock);
  if (own_pages && !cov_cnt_page) {
    cov_cnt_page = page;
    cov_cnt_span = span;
  }
  for (uint32_t i = 0; i < cov_ncnt_regions; i++)
    if (cov_cnt[i].start == start) { /* registered already (one module, two constructors) */
      pthread_mutex_unlock(&cov_init_lock);
      return;
    }
  if (cov_ncnt_regions < COV_CNT_REGIONS) {
    cov_cnt[cov_ncnt_regions].start = start;
    cov_cnt[cov_ncnt_regions].n = (size_t)(stop - start);
    cov_ncnt_regions++;
    cov_ncounters += (uint32_t)(stop - start);
  } else {
    cov_cnt_lost = 1;
  }
  pthread_mutex_unlock(&cov_init_lock);
}

uint8_t *cov_cnt_map_pages(size_t *span) {
  pthread_mutex_lock(&cov_init_lock);
  uint8_t *page = cov_cnt_page && cov_ncnt_regions == 1 && !cov_cnt_lost && cov_cnt[0].start == cov_cnt_page + 1
                      ? cov_cnt_page : NULL;
  *span = page ? cov_cnt_span : 0;
  pthread_mutex_unlock(&cov_init_lock);
  return page;
}

/* ---- inline edges (AUTOTUNE_CC_INSTRUMENT=edge, and ngram) ---------------------------------- */
/* kernels/plugin/autotune_edges.cpp counts each instrumented block inline, as AFL++'s CLASSIC:
 *   idx = (cur ^ autotune_edge_prev) & area.mask; area.map[idx]++ (NeverZero); prev = cur >> 1
 * with cur the block's compile-time id. The runtime owns these three globals: prev is zeroed when
 * an execution starts (cov_exec_begin), map and mask point at the map sink's counters (a flat
 * 8-bit map: afl-fuzz's shared memory under aflfs.c) while the edge metric is the sink, and at
 * a dummy area with mask 0 otherwise (before main, the probe, standalone runs: every count lands
 * in its byte 0), so a count never lands outside a map. They change only between executions, when
 * no instrumented function is running (the pass lets the compiler keep map and mask in registers
 * for a whole function): a map is attached with its pointer first and its mask second, detached
 * in the opposite order. */
struct autotune_edge_area_s {
  uint8_t *map;
  uint32_t mask;
  uint32_t *index; /* an indexed build (AUTOTUNE_CC_INDEX=1): the two-level map's index, key & imask */
  uint32_t imask;
};
static uint8_t cov_edge_dummy[64];
static uint32_t cov_index_dummy[1] = {1}; /* before a map: every key has slot 0 of the dummy (map[1]) */
__attribute__((aligned(64))) struct autotune_edge_area_s autotune_edge_area = {cov_edge_dummy, 0, cov_index_dummy, 0};
static bm_map *cov_index_map; /* the two-level map an indexed build counts into (NULL: the dummy) */
static uint32_t cov_index_modules;
__thread uint32_t autotune_edge_prev __attribute__((tls_model("initial-exec")));
static uint32_t cov_edge_modules, cov_edge_blocks; /* registered by the instrumented modules */
int cov_edge_on;

void autotune_edge_register(uint32_t blocks);
void autotune_edge_register(uint32_t blocks) { /* a constructor of each instrumented module */
  __atomic_fetch_add(&cov_edge_modules, 1u, __ATOMIC_ACQ_REL);
  __atomic_fetch_add(&cov_edge_blocks, blocks, __ATOMIC_ACQ_REL);
}

/* The ngram mode of the same pass (AUTOTUNE_CC_INSTRUMENT=ngram, AUTOTUNE_CC_NGRAM=N) counts into the
 * same area; its history is the thread-local autotune_ngram_hist: [0] the xor of the window, [4..N+2]
 * the window, the last N-1 blocks' (id >> 1), newest first, moved as aligned 4-word vectors
 * (kernels/plugin/autotune_edges.cpp). Zeroed when an execution starts, as prev. Sized for AFL++'s
 * largest N, 16. */
__thread uint32_t autotune_ngram_hist[COV_NGRAM_HIST_WORDS]
    __attribute__((tls_model("initial-exec"), aligned(16)));
static uint32_t cov_ngram_modules, cov_ngram_conflict;
uint32_t cov_ngram_n_v;

/* A module of a parametrised inline kind registers its blocks and its parameter (ngram: N; ctx: K + 1):
 * the first module's parameter is the build's, another one marks the build mixed. */
static void register_param(uint32_t *param, uint32_t *modules, uint32_t *conflict, uint32_t blocks, uint32_t value) {
  uint32_t expected = 0;
  if (!__atomic_compare_exchange_n(param, &expected, value, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
      expected != value)
    __atomic_store_n(conflict, 1u, __ATOMIC_RELEASE);
  __atomic_fetch_add(modules, 1u, __ATOMIC_ACQ_REL);
  __atomic_fetch_add(&cov_edge_blocks, blocks, __ATOMIC_ACQ_REL);
}

void autotune_ngram_register(uint32_t blocks, uint32_t n);
void autotune_ngram_register(uint32_t blocks, uint32_t n) { /* a constructor of each ngram module */
  register_param(&cov_ngram_n_v, &cov_ngram_modules, &cov_ngram_conflict, blocks, n);
}

uint32_t cov_ngram_n(void) { return __atomic_load_n(&cov_ngram_n_v, __ATOMIC_ACQUIRE); }

/* The ctx mode of the same pass (AUTOTUNE_CC_INSTRUMENT=ctx, AUTOTUNE_CC_CTX=ctx|caller|ctx-K) counts
 * each block's edge xor its function's context X into the same area; the state a function reads when
 * it is entered is the thread-local autotune_ctx_hist: [0] X, [1] Y (the xor of its K-1 nearest
 * callers), [4..K+2] those callers' ids (kernels/plugin/autotune_edges.cpp). Zeroed when an execution
 * starts, as prev. Each module registers K + 1 (1: the whole stack, 2: caller, 3, 5, 9: ctx-2/4/8). */
__thread uint32_t autotune_ctx_hist[COV_CTX_HIST_WORDS] __attribute__((tls_model("initial-exec"), aligned(16)));
static uint32_t cov_ctx_modules, cov_ctx_conflict;
uint32_t cov_ctx_k_v;

void autotune_ctx_register(uint32_t blocks, uint32_t k1);
void autotune_ctx_register(uint32_t blocks, uint32_t k1) { /* a constructor of each ctx module */
  register_param(&cov_ctx_k_v, &cov_ctx_modules, &cov_ctx_conflict, blocks, k1);
}

/* The metric a ctx build counts (-1: none registered, or a K the runtime does not name). */
static int cov_ctx_build_metric(void) {
  switch (__atomic_load_n(&cov_ctx_k_v, __ATOMIC_ACQUIRE)) {
  case 1: return COV_M_CTX;
  case 2: return COV_M_CALLER;
  case 3: return COV_M_CTX2;
  case 5: return COV_M_CTX4;
  case 9: return COV_M_CTX8;
  default: return -1;
  }
}

uint32_t cov_edge_blocks_registered(void) { return __atomic_load_n(&cov_edge_blocks, __ATOMIC_ACQUIRE); }
int cov_edge_inline_active(void) { return cov_edge_on; }

/* An indexed build (kernels/plugin/autotune_edges.cpp under AUTOTUNE_CC_INDEX=1) counts each key at
 * map[index[key & imask]]: the index entry is the key's dense slot + 1 (bigmap.h's encoding) and map
 * points one byte before the dense counters. A key not seen yet (entry 0) calls this, which assigns
 * its slot in the shared index as the two-level map does (bm_twolevel_assign) and returns the entry. */
void autotune_index_register(void);
void autotune_index_register(void) { __atomic_fetch_add(&cov_index_modules, 1u, __ATOMIC_ACQ_REL); }
uint32_t autotune_index_assign(uint32_t h);
uint32_t autotune_index_assign(uint32_t h) {
  bm_map *m = __atomic_load_n(&cov_index_map, __ATOMIC_ACQUIRE);
  return m ? bm_twolevel_assign(m, h & (uint32_t)m->index_mask) + 1 : 1;
}

int cov_build_indexed(void) { return __atomic_load_n(&cov_index_modules, __ATOMIC_ACQUIRE) > 0; }

void cov_edge_index_set(bm_map *m) {
  if (m) { /* attach: the counters and the index before the mask that lets keys reach into it */
    __atomic_store_n(&cov_index_map, m, __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.map, (uint8_t *)((uintptr_t)m->counters - 1), __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.index, m->index, __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.imask, (uint32_t)m->index_mask, __ATOMIC_RELEASE);
  } else {
    __atomic_store_n(&autotune_edge_area.imask, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.index, cov_index_dummy, __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.map, cov_edge_dummy, __ATOMIC_RELEASE);
    __atomic_store_n(&cov_index_map, (bm_map *)NULL, __ATOMIC_RELEASE);
  }
  cov_edge_on = m != NULL;
}

void cov_edge_area_set(uint8_t *map, uint32_t mask) {
  if (map) { /* attach: the map before the mask that lets indices reach into it */
    __atomic_store_n(&autotune_edge_area.map, map, __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.mask, mask, __ATOMIC_RELEASE);
  } else { /* detach: mask 0 (index 0 only) before the dummy */
    __atomic_store_n(&autotune_edge_area.mask, 0u, __ATOMIC_RELEASE);
    __atomic_store_n(&autotune_edge_area.map, cov_edge_dummy, __ATOMIC_RELEASE);
  }
  cov_edge_on = map != NULL;
}

/* AUTOTUNE_CC_INSTRUMENT of the link (autotune cc passes --defsym autotune_instrument_kind=
 * autotune_kind_<kind>); absent when the program was linked without the wrapper. */
#define KIND_SYMBOL(ID, NAME, SERVES, CENSUS, COUNTS, FIX) \
  __attribute__((used)) const int autotune_kind_##NAME = COV_BUILD_##ID;
COV_BUILD_KINDS(KIND_SYMBOL)
#undef KIND_SYMBOL
extern const int autotune_instrument_kind __attribute__((weak));

/* Each kind's cov_kinds.h columns, by id; COV_BUILD_MIXED serves nothing. */
#define SERVES_OF(ID, NAME, SERVES, CENSUS, COUNTS, FIX) [COV_BUILD_##ID] = SERVES,
#define CENSUS_OF(ID, NAME, SERVES, CENSUS, COUNTS, FIX) [COV_BUILD_##ID] = CENSUS,
#define COUNTS_OF(ID, NAME, SERVES, CENSUS, COUNTS, FIX) [COV_BUILD_##ID] = COUNTS,
#define FIX_OF(ID, NAME, SERVES, CENSUS, COUNTS, FIX) [COV_BUILD_##ID] = FIX,
#define NAME_OF(ID, NAME, SERVES, CENSUS, COUNTS, FIX) [COV_BUILD_##ID] = #NAME,
static const int kind_serves[COV_N_BUILDS] = {COV_BUILD_KINDS(SERVES_OF)[COV_BUILD_MIXED] = COV_SERVES_NONE};
static const int kind_census[COV_N_BUILDS] = {COV_BUILD_KINDS(CENSUS_OF)[COV_BUILD_MIXED] = COV_SERVES_NONE};
static const int kind_counts[COV_N_BUILDS] = {COV_BUILD_KINDS(COUNTS_OF)[COV_BUILD_MIXED] = COV_COUNTS_HOOKS};
static const char *const kind_fix[COV_N_BUILDS] = {COV_BUILD_KINDS(FIX_OF)[COV_BUILD_MIXED] = ""};
static const char *const kind_names[COV_N_BUILDS] = {COV_BUILD_KINDS(NAME_OF)[COV_BUILD_MIXED] = "mixed"};

int cov_build_serves(int kind) {
  return kind >= 0 && kind < COV_N_BUILDS ? kind_serves[kind] : COV_SERVES_NONE;
}

int cov_build_counts(int kind) {
  return kind >= 0 && kind < COV_N_BUILDS ? kind_counts[kind] : COV_COUNTS_HOOKS;
}

int cov_build_kind(void) {
  int linked = &autotune_instrument_kind ? autotune_instrument_kind : -1;
  int guards = cov_guard_count() > 0, counters = cov_ncounters > 0;
  int edges = __atomic_load_n(&cov_edge_modules, __ATOMIC_ACQUIRE) > 0;
  int ngrams = __atomic_load_n(&cov_ngram_modules, __ATOMIC_ACQUIRE) > 0;
  int ctxs = __atomic_load_n(&cov_ctx_modules, __ATOMIC_ACQUIRE) > 0;
  uint32_t indexed = __atomic_load_n(&cov_index_modules, __ATOMIC_ACQUIRE);
  if (guards + counters + edges + ngrams + ctxs > 1 || __atomic_load_n(&cov_ngram_conflict, __ATOMIC_ACQUIRE) ||
      __atomic_load_n(&cov_ctx_conflict, __ATOMIC_ACQUIRE) ||
      (indexed && indexed != __atomic_load_n(&cov_edge_modules, __ATOMIC_ACQUIRE) +
                                  __atomic_load_n(&cov_ngram_modules, __ATOMIC_ACQUIRE) +
                                  __atomic_load_n(&cov_ctx_modules, __ATOMIC_ACQUIRE))) /* some indexed, some not */
    return COV_BUILD_MIXED;
  if (ctxs || linked == COV_BUILD_CTX) /* as edge below */
    return (ctxs && linked >= 0 && linked != COV_BUILD_CTX) || guards || counters || edges || ngrams
               ? COV_BUILD_MIXED
               : COV_BUILD_CTX;
  if (ngrams || linked == COV_BUILD_NGRAM) /* as edge below */
    return (ngrams && linked >= 0 && linked != COV_BUILD_NGRAM) || guards || counters || edges
               ? COV_BUILD_MIXED
               : COV_BUILD_NGRAM;
  if (edges || linked == COV_BUILD_EDGE) /* edge objects in another kind's link, or the reverse */
    return (edges && linked >= 0 && linked != COV_BUILD_EDGE) || guards || counters ? COV_BUILD_MIXED
                                                                                     : COV_BUILD_EDGE;
  if (counters || linked == COV_BUILD_GUARD) return guards ? COV_BUILD_MIXED : COV_BUILD_GUARD;
  /* a kind of trace-pc-guard hooks as its link says; no or an unknown marker: full */
  return linked >= 0 && linked < COV_BUILD_MIXED && kind_counts[linked] == COV_COUNTS_HOOKS ? linked
                                                                                             : COV_BUILD_FULL;
}

const char *cov_build_kind_name(int kind) {
  return kind >= 0 && kind < COV_N_BUILDS ? kind_names[kind] : "?";
}

uint32_t cov_guard_slots(void) {
  return cov_build_counts(cov_build_kind()) == COV_COUNTS_COUNTERS ? cov_ncounters : cov_guard_count();
}

uint64_t cov_guard_map_bytes(void) {
  uint64_t n = (uint64_t)cov_guard_slots() + 1; /* slots 1..guards; slot 0 unused */
  return (n + 63) & ~(uint64_t)63;
}

/* "<what> needs <need>, but this program was built with AUTOTUNE_CC_INSTRUMENT=<kind>; fix: <fix>" */
/* The names of the kinds whose COUNTS is counts (counts >= 0), or whose SERVES is serves (counts
 * < 0), as "a", "a or b", "a, b or c": the messages name the kinds of cov_kinds.h. */
static const char *kinds_where(char *buf, size_t len, int counts, int serves) {
  int match[COV_BUILD_MIXED], total = 0, n = 0;
  size_t at = 0;
  for (int k = 0; k < COV_BUILD_MIXED; k++)
    total += match[k] = counts >= 0 ? kind_counts[k] == counts : kind_serves[k] == serves;
  buf[0] = '\0';
  for (int k = 0; k < COV_BUILD_MIXED && at < len; k++)
    if (match[k]) {
      const char *sep = n == 0 ? "" : n == total - 1 ? " or " : ", ";
      at += (size_t)snprintf(buf + at, len - at, "%s%s", sep, kind_names[k]);
      n++;
    }
  return buf;
}

static int kind_error(char *err, size_t errlen, const char *what, int needs_hooks, const char *fix) {
  int k = cov_build_kind();
  char hooks[64], counters[64], area[64];
  if (!err || !errlen) return -1;
  kinds_where(hooks, sizeof hooks, COV_COUNTS_HOOKS, 0);
  if (k == COV_BUILD_MIXED)
    snprintf(err, errlen, "this program mixes objects of different build kinds (inline counters of "
             "AUTOTUNE_CC_INSTRUMENT=%s, inline edges of %s (or ngram of two N, ctx of two contexts), "
             "trace-pc-guard of %s); "
             "fix: rebuild every object and the link with one AUTOTUNE_CC_INSTRUMENT",
             kinds_where(counters, sizeof counters, COV_COUNTS_COUNTERS, 0),
             kinds_where(area, sizeof area, COV_COUNTS_AREA, 0), hooks);
  else if (needs_hooks)
    snprintf(err, errlen, "%s needs function entry/exit hooks (AUTOTUNE_CC_INSTRUMENT=%s), but this program "
             "was built with AUTOTUNE_CC_INSTRUMENT=%s; fix: %s", what,
             kinds_where(counters, sizeof counters, -1, COV_SERVES_ALL), cov_build_kind_name(k), fix);
  else
    snprintf(err, errlen, "%s needs SanitizerCoverage guards (AUTOTUNE_CC_INSTRUMENT=%s), but this program "
             "was built with AUTOTUNE_CC_INSTRUMENT=%s; fix: %s", what, hooks, cov_build_kind_name(k), fix);
  return -1;
}

/* The metric an ngram build counts: ngram-N of its modules' N (-1: none registered, or N > 8, which
 * autotune cc does not build: the runtime names ngram-2 .. ngram-8). */
int cov_ngram_build_metric(void) {
  uint32_t n = cov_ngram_n();
  return n >= 2 && n <= COV_M_NGRAM8 + 1 ? COV_M_NGRAM2 + (int)n - 2 : -1;
}

/* The one metric a build of kind serves, -1 when it serves several (full, blocks) or none. */
static int one_metric(int kind) {
  int serves = cov_build_serves(kind);
  return serves >= 0                      ? serves
         : serves == COV_SERVES_NGRAM_N ? cov_ngram_build_metric()
         : serves == COV_SERVES_CTX_K   ? cov_ctx_build_metric()
                                          : -1;
}

int cov_build_metric(int kind) { return cov_build_counts(kind) == COV_COUNTS_AREA ? one_metric(kind) : -1; }

int cov_default_metric(int kind) {
  int m = one_metric(kind);
  return m >= 0 ? m : COV_M_EDGE;
}

/* Whether a build that serves ``serves`` (cov_kinds.h SERVES or CENSUS) serves metric. */
static int serves_metric(int serves, int metric) {
  switch (serves) {
  case COV_SERVES_ALL: return 1;
  case COV_SERVES_NOSTACK: return !cov_metric_needs_stack(metric);
  case COV_SERVES_NGRAM_N: return metric == cov_ngram_build_metric();
  case COV_SERVES_CTX_K: return metric == cov_ctx_build_metric();
  case COV_SERVES_NONE: return 0;
  default: return metric == serves;
  }
}

int cov_metric_check(int metric, char *err, size_t errlen) {
  int k = cov_build_kind();
  int serves = cov_build_serves(k);
  if (serves_metric(serves, metric)) return 0;
  const char *m = metric >= 0 && metric < COV_N_METRICS ? cov_metric_names[metric] : "?";
  if (serves == COV_SERVES_NGRAM_N) {
    uint32_t n = cov_ngram_n();
    if (err && errlen) {
      int want_ngram = metric >= COV_M_NGRAM2 && metric <= COV_M_NGRAM8;
      char rebuild[96] = "";
      if (want_ngram)
        snprintf(rebuild, sizeof rebuild, "AUTOTUNE_CC_NGRAM=%d (ngram-%d) or ", metric + 1, metric + 1);
      snprintf(err, errlen, "AUTOTUNE_METRIC=%s: this program was built with AUTOTUNE_CC_INSTRUMENT=ngram "
               "AUTOTUNE_CC_NGRAM=%u, which counts ngram-%u inline and nothing else; fix: set "
               "AUTOTUNE_METRIC=ngram-%u (or unset it), or rebuild with %sAUTOTUNE_CC_INSTRUMENT=blocks "
               "(edge, ngram-N, guard) or full (every metric)", m, n, n, n, rebuild);
    }
    return -1;
  }
  if (serves == COV_SERVES_CTX_K) {
    int built = cov_ctx_build_metric();
    const char *b = built >= 0 ? cov_metric_names[built] : "?";
    if (err && errlen) {
      int want_ctx = cov_metric_needs_stack(metric);
      char rebuild[64] = "";
      if (want_ctx) snprintf(rebuild, sizeof rebuild, "AUTOTUNE_CC_CTX=%s or ", m);
      snprintf(err, errlen, "AUTOTUNE_METRIC=%s: this program was built with AUTOTUNE_CC_INSTRUMENT=ctx "
               "AUTOTUNE_CC_CTX=%s, which counts %s inline and nothing else; fix: set AUTOTUNE_METRIC=%s (or "
               "unset it), or rebuild with %sAUTOTUNE_CC_INSTRUMENT=full (every metric)", m, b, b, b, rebuild);
    }
    return -1;
  }
  char what[64];
  snprintf(what, sizeof what, "AUTOTUNE_METRIC=%s", m);
  return kind_error(err, errlen, what, serves == COV_SERVES_NOSTACK || cov_metric_needs_stack(metric),
                    kind_fix[k]);
}

int cov_census_check(uint32_t metric_mask, char *err, size_t errlen) {
  int k = cov_build_kind();
  int census = kind_census[k];
  if (census == COV_SERVES_NONE)
    return kind_error(err, errlen, "the census (probe)", 0,
                      "rebuild the probe's harness with AUTOTUNE_CC_INSTRUMENT=full (the default)");
  for (int m = 0; m < COV_N_METRICS; m++)
    if ((metric_mask & (1u << m)) && !serves_metric(census, m)) {
      char what[96];
      snprintf(what, sizeof what, "the census of %s (AUTOTUNE_PROBE_METRICS)", cov_metric_names[m]);
      return kind_error(err, errlen, what, 1,
                        "rebuild with AUTOTUNE_CC_INSTRUMENT=full (the default), or probe only "
                        "edge, ngram-N and guard");
    }
  return 0;
}
