/* cov_sink.c - the sinks' configuration, the map sink and its specialised functions, the block
 * hook (__sanitizer_cov_trace_pc_guard: the general path and the generated fast hooks), and
 * executions (begin/end; a guard build's inline counters copied into the map, also on a crash).
 * See cov.h for the definitions; docs/DESIGN.md "Keys, ids and metrics". */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "cov_cnt.h"
#include "cov_internal.h"

/* ---- a guard build's inline counters in the guard map sink ---------------------------------- */
/* The guard map sink of a guard build: where the counters go after each execution. */
static uint8_t *cov_cnt_dst;
static size_t cov_cnt_room; /* counters the map holds: a module loaded later is cut off */
static volatile sig_atomic_t cov_in_exec; /* between cov_exec_begin and cov_exec_end */

static void cnt_flush(void) {
  uint8_t *d = cov_cnt_dst; /* slot 1: counter 0 is guard 1's */
  if (!d) return;
  size_t room = cov_cnt_room;
  uint32_t regions = cov_ncnt_regions; /* read once: the byte stores below may alias a global */
  for (uint32_t i = 0; i < regions && room; i++) {
    size_t n = cov_cnt[i].n < room ? cov_cnt[i].n : room;
    cov_cnt_add_clear(d, cov_cnt[i].start, n);
    d += n;
    room -= n;
  }
}

static void cnt_clear(void) {
  for (uint32_t i = 0; i < cov_ncnt_regions; i++) memset(cov_cnt[i].start, 0, cov_cnt[i].n);
}

/* A crash during an input: its coverage reaches the map (afl-fuzz dedupes crashes by it) before
 * the signal takes its course (the previous handler, e.g. a sanitizer's, or the default).
 * A hang likewise: afl-fuzz ends a timed-out child with AFL_KILL_SIGNAL (SIGKILL unless set; its
 * environment is the child's), and when that signal can be caught (autotune's run variables set
 * SIGTERM) the hang's counters reach the map before the child dies, so afl-fuzz keeps distinct
 * hangs apart as it does for AFL++'s own build, whose counters are in the map already. Slot
 * COV_N_CRASH_SIGNALS holds that signal (0: none to catch). */
static int cov_crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, 0};
#define COV_N_CRASH_SIGNALS (sizeof cov_crash_signals / sizeof cov_crash_signals[0] - 1)
static struct sigaction cov_old_action[COV_N_CRASH_SIGNALS + 1];

static void cnt_crash_handler(int sig) {
  if (cov_in_exec) {
    cnt_flush();
    cov_in_exec = 0;
  }
  for (size_t i = 0; i <= COV_N_CRASH_SIGNALS; i++)
    if (cov_crash_signals[i] == sig) sigaction(sig, &cov_old_action[i], NULL);
  raise(sig); /* blocked until we return; a fault re-executes and meets the old action */
}

/* afl's kill signal, when one is set that a handler can catch and that is not a crash signal. */
static int cnt_kill_signal(void) {
  const char *v = getenv("AFL_KILL_SIGNAL");
  if (!v || !*v) return 0;
  char *end;
  long sig = strtol(v, &end, 10);
  if (*end || sig <= 0 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP) return 0;
  for (size_t i = 0; i < COV_N_CRASH_SIGNALS; i++)
    if (cov_crash_signals[i] == sig) return 0;
  return (int)sig;
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
  cov_crash_signals[COV_N_CRASH_SIGNALS] = cnt_kill_signal();
  for (size_t i = 0; i <= COV_N_CRASH_SIGNALS; i++)
    if (cov_crash_signals[i]) sigaction(cov_crash_signals[i], &sa, &cov_old_action[i]);
  atexit(cnt_atexit);
}

