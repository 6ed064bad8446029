/* cov.h - coverage keys from clang SanitizerCoverage, for every metric (C11, libc only).
 *
 * Instrumentation (what `autotune cc` adds): -fsanitize-coverage=trace-pc-guard gives one guard
 * per block; -finstrument-functions-after-inlining gives __cyg_profile_func_enter/exit for every
 * function that survived inlining (the call stack AFL++'s CTX pass sees: it runs after inlining).
 *
 * Ids (docs/DESIGN.md "Keys, ids and metrics"):
 *   guard index g = 1, 2, ... over all modules (0 = disabled / "no block");
 *   block id    R[g] = (uint32_t)splitmix64(seed ^ g), R[0] = 0 ("no previous block");
 *   function id F(fn) = splitmix64(seed ^ (fn - module base)), module base from dladdr, so ids
 *               do not depend on ASLR; the 32-bit form is the low half.
 *
 * Per-thread state: the previous blocks (a history of 7), the call stack. Blocks of a function f
 * see the context of f's callers (AFL++: the context loaded on entry, before f adds its own id):
 *   ctx    = XOR of F over every caller on the stack       (AFL++ CTX)
 *   caller = F(immediate caller)                           (AFL++ CALLER = CTX-1)
 *   ctx-K  = XOR of F over the K nearest callers           (AFL++ CTX-K)
 * Contexts are keyed by caller *functions*, not call sites (AFL++ does the same): a function
 * called from two sites in the same caller has one context.
 *
 * Ordering: clang 14 places the entry block's guard call *before* the __cyg_profile_func_enter call
 * (both -finstrument-functions variants); clang 21, whose post-inlining hooks are placed in code
 * generation, places it after. The runtime keeps the latest block "pending" and commits it at the
 * next guard or exit hook, and, when the entry hook comes first, at the entry hook: either way the
 * entry block of f is committed after enter(f) and gets f's context, as in AFL++ where the entry
 * block is keyed with the context loaded on entry, and the caller's last block before the call
 * gets the caller's. autotune cc measures the order of the clang it runs (autotune/llvm.py
 * hook_order) and records it in the link (autotune_hook_order, kernels/cov_thread.c).
 *
 * Keys of a block hit: cov_keys.h (the metrics and their key functions).
 * Every exec starts with p1..p7 = 0 and an empty stack (cX = 0).
 *
 * Sinks (each costs one predictable branch per block when off):
 *   census  (the probe): every selected metric from one run. Per-thread per-exec tables of
 *           distinct "events" (block window + context); after the harness returned they are
 *           merged into census tables in caller-provided (MAP_SHARED) memory: cov_census_*.
 *   map     (afl-fuzz, replay): one metric's *index key* into a bigmap.h map: cov_map_sink_set().
 *           The index key depends on the key hash (AUTOTUNE_KEY_HASH):
 *             exact (default)  mix64(exact 64-bit key) (ngram-N: the fold exact ^ exact >> 32,
 *                              its exact key being uniform already): a uniform function of the
 *                              exact key, so the slot key & (H-1) collides only as Equation 1
 *                              says (distinct exact keys, independent uniform slots); with the
 *                              exact layout the map is collision-free (both are bijections).
 *             afl              hk32, bit for bit AFL++'s (comparisons with afl-cc builds).
 *           hk32 is structurally non-uniform for ngram-N: equal block ids at different positions
 *           XOR-cancel, so distinct N-grams share one hk32 at every map size (a collision floor
 *           Equation 1 does not predict); edge and ctx-like hk32 follow Equation 1.
 *           Per-hit cost of the exact hash: edge 1 mix64, ctx-like 3, ngram-N a rolled
 *           polynomial (2 multiplies, its terms mix64(guard) from a per-guard table) and the fold
 *           (docs/DESIGN.md "The map sink's index key").
 */
#ifndef AUTOTUNE_COV_H
#define AUTOTUNE_COV_H

#include <stddef.h>
#include <stdint.h>

#include "bigmap.h"
#include "cov_keys.h"
#include "cov_kinds.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The metrics, in census order (cov_keys.h COV_METRICS): COV_M_EDGE, COV_M_NGRAM2 .. COV_M_NGRAM8
 * (ngram-N has id N - 1), COV_M_CTX, COV_M_CALLER, COV_M_CTX2, COV_M_CTX4, COV_M_CTX8, COV_M_GUARD. */
