/* cov_keys.h - the coverage metrics, one X-macro list, and their key functions (docs/DESIGN.md
 * "Keys, ids and metrics", "The map sink's index key").
 *
 * Adding a metric: a line in COV_METRICS (at the end: the line's index is the metric's id, which
 * census files and the probe protocol carry), and, when its key is new, the key's functions
 * below and a line in COV_KEY_FUNCS. cov.h's enum, COV_N_METRICS, cov_metric_names[], cov_keys()
 * and the map sink's tables are generated from these lists. The Python registry is
 * autotune/vocabulary.py METRIC_TABLE (tests/test_metrics.py checks that the two agree).
 *
 * The first part (the lists) is public: cov.h includes it. The second (the key functions) needs
 * the runtime's thread state and is compiled where cov_internal.h includes this file again.
 *
 * Keys of a block hit cur with previous blocks p1 (latest) .. p7, contexts cX (64-bit XORs):
 *   metric      hashed hk32                                     exact 64-bit key
 *   edge        (R[p1] >> 1) ^ R[cur]                            (u64)p1 << 32 | cur
 *   ngram-N     R[cur] ^ XOR_{i=1..N-1} (R[p_i] >> 1)            sum_{i<N} mix64(p_i) P^i mod 2^64
 *                                                                (p_0 = cur, P = COV_NGRAM_P)
 *   ctx-like    (R[p1] >> 1) ^ R[cur] ^ (u32)cX                  mix64(mix64(edge_exact) ^ cX)
 *   guard       cur (the slot: no hash; slot 0 unused)           cur (the guard index g)
 * mix64 is splitmix64's finaliser (no increment); splitmix64(x) = mix64(x + 0x9e3779b97f4a7c15).
 */
#ifndef AUTOTUNE_COV_KEYS_H
#define AUTOTUNE_COV_KEYS_H

/* X(ID, NAME, KEY, WIN, CX), in census-id order:
 *   ID    the enum name COV_M_<ID>
 *   NAME  AUTOTUNE_METRIC's name, the census file's (autotune/vocabulary.py)
 *   KEY   its key: the map sink's key_<KEY> under AUTOTUNE_KEY_HASH=exact (key_afl under afl, for
 *         the hashed keys of COV_KEY_FUNCS) and the census's ckey_<KEY>
 *   WIN   the previous blocks its key reads (N - 1 of an N-block window; the census keeps WIN + 1)
 *   CX    the call context it is keyed by, an index into a frame's cx[] (ctx, caller, ctx-2,
 *         ctx-4, ctx-8), or -1: none (a context needs the function hooks of a full build)
 * ngram-N has id N - 1 (the runtime and autotune cc rely on it; cov_ids.c asserts it). */
#define COV_METRICS(X)                        \
  X(EDGE, "edge", xedge, 1, -1)               \
  X(NGRAM2, "ngram-2", xngram, 1, -1)         \
  X(NGRAM3, "ngram-3", xngram, 2, -1)         \
  X(NGRAM4, "ngram-4", xngram, 3, -1)         \
  X(NGRAM5, "ngram-5", xngram, 4, -1)         \
  X(NGRAM6, "ngram-6", xngram, 5, -1)         \
  X(NGRAM7, "ngram-7", xngram, 6, -1)         \
  X(NGRAM8, "ngram-8", xngram, 7, -1)         \
  X(CTX, "ctx", xctx, 1, 0)                   \
  X(CALLER, "caller", xctx, 1, 1)             \
  X(CTX2, "ctx-2", xctx, 1, 2)                \
  X(CTX4, "ctx-4", xctx, 1, 3)                \
  X(CTX8, "ctx-8", xctx, 1, 4)                \
  X(GUARD, "guard", guard, 0, -1) /* the guard (block) itself: AFL++'s PCGUARD, slot g */

/* The map sink's key functions, Y(KEY, HASHED, FAST):
 *   HASHED  1: hashed into a map of any layout, and AUTOTUNE_KEY_HASH=afl replaces it by key_afl;
 *           0: the key is the slot (flat maps of 8..64 bits only, no key hash)
 *   FAST    the shape of its fast hook (cov_sink.c): RING (the history ring advances, then
 *           key_<KEY>(t, g, pos, 1)), PREV (only the previous block, kept in t->eprev:
 *           key_<KEY>_prev(t, g)), SLOT (no thread state: key_<KEY>(NULL, g, 0, 1) of the guard's
 *           value as it is), NONE (needs the call stack: the general path only)
 * afl is AFL++'s hk32, the key of every hashed metric under AUTOTUNE_KEY_HASH=afl. */
#define COV_KEY_FUNCS(Y) \
  Y(afl, 1, RING)        \
  Y(xedge, 1, PREV)      \
  Y(xngram, 1, RING)     \
  Y(xctx, 1, NONE)       \
  Y(guard, 0, SLOT)

#endif

