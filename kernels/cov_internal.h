/* cov_internal.h - state shared by cov.c (hooks, ids, map sink) and cov_census.c (census). */
#ifndef AUTOTUNE_COV_INTERNAL_H
#define AUTOTUNE_COV_INTERNAL_H

#include <stdint.h>

#include "cov.h"

#define COV_STACK_MAX 256   /* call-stack frames kept; deeper calls leave the context as is */
#define COV_FNCACHE 512     /* per-thread direct-mapped cache of function ids */
#define COV_EV_INIT 4096u   /* initial events per thread table */
#define COV_EV_MAX (1u << 22)

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
  uint64_t r64[16];  /* doubled ring of mix64(guard), the rolling key's terms */
  cov_evtab *ev;
  struct cov_thread *next_free;
  cov_frame stack[COV_STACK_MAX];
  struct { const void *fn; uint64_t F; } fncache[COV_FNCACHE];
} cov_thread;

/* Census sink configuration read by the hot path. */
extern uint64_t cov_wmask[4];  /* window mask (as words): all ones for the depth the census needs */
extern uint64_t cov_digmask;   /* ~0 when a context metric is selected */
extern uint64_t cov_gen_now(void);
uint32_t cov_seed_epoch_now(void); /* changes whenever the ids change (cov_set_seed) */

/* Thread tables (registry), walked by the census after an execution. */
cov_evtab *cov_evtab_first(void);
void cov_evtab_clear(cov_evtab *et);
void cov_registry_lock(void);
void cov_registry_unlock(void);

#endif