/* ---- sinks' configuration ----------------------------------------------------------------- */
int cov_census_on;
static int cov_map_on;
int cov_sinks;
int cov_map_ctxsel = -1;
int cov_ctx_on;
static int cov_hooks_v = COV_HOOKS_AUTO;
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
uint32_t cov_map_win;
uint32_t cov_map_back = 2;
uint64_t cov_map_pn = 1;

/* ---- map sink ----------------------------------------------------------------------------- */
/* One specialised function per key function/layout/width/policy (the key computation of
 * cov_keys.h and bigmap.h's static inline update inlined), chosen once by cov_map_sink_set and
 * entered by a tail call from the hooks: neither the key hash nor the layout costs a per-hit
 * branch. The functions and their tables are generated from cov_keys.h's COV_KEY_FUNCS. */
map_hit_fn cov_map_hit;
static int cov_key_hash_v = -1; /* -1: not chosen yet (AUTOTUNE_KEY_HASH read on first use) */

/* D(K, LN, W, PN) for every layout, width and policy of key function K, in table column order
 * (layout * 12 + width index * 3 + policy): definitions of the specialised functions (map hits
 * here, fast hooks below) and the rows of their tables. A hashed key function takes every
 * layout; a slot (HASHED 0) only flat maps (its columns 0..11). */
#define PER_POLICY(D, K, LN, W) D(K, LN, W, wrap) D(K, LN, W, nz) D(K, LN, W, sat)
#define PER_WIDTH(D, K, LN) \
  PER_POLICY(D, K, LN, 8) PER_POLICY(D, K, LN, 16) PER_POLICY(D, K, LN, 32) PER_POLICY(D, K, LN, 64)
#define PER_LAYOUT(D, K) PER_WIDTH(D, K, flat) PER_WIDTH(D, K, twolevel) PER_WIDTH(D, K, exact)
#define PER_MAP_1(D, K) PER_LAYOUT(D, K)
#define PER_MAP_0(D, K) PER_WIDTH(D, K, flat)
#define PER_MAP(D, K, HASHED) PER_MAP_##HASHED(D, K)
#define COV_N_COLUMNS 36

#define MAP_HIT_DEF(K, LN, W, PN)                                                           \
  static void map_hit_##K##_##LN##_##W##_##PN(cov_thread *t, uint32_t g, uint32_t pos) {   \
    bm_##LN##_update_u##W##_##PN(cov_map, key_##K(t, g, pos, 0));                           \
  }
#define MAP_HIT_NAME(K, LN, W, PN) map_hit_##K##_##LN##_##W##_##PN,
#define MAP_HIT_DEFS(K, HASHED, FAST) PER_MAP(MAP_HIT_DEF, K, HASHED)
#define MAP_HIT_ROW(K, HASHED, FAST) [COV_KEYFN_##K] = {PER_MAP(MAP_HIT_NAME, K, HASHED)},
COV_KEY_FUNCS(MAP_HIT_DEFS)
/* [key function (COV_KEYFN_*)][layout * 12 + width index * 3 + policy (BM_WRAP, BM_NEVERZERO,
 * BM_SATURATE)] */
static const map_hit_fn map_hit_table[COV_N_KEYFNS][COV_N_COLUMNS] = {COV_KEY_FUNCS(MAP_HIT_ROW)};
static const int key_hashed[COV_N_KEYFNS] = {
#define KEY_HASHED(K, HASHED, FAST) HASHED,
    COV_KEY_FUNCS(KEY_HASHED)
#undef KEY_HASHED
};

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
/* RING: the history ring advances, then the key */
#define FAST_RING_DEF(K, LN, W, PN)                                                         \
  static void fast_##K##_##LN##_##W##_##PN(uint32_t *guard) {                               \
    uint32_t g = *guard;                                                                     \
    if (UNLIKELY(g == 0)) return;                                                            \
    FAST_THREAD(t, guard)                                                                    \
    uint32_t pos = (t->pos - 1) & 7;                                                         \
    t->pos = pos;                                                                            \
    bm_##LN##_update_u##W##_##PN(&cov_map_fast, key_##K(t, g, pos, 1));                     \
  }
