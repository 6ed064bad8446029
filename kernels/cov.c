/* cov.c - SanitizerCoverage / -finstrument-functions hooks, block and function ids, per-thread
 * history and call stack, the map sink and the census sink's per-thread event tables.
 * See cov.h for the definitions; docs/DESIGN.md "Keys, ids and metrics". */
#include "cov.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cov_internal.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

const char *const cov_metric_names[COV_N_METRICS] = {
    "edge",    "ngram-2", "ngram-3", "ngram-4", "ngram-5", "ngram-6", "ngram-7",
    "ngram-8", "ctx",     "caller",  "ctx-2",   "ctx-4",   "ctx-8",   "guard"};

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
static inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t cov_splitmix64(uint64_t x) { return mix64(x + 0x9e3779b97f4a7c15ull); }

#define COV_R_CAP (1u << 24) /* block ids kept in a table; beyond, computed on the fly */

static pthread_mutex_t cov_init_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cov_seed_v;
static uint32_t cov_seed_epoch = 1;
static uint32_t cov_nguards;
static uint32_t *cov_R;      /* COV_R_CAP entries, MAP_NORESERVE; R[0] = 0 */
static uint32_t cov_R_cap;
static uint64_t *cov_T;      /* COV_R_CAP entries, MAP_NORESERVE: T[g] = mix64(g), the ngram terms */
static uint32_t cov_T_cap;
static int cov_ids_ready;
static int cov_tables_full; /* a guard index reached the end of cov_R or cov_T */
static int cov_hooks_v = COV_HOOKS_AUTO;
/* The guard metric's map holds this many slots (0: no guard map): a guard registered later (a
 * module loaded after the map was made) is disabled (0), so it never writes past the map. */
static uint32_t cov_guard_limit;
static void hook_select(void);

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

static inline uint32_t rid(uint32_t g) {
  if (LIKELY(g < cov_R_cap)) return cov_R[g];
  return g ? (uint32_t)cov_splitmix64(cov_seed_v ^ g) : 0;
}

/* mix64(g), the ngram-N exact key's term of guard g (seed-independent) */
static inline uint64_t term(uint32_t g) {
  if (LIKELY(g < cov_T_cap)) return cov_T[g];
  return mix64(g);
}

/* The fast hooks' reads: no bounds check. The tables span COV_R_CAP entries (MAP_NORESERVE, so
 * every entry is readable), the index is masked into them, and hook_select() leaves the fast
 * hooks as soon as a guard reaches COV_R_CAP: a hook that raced with that registration reads a
 * wrong id for one hit, never outside the table. */
static inline uint32_t rid_fast(uint32_t g) { return cov_R[g & (COV_R_CAP - 1)]; }
static inline uint64_t term_fast(uint32_t g) { return cov_T[g & (COV_R_CAP - 1)]; }

uint32_t cov_block_id(uint32_t g) { return rid(g); }
uint32_t cov_guard_count(void) { return __atomic_load_n(&cov_nguards, __ATOMIC_ACQUIRE); }
uint64_t cov_seed(void) { return cov_seed_v; }
uint32_t cov_seed_epoch_now(void) { return __atomic_load_n(&cov_seed_epoch, __ATOMIC_ACQUIRE); }

static uint64_t cov_gen = 1;
uint64_t cov_gen_now(void) { return __atomic_load_n(&cov_gen, __ATOMIC_ACQUIRE); }
static void cov_gen_bump(void) { __atomic_fetch_add(&cov_gen, 1, __ATOMIC_ACQ_REL); }

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

static uint64_t fid_slow(const void *fn) {
  Dl_info info;
  uintptr_t off = (uintptr_t)fn;
  if (dladdr(fn, &info) && info.dli_fbase) off -= (uintptr_t)info.dli_fbase;
  return cov_splitmix64(cov_seed_v ^ (uint64_t)off);
}
uint64_t cov_function_id(const void *fn) { return fid_slow(fn); }

/* ---- inline 8-bit counters (AUTOTUNE_CC_INSTRUMENT=guard) ---------------------------------- */
/* -fsanitize-coverage=inline-8bit-counters: clang increments one byte per block inline (no call,
 * 8-bit; made NeverZero, 255 + 1 = 1 as AFL++'s PCGUARD counts, by the guard kind's pass plugin
 * kernels/plugin/autotune_counters.cpp) in the module's __sancov_cntrs section and registers the
 * section here. The
 * guard metric's slot of counter i (over all modules, in registration order) is i + 1, as a
 * trace-pc-guard build's guard g has slot g. The map sink adds them into its counters (a
 * copy under afl-fuzz, which zeroes its map before each run) and zeroes them after every
 * execution (cov_exec_end), on a crash signal and at exit() during an execution. */
#define COV_CNT_REGIONS 256
static struct { uint8_t *start; size_t n; } cov_cnt[COV_CNT_REGIONS];
static uint32_t cov_ncnt_regions;
static uint32_t cov_ncounters;
static int cov_cnt_lost; /* a region beyond COV_CNT_REGIONS (not counted) */

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop) {
  if (start >= stop) return;
  pthread_mutex_lock(&cov_init_lock);
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
};
static uint8_t cov_edge_dummy[64];
__attribute__((aligned(64))) struct autotune_edge_area_s autotune_edge_area = {cov_edge_dummy, 0};
__thread uint32_t autotune_edge_prev __attribute__((tls_model("initial-exec")));
static uint32_t cov_edge_modules, cov_edge_blocks; /* registered by the instrumented modules */
static int cov_edge_on;                             /* the edge area points at the map sink */

void autotune_edge_register(uint32_t blocks);
void autotune_edge_register(uint32_t blocks) { /* a constructor of each instrumented module */
  __atomic_fetch_add(&cov_edge_modules, 1u, __ATOMIC_ACQ_REL);
  __atomic_fetch_add(&cov_edge_blocks, blocks, __ATOMIC_ACQ_REL);
}

/* The ngram mode of the same pass (AUTOTUNE_CC_INSTRUMENT=ngram, AUTOTUNE_CC_NGRAM=N) counts into the
 * same area; its history is the thread-local window autotune_ngram_hist: [0] the xor of [1..N-1],
 * the last N-1 blocks' (id >> 1), newest first (kernels/plugin/autotune_edges.cpp). Zeroed when an
 * execution starts, as prev. Sized for AFL++'s largest N, 16. */
#define COV_NGRAM_HIST_WORDS 16
__thread uint32_t autotune_ngram_hist[COV_NGRAM_HIST_WORDS] __attribute__((tls_model("initial-exec")));
static uint32_t cov_ngram_modules, cov_ngram_n_v, cov_ngram_conflict;