enum {
#define COV_M_ENUM(ID, NAME, KEY, WIN, CX) COV_M_##ID,
  COV_METRICS(COV_M_ENUM)
#undef COV_M_ENUM
  COV_N_METRICS
};
#define COV_ALL_METRICS ((1u << COV_N_METRICS) - 1u)

/* Canonical names in census order (autotune/vocabulary.py METRIC_TABLE holds the same list). */
extern const char *const cov_metric_names[COV_N_METRICS];
int cov_metric_id(const char *name); /* -1 if unknown */
/* Parse "edge,ngram-4,ctx" (or "all") into a mask; 0 on error with *bad set to the bad item. */
uint32_t cov_metric_mask_parse(const char *list, const char **bad, size_t *bad_len);

/* ---- ids ---------------------------------------------------------------------------------- */
uint64_t cov_mix64(uint64_t x);
uint64_t cov_splitmix64(uint64_t x);
uint64_t cov_seed(void);
/* Set the seed of block and function ids (recomputes R for every guard so far). Call before
 * the first execution; not thread-safe against running instrumented code. */
void cov_set_seed(uint64_t seed);
uint32_t cov_guard_count(void);     /* guards registered so far (highest g) */
uint32_t cov_block_id(uint32_t g);  /* R[g] */
uint64_t cov_function_id(const void *fn);

/* The ngram-N exact key: sum_{i<N} mix64(w_i) * COV_NGRAM_P^i mod 2^64 (w_0 = cur; an odd
 * multiplier, splitmix64's golden gamma), so it rolls in O(1) per hit. */
#define COV_NGRAM_P 0x9e3779b97f4a7c15ull

/* Every metric's keys of one block hit: w = {cur, p1, .., p7} (guard indices, 0 = none),
 * cx = {ctx, caller, ctx-2, ctx-4, ctx-8} (64-bit XORs of function ids). */
void cov_keys(const uint32_t w[8], const uint64_t cx[5], uint64_t exact[COV_N_METRICS],
              uint32_t hk32[COV_N_METRICS]);

/* ---- build kinds (AUTOTUNE_CC_INSTRUMENT of `autotune cc`: cov_kinds.h, docs/BUILD_KINDS.md) ---- */
/* The link records the kind (`--defsym=autotune_instrument_kind=autotune_kind_<kind>`); what
 * registered at start-up decides too: inline counters without guards are a guard build, modules
 * of the edge pass without guards or counters an edge build, of its ngram mode (all with one N) an
 * ngram build, of its ctx mode (all with one context) a ctx build; two of them mixed (or modules of
 * different N or context): COV_BUILD_MIXED. */
enum {
#define COV_BUILD_ENUM(ID, NAME, SERVES, CENSUS, COUNTS, FIX) COV_BUILD_##ID,
  COV_BUILD_KINDS(COV_BUILD_ENUM)
#undef COV_BUILD_ENUM
  COV_BUILD_MIXED, /* objects of two kinds in one program: refused */
  COV_N_BUILDS
};
int cov_build_kind(void);
const char *cov_build_kind_name(int kind); /* cov_kinds.h's name, "mixed" */
/* What a build kind serves (a metric id, or COV_SERVES_*) and how its blocks count (COV_COUNTS_*):
 * its cov_kinds.h line (COV_BUILD_MIXED: COV_SERVES_NONE, COV_COUNTS_HOOKS). */
int cov_build_serves(int kind);
int cov_build_counts(int kind);
/* Edge or ngram build: blocks the pass instrumented (over every module registered so far), and
 * whether the blocks count into the map sink now (else into a dummy byte). */
uint32_t cov_edge_blocks_registered(void);
int cov_edge_inline_active(void);
/* Ngram build: the N its modules were compiled with (0: none registered). */
uint32_t cov_ngram_n(void);
/* The one metric a build of kind counts inline (an edge, ngram or ctx build: its modules' metric),
 * -1 for another kind or none registered. */
int cov_build_metric(int kind);
/* AUTOTUNE_METRIC's default for a build of kind: the one metric it serves (guard, edge, ngram-N of
 * its N, its call-context metric), else edge (full, blocks). */
int cov_default_metric(int kind);
/* 0 if this build can serve metric (map sink) / the census of metric_mask, else -1 with a
 * one-line message naming the build kind and the fix. */
