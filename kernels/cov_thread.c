/* cov_thread.c - per-thread state (block history, call stack, event table), the registry of the
 * threads' event tables, function ids and the function entry/exit hooks (call context).
 * See cov.h for the definitions; docs/DESIGN.md "Keys, ids and metrics". */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "cov.h"
#include "cov_internal.h"

/* ---- threads ------------------------------------------------------------------------------ */
/* A thread without state points at cov_no_thread, whose gen (0) never matches cov_gen (>= 1):
 * the hot path's generation test also catches a missing thread. Nothing writes to it. */
static cov_thread cov_no_thread;
__thread cov_thread *cov_tls COV_TLS = &cov_no_thread;
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

void *cov_map_anon(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

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
  cov_evtab *et = cov_map_anon(sizeof *et);
  if (!et) return NULL;
  et->cap = COV_EV_INIT;
  et->mask = 2 * COV_EV_INIT - 1;
  et->index = cov_map_anon((size_t)2 * COV_EV_INIT * sizeof(uint32_t));
  et->ev = cov_map_anon((size_t)COV_EV_INIT * sizeof(cov_event));
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
  if (!t) t = cov_map_anon(sizeof *t);
  if (t) t->next_free = NULL;
  return t;
}

/* First hit of a thread, or the first hit of a new execution: (re)initialise. */
cov_thread *cov_thread_slow(void) {
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


/* ---- function ids and the function hooks ---------------------------------------------------- */
static uint64_t fid_slow(const void *fn) {
  Dl_info info;
  uintptr_t off = (uintptr_t)fn;
  if (dladdr(fn, &info) && info.dli_fbase) off -= (uintptr_t)info.dli_fbase;
  return splitmix64(cov_seed_v ^ (uint64_t)off);
}
uint64_t cov_function_id(const void *fn) { return fid_slow(fn); }

static inline uint64_t fid(cov_thread *t, const void *fn) {
  uint32_t i = (uint32_t)(((uintptr_t)fn * 0x9e3779b97f4a7c15ull) >> 40) & (COV_FNCACHE - 1);
  if (LIKELY(t->fncache[i].fn == fn)) return t->fncache[i].F;
  uint64_t F = fid_slow(fn);
  t->fncache[i].fn = fn;
  t->fncache[i].F = F;
  return F;
}

/* The order clang puts a function's entry hook and its entry block's guard in (cov.h "Ordering"):
 * autotune cc measures it per clang and links --defsym autotune_hook_order=autotune_order_<order>
 * (autotune/llvm.py hook_order); absent, the guard comes first (clang 14). */
__attribute__((used)) const int autotune_order_guard_first = 0;
__attribute__((used)) const int autotune_order_enter_first = 1;
extern const int autotune_hook_order __attribute__((weak));

/* The function hooks' work, out of line so that the no-context early return needs no spills. */
static __attribute__((noinline)) void func_enter(void *fn) {
  cov_thread *t = cov_self();
  if (UNLIKELY(!t)) return;
  if (&autotune_hook_order && autotune_hook_order) { /* enter first: the pending block is the caller's */
    uint32_t p = t->pending;
    if (p) {
      t->pending = 0;
      commit(t, p);
    }
  }
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