#if defined(AUTOTUNE_COV_INTERNAL_READY) && !defined(AUTOTUNE_COV_KEYS_FUNCTIONS)
#define AUTOTUNE_COV_KEYS_FUNCTIONS
/* ---- the map sink's keys: one block hit g, committed at ring position pos -------------------
 * Inlined into the map sink's specialised functions (cov_sink.c): with fast = 1 the id tables
 * are read unchecked (the fast hooks). The map sink's state they read: cov_map_win (the WIN of
 * the metric), cov_map_back, cov_map_pn (cov_internal.h).
 *   afl     AFL++'s hk32, incrementally: R[cur] ^ xr ^ low half of the context, where xr is the
 *           XOR of the last N-1 (R >> 1) kept in a ring.
 *   xedge   mix64(exact edge key)                          1 mix64 round
 *   xngram  fold(sum_i mix64(p_i) P^i), p_0 = cur, rolled per hit   1 mix64 (a table), 2 multiplies;
 *           fold(x) = x ^ (x >> 32): the polynomial is uniform already
 *   xctx    mix64(mix64(mix64(exact edge key) ^ cX))       3 rounds
 *   guard   the guard's index g itself (no hash)                                                */
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
/* the same key from the previous block kept in its own field (the fast hook: no ring) */
static inline __attribute__((always_inline)) uint64_t key_xedge_prev(cov_thread *t, uint32_t g) {
  uint64_t key = mix64(((uint64_t)t->eprev << 32) | g);
  t->eprev = g;
  return key;
}
/* ngram-N: the exact key is a polynomial over the window's terms mix64(guard) (DESIGN.md "Keys,
 * ids and metrics"), so it rolls: key' = P key + term(cur) - P^N term(leaving). Two multiplies
 * per hit, the terms mix64(guard) from the per-guard table, and the fold as the index key; at
 * the start of an execution the ring and the key are zero, which is the window padded with
 * guard 0 (mix64(0) = 0), as the census sees it. */
static inline __attribute__((always_inline)) uint64_t key_xngram(cov_thread *t, uint32_t g,
                                                                  uint32_t pos, int fast) {
  uint64_t r = fast ? term_fast(g) : term(g);
  uint64_t out = t->r64[(pos + cov_map_back) & 7]; /* N <= 8 steps back: not overwritten yet */
  uint64_t h = t->rh * COV_NGRAM_P + r - out * cov_map_pn;
  t->rh = h;
  t->r64[pos] = r; /* a ring of 8 (one store fewer than a doubled one) */
  return h ^ (h >> 32); /* the ngram index key: fold (DESIGN.md "The map sink's index key") */
}
static inline __attribute__((always_inline)) uint64_t key_xctx(cov_thread *t, uint32_t g,
                                                                uint32_t pos, int fast) {
  (void)fast;
  return mix64(mix64(mix64(((uint64_t)t->h[pos + 1] << 32) | g) ^ t->ctxm));
}
/* guard: the slot is the guard's own index g (no hash; AUTOTUNE_KEY_HASH does not apply); slot 0
 * stays free, as in AFL++'s PCGUARD (afl-showmap reads map[0] == 1 as a "target ran" mark and
 * clears it) */
static inline __attribute__((always_inline)) uint64_t key_guard(cov_thread *t, uint32_t g,
                                                                 uint32_t pos, int fast) {
  (void)t, (void)pos, (void)fast;
  return g;
}

/* ---- the census's keys: every metric's exact key and hk32 of one event ----------------------
 * An event is a block window w = {cur, p1, .., p7} (guard indices, 0 = none) and the contexts
 * cx = {ctx, caller, ctx-2, ctx-4, ctx-8}; cov_keys() (cov_events.c) calls ckey_<KEY> of every
 * metric, in id order, with its WIN and CX. The terms several metrics share are computed once per
 * event: the edge's, and the ngram keys' running sums, which extend the window one block at a
 * time (ngram-2 .. ngram-8 in a row cost one step each). */
typedef struct cov_keyin {
  const uint32_t *w;
  const uint64_t *cx;
  uint32_t r0;        /* R[cur] */
  uint32_t edge_hk;   /* (R[p1] >> 1) ^ R[cur] */
  uint64_t edge_ex;   /* (u64)p1 << 32 | cur */
  uint64_t edge_mix;  /* mix64(edge_ex) */
  int nwin;           /* the window the running ngram terms cover: p_1 .. p_nwin */
  uint32_t nx;        /* XOR_{j=1..nwin} (R[p_j] >> 1) */
  uint64_t nacc, npw; /* sum_{j<=nwin} mix64(p_j) P^j mod 2^64 (p_0 = cur), P^nwin */
} cov_keyin;

static inline void cov_keyin_init(cov_keyin *k, const uint32_t w[8], const uint64_t cx[5]) {
  k->w = w;
  k->cx = cx;
  k->r0 = rid(w[0]);
  k->edge_hk = (rid(w[1]) >> 1) ^ k->r0;
  k->edge_ex = ((uint64_t)w[1] << 32) | w[0];
  k->edge_mix = mix64(k->edge_ex);
  k->nwin = 0;
  k->nx = 0;
  k->nacc = mix64(w[0]);
  k->npw = 1;
}

static inline void ckey_xedge(cov_keyin *k, int win, int cx, uint64_t *exact, uint32_t *hk32) {
  (void)win, (void)cx;
  *hk32 = k->edge_hk;
  *exact = k->edge_ex;
}
static inline void ckey_xngram(cov_keyin *k, int win, int cx, uint64_t *exact, uint32_t *hk32) {
  (void)cx;
  if (win < k->nwin) { /* a shorter window than the last: start again */
    k->nwin = 0;
    k->nx = 0;
    k->nacc = mix64(k->w[0]);
    k->npw = 1;
  }
  while (k->nwin < win) {
    int i = ++k->nwin;
    k->nx ^= rid(k->w[i]) >> 1;
    k->npw *= COV_NGRAM_P;
    k->nacc += mix64(k->w[i]) * k->npw;
  }
  *hk32 = k->r0 ^ k->nx;
  *exact = k->nacc;
}
static inline void ckey_xctx(cov_keyin *k, int win, int cx, uint64_t *exact, uint32_t *hk32) {
  (void)win;
  *hk32 = k->edge_hk ^ (uint32_t)k->cx[cx];
  *exact = mix64(k->edge_mix ^ k->cx[cx]);
}
static inline void ckey_guard(cov_keyin *k, int win, int cx, uint64_t *exact, uint32_t *hk32) {
  (void)win, (void)cx;
  *hk32 = k->w[0]; /* the slot itself */
  *exact = k->w[0];
}
#endif