int cov_metric_check(int metric, char *err, size_t errlen);
int cov_census_check(uint32_t metric_mask, char *err, size_t errlen);
/* The guard metric's slots: guards registered (trace-pc-guard) or inline 8-bit counters. */
uint32_t cov_guard_slots(void);
/* The map the guard metric gives afl-fuzz: slots 0..cov_guard_slots() (guard g at slot g, slot 0
 * unused as in AFL++'s PCGUARD), rounded up to a multiple of 64 (afl-fuzz rounds so). */
uint64_t cov_guard_map_bytes(void);
/* A guard build linked with kernels/guard_counters.ld: the page its counters start on (byte 0 is
 * slot 0, counter i is at byte i + 1: the guard metric's slot layout) and in *span the bytes from
 * there that hold nothing else, when every counter registered is there (one region); else NULL.
 * Whatever is mapped over those bytes is where the blocks count (aflfs_map.c: afl's segment). */
uint8_t *cov_cnt_map_pages(size_t *span);

/* ---- run-time configuration (AUTOTUNE_* variables, docs/DESIGN.md) -------------------------- */
typedef struct cov_config {
  uint64_t seed;         /* AUTOTUNE_SEED, default 0 */
  int metric;            /* AUTOTUNE_METRIC, default cov_default_metric() */
  bm_layout layout;      /* AUTOTUNE_LAYOUT flat|twolevel, default twolevel */
  uint64_t index_size;   /* AUTOTUNE_INDEX_SIZE, power of two 2^10..2^30, default 2^24 */
  uint64_t map_size;     /* AUTOTUNE_MAP_SIZE, 2^6..2^30: flat a power of two, twolevel a multiple of 64; default 65536 */
  unsigned counter_bits; /* AUTOTUNE_COUNTER_BITS 8|16|32|64, default 8 */
  bm_policy overflow;    /* AUTOTUNE_OVERFLOW wrap|neverzero|saturate, default neverzero */
  char index_file[4096]; /* AUTOTUNE_INDEX_FILE, "" when unset */
  int key_hash;          /* AUTOTUNE_KEY_HASH exact|afl (COV_KEY_*), default exact */
  int hooks;             /* AUTOTUNE_HOOKS auto|general (COV_HOOKS_*), default auto */
} cov_config;
/* metric guard: AUTOTUNE_LAYOUT, AUTOTUNE_INDEX_SIZE and AUTOTUNE_MAP_SIZE are checked but not
 * used (and AUTOTUNE_KEY_HASH: the slot is the guard's index): layout flat, map_size =
 * cov_guard_map_bytes(), H (index_size) its next power of two. */
/* edge build: layout flat, 8-bit, neverzero, key hash afl and seed 0 (the pass's compile-time ids);
 * another value of one of these, when given, is refused naming the fix. */

/* Read and validate every variable. 0 on success; -1 with a one-line message in err naming the
 * variable, its value and the valid values (or, cov_metric_check, a metric this build cannot
 * serve). Unset/empty variables take the defaults.
 * On success it also sets the map sink's key hash (cov_set_key_hash(cfg->key_hash)). */
int cov_config_from_env(cov_config *cfg, char *err, size_t errlen);
/* The map geometry of a configuration. AUTOTUNE_MAP_SIZE is the number of slots afl-fuzz sees
 * (one classified byte each): flat H = map_size; twolevel H = index_size, C = map_size. */
void cov_config_to_bm(const cov_config *cfg, bm_config *out);
const char *cov_layout_name(bm_layout l);
const char *cov_policy_name(bm_policy p);

/* ---- per-execution state ------------------------------------------------------------------ */
/* Start an execution: every thread's history, call stack and event table are reset (the calling
 * thread now, others at their next hit). */
void cov_exec_begin(void);
/* End it: commits the calling thread's pending block. Call after the harness returned.
 * Guard build with the guard map sink: copies the inline counters into the map's counters and
 * zeroes them (also done by the runtime's crash-signal handlers and at exit() during an input). */
void cov_exec_end(void);

/* ---- map sink ----------------------------------------------------------------------------- */
/* Key hashes of the map sink (AUTOTUNE_KEY_HASH). */
enum { COV_KEY_EXACT = 0, COV_KEY_AFL = 1 };
extern const char *const cov_key_hash_names[2]; /* "exact", "afl" (indexed by COV_KEY_*) */
int cov_key_hash_id(const char *name);          /* -1 if unknown */
/* The key hash cov_map_sink_set uses: the one set last (cov_set_key_hash or a successful
 * cov_config_from_env); if neither ran, AUTOTUNE_KEY_HASH read on first use (a bad value: a
 * warning on stderr and exact). Takes effect at the next cov_map_sink_set. */