void autotune_ngram_register(uint32_t blocks, uint32_t n);
void autotune_ngram_register(uint32_t blocks, uint32_t n) { /* a constructor of each ngram module */
  uint32_t expected = 0;
  if (!__atomic_compare_exchange_n(&cov_ngram_n_v, &expected, n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
      expected != n)
    __atomic_store_n(&cov_ngram_conflict, 1u, __ATOMIC_RELEASE); /* modules of two N: a mixed build */
  __atomic_fetch_add(&cov_ngram_modules, 1u, __ATOMIC_ACQ_REL);
  __atomic_fetch_add(&cov_edge_blocks, blocks, __ATOMIC_ACQ_REL);
}

uint32_t cov_ngram_n(void) { return __atomic_load_n(&cov_ngram_n_v, __ATOMIC_ACQUIRE); }

uint32_t cov_edge_blocks_registered(void) { return __atomic_load_n(&cov_edge_blocks, __ATOMIC_ACQUIRE); }
int cov_edge_inline_active(void) { return cov_edge_on; }

static void edge_area_set(uint8_t *map, uint32_t mask) {
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
__attribute__((used)) const int autotune_kind_full = COV_BUILD_FULL;
__attribute__((used)) const int autotune_kind_blocks = COV_BUILD_BLOCKS;
__attribute__((used)) const int autotune_kind_guard = COV_BUILD_GUARD;
__attribute__((used)) const int autotune_kind_edge = COV_BUILD_EDGE;
__attribute__((used)) const int autotune_kind_ngram = COV_BUILD_NGRAM;
extern const int autotune_instrument_kind __attribute__((weak));

int cov_build_kind(void) {
  int linked = &autotune_instrument_kind ? autotune_instrument_kind : -1;
  int guards = cov_guard_count() > 0, counters = cov_ncounters > 0;
  int edges = __atomic_load_n(&cov_edge_modules, __ATOMIC_ACQUIRE) > 0;
  int ngrams = __atomic_load_n(&cov_ngram_modules, __ATOMIC_ACQUIRE) > 0;
  if (guards + counters + edges + ngrams > 1 || __atomic_load_n(&cov_ngram_conflict, __ATOMIC_ACQUIRE))
    return COV_BUILD_MIXED;
  if (ngrams || linked == COV_BUILD_NGRAM) /* as edge below */
    return (ngrams && linked >= 0 && linked != COV_BUILD_NGRAM) || guards || counters || edges
               ? COV_BUILD_MIXED
               : COV_BUILD_NGRAM;
  if (edges || linked == COV_BUILD_EDGE) /* edge objects in another kind's link, or the reverse */
    return (edges && linked >= 0 && linked != COV_BUILD_EDGE) || guards || counters ? COV_BUILD_MIXED
                                                                                     : COV_BUILD_EDGE;
  if (counters || linked == COV_BUILD_GUARD) return guards ? COV_BUILD_MIXED : COV_BUILD_GUARD;
  return linked == COV_BUILD_BLOCKS ? COV_BUILD_BLOCKS : COV_BUILD_FULL;
}

const char *cov_build_kind_name(int kind) {
  static const char *const names[] = {"full", "blocks", "guard", "mixed", "edge", "ngram"};
  return kind >= 0 && kind <= COV_BUILD_NGRAM ? names[kind] : "?";
}

uint32_t cov_guard_slots(void) {
  return cov_build_kind() == COV_BUILD_GUARD ? cov_ncounters : cov_guard_count();
}

uint64_t cov_guard_map_bytes(void) {
  uint64_t n = (uint64_t)cov_guard_slots() + 1; /* slots 1..guards; slot 0 unused */
  return (n + 63) & ~(uint64_t)63;
}

/* "<what> needs <need>, but this program was built with AUTOTUNE_CC_INSTRUMENT=<kind>; fix: <fix>" */
static int kind_error(char *err, size_t errlen, const char *what, int needs_hooks, const char *fix) {
  int k = cov_build_kind();
  if (!err || !errlen) return -1;
  if (k == COV_BUILD_MIXED)
    snprintf(err, errlen, "this program mixes objects of different build kinds (inline counters of "
             "AUTOTUNE_CC_INSTRUMENT=guard, inline edges of edge or ngram (or ngram of two N), "
             "trace-pc-guard of full or blocks); "
             "fix: rebuild every object and the link with one AUTOTUNE_CC_INSTRUMENT");
  else
    snprintf(err, errlen, "%s needs %s, but this program was built with "
             "AUTOTUNE_CC_INSTRUMENT=%s; fix: %s", what,
             needs_hooks ? "function entry/exit hooks (AUTOTUNE_CC_INSTRUMENT=full)"
                         : "SanitizerCoverage guards (AUTOTUNE_CC_INSTRUMENT=full or blocks)",
             cov_build_kind_name(k), fix);
  return -1;
}

static int metric_needs_stack(int m) { return m >= COV_M_CTX && m <= COV_M_CTX8; }

/* The metric an ngram build counts: ngram-N of its modules' N (-1: none registered, or N > 8, which
 * autotune cc does not build: the runtime names ngram-2 .. ngram-8). */
static int ngram_build_metric(void) {
  uint32_t n = cov_ngram_n();
  return n >= 2 && n <= COV_M_NGRAM8 + 1 ? COV_M_NGRAM2 + (int)n - 2 : -1;
}

int cov_metric_check(int metric, char *err, size_t errlen) {
  int k = cov_build_kind();
  if (k == COV_BUILD_NGRAM && metric != ngram_build_metric()) {
    uint32_t n = cov_ngram_n();
    const char *m = metric >= 0 && metric < COV_N_METRICS ? cov_metric_names[metric] : "?";
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
  if (k == COV_BUILD_MIXED || (k == COV_BUILD_GUARD && metric != COV_M_GUARD) ||
      (k == COV_BUILD_EDGE && metric != COV_M_EDGE) ||
      (k == COV_BUILD_BLOCKS && metric_needs_stack(metric))) {
    char what[64];
    snprintf(what, sizeof what, "AUTOTUNE_METRIC=%s",
             metric >= 0 && metric < COV_N_METRICS ? cov_metric_names[metric] : "?");
    const char *fix = k == COV_BUILD_GUARD
                          ? "set AUTOTUNE_METRIC=guard, or rebuild with AUTOTUNE_CC_INSTRUMENT=edge "
                            "(edge), blocks (edge, ngram-N, guard) or full (every metric)"
                      : k == COV_BUILD_EDGE
                          ? "set AUTOTUNE_METRIC=edge, or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks "
                            "(edge, ngram-N, guard) or full (every metric)"
                          : "set AUTOTUNE_METRIC to edge, ngram-N or guard, or rebuild with "
                            "AUTOTUNE_CC_INSTRUMENT=full (every metric)";
    return kind_error(err, errlen, what, k == COV_BUILD_BLOCKS || metric_needs_stack(metric), fix);
  }
  return 0;
}

int cov_census_check(uint32_t metric_mask, char *err, size_t errlen) {
  int k = cov_build_kind();
  if (k == COV_BUILD_MIXED || k == COV_BUILD_GUARD || k == COV_BUILD_EDGE || k == COV_BUILD_NGRAM)
    return kind_error(err, errlen, "the census (probe)", 0,
                      "rebuild the probe's harness with AUTOTUNE_CC_INSTRUMENT=full (the default)");
  if (k == COV_BUILD_BLOCKS)
    for (int m = COV_M_CTX; m <= COV_M_CTX8; m++)
      if (metric_mask & (1u << m)) {
        char what[96];
        snprintf(what, sizeof what, "the census of %s (AUTOTUNE_PROBE_METRICS)", cov_metric_names[m]);
        return kind_error(err, errlen, what, 1,
                          "rebuild with AUTOTUNE_CC_INSTRUMENT=full (the default), or probe only "
                          "edge, ngram-N and guard");
      }
  return 0;
}

/* The guard map sink of a guard build: where the counters go after each execution. */
static uint8_t *cov_cnt_dst;
static size_t cov_cnt_room; /* counters the map holds: a module loaded later is cut off */
static volatile sig_atomic_t cov_in_exec; /* between cov_exec_begin and cov_exec_end */

/* Add the counters into the map (8-bit NeverZero: what the increments themselves would have done
 * there, a sum past 255 skipping 0 once; afl-fuzz zeroes its map before each run, so this is a
 * copy under afl) and zero them. */
static void cnt_add_clear(uint8_t *restrict d, uint8_t *restrict c, size_t n) {
  for (size_t j = 0; j < n; j++) { /* vectorised */
    uint8_t s = (uint8_t)(d[j] + c[j]);
    d[j] = (uint8_t)(s + (s < d[j])); /* d + c <= 510: one carry at most, and then s + 1 >= 1 */
    c[j] = 0;
  }
}

static void cnt_flush(void) {
  uint8_t *d = cov_cnt_dst; /* slot 1: counter 0 is guard 1's */
  if (!d) return;
  size_t room = cov_cnt_room;
  for (uint32_t i = 0; i < cov_ncnt_regions && room; i++) {
    size_t n = cov_cnt[i].n < room ? cov_cnt[i].n : room;
    cnt_add_clear(d, cov_cnt[i].start, n);
    d += n;
    room -= n;
  }
}

static void cnt_clear(void) {
  for (uint32_t i = 0; i < cov_ncnt_regions; i++) memset(cov_cnt[i].start, 0, cov_cnt[i].n);
}

/* A crash during an input: its coverage reaches the map (afl-fuzz dedupes crashes by it) before
 * the signal takes its course (the previous handler, e.g. a sanitizer's, or the default). */
static const int cov_crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP};
#define COV_N_CRASH_SIGNALS (sizeof cov_crash_signals / sizeof cov_crash_signals[0])
static struct sigaction cov_old_action[COV_N_CRASH_SIGNALS];

static void cnt_crash_handler(int sig) {
  if (cov_in_exec) {
    cnt_flush();
    cov_in_exec = 0;
  }
  for (size_t i = 0; i < COV_N_CRASH_SIGNALS; i++)
    if (cov_crash_signals[i] == sig) sigaction(sig, &cov_old_action[i], NULL);
  raise(sig); /* blocked until we return; a fault re-executes and meets the old action */
}

static void cnt_atexit(void) { /* exit() called by the harness during an input */
  if (cov_in_exec) {
    cnt_flush();
    cov_in_exec = 0;
  }
}

static void cnt_install_handlers(void) {
  static int installed;
  if (installed) return;
  installed = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = cnt_crash_handler;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < COV_N_CRASH_SIGNALS; i++)
    sigaction(cov_crash_signals[i], &sa, &cov_old_action[i]);
  atexit(cnt_atexit);
}

/* ---- keys --------------------------------------------------------------------------------- */
void cov_keys(const uint32_t w[8], const uint64_t cx[5], uint64_t exact[COV_N_METRICS],
              uint32_t hk32[COV_N_METRICS]) {
  uint32_t r0 = rid(w[0]);
  uint32_t edge_hk = (rid(w[1]) >> 1) ^ r0;
  uint64_t edge_ex = ((uint64_t)w[1] << 32) | w[0];
  hk32[COV_M_EDGE] = edge_hk;
  exact[COV_M_EDGE] = edge_ex;
  uint32_t x = 0;
  uint64_t acc = mix64(w[0]), pw = 1;
  for (int i = 1; i <= 7; i++) { /* ngram-(i+1): sum_{j<=i} mix64(w[j]) P^j mod 2^64 */
    x ^= rid(w[i]) >> 1;
    pw *= COV_NGRAM_P;
    acc += mix64(w[i]) * pw;
    hk32[i] = r0 ^ x;
    exact[i] = acc;
  }
  uint64_t e = mix64(edge_ex);
  for (int j = 0; j < 5; j++) {
    hk32[COV_M_CTX + j] = edge_hk ^ (uint32_t)cx[j];
    exact[COV_M_CTX + j] = mix64(e ^ cx[j]);
  }
  hk32[COV_M_GUARD] = w[0]; /* the slot itself */
  exact[COV_M_GUARD] = w[0];
}

/* ---- sinks' configuration ----------------------------------------------------------------- */
static int cov_census_on;
static int cov_map_on;
static int cov_sinks; /* 0 none, 1 census only, 2 map only, 3 both */
static int cov_map_ctxsel = -1;
static int cov_ctx_on; /* a sink needs the call stack: else the function hooks return at once */
static void sinks_update(void) {
  cov_sinks = (cov_census_on ? 1 : 0) | (cov_map_on ? 2 : 0);
  cov_ctx_on = (cov_census_on && cov_digmask) || (cov_map_on && cov_map_ctxsel >= 0);
  hook_select();
}
static bm_map *cov_map;
/* A copy of *cov_map for the fast hooks: its fields at fixed addresses, one load fewer per hit
 * (bigmap.h: a bm_map holds no pointer to itself and may be copied; the sink's map must not be
 * re-attached while it is the sink, cov.h). */
static bm_map cov_map_fast;
static uint32_t cov_map_win;  /* N - 1 previous blocks in the key */
static uint32_t cov_map_back = 2; /* N = cov_map_win + 1: how far back the leaving term is */
static uint64_t cov_map_pn = 1; /* COV_NGRAM_P^N for the map sink's ngram-N rolling key */
uint64_t cov_wmask[4];
uint64_t cov_digmask;

/* ---- threads ------------------------------------------------------------------------------ */
/* A thread without state points at cov_no_thread, whose gen (0) never matches cov_gen (>= 1):
 * the hot path's generation test also catches a missing thread. Nothing writes to it. */
static cov_thread cov_no_thread;
static __thread cov_thread *cov_tls __attribute__((tls_model("initial-exec"))) = &cov_no_thread;
static __thread int cov_tls_busy __attribute__((tls_model("initial-exec")));
static pthread_mutex_t cov_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static cov_evtab *cov_registry;
static cov_thread *cov_free_threads;
static pthread_key_t cov_key;
static pthread_once_t cov_key_once = PTHREAD_ONCE_INIT;
static uint64_t cov_ev_dropped;

cov_evtab *cov_evtab_first(void) { return cov_registry; }
void cov_registry_lock(void) { pthread_mutex_lock(&cov_reg_lock); }
void cov_registry_unlock(void) { pthread_mutex_unlock(&cov_reg_lock); }
uint64_t cov_census_events_dropped(void) {
  uint64_t d = 0;
  pthread_mutex_lock(&cov_reg_lock);
  for (cov_evtab *e = cov_registry; e; e = e->next) d += e->dropped;
  pthread_mutex_unlock(&cov_reg_lock);
  return d + cov_ev_dropped;
}

static void *map_anon(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void commit_pending(cov_thread *t);
static void cov_thread_exit(void *arg) {
  cov_thread *t = arg;
  commit_pending(t); /* the thread's last block: no guard follows it */
  cov_tls = &cov_no_thread;
  pthread_mutex_lock(&cov_reg_lock);
  if (t->ev) t->ev->free = 1;
  t->next_free = cov_free_threads;
  cov_free_threads = t;
  pthread_mutex_unlock(&cov_reg_lock);
}
static void cov_key_make(void) { (void)pthread_key_create(&cov_key, cov_thread_exit); }

static cov_evtab *evtab_new(void) {
  cov_evtab *et = map_anon(sizeof *et);
  if (!et) return NULL;
  et->cap = COV_EV_INIT;
  et->mask = 2 * COV_EV_INIT - 1;
  et->index = map_anon((size_t)2 * COV_EV_INIT * sizeof(uint32_t));
  et->ev = map_anon((size_t)COV_EV_INIT * sizeof(cov_event));
  if (!et->index || !et->ev) {
    if (et->index) munmap(et->index, (size_t)2 * COV_EV_INIT * sizeof(uint32_t));
    if (et->ev) munmap(et->ev, (size_t)COV_EV_INIT * sizeof(cov_event));
    munmap(et, sizeof *et);
    return NULL;
  }
  pthread_mutex_lock(&cov_reg_lock);
  cov_evtab **pp = &cov_registry; /* append: merge order = thread creation order */
  while (*pp) pp = &(*pp)->next;
  *pp = et;
  pthread_mutex_unlock(&cov_reg_lock);
  return et;
}

void cov_evtab_clear(cov_evtab *et) {
  for (uint32_t i = 0; i < et->n; i++) et->index[et->ev[i].slot] = 0;
  et->n = 0;
}

static cov_thread *cov_thread_alloc(void) {
  uint64_t gen = cov_gen_now();
  pthread_mutex_lock(&cov_reg_lock);
  cov_thread **pp = &cov_free_threads, *t = NULL;
  for (; *pp; pp = &(*pp)->next_free) {
    cov_evtab *et = (*pp)->ev;
    if (!et || et->gen != gen || et->n == 0) { /* its events were merged or are stale */
      t = *pp;
      *pp = t->next_free;
      if (et) et->free = 0;
      break;
    }
  }
  pthread_mutex_unlock(&cov_reg_lock);
  if (!t) t = map_anon(sizeof *t);
  if (t) t->next_free = NULL;
  return t;
}

/* First hit of a thread, or the first hit of a new execution: (re)initialise. */
static __attribute__((noinline)) cov_thread *cov_thread_slow(void) {
  if (cov_tls_busy) return NULL;
  cov_tls_busy = 1;
  cov_thread *t = cov_tls;
  if (t == &cov_no_thread) {
    t = cov_thread_alloc();
    if (!t) {
      cov_tls_busy = 0;
      return NULL;
    }
    cov_tls = t;
    pthread_once(&cov_key_once, cov_key_make);
    pthread_setspecific(cov_key, t);
  }
  uint64_t gen = cov_gen_now();
  t->gen = gen;
  t->pending = 0;
  t->eprev = 0;
  t->pos = 0;
  memset(t->h, 0, sizeof t->h);
  memset(t->rr, 0, sizeof t->rr);
  memset(t->r64, 0, sizeof t->r64);
  t->rh = 0;
  t->xr = 0;
  t->ctxm = 0;
  t->depth = 0;
  t->overdepth = 0;
  memset(&t->stack[0], 0, sizeof t->stack[0]);
  uint32_t epoch = __atomic_load_n(&cov_seed_epoch, __ATOMIC_ACQUIRE);
  if (t->seed_epoch != epoch) {
    memset(t->fncache, 0, sizeof t->fncache);
    t->seed_epoch = epoch;
  }
  if (cov_census_on) {
    if (!t->ev) t->ev = evtab_new();
    if (t->ev && t->ev->gen != gen) {
      cov_evtab_clear(t->ev);
      t->ev->gen = gen;
    }
  }
  cov_tls_busy = 0;
  return t;
}

static inline cov_thread *cov_self(void) {
  cov_thread *t = cov_tls;
  if (LIKELY(t->gen == __atomic_load_n(&cov_gen, __ATOMIC_RELAXED))) return t;
  return cov_thread_slow();
}

/* ---- census sink: per-thread event table -------------------------------------------------- */
static inline uint32_t ev_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t dig) {
  uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^
               (c * 0x165667b19e3779f9ull) ^ (d * 0xd6e8feb86659fd93ull) ^ dig;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (uint32_t)(h >> 32);
}
static inline uint32_t ev_hash_of(const cov_event *e) {
  return ev_hash(e->wq[0], e->wq[1], e->wq[2], e->wq[3], e->dig);
}

static int evtab_grow(cov_evtab *et) {
  if (et->cap >= COV_EV_MAX) return -1;
  uint32_t ncap = et->cap * 2;
  cov_event *nev = mremap(et->ev, (size_t)et->cap * sizeof(cov_event),
                          (size_t)ncap * sizeof(cov_event), MREMAP_MAYMOVE);
  if (nev == MAP_FAILED) return -1;
  uint32_t *nidx = map_anon((size_t)2 * ncap * sizeof(uint32_t));
  if (!nidx) {
    et->ev = nev;
    return -1;
  }
  munmap(et->index, (size_t)2 * et->cap * sizeof(uint32_t));
  et->ev = nev;
  et->index = nidx;
  et->cap = ncap;
  et->mask = 2 * ncap - 1;
  for (uint32_t i = 0; i < et->n; i++) {
    uint32_t s = ev_hash_of(&nev[i]) & et->mask;
    while (nidx[s]) s = (s + 1) & et->mask;
    nidx[s] = i + 1;
    nev[i].slot = s;
  }
  return 0;
}

static __attribute__((noinline)) void ev_insert(cov_thread *t, cov_evtab *et, uint32_t s,
                                                const uint64_t wq[4], uint64_t dig) {
  if (UNLIKELY(et->n == et->cap)) {
    if (evtab_grow(et) != 0) {
      et->dropped++;
      return;
    }
    s = ev_hash(wq[0], wq[1], wq[2], wq[3], dig) & et->mask;
    while (et->index[s]) s = (s + 1) & et->mask;
  }
  cov_event *e = &et->ev[et->n];
  memcpy(e->wq, wq, sizeof e->wq);
  e->dig = dig;
  e->count = 1;
  e->slot = s;
  if (dig)
    memcpy(e->cx, t->stack[t->depth].cx, sizeof e->cx);
  else
    memset(e->cx, 0, sizeof e->cx);
  et->index[s] = ++et->n;
}

/* Out of line: keeps the hooks' fast path (no sink, map sink) free of register spills.
 * The window is built in registers from the block just committed (g) and older ring entries:
 * re-reading freshly stored 4-byte entries as 8-byte words would stall store forwarding. */
static __attribute__((noinline)) void census_hit(cov_thread *t, uint32_t g, uint32_t pos) {
  cov_evtab *et = t->ev;
  if (UNLIKELY(!et)) return;
  const uint32_t *win = &t->h[pos];
  uint64_t b, c, d;
  memcpy(&b, win + 2, 8);
  memcpy(&c, win + 4, 8);
  memcpy(&d, win + 6, 8);
  uint64_t a = (((uint64_t)win[1] << 32) | g) & cov_wmask[0];
  b &= cov_wmask[1];
  c &= cov_wmask[2];
  d &= cov_wmask[3];
  uint64_t dig = t->stack[t->depth].dig & cov_digmask;
  uint32_t s = ev_hash(a, b, c, d, dig) & et->mask;
  for (;;) {
    uint32_t e = et->index[s];
    if (e == 0) {
      const uint64_t wq[4] = {a, b, c, d};
      ev_insert(t, et, s, wq, dig);
      return;
    }
    cov_event *ev = &et->ev[e - 1];
    if (ev->wq[0] == a && ev->dig == dig && ev->wq[1] == b && ev->wq[2] == c && ev->wq[3] == d) {
      ev->count++;
      return;
    }
    s = (s + 1) & et->mask;
  }
}

/* ---- map sink ----------------------------------------------------------------------------- */
/* One specialised function per key hash/layout/width/policy (the key computation and bigmap.h's
 * static inline update inlined), chosen once by cov_map_sink_set and entered by a tail call from
 * the hooks: neither the key hash nor the layout costs a per-hit branch.
 *
 * Key functions (docs/DESIGN.md "Keys, ids and metrics", "The map sink's index key"):
 *   afl     AFL++'s hk32, incrementally: R[cur] ^ xr ^ low half of the context, where xr is the
 *           XOR of the last N-1 (R >> 1) kept in a ring.
 *   xedge   mix64(exact edge key)                          1 mix64 round
 *   xngram  fold(sum_i mix64(p_i) P^i), p_0 = cur, rolled per hit   1 mix64 (a table), 2 multiplies;
 *           fold(x) = x ^ (x >> 32): the polynomial is uniform already
 *   xctx    mix64(mix64(mix64(exact edge key) ^ cX))       3 rounds */
typedef void (*map_hit_fn)(cov_thread *t, uint32_t g, uint32_t pos);
static map_hit_fn cov_map_hit;
static int cov_key_hash_v = -1; /* -1: not chosen yet (AUTOTUNE_KEY_HASH read on first use) */

static inline __attribute__((always_inline)) uint64_t key_afl(cov_thread *t, uint32_t g,
                                                               uint32_t pos, int fast) {
  uint32_t r = fast ? rid_fast(g) : rid(g);
  uint64_t key = r ^ t->xr ^ (uint32_t)t->ctxm;
  t->xr ^= t->rr[pos + cov_map_win] ^ (r >> 1);
  t->rr[pos] = t->rr[pos + 8] = r >> 1;
  return key;
}
static inline __attribute__((always_inline)) uint64_t key_xedge(cov_thread *t, uint32_t g,
                                                                 uint32_t pos, int fast) {
  (void)fast;
  return mix64(((uint64_t)t->h[pos + 1] << 32) | g);
}
/* ngram-N: the exact key is a polynomial over the window's terms mix64(guard) (DESIGN.md "Keys,
 * ids and metrics"), so it rolls: key' = P key + term(cur) - P^N term(leaving). Two multiplies
 * per hit, the terms mix64(guard) from the per-guard table, and the fold as the index key; at
 * the start of an execution the ring and the key are zero, which is the window padded with
 * guard 0 (mix64(0) = 0), as the census sees it. */
static inline __attribute__((always_inline)) uint64_t key_xngram(cov_thread *t, uint32_t g,
                                                                  uint32_t pos, int fast) {
  uint64_t r = fast ? term_fast(g) : term(g);
  uint64_t out = t->r64[pos + cov_map_back]; /* N steps back: not overwritten yet */
  uint64_t h = t->rh * COV_NGRAM_P + r - out * cov_map_pn;
  t->rh = h;
  t->r64[pos] = t->r64[pos + 8] = r;
  return h ^ (h >> 32); /* the ngram index key: fold (DESIGN.md "The map sink's index key") */
}
/* guard: the slot is the guard's own index g (no hash; AUTOTUNE_KEY_HASH does not apply); slot 0
 * stays free, as in AFL++'s PCGUARD (afl-showmap reads map[0] == 1 as a "target ran" mark and
 * clears it) */
static inline __attribute__((always_inline)) uint64_t key_guard(cov_thread *t, uint32_t g,
                                                                 uint32_t pos, int fast) {
  (void)t, (void)pos, (void)fast;
  return g;
}
static inline __attribute__((always_inline)) uint64_t key_xctx(cov_thread *t, uint32_t g,
                                                                uint32_t pos, int fast) {
  (void)fast;
  return mix64(mix64(mix64(((uint64_t)t->h[pos + 1] << 32) | g) ^ t->ctxm));
}

/* D(K, LN, W, PN) for every layout, width and policy of key function K, in table column order
 * (layout * 12 + width index * 3 + policy): definitions of the specialised functions (map hits
 * here, fast hooks below) and the rows of their tables. */
#define PER_POLICY(D, K, LN, W) D(K, LN, W, wrap) D(K, LN, W, nz) D(K, LN, W, sat)
#define PER_WIDTH(D, K, LN) \
  PER_POLICY(D, K, LN, 8) PER_POLICY(D, K, LN, 16) PER_POLICY(D, K, LN, 32) PER_POLICY(D, K, LN, 64)
#define PER_LAYOUT(D, K) PER_WIDTH(D, K, flat) PER_WIDTH(D, K, twolevel) PER_WIDTH(D, K, exact)

#define MAP_HIT_DEF(K, LN, W, PN)                                                           \
  static void map_hit_##K##_##LN##_##W##_##PN(cov_thread *t, uint32_t g, uint32_t pos) {   \
    bm_##LN##_update_u##W##_##PN(cov_map, key_##K(t, g, pos, 0));                           \
  }
