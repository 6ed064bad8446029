/* cov_internal.h - the runtime's state shared by its files (cov.h is the API):
 *   cov_ids.c     ids, seeds, the modules' registration (guards, inline counters, inline edges),
 *                 build kinds and what each can serve
 *   cov_thread.c  per-thread state, the registry of event tables, function ids, the function hooks
 *   cov_events.c  the census sink's per-thread event tables (census_hit)
 *   cov_sink.c    the sinks' configuration, the map sink and its generated hooks, the block hook,
 *                 executions (begin/end, the inline counters' copy and crash handlers)
 *   cov_config.c  AUTOTUNE_* parsing (cov_config_from_env)
 *   cov_census.c  census tables, merge, traces and files; cov_keys()
 *   cov_keys.h    the metrics (one X-macro list) and their key functions
 * Everything the per-block hooks touch is here as static inline functions or as hidden globals
 * (hidden: addressed PC-relative, as a file's static is; shared TLS is initial-exec and hidden,
 * the model a static TLS variable of the runtime gets), so the split costs no instruction. */
#ifndef AUTOTUNE_COV_INTERNAL_H
#define AUTOTUNE_COV_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "cov.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define COV_HIDDEN __attribute__((visibility("hidden")))
#define COV_TLS __attribute__((tls_model("initial-exec"), visibility("hidden")))

#define COV_STACK_MAX 256   /* call-stack frames kept; deeper calls leave the context as is */
#define COV_FNCACHE 512     /* per-thread direct-mapped cache of function ids */
#define COV_EV_INIT 4096u   /* initial events per thread table */
#define COV_EV_MAX (1u << 22)
#define COV_R_CAP (1u << 24) /* block ids kept in a table; beyond, computed on the fly */

/* One distinct (block window, context) of an execution, with its hit count. */
typedef struct cov_event {
  union {
    uint32_t w[8];   /* cur, p1 .. p7 (masked to the census depth) */
    uint64_t wq[4];  /* the same, as words (w[0] | w[1] << 32, ...) */
  };
  uint64_t dig;      /* digest of cx (0 when no context metric is selected) */
  uint64_t count;
  uint32_t slot;     /* index-table slot, for the reset */
  uint32_t pad;
  uint64_t cx[5];    /* ctx, caller, ctx-2, ctx-4, ctx-8 */
} cov_event;

typedef struct cov_evtab {
  uint64_t gen;            /* execution generation the events belong to */
  uint32_t n, cap;         /* events, capacity */
  uint32_t mask;           /* index entries - 1 (2 * cap entries) */
  uint32_t pad;
  uint32_t *index;         /* 0 empty, else event index + 1 */
  cov_event *ev;
  uint64_t dropped;
  int free;                /* owner thread exited: reusable after its events were merged */
  struct cov_evtab *next;  /* registry */
} cov_evtab;

typedef struct cov_frame {
  const void *fn;
  uint64_t F;       /* function id */
  uint64_t cx[5];   /* the context its blocks see */
  uint64_t dig;
  uint64_t ctxm;    /* map sink: the selected context (the afl key hash uses its low half) */
} cov_frame;

typedef struct cov_thread {
  uint64_t gen;
  uint32_t pending;  /* latest block, not committed yet (0 = none) */
  uint32_t pos;      /* ring position: h[pos] = cur, h[pos + i] = p_i */
  uint32_t eprev;    /* the edge fast hook's previous block (0 = none) */
  uint32_t pad_;
  uint32_t h[16];    /* doubled ring of guard indices */
  uint32_t rr[16];   /* doubled ring of R >> 1 (map sink, afl key hash) */
  uint32_t xr;       /* map sink (afl key hash): XOR of the last N-1 entries of rr */
  uint32_t depth;    /* stack[depth] is the current frame; stack[0] = no function */
  uint32_t overdepth;
  uint32_t seed_epoch; /* cov_seed_epoch the function-id cache belongs to */
  uint64_t ctxm;     /* map sink: stack[depth].ctxm, kept here for the hot path */
  uint64_t rh;       /* map sink (exact key hash, ngram-N): the rolling exact key of the window */
  uint64_t r64[8];   /* ring of mix64(guard), the rolling key's terms (of the last 8 blocks) */
  cov_evtab *ev;
  struct cov_thread *next_free;
  cov_frame stack[COV_STACK_MAX];
  struct { const void *fn; uint64_t F; } fncache[COV_FNCACHE];
} cov_thread;