/* PREV: only the previous block matters, kept in its own field (no ring) */
#define FAST_PREV_DEF(K, LN, W, PN)                                                         \
  static void fast_##K##_##LN##_##W##_##PN(uint32_t *guard) {                               \
    uint32_t g = *guard;                                                                     \
    if (UNLIKELY(g == 0)) return;                                                            \
    FAST_THREAD(t, guard)                                                                    \
    uint64_t key = key_##K##_prev(t, g);                                                     \
    bm_##LN##_update_u##W##_##PN(&cov_map_fast, key);                                        \
  }
/* SLOT: the counter of the key of the guard's value, nothing else (no thread state, no history,
 * no test for a disabled guard: g = 0 counts in the unused slot 0) */
#define FAST_SLOT_DEF(K, LN, W, PN)                                                         \
  static void fast_##K##_##LN##_##W##_##PN(uint32_t *guard) {                               \
    bm_##LN##_update_u##W##_##PN(&cov_map_fast, key_##K(NULL, *guard, 0, 1));                \
  }
#define FAST_HOOK_NAME(K, LN, W, PN) fast_##K##_##LN##_##W##_##PN,
#define FAST_RING_ROW(K, HASHED) [COV_KEYFN_##K] = {PER_MAP(FAST_HOOK_NAME, K, HASHED)},
#define FAST_PREV_ROW FAST_RING_ROW
#define FAST_SLOT_ROW FAST_RING_ROW
#define FAST_NONE_DEF(K, LN, W, PN)
#define FAST_NONE_ROW(K, HASHED) /* no fast hook: NULL */
#define FAST_HOOK_DEFS(K, HASHED, FAST) PER_MAP(FAST_##FAST##_DEF, K, HASHED)
#define FAST_HOOK_ROW(K, HASHED, FAST) FAST_##FAST##_ROW(K, HASHED)
COV_KEY_FUNCS(FAST_HOOK_DEFS)
/* [key function (COV_KEYFN_*)][the map_hit_table column]; NULL: no fast hook */
static const guard_hook_fn fast_hook_table[COV_N_KEYFNS][COV_N_COLUMNS] = {COV_KEY_FUNCS(FAST_HOOK_ROW)};

/* Called whenever the sinks change (and under cov_init_lock when a guard reaches the tables'
 * end). Every change of sinks also bumps cov_gen, so no thread state crosses a switch. */