#define MAP_HIT_NAME(K, LN, W, PN) map_hit_##K##_##LN##_##W##_##PN,
PER_LAYOUT(MAP_HIT_DEF, afl)
PER_LAYOUT(MAP_HIT_DEF, xedge)
PER_LAYOUT(MAP_HIT_DEF, xngram)
PER_LAYOUT(MAP_HIT_DEF, xctx)
PER_WIDTH(MAP_HIT_DEF, guard, flat)
/* [key function][layout * 12 + width index * 3 + policy (BM_WRAP, BM_NEVERZERO, BM_SATURATE)];
 * guard's map is always flat (its columns 0..11) */
enum { KEY_AFL, KEY_XEDGE, KEY_XNGRAM, KEY_XCTX, KEY_GUARD };
static const map_hit_fn map_hit_table[5][36] = {
    {PER_LAYOUT(MAP_HIT_NAME, afl)}, {PER_LAYOUT(MAP_HIT_NAME, xedge)},
    {PER_LAYOUT(MAP_HIT_NAME, xngram)}, {PER_LAYOUT(MAP_HIT_NAME, xctx)},
    {PER_WIDTH(MAP_HIT_NAME, guard, flat)}};

static inline void map_hit(cov_thread *t, uint32_t g, uint32_t pos) { cov_map_hit(t, g, pos); }
static int cov_map_kf = -1, cov_map_fn; /* the map sink's key function and map_hit_table column */