/* ---- ids (cov_ids.c) ------------------------------------------------------------------------ */
extern pthread_mutex_t cov_init_lock COV_HIDDEN; /* guard and counter registration, id tables */
extern uint64_t cov_seed_v COV_HIDDEN;
extern uint32_t cov_seed_epoch COV_HIDDEN; /* changes whenever the ids change (cov_set_seed) */
extern uint32_t *cov_R COV_HIDDEN;  /* COV_R_CAP entries, MAP_NORESERVE; R[0] = 0 */
extern uint32_t cov_R_cap COV_HIDDEN;
extern uint64_t *cov_T COV_HIDDEN;  /* COV_R_CAP entries, MAP_NORESERVE: T[g] = mix64(g), the ngram terms */
extern uint32_t cov_T_cap COV_HIDDEN;
extern int cov_tables_full COV_HIDDEN; /* a guard index reached the end of cov_R or cov_T */
/* The guard metric's map holds this many slots (0: no guard map): a guard registered later (a
 * module loaded after the map was made) is disabled (0), so it never writes past the map. */
extern uint32_t cov_guard_limit COV_HIDDEN;
/* The execution generation: a thread whose gen differs starts afresh at its next hit. */
extern uint64_t cov_gen COV_HIDDEN;

static inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline uint64_t splitmix64(uint64_t x) { return mix64(x + 0x9e3779b97f4a7c15ull); }