void cov_set_key_hash(int key_hash);
int cov_key_hash(void);
/* Block hooks (AUTOTUNE_HOOKS). auto: when the map sink is the only sink and the metric needs
 * no call context (edge, ngram-N), each block is keyed and counted at its own guard by one
 * function specialised for the key, layout, width and policy (the same keys and counts as the
 * general path, fewer instructions); general: always the general path (for comparisons). */
enum { COV_HOOKS_AUTO = 0, COV_HOOKS_GENERAL = 1 };
void cov_set_hooks(int hooks);
int cov_fast_hook_active(void); /* 1 if blocks go through a specialised fast hook now */
/* Feed metric's index key of every block hit into map (flat/twolevel/exact update of its width
 * and policy, bigmap.h): with the exact key hash mix64(exact key) (ngram-N: exact ^ exact >> 32),
 * hk32 with afl. The key
 * function is chosen here, once (no per-hit branch). map == NULL switches the sink off. The map
 * must outlive the sink, and must not be re-created or re-attached while it is the sink (the
 * fast hooks keep a copy of the bm_map; call cov_map_sink_set again after changing it). */
void cov_map_sink_set(bm_map *map, int metric);

/* ---- census sink -------------------------------------------------------------------------- */
/* Census tables for the selected metrics in one caller-provided region (MAP_SHARED for the probe
 * so forked children merge into it). Per metric: capacity records (power of two) and an index of
 * 2 * capacity entries. */
typedef struct cov_census cov_census;
size_t cov_census_bytes(uint32_t capacity, uint32_t metric_mask);
/* mem: cov_census_bytes() bytes of zero-filled memory (a fresh anonymous mapping: its pages are
 * only touched as keys arrive). NULL on a bad capacity/mask/size. */
cov_census *cov_census_init(void *mem, size_t bytes, uint32_t capacity, uint32_t metric_mask);
/* Switch the census sink on (census != NULL) or off. Also resets every thread at its next hit. */
void cov_census_sink_set(cov_census *census);
/* Merge the current execution's events into the census (after cov_exec_end). new_keys gets the
 * keys new to the census per metric. Returns -1 if every key fitted, else the id of the first
 * metric whose table was full (the key was dropped and counted). Numbers executions from 1. */
int cov_census_merge(cov_census *c, uint32_t new_keys[COV_N_METRICS]);
/* Append the current execution's per-metric key lists to dir/traces/<metric>.bin (block seq)
 * without changing the census; new_keys gets the keys the census does not hold yet.
 * 0 or an errno value. */
int cov_census_trace(cov_census *c, const char *dir, uint32_t seq,
                     uint32_t new_keys[COV_N_METRICS]);
/* Write dir/census/<metric>.bin for every selected metric, each atomically. 0 or an errno. */
int cov_census_dump(const cov_census *c, const char *dir);
void cov_census_totals(const cov_census *c, uint32_t total[COV_N_METRICS]);
uint32_t cov_census_mask(const cov_census *c);
uint64_t cov_census_execs(const cov_census *c);
/* Discard the current execution's events (a TRACE does this itself). */
void cov_census_discard(void);
/* The event sink alone, for the metrics of metric_mask (0: off): every execution's events are
 * recorded as for a census, without one (the union map below consumes them). */
void cov_event_sink_set(uint32_t metric_mask);
/* Every metric_mask metric's keys of the current execution (after cov_exec_end) into the flat
 * 8-bit map of slots (a power of two) entries, hits added saturating; the events are consumed.
 * The map afl-fuzz sees when it is the probe's engine (AUTOTUNE_AFL_UNION=1). */
void cov_events_to_map(uint8_t *map, uint64_t slots, uint32_t metric_mask);
/* Events dropped because a per-thread event table could not grow (0 in practice). */
uint64_t cov_census_events_dropped(void);

/* ---- driver hooks ------------------------------------------------------------------------- */
typedef int (*cov_test_one_fn)(const uint8_t *data, size_t size);
/* AFL++ fork server (kernels/aflfs.c, driver mode 2). Weak: absent until linked. */
int autotune_afl_forkserver_main(cov_test_one_fn test_one, int argc, char **argv)
    __attribute__((weak));
/* Probe server (kernels/probe_server.c, driver mode 1); returns the exit status. */
int autotune_probe_server_main(cov_test_one_fn test_one);

#ifdef __cplusplus
}
#endif
#endif