/* ---- fast hooks --------------------------------------------------------------------------- */
/* When the map sink is the only sink and no metric needs the call stack, a block can be
 * committed at its own guard: nothing (no function exit, no census) can come between a block
 * and the next, so the committed sequence, the keys and the counts are those of the general
 * path (which holds each block back until the next guard or the function's exit). Each fast
 * hook is one function for one key function, layout, width and policy: guard, thread, key and
 * counter update with no call, no pending block, no sink dispatch and unchecked id tables.
 * __sanitizer_cov_trace_pc_guard jumps to the chosen one (hook_select). */
typedef void (*guard_hook_fn)(uint32_t *guard);
static void hook_general(uint32_t *guard);
static guard_hook_fn cov_guard_hook = hook_general;

/* A thread's first hit of an execution: (re)initialise it, then hit again through the hook. Out of
 * line and entered by a tail call, so the hooks keep nothing live across a call (no spills). */
static __attribute__((noinline)) void fast_first(uint32_t *guard) {
  if (cov_thread_slow()) __atomic_load_n(&cov_guard_hook, __ATOMIC_RELAXED)(guard);
}
#define FAST_THREAD(t, guard)                                                              \
  cov_thread *t = cov_tls;                                                                   \
  if (UNLIKELY(t->gen != __atomic_load_n(&cov_gen, __ATOMIC_RELAXED))) {                     \
    fast_first(guard);                                                                       \
    return;                                                                                  \
  }