/* R[g] (inlined whole, so a hook that reads it makes no call and saves no register) */
static inline uint32_t rid(uint32_t g) {
  if (LIKELY(g < cov_R_cap)) return cov_R[g];
  return g ? (uint32_t)splitmix64(cov_seed_v ^ g) : 0;
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

static inline uint64_t cov_gen_now(void) { return __atomic_load_n(&cov_gen, __ATOMIC_ACQUIRE); }
static inline void cov_gen_bump(void) { __atomic_fetch_add(&cov_gen, 1, __ATOMIC_ACQ_REL); }
static inline uint32_t cov_seed_epoch_now(void) { return __atomic_load_n(&cov_seed_epoch, __ATOMIC_ACQUIRE); }

/* The inline 8-bit counters of a guard build, in registration order. */
#define COV_CNT_REGIONS 256
typedef struct cov_cnt_region {
  uint8_t *start;
  size_t n;
} cov_cnt_region;
extern cov_cnt_region cov_cnt[COV_CNT_REGIONS] COV_HIDDEN;
extern uint32_t cov_ncnt_regions COV_HIDDEN;
extern uint32_t cov_ncounters COV_HIDDEN;
extern uint8_t *cov_cnt_page COV_HIDDEN; /* guard_counters.ld's page of the counters (cov_ids.c), or NULL */
extern size_t cov_cnt_span COV_HIDDEN;

/* The inline edges of an edge or ngram build (kernels/plugin/autotune_edges.cpp). Default
 * visibility: instrumented shared objects refer to them. */
#define COV_NGRAM_HIST_WORDS 20 /* X, padding, a window of up to 16 words in 16-byte aligned vectors */
extern __thread uint32_t autotune_edge_prev __attribute__((tls_model("initial-exec")));
extern __thread uint32_t autotune_ngram_hist[COV_NGRAM_HIST_WORDS]
    __attribute__((tls_model("initial-exec"), aligned(16)));
extern int cov_edge_on COV_HIDDEN;           /* the edge area points at the map sink */
extern uint32_t cov_ngram_n_v COV_HIDDEN;    /* the N of an ngram build's modules (0: none) */
#define COV_CTX_HIST_WORDS 12 /* X, Y, padding, a window of up to 7 callers in 16-byte aligned vectors */
extern __thread uint32_t autotune_ctx_hist[COV_CTX_HIST_WORDS] __attribute__((tls_model("initial-exec"), aligned(16)));
extern uint32_t cov_ctx_k_v COV_HIDDEN;      /* K + 1 of a ctx build's modules (0: none) */
/* Point the edge area at map (mask: its slots - 1), or at the dummy (map NULL). */
void cov_edge_area_set(uint8_t *map, uint32_t mask) COV_HIDDEN;
/* An indexed build: point the area at the two-level map m (its counters and index), or at the dummy (NULL). */
void cov_edge_index_set(bm_map *m) COV_HIDDEN;
/* Whether the inline modules count through the two-level map's index (AUTOTUNE_CC_INDEX=1). */
int cov_build_indexed(void) COV_HIDDEN;
/* The metric an ngram build counts: ngram-N of its modules' N, -1 if none. */
int cov_ngram_build_metric(void) COV_HIDDEN;

/* The map sink's key functions, by their line in COV_KEY_FUNCS: COV_KEYFN_afl, COV_KEYFN_xedge, ... */
enum {
#define COV_KEYFN_INDEX(KEY, HASHED, FAST) COV_KEYFN_##KEY,
  COV_KEY_FUNCS(COV_KEYFN_INDEX)
#undef COV_KEYFN_INDEX
  COV_N_KEYFNS
};
/* What cov_keys.h's tables say of a metric (filled from COV_METRICS in cov_ids.c). */
typedef struct cov_metric_info {
  int key;       /* its key function (COV_KEYFN_*) under the exact key hash */
  uint32_t win;  /* previous blocks its key reads */
  int cx;        /* its call context (an index into cov_frame.cx), -1: none */
} cov_metric_info;
extern const cov_metric_info cov_metric_infos[COV_N_METRICS] COV_HIDDEN;
/* Whether metric m (any int) is keyed by the call stack: it needs the function hooks of a full build. */
static inline int cov_metric_needs_stack(int m) { return m >= 0 && m < COV_N_METRICS && cov_metric_infos[m].cx >= 0; }

/* ---- threads (cov_thread.c) ----------------------------------------------------------------- */
/* The calling thread's state; a thread without state points at a shared one whose gen (0) never
 * matches cov_gen (>= 1): the hot path's generation test also catches a missing thread. */
extern __thread cov_thread *cov_tls COV_TLS;
/* First hit of a thread, or the first hit of a new execution: (re)initialise; NULL if it cannot. */
cov_thread *cov_thread_slow(void) COV_HIDDEN __attribute__((noinline));
static inline cov_thread *cov_self(void) {
  cov_thread *t = cov_tls;
  if (LIKELY(t->gen == __atomic_load_n(&cov_gen, __ATOMIC_RELAXED))) return t;
  return cov_thread_slow();
}
void *cov_map_anon(size_t bytes) COV_HIDDEN; /* private anonymous MAP_NORESERVE memory, or NULL */

/* Thread tables (registry), walked by the census after an execution. */
cov_evtab *cov_evtab_first(void);
void cov_evtab_clear(cov_evtab *et);
void cov_registry_lock(void);
void cov_registry_unlock(void);

/* ---- census sink: event tables (cov_events.c) ----------------------------------------------- */
/* Census sink configuration read by the hot path. */
extern uint64_t cov_wmask[4];  /* window mask (as words): all ones for the depth the census needs */
extern uint64_t cov_digmask;   /* ~0 when a context metric is selected */
/* Record block g, committed at ring position pos, in the thread's event table. */
void census_hit(cov_thread *t, uint32_t g, uint32_t pos) COV_HIDDEN __attribute__((noinline));

/* ---- sinks (cov_sink.c) --------------------------------------------------------------------- */
extern int cov_census_on COV_HIDDEN;
extern int cov_sinks COV_HIDDEN;      /* 0 none, 1 census only, 2 map only, 3 both */
extern int cov_ctx_on COV_HIDDEN;     /* a sink needs the call stack: else the function hooks return at once */
extern int cov_map_ctxsel COV_HIDDEN; /* the map sink's context (an index into cov_frame.cx), -1: none */
extern uint32_t cov_map_win COV_HIDDEN;  /* N - 1 previous blocks in the key */
extern uint32_t cov_map_back COV_HIDDEN; /* N = cov_map_win + 1: how far back the leaving term is */
extern uint64_t cov_map_pn COV_HIDDEN;   /* COV_NGRAM_P^N for the map sink's ngram-N rolling key */
typedef void (*map_hit_fn)(cov_thread *t, uint32_t g, uint32_t pos);
extern map_hit_fn cov_map_hit COV_HIDDEN; /* the map sink's specialised function */
void both_hit(cov_thread *t, uint32_t g, uint32_t pos) COV_HIDDEN __attribute__((noinline));
/* Choose the block hook for the sinks as they are now (called when they or the id tables change). */
void hook_select(void) COV_HIDDEN;

static inline void map_hit(cov_thread *t, uint32_t g, uint32_t pos) { cov_map_hit(t, g, pos); }

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

/* Commit the block held back, if it belongs to this execution (thread exit, execution end). */
static inline void commit_pending(cov_thread *t) {
  if (t->pending && t->gen == cov_gen_now()) {
    uint32_t p = t->pending;
    t->pending = 0;
    commit(t, p);
  }
}

#define AUTOTUNE_COV_INTERNAL_READY
#include "cov_keys.h" /* the key functions, now that the state they read is declared */

#endif