void hook_select(void) {
  guard_hook_fn h = hook_general;
  int tables_ok = cov_R && cov_T && !cov_tables_full;
  /* cov_sinks == 2: cov_map is set; a hashed key's fast hook reads the id tables unchecked */
  if (cov_hooks_v == COV_HOOKS_AUTO && cov_sinks == 2 && !cov_ctx_on && cov_map_kf >= 0 &&
      fast_hook_table[cov_map_kf][cov_map_fn] && (tables_ok || !key_hashed[cov_map_kf]))
    h = fast_hook_table[cov_map_kf][cov_map_fn];
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
  if (cov_build_counts(kind) == COV_COUNTS_AREA) { /* no hooks: the blocks count into the edge area */
    cov_edge_area_set(NULL, 0);
    cov_edge_index_set(NULL);
    int served = cov_build_metric(kind), indexed = cov_build_indexed();
    if (map && metric == served && map->width_bits == 8 && map->index_slots <= (1ull << 32)) {
      if (!indexed && map->layout == BM_FLAT)
        cov_edge_area_set((uint8_t *)map->counters, (uint32_t)(map->index_slots - 1));
      else if (indexed && map->layout == BM_TWOLEVEL)
        cov_edge_index_set(map);
    }
    map_sink_off();
    return;
  }
  if (!map || metric < 0 || metric >= COV_N_METRICS ||
      (!key_hashed[cov_metric_infos[metric].key] &&
       (map->layout != BM_FLAT || bm_width_index(map->width_bits) > 3))) { /* a slot: flat maps only */
    map_sink_off();
    return;
  }
  if (metric == COV_M_GUARD) { /* no key hash: the slot is the guard's index */
    pthread_mutex_lock(&cov_init_lock);
    uint64_t slots = cov_guard_slots(); /* guard g at slot g: g < H */
    cov_guard_limit = (uint32_t)(slots < map->index_slots ? slots : map->index_slots - 1);
    pthread_mutex_unlock(&cov_init_lock);
    if (cov_build_counts(cov_build_kind()) == COV_COUNTS_COUNTERS) { /* inline counters: copied at cov_exec_end */
      cnt_clear();
      size_t span;
      uint8_t *page = cov_cnt_map_pages(&span);
      if (page && (uint8_t *)map->counters == page) {
        /* the map is mapped over the counters (aflfs_map.c): they count in it, nothing to copy */
      } else if (map->width_bits == 8 && (uint64_t)cov_ncounters < map->index_slots) {
        cov_cnt_dst = (uint8_t *)map->counters + 1;
        cov_cnt_room = cov_ncounters; /* within the map: slots 1..counters < H */
        cnt_install_handlers();
      }
    }
  }
  const cov_metric_info *mi = &cov_metric_infos[metric];
  int kf = key_hashed[mi->key] && cov_key_hash() == COV_KEY_AFL ? COV_KEYFN_afl : mi->key;
  cov_map = map;
  cov_map_fast = *map;
  cov_map_kf = kf;
  cov_map_fn = (int)map->layout * 12 + (int)bm_width_index(map->width_bits) * 3 + (int)map->policy;
  cov_map_hit = map_hit_table[kf][cov_map_fn];
  cov_map_win = mi->win;
  cov_map_ctxsel = mi->cx;
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
  int ctx = 0; /* a context metric is selected */
  for (int m = 0; m < COV_N_METRICS; m++) {
    if (!(mask & (1u << m))) continue;
    uint32_t d = cov_metric_infos[m].win + 1; /* the blocks its key reads */
    if (d > depth) depth = d;
    if (cov_metric_needs_stack(m)) ctx = 1;
  }
  for (uint32_t i = 0; i < 4; i++)
    cov_wmask[i] = (2 * i < depth ? 0xffffffffull : 0) | (2 * i + 1 < depth ? 0xffffffffull << 32 : 0);
  cov_digmask = ctx ? ~0ull : 0;
  cov_census_on = mask != 0;
  sinks_update();
  cov_gen_bump();
}

/* ---- the hot path ------------------------------------------------------------------------- */
void both_hit(cov_thread *t, uint32_t g, uint32_t pos) {
  census_hit(t, g, pos);
  map_hit(t, g, pos);
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

void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
  __atomic_load_n(&cov_guard_hook, __ATOMIC_RELAXED)(guard);
}

/* ---- executions --------------------------------------------------------------------------- */
void cov_exec_begin(void) {
  cov_in_exec = 1;
  autotune_edge_prev = 0; /* the calling thread's (an edge build's blocks; others never read it) */
  if (__atomic_load_n(&cov_ngram_n_v, __ATOMIC_RELAXED)) memset(autotune_ngram_hist, 0, sizeof autotune_ngram_hist); /* an ngram build's */
  if (__atomic_load_n(&cov_ctx_k_v, __ATOMIC_RELAXED)) memset(autotune_ctx_hist, 0, sizeof autotune_ctx_hist); /* a ctx build's */
  if (cov_edge_on) return; /* no hooks, no per-thread state to reset */
  /* the guard metric keeps no per-thread state (no history, no stack, pending blocks are
   * committed at cov_exec_end): nothing to reset */
  if (cov_map_kf == COV_KEYFN_guard && cov_sinks == 2) return;
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