#define FAST_HOOK_DEF(K, LN, W, PN)                                                         \
  static void fast_##K##_##LN##_##W##_##PN(uint32_t *guard) {                               \
    uint32_t g = *guard;                                                                     \
    if (UNLIKELY(g == 0)) return;                                                            \
    FAST_THREAD(t, guard)                                                                    \
    uint32_t pos = (t->pos - 1) & 7;                                                         \
    t->pos = pos;                                                                            \
    bm_##LN##_update_u##W##_##PN(&cov_map_fast, key_##K(t, g, pos, 1));                     \
  }
/* edge: only the previous block matters, kept in its own field (no ring) */
#define FAST_EDGE_DEF(K, LN, W, PN)                                                         \
  static void fast_##K##_##LN##_##W##_##PN(uint32_t *guard) {                               \
    uint32_t g = *guard;                                                                     \
    if (UNLIKELY(g == 0)) return;                                                            \
    FAST_THREAD(t, guard)                                                                    \
    uint64_t key = mix64(((uint64_t)t->eprev << 32) | g); /* key_xedge's */                  \
    t->eprev = g;                                                                            \
    bm_##LN##_update_u##W##_##PN(&cov_map_fast, key);                                        \
  }
#define FAST_HOOK_NAME(K, LN, W, PN) fast_##K##_##LN##_##W##_##PN,
PER_LAYOUT(FAST_HOOK_DEF, afl)
PER_LAYOUT(FAST_EDGE_DEF, xedge)
PER_LAYOUT(FAST_HOOK_DEF, xngram)
/* guard: the counter of the guard's own slot g, nothing else (no thread state, no history, no
 * test for a disabled guard: g = 0 counts in the unused slot 0) */
#define GUARD_HOOK_DEF(K, LN, W, PN)                                                        \
  static void fast_##K##_##LN##_##W##_##PN(uint32_t *guard) {                               \
    bm_##LN##_update_u##W##_##PN(&cov_map_fast, *guard);                                     \
  }
PER_WIDTH(GUARD_HOOK_DEF, guard, flat)
/* [key function (KEY_AFL, KEY_XEDGE, KEY_XNGRAM, KEY_GUARD - 1)][the map_hit_table column] */
static const guard_hook_fn fast_hook_table[4][36] = {
    {PER_LAYOUT(FAST_HOOK_NAME, afl)}, {PER_LAYOUT(FAST_HOOK_NAME, xedge)},
    {PER_LAYOUT(FAST_HOOK_NAME, xngram)}, {PER_WIDTH(FAST_HOOK_NAME, guard, flat)}};

/* Called whenever the sinks change (and under cov_init_lock when a guard reaches the tables'
 * end). Every change of sinks also bumps cov_gen, so no thread state crosses a switch. */
