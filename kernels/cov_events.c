/* cov_events.c - the census sink's per-thread event tables: each distinct (block window, context)
 * of an execution with its hit count, merged into the census after the execution (cov_census.c),
 * and the keys of an event (cov_keys, from cov_keys.h's list).
 * See cov.h for the definitions; docs/DESIGN.md "Keys, ids and metrics". */
#include <string.h>
#include <sys/mman.h>

#include "cov.h"
#include "cov_internal.h"

uint64_t cov_wmask[4];
uint64_t cov_digmask;

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
  uint32_t *nidx = cov_map_anon((size_t)2 * ncap * sizeof(uint32_t));
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
void census_hit(cov_thread *t, uint32_t g, uint32_t pos) {
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

/* ---- keys of an event: every metric's (cov_keys.h) ------------------------------------------ */
void cov_keys(const uint32_t w[8], const uint64_t cx[5], uint64_t exact[COV_N_METRICS],
              uint32_t hk32[COV_N_METRICS]) {
  cov_keyin k;
  cov_keyin_init(&k, w, cx);
#define COV_M_CKEY(ID, NAME, KEY, WIN, CX) ckey_##KEY(&k, WIN, CX, &exact[COV_M_##ID], &hk32[COV_M_##ID]);
  COV_METRICS(COV_M_CKEY)
#undef COV_M_CKEY
}