static void hook_select(void) {
  guard_hook_fn h = hook_general;
  int tables_ok = cov_R && cov_T && !cov_tables_full;
  if (cov_hooks_v == COV_HOOKS_AUTO && cov_sinks == 2 && !cov_ctx_on && tables_ok &&
      cov_map_kf >= KEY_AFL && cov_map_kf <= KEY_XNGRAM) /* cov_sinks == 2: cov_map is set */
    h = fast_hook_table[cov_map_kf][cov_map_fn];
  else if (cov_hooks_v == COV_HOOKS_AUTO && cov_sinks == 2 && !cov_ctx_on && cov_map_kf == KEY_GUARD)
    h = fast_hook_table[3][cov_map_fn]; /* needs no id table */
  __atomic_store_n(&cov_guard_hook, h, __ATOMIC_RELEASE);
}

void cov_set_hooks(int hooks) {
  if (hooks != COV_HOOKS_AUTO && hooks != COV_HOOKS_GENERAL) return;
  cov_hooks_v = hooks;
  hook_select();
}

int cov_fast_hook_active(void) {
  return __atomic_load_n(&cov_guard_hook, __ATOMIC_ACQUIRE) != hook_general;
}

const char *const cov_key_hash_names[2] = {"exact", "afl"};

int cov_key_hash_id(const char *name) {
  for (int i = 0; i < 2; i++)
    if (strcmp(name, cov_key_hash_names[i]) == 0) return i;
  return -1;
}

void cov_set_key_hash(int key_hash) {
  if (key_hash == COV_KEY_EXACT || key_hash == COV_KEY_AFL) cov_key_hash_v = key_hash;
}

int cov_key_hash(void) {
  if (cov_key_hash_v < 0) { /* nobody called cov_config_from_env: take the variable as it is */
    const char *v = getenv("AUTOTUNE_KEY_HASH");
    int id = v && *v ? cov_key_hash_id(v) : COV_KEY_EXACT;
    if (id < 0) {
      fprintf(stderr, "[autotune] AUTOTUNE_KEY_HASH='%s' is not valid; valid values: exact, afl "
              "(using exact)\n", v);
      id = COV_KEY_EXACT;
    }
    cov_key_hash_v = id;
  }
  return cov_key_hash_v;
}

/* No hooked metric feeds a map (none set, or the inline kinds, whose blocks count by themselves). */
static void map_sink_off(void) {
  cov_map_on = 0;
  cov_map = NULL;
  cov_map_ctxsel = -1;
  cov_map_kf = -1;
  sinks_update();
  cov_gen_bump();
}

void cov_map_sink_set(bm_map *map, int metric) {
  cov_cnt_dst = NULL;
  cov_guard_limit = 0;
  int kind = cov_build_kind();
  if (kind == COV_BUILD_EDGE || kind == COV_BUILD_NGRAM) { /* no hooks: the blocks count into the edge area */
    edge_area_set(NULL, 0);
    int served = kind == COV_BUILD_EDGE ? COV_M_EDGE : ngram_build_metric();
    if (map && metric == served && map->layout == BM_FLAT && map->width_bits == 8 &&
        map->index_slots <= (1ull << 32))
      edge_area_set((uint8_t *)map->counters, (uint32_t)(map->index_slots - 1));
    map_sink_off();
    return;
  }
  if (!map || metric < 0 || metric >= COV_N_METRICS ||
      (metric == COV_M_GUARD && (map->layout != BM_FLAT || bm_width_index(map->width_bits) > 3))) {
    map_sink_off();
    return;
  }
  if (metric == COV_M_GUARD) { /* no key hash: the slot is the guard's index */
    pthread_mutex_lock(&cov_init_lock);
    uint64_t slots = cov_guard_slots(); /* guard g at slot g: g < H */
    cov_guard_limit = (uint32_t)(slots < map->index_slots ? slots : map->index_slots - 1);
    pthread_mutex_unlock(&cov_init_lock);
    if (cov_build_kind() == COV_BUILD_GUARD) { /* inline counters: copied at cov_exec_end */
      cnt_clear();
      if (map->width_bits == 8 && (uint64_t)cov_ncounters < map->index_slots) {
        cov_cnt_dst = (uint8_t *)map->counters + 1;
        cov_cnt_room = cov_ncounters; /* within the map: slots 1..counters < H */
        cnt_install_handlers();
      }
    }
  }
  int kf = metric == COV_M_GUARD            ? KEY_GUARD
           : cov_key_hash() == COV_KEY_AFL ? KEY_AFL
           : metric == COV_M_EDGE          ? KEY_XEDGE
           : metric < COV_M_CTX            ? KEY_XNGRAM
                                           : KEY_XCTX;
  cov_map = map;
  cov_map_fast = *map;
  cov_map_kf = kf;
  cov_map_fn = (int)map->layout * 12 + (int)bm_width_index(map->width_bits) * 3 + (int)map->policy;
  cov_map_hit = map_hit_table[kf][cov_map_fn];
  if (metric == COV_M_GUARD) {
    cov_map_win = 0;
    cov_map_ctxsel = -1;
  } else if (metric >= COV_M_CTX) {
    cov_map_win = 1;
    cov_map_ctxsel = metric - COV_M_CTX;
  } else {
    cov_map_win = metric == COV_M_EDGE ? 1u : (uint32_t)metric; /* ngram-N (id N-1): N-1 */
    cov_map_ctxsel = -1;
  }
  cov_map_pn = 1;
  for (uint32_t i = 0; i <= cov_map_win; i++) cov_map_pn *= COV_NGRAM_P; /* P^N */
  cov_map_back = cov_map_win + 1;
  cov_map_on = 1;
  sinks_update();
  cov_gen_bump();
}

void cov_census_sink_set(cov_census *census) { cov_event_sink_set(census ? cov_census_mask(census) : 0); }

void cov_event_sink_set(uint32_t mask) {
  uint32_t depth = 0;
  for (int m = 0; m < COV_N_METRICS; m++) {
    if (!(mask & (1u << m))) continue;
    uint32_t d = (m >= COV_M_NGRAM2 && m <= COV_M_NGRAM8) ? (uint32_t)m + 1 : m == COV_M_GUARD ? 1 : 2;
    if (d > depth) depth = d;
  }
  for (uint32_t i = 0; i < 4; i++)
    cov_wmask[i] = (2 * i < depth ? 0xffffffffull : 0) | (2 * i + 1 < depth ? 0xffffffffull << 32 : 0);
  uint32_t ctx_mask = ((1u << (COV_M_CTX8 + 1)) - 1u) & ~((1u << COV_M_CTX) - 1u);
  cov_digmask = (mask & ctx_mask) ? ~0ull : 0;
  cov_census_on = mask != 0;
  sinks_update();
  cov_gen_bump();
}

/* ---- the hot path ------------------------------------------------------------------------- */
static __attribute__((noinline)) void both_hit(cov_thread *t, uint32_t g, uint32_t pos) {
  census_hit(t, g, pos);
  map_hit(t, g, pos);
}

/* Commit block g: history, then the sinks, each out of line and entered by a tail call, so the
 * no-sink path needs no register spills. */
static inline __attribute__((always_inline)) void commit(cov_thread *t, uint32_t g) {
  uint32_t pos = (t->pos - 1) & 7;
  t->pos = pos;
  t->h[pos] = t->h[pos + 8] = g;
  int s = cov_sinks;
  if (LIKELY(s == 2))
    map_hit(t, g, pos);
  else if (s == 1)
    census_hit(t, g, pos);
  else if (s == 3)
    both_hit(t, g, pos);
}

static void hook_general(uint32_t *guard) {
  uint32_t g = *guard;
  if (UNLIKELY(g == 0)) return;
  cov_thread *t = cov_self();
  if (UNLIKELY(!t)) return;
  uint32_t p = t->pending;
  t->pending = g;
  if (LIKELY(p != 0)) commit(t, p);
}

/* Commit the block held back, if it belongs to this execution (thread exit, execution end). */
static void commit_pending(cov_thread *t) {
  if (t->pending && t->gen == cov_gen_now()) {
    uint32_t p = t->pending;
    t->pending = 0;
    commit(t, p);
  }
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
  __atomic_load_n(&cov_guard_hook, __ATOMIC_RELAXED)(guard);
}

static inline uint64_t fid(cov_thread *t, const void *fn) {
  uint32_t i = (uint32_t)(((uintptr_t)fn * 0x9e3779b97f4a7c15ull) >> 40) & (COV_FNCACHE - 1);
  if (LIKELY(t->fncache[i].fn == fn)) return t->fncache[i].F;
  uint64_t F = fid_slow(fn);
  t->fncache[i].fn = fn;
  t->fncache[i].F = F;
  return F;
}

/* The function hooks' work, out of line so that the no-context early return needs no spills. */
static __attribute__((noinline)) void func_enter(void *fn) {
  cov_thread *t = cov_self();
  if (UNLIKELY(!t)) return;
  uint32_t d = t->depth;
  if (UNLIKELY(d + 1 >= COV_STACK_MAX)) {
    t->overdepth++;
    return;
  }
  cov_frame *s = t->stack, *f = &s[d + 1];
  /* callers of fn, nearest first: s[d], s[d-1], ..., s[1]; s[0] (no function) has F = 0 */
#define FAT(i) ((i) >= 0 ? s[(i)].F : 0)
  int di = (int)d;
  uint64_t c1 = s[d].F;
  uint64_t c2 = c1 ^ FAT(di - 1);
  uint64_t c4 = c2 ^ FAT(di - 2) ^ FAT(di - 3);
  uint64_t c8 = c4 ^ FAT(di - 4) ^ FAT(di - 5) ^ FAT(di - 6) ^ FAT(di - 7);
#undef FAT
  uint64_t ctx = s[d].cx[0] ^ s[d].F;
  f->fn = fn;
  f->F = fid(t, fn);
  f->cx[0] = ctx;
  f->cx[1] = c1;
  f->cx[2] = c2;
  f->cx[3] = c4;
  f->cx[4] = c8;
  f->dig = cov_digmask ? mix64((ctx * 0x9e3779b97f4a7c15ull) ^ (c1 * 0xc2b2ae3d27d4eb4full) ^
                               (c2 * 0x165667b19e3779f9ull) ^ (c4 * 0xd6e8feb86659fd93ull) ^
                               (c8 * 0xbf58476d1ce4e5b9ull)) | 1u
                       : 0;
  f->ctxm = cov_map_ctxsel >= 0 ? f->cx[cov_map_ctxsel] : 0;
  t->ctxm = f->ctxm;
  t->depth = d + 1;
}

static __attribute__((noinline)) void func_exit(void *fn) {
  cov_thread *t = cov_self();
  if (UNLIKELY(!t)) return;
  uint32_t p = t->pending;
  if (p) { /* the function's last block belongs to its own context */
    t->pending = 0;
    commit(t, p);
  }
  if (UNLIKELY(t->overdepth)) {
    t->overdepth--;
    return;
  }
  uint32_t d = t->depth;
  if (LIKELY(d && t->stack[d].fn == fn)) {
    t->depth = d - 1;
    t->ctxm = t->stack[d - 1].ctxm;
    return;
  }
  for (uint32_t i = d; i >= 1; i--) /* frames skipped by longjmp or an exception */
    if (t->stack[i].fn == fn) {
      t->depth = i - 1;
      t->ctxm = t->stack[i - 1].ctxm;
      return;
    }
}

void __cyg_profile_func_enter(void *fn, void *site) {
  (void)site;
  if (UNLIKELY(cov_ctx_on)) func_enter(fn); /* else no context metric: blocks commit later */
}

void __cyg_profile_func_exit(void *fn, void *site) {
  (void)site;
  if (UNLIKELY(cov_ctx_on)) func_exit(fn);
}

/* ---- executions --------------------------------------------------------------------------- */
void cov_exec_begin(void) {
  cov_in_exec = 1;
  autotune_edge_prev = 0; /* the calling thread's (an edge build's blocks; others never read it) */
  if (__atomic_load_n(&cov_ngram_n_v, __ATOMIC_RELAXED)) memset(autotune_ngram_hist, 0, sizeof autotune_ngram_hist); /* an ngram build's */
  if (cov_edge_on) return; /* no hooks, no per-thread state to reset */
  /* the guard metric keeps no per-thread state (no history, no stack, pending blocks are
   * committed at cov_exec_end): nothing to reset */
  if (cov_map_kf == KEY_GUARD && cov_sinks == 2) return;
  cov_gen_bump();
  (void)cov_self();
}

void cov_exec_end(void) {
  if (cov_edge_on) { /* counted inline into the map already */
    cov_in_exec = 0;
    return;
  }
  commit_pending(cov_tls); /* cov_no_thread: gen 0, pending 0 */
  if (cov_cnt_dst) cnt_flush();
  cov_in_exec = 0;
}

/* ---- configuration ------------------------------------------------------------------------ */
const char *cov_layout_name(bm_layout l) {
  return l == BM_FLAT ? "flat" : l == BM_TWOLEVEL ? "twolevel" : "exact";
}
const char *cov_policy_name(bm_policy p) {
  return p == BM_WRAP ? "wrap" : p == BM_NEVERZERO ? "neverzero" : "saturate";
}

/* The index of v in names (the enum values of the choice), -1 if it is none of them. */
static int choice(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  return -1;
}

static int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

static int bad(char *err, size_t errlen, const char *var, const char *val, const char *valid) {
  if (err && errlen) snprintf(err, errlen, "%s='%s' is not valid; valid values: %s", var, val, valid);
  return -1;
}

/* bad() for a choice variable: the valid values are the names of its table, so the message always
 * lists what this runtime accepts (autotune/runtime/config.py's registry is tested against it). */
static int bad_choice(char *err, size_t errlen, const char *var, const char *val,
                      const char *const *names, int n) {
  char valid[256];
  size_t len = 0;
  valid[0] = 0;
  for (int i = 0; i < n && len < sizeof valid; i++)
    len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "", names[i]);
  return bad(err, errlen, var, val, valid);
}

static int pow2_in(uint64_t v, unsigned lo, unsigned hi) {
  return v && !(v & (v - 1)) && v >= (1ull << lo) && v <= (1ull << hi);
}

/* "<VAR>=<value>: a program built with AUTOTUNE_CC_INSTRUMENT=edge|ngram <why>; fix: unset it (or <ok>), or
 * rebuild with AUTOTUNE_CC_INSTRUMENT=blocks" */
static int edge_refuse(char *err, size_t errlen, const char *var, const char *val, const char *why,
                       const char *ok) {
  if (err && errlen)
    snprintf(err, errlen, "%s=%s: a program built with AUTOTUNE_CC_INSTRUMENT=%s %s; fix: unset it "
             "(or %s), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks", var, val,
             cov_build_kind_name(cov_build_kind()), why, ok);
  return -1;
}

/* The edge build counts inline as AFL++'s CLASSIC: 8-bit NeverZero counters in a flat map, the
 * slot (cur ^ prev) & (map size - 1) of compile-time block ids; the ngram build as AFL++'s NGRAM-N,
 * the same way (the slot (cur ^ p1 ^ .. ^ p(N-1)) & (map size - 1), p = id >> 1). Settings they
 * cannot follow are refused when given; unset, they take these values. */
static int edge_config_check(cov_config *cfg, char *err, size_t errlen) {
  const char *v;
  const int ngram = cov_build_kind() == COV_BUILD_NGRAM;
  if ((v = getenv("AUTOTUNE_LAYOUT")) && *v && cfg->layout != BM_FLAT)
    return edge_refuse(err, errlen, "AUTOTUNE_LAYOUT", v, "counts inline into a flat map", "flat");
  if (cfg->counter_bits != 8) {
    char bits[8];
    snprintf(bits, sizeof bits, "%u", cfg->counter_bits);
    return edge_refuse(err, errlen, "AUTOTUNE_COUNTER_BITS", bits, "counts in 8-bit counters", "8");
  }
  if ((v = getenv("AUTOTUNE_OVERFLOW")) && *v && cfg->overflow != BM_NEVERZERO)
    return edge_refuse(err, errlen, "AUTOTUNE_OVERFLOW", v,
                       ngram ? "counts as AFL++'s NGRAM does, skipping zero on overflow (NeverZero)"
                             : "counts as AFL++'s CLASSIC does, skipping zero on overflow (NeverZero)",
                       "neverzero");
  if ((v = getenv("AUTOTUNE_KEY_HASH")) && *v && cfg->key_hash != COV_KEY_AFL)
    return edge_refuse(err, errlen, "AUTOTUNE_KEY_HASH", v,
                       ngram ? "keys each N-gram as AFL++'s NGRAM does, cur ^ (p1 >> 1) ^ .. ^ (p(N-1) >> 1) of "
                               "block ids fixed at compile time"
                             : "keys each edge as AFL++'s CLASSIC does, (cur ^ prev >> 1) of block ids fixed at "
                               "compile time",
                       "afl");
  if (cfg->seed != 0)
    return edge_refuse(err, errlen, "AUTOTUNE_SEED", getenv("AUTOTUNE_SEED"),
                       "has block ids fixed at compile time (kernels/plugin/autotune_edges.cpp)", "0");
  cfg->layout = BM_FLAT;
  cfg->overflow = BM_NEVERZERO;
  cfg->key_hash = COV_KEY_AFL;
  return 0;
}

int cov_config_from_env(cov_config *cfg, char *err, size_t errlen) {
  memset(cfg, 0, sizeof *cfg);
  cfg->seed = 0;
  cfg->metric = COV_M_EDGE;
  if (cov_build_kind() == COV_BUILD_NGRAM && ngram_build_metric() >= 0) cfg->metric = ngram_build_metric();
  cfg->layout = BM_TWOLEVEL;
  cfg->index_size = 1ull << 24;
  cfg->map_size = 65536;
  cfg->counter_bits = 8;
  cfg->overflow = BM_NEVERZERO;
  cfg->key_hash = COV_KEY_EXACT;
  const char *v;
  if ((v = getenv("AUTOTUNE_SEED")) && *v && parse_u64(v, &cfg->seed))
    return bad(err, errlen, "AUTOTUNE_SEED", v, "an unsigned 64-bit integer");
  if ((v = getenv("AUTOTUNE_METRIC")) && *v && (cfg->metric = cov_metric_id(v)) < 0)
    return bad_choice(err, errlen, "AUTOTUNE_METRIC", v, cov_metric_names, COV_N_METRICS);
  static const char *const layouts[] = {"flat", "twolevel"};          /* BM_FLAT, BM_TWOLEVEL */
  static const char *const policies[] = {"wrap", "neverzero", "saturate"}; /* bm_policy order */
  static const char *const hooks[] = {"auto", "general"};                /* COV_HOOKS_* order */
  int c;
  if ((v = getenv("AUTOTUNE_LAYOUT")) && *v) {
    if ((c = choice(v, layouts, 2)) < 0) return bad_choice(err, errlen, "AUTOTUNE_LAYOUT", v, layouts, 2);
    cfg->layout = (bm_layout)c;
  }
  if ((v = getenv("AUTOTUNE_INDEX_SIZE")) && *v &&
      (parse_u64(v, &cfg->index_size) || !pow2_in(cfg->index_size, 10, 30)))
    return bad(err, errlen, "AUTOTUNE_INDEX_SIZE", v, "a power of two from 1024 (2^10) to 2^30");
  if ((v = getenv("AUTOTUNE_MAP_SIZE")) && *v &&
      (parse_u64(v, &cfg->map_size) || !pow2_in(cfg->map_size, 6, 30)))
    return bad(err, errlen, "AUTOTUNE_MAP_SIZE", v, "a power of two from 64 (2^6) to 2^30");
  if ((v = getenv("AUTOTUNE_COUNTER_BITS")) && *v) {
    uint64_t b;
    if (parse_u64(v, &b) || (b != 8 && b != 16 && b != 32 && b != 64))
      return bad(err, errlen, "AUTOTUNE_COUNTER_BITS", v, "8, 16, 32, 64");
    cfg->counter_bits = (unsigned)b;
  }
  if ((v = getenv("AUTOTUNE_OVERFLOW")) && *v) {
    if ((c = choice(v, policies, 3)) < 0)
      return bad_choice(err, errlen, "AUTOTUNE_OVERFLOW", v, policies, 3);
    cfg->overflow = (bm_policy)c;
  }
  if ((v = getenv("AUTOTUNE_KEY_HASH")) && *v && (cfg->key_hash = cov_key_hash_id(v)) < 0)
    return bad_choice(err, errlen, "AUTOTUNE_KEY_HASH", v, cov_key_hash_names, 2);
  if ((v = getenv("AUTOTUNE_HOOKS")) && *v && (cfg->hooks = choice(v, hooks, 2)) < 0)
    return bad_choice(err, errlen, "AUTOTUNE_HOOKS", v, hooks, 2);
  if ((v = getenv("AUTOTUNE_INDEX_FILE")) && *v) {
    if (strlen(v) >= sizeof cfg->index_file)
      return bad(err, errlen, "AUTOTUNE_INDEX_FILE", "...", "a path shorter than 4096 bytes");
    strcpy(cfg->index_file, v);
  }
  if (cov_metric_check(cfg->metric, err, errlen)) return -1;
  if ((cov_build_kind() == COV_BUILD_EDGE || cov_build_kind() == COV_BUILD_NGRAM) &&
      edge_config_check(cfg, err, errlen))
    return -1;
  if (cfg->metric == COV_M_GUARD) { /* one slot per guard: layout and sizes do not apply */
    if (cov_build_kind() == COV_BUILD_GUARD) { /* clang's inline counters: 8-bit, NeverZero */
      if (cfg->counter_bits != 8) {
        if (err && errlen)
          snprintf(err, errlen, "AUTOTUNE_COUNTER_BITS=%u: a program built with "
                   "AUTOTUNE_CC_INSTRUMENT=guard counts in clang's inline 8-bit counters; fix: "
                   "unset it (or 8), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks", cfg->counter_bits);
        return -1;
      }
      if ((v = getenv("AUTOTUNE_OVERFLOW")) && *v && cfg->overflow != BM_NEVERZERO) {
        if (err && errlen)
          snprintf(err, errlen, "AUTOTUNE_OVERFLOW=%s: a program built with "
                   "AUTOTUNE_CC_INSTRUMENT=guard counts in inline 8-bit counters that skip 0 "
                   "(NeverZero); fix: unset it (or neverzero), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks", v);
        return -1;
      }
      cfg->overflow = BM_NEVERZERO;
    }
    cfg->layout = BM_FLAT;
    cfg->map_size = cov_guard_map_bytes();
    cfg->index_size = 64;
    while (cfg->index_size < cfg->map_size) cfg->index_size <<= 1;
  }
  cov_set_key_hash(cfg->key_hash); /* the map sink's key hash from now on */
  cov_set_hooks(cfg->hooks);
  return 0;
}

void cov_config_to_bm(const cov_config *cfg, bm_config *out) {
  memset(out, 0, sizeof *out);
  out->layout = cfg->layout;
  out->width_bits = cfg->counter_bits;
  out->policy = cfg->overflow;
  if (cfg->metric == COV_M_GUARD) { /* H: a power of two >= the guard map (cov_config_from_env) */
    out->index_slots = cfg->index_size;
    out->capacity = cfg->index_size;
  } else if (cfg->layout == BM_FLAT) {
    out->index_slots = cfg->map_size;
    out->capacity = cfg->map_size;
  } else {
    out->index_slots = cfg->index_size;
    out->capacity = cfg->map_size;
  }
}

/* clang links UBSan's standalone runtime whenever -fsanitize-coverage is given without another
 * sanitizer, and its deadly-signal handlers turn a SIGSEGV or an abort() into exit(1). Fuzzers
 * and the probe server detect crashes by the signal, so hand the signals back (AFL++ passes the
 * same settings in UBSAN_OPTIONS). UBSAN_OPTIONS from the environment still wins. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0";
}
