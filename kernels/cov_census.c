/* cov_census.c - census tables (per metric: exact key -> hk32, inputs, hits, first execution),
 * the merge of an execution's events, trace blocks, and the census files of docs/RUNTIME.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cov.h"
#include "cov_internal.h"

#define CENSUS_MAGIC 0x314c425443544121ull /* in-memory header, "!ATCTBL1" */

/* A key's record as the census file keeps it (cov_census_dump writes these, 40 bytes each). */
typedef struct census_rec {
  uint64_t key;
  uint32_t hk32;
  uint32_t n_inputs;
  uint64_t max_hits;
  uint64_t total_hits;
  uint64_t first_exec;
} census_rec;

/* ... and in memory, with the execution being merged */
typedef struct cov_crec {
  census_rec kept;
  uint64_t cur_exec; /* execution being merged, and its hits so far */
  uint64_t cur_hits;
} cov_crec;

typedef struct cov_ctab {
  uint64_t index_off; /* from the census base: uint32 index[2 * capacity] (0 empty, rec + 1) */
  uint64_t rec_off;   /* cov_crec rec[capacity] */
  uint32_t n;
  uint32_t full;
  uint64_t dropped;   /* key occurrences (per execution and event) that did not fit */
} cov_ctab;

struct cov_census {
  uint64_t magic;
  uint32_t capacity;
  uint32_t mask;      /* selected metrics */
  uint32_t bits;      /* log2(2 * capacity) */
  uint32_t pad;
  uint64_t execs;     /* merged executions */
  uint64_t bytes;
  cov_ctab t[COV_N_METRICS];
};

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

size_t cov_census_bytes(uint32_t capacity, uint32_t metric_mask) {
  size_t per = align64((size_t)2 * capacity * sizeof(uint32_t)) +
               align64((size_t)capacity * sizeof(cov_crec));
  size_t n = 0;
  for (int m = 0; m < COV_N_METRICS; m++)
    if (metric_mask & (1u << m)) n++;
  return align64(sizeof(cov_census)) + n * per;
}

cov_census *cov_census_init(void *mem, size_t bytes, uint32_t capacity, uint32_t metric_mask) {
  metric_mask &= COV_ALL_METRICS;
  if (!mem || !capacity || (capacity & (capacity - 1)) || capacity > (1u << 30) || !metric_mask ||
      bytes < cov_census_bytes(capacity, metric_mask))
    return NULL;
  cov_census *c = mem;
  memset(c, 0, sizeof *c);
  c->magic = CENSUS_MAGIC;
  c->capacity = capacity;
  c->mask = metric_mask;
  c->bits = (uint32_t)__builtin_ctzll((uint64_t)capacity * 2);
  c->bytes = bytes;
  size_t off = align64(sizeof(cov_census));
  for (int m = 0; m < COV_N_METRICS; m++) {
    if (!(metric_mask & (1u << m))) continue;
    c->t[m].index_off = off;
    off += align64((size_t)2 * capacity * sizeof(uint32_t));
    c->t[m].rec_off = off;
    off += align64((size_t)capacity * sizeof(cov_crec));
    /* the index tables must be zero: fresh anonymous memory is, and stays untouched (no RSS)
     * until keys arrive */
  }
  return c;
}

uint32_t cov_census_mask(const cov_census *c) { return c ? c->mask : 0; }
uint64_t cov_census_execs(const cov_census *c) { return c->execs; }

void cov_census_totals(const cov_census *c, uint32_t total[COV_N_METRICS]) {
  for (int m = 0; m < COV_N_METRICS; m++) total[m] = c ? c->t[m].n : 0;
}

static inline uint32_t *cidx(const cov_census *c, int m) {
  return (uint32_t *)((char *)c + c->t[m].index_off);
}
static inline cov_crec *crec(const cov_census *c, int m) {
  return (cov_crec *)((char *)c + c->t[m].rec_off);
}
static inline uint64_t chome(const cov_census *c, uint64_t key) {
  return (key * 0x9e3779b97f4a7c15ull) >> (64 - c->bits);
}

/* The record of key in metric m, or NULL. */
static cov_crec *census_find(const cov_census *c, int m, uint64_t key) {
  uint32_t *idx = cidx(c, m);
  uint64_t mask = ((uint64_t)1 << c->bits) - 1;
  for (uint64_t s = chome(c, key);; s = (s + 1) & mask) {
    uint32_t e = idx[s];
    if (!e) return NULL;
    cov_crec *r = &crec(c, m)[e - 1];
    if (r->kept.key == key) return r;
  }
}

static inline void crec_bump(cov_crec *r, uint64_t count, uint64_t exec) {
  if (r->cur_exec != exec) {
    r->cur_exec = exec;
    r->cur_hits = 0;
    r->kept.n_inputs++;
  }
  r->cur_hits += count;
  r->kept.total_hits += count;
  if (r->cur_hits > r->kept.max_hits) r->kept.max_hits = r->cur_hits;
}

/* Add count hits of key to metric m: the record's index, or -1 when the table was full (the key
 * was dropped and counted). *is_new says whether the key is new to the census. */
static int64_t census_add(cov_census *c, int m, uint64_t key, uint32_t hk, uint64_t count,
                          uint64_t exec, int *is_new) {
  uint32_t *idx = cidx(c, m);
  cov_crec *rec = crec(c, m);
  uint64_t mask = ((uint64_t)1 << c->bits) - 1;
  uint64_t s = chome(c, key);
  *is_new = 0;
  for (;; s = (s + 1) & mask) {
    uint32_t e = idx[s];
    if (!e) break;
    cov_crec *r = &rec[e - 1];
    if (r->kept.key == key) {
      crec_bump(r, count, exec);
      return (int64_t)e - 1;
    }
  }
  cov_ctab *t = &c->t[m];
  if (t->n >= c->capacity) {
    t->dropped++;
    t->full = 1;
    return -1;
  }
  cov_crec *r = &rec[t->n];
  r->kept.key = key;
  r->kept.hk32 = hk;
  r->kept.n_inputs = 1;
  r->kept.max_hits = r->kept.total_hits = r->cur_hits = count;
  r->kept.first_exec = r->cur_exec = exec;
  idx[s] = ++t->n;
  *is_new = 1;
  return (int64_t)t->n - 1;
}

/* ---- event caches: an event (its window and context digest) -> what it maps to -------------
 * Open addressing over an index of 2 * cap slots (0 empty, else entry + 1) and the entries in
 * insertion order, each starting with its key; two users: the census merge (records) and the
 * union map (slots). Process-private memory: a re-forked child starts empty. */
typedef struct evc_key {
  uint32_t w[8];
  uint64_t dig;
} evc_key;

typedef struct evc_table {
  uint32_t n, cap; /* entries, capacity (index: 2 * cap) */
  uint32_t *index;
  void *ent; /* cap entries of the user's type, each starting with its evc_key */
} evc_table;

static inline uint32_t ec_hash(const uint32_t *w, uint64_t dig) {
  uint64_t a, b, c2, d;
  memcpy(&a, w, 8);
  memcpy(&b, w + 2, 8);
  memcpy(&c2, w + 4, 8);
  memcpy(&d, w + 6, 8);
  uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^
               (c2 * 0x165667b19e3779f9ull) ^ (d * 0xd6e8feb86659fd93ull) ^ dig;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  return (uint32_t)(h >> 32);
}

static inline evc_key *evc_at(const evc_table *t, size_t ent_bytes, uint32_t i) {
  return (evc_key *)(void *)((char *)t->ent + (size_t)i * ent_bytes);
}

static void evc_free(evc_table *t) {
  free(t->index);
  free(t->ent);
  memset(t, 0, sizeof *t);
}

/* Doubles the capacity (4096 entries at first, at most max); -1 when full or out of memory. */
static int evc_grow(evc_table *t, size_t ent_bytes, uint32_t max) {
  uint32_t ncap = t->cap ? t->cap * 2 : 4096;
  if (ncap > max) return -1;
  uint32_t *nidx = calloc((size_t)2 * ncap, sizeof *nidx);
  void *nent = realloc(t->ent, (size_t)ncap * ent_bytes);
  if (!nidx || !nent) {
    free(nidx);
    if (nent) t->ent = nent;
    return -1;
  }
  t->ent = nent;
  free(t->index);
  t->index = nidx;
  t->cap = ncap;
  uint32_t mask = 2 * ncap - 1;
  for (uint32_t i = 0; i < t->n; i++) {
    const evc_key *k = evc_at(t, ent_bytes, i);
    uint32_t s = ec_hash(k->w, k->dig) & mask;
    while (nidx[s]) s = (s + 1) & mask;
    nidx[s] = i + 1;
  }
  return 0;
}

/* The cached entry of an event, or NULL (then *slot is where it would go). */
static inline void *evc_find(const evc_table *t, size_t ent_bytes, const cov_event *e, uint32_t *slot) {
  if (!t->cap) return NULL;
  uint32_t mask = 2 * t->cap - 1;
  for (uint32_t s = ec_hash(e->w, e->dig) & mask;; s = (s + 1) & mask) {
    uint32_t i = t->index[s];
    if (!i) {
      *slot = s;
      return NULL;
    }
    evc_key *k = evc_at(t, ent_bytes, i - 1);
    if (k->dig == e->dig && memcmp(k->w, e->w, sizeof k->w) == 0) return k;
  }
}

/* A new entry for an event evc_find did not find (slot: the one it gave), its key filled in; the
 * caller fills the rest. NULL when the table cannot grow (the event stays uncached). */
static void *evc_add(evc_table *t, size_t ent_bytes, uint32_t max, const cov_event *e, uint32_t slot) {
  if (t->n == t->cap) {
    if (evc_grow(t, ent_bytes, max) != 0) return NULL;
    uint32_t mask = 2 * t->cap - 1;
    slot = ec_hash(e->w, e->dig) & mask;
    while (t->index[slot]) slot = (slot + 1) & mask;
  }
  evc_key *k = evc_at(t, ent_bytes, t->n);
  memcpy(k->w, e->w, sizeof k->w);
  k->dig = e->dig;
  t->index[slot] = ++t->n;
  return k;
}

/* The census merge's cache: event -> its census records, across executions. Most events of an
 * execution were seen before; their 13 keys and census slots are remembered here, so the merge
 * skips the key computation and the census index probes (the index tables are the large,
 * cache-missing part). */
typedef struct ecache_ent {
  evc_key key;
  uint32_t rec[COV_N_METRICS]; /* record index per selected metric */
  uint32_t pad;
} ecache_ent;

static struct {
  const cov_census *census;
  uint32_t epoch;
  evc_table t;
} ec;

#define EC_MAX (1u << 22)

static void ec_reset(const cov_census *c) {
  evc_free(&ec.t);
  memset(&ec, 0, sizeof ec);
  ec.census = c;
  ec.epoch = cov_seed_epoch_now();
}

int cov_census_merge(cov_census *c, uint32_t new_keys[COV_N_METRICS]) {
  memset(new_keys, 0, COV_N_METRICS * sizeof(uint32_t));
  int full = -1;
  uint64_t exec = ++c->execs;
  uint64_t gen = cov_gen_now();
  uint64_t ex[COV_N_METRICS];
  uint32_t hk[COV_N_METRICS], rec[COV_N_METRICS];
  int metrics[COV_N_METRICS], nm = 0;
  for (int m = 0; m < COV_N_METRICS; m++)
    if (c->mask & (1u << m)) metrics[nm++] = m;
  if (ec.census != c || ec.epoch != cov_seed_epoch_now()) ec_reset(c);
  cov_registry_lock();
  for (cov_evtab *et = cov_evtab_first(); et; et = et->next) {
    if (et->gen != gen || !et->n) continue;
    for (uint32_t i = 0; i < et->n; i++) {
      const cov_event *e = &et->ev[i];
      uint32_t slot = 0;
      const ecache_ent *x = evc_find(&ec.t, sizeof *x, e, &slot);
      if (x) {
        for (int j = 0; j < nm; j++) crec_bump(&crec(c, metrics[j])[x->rec[metrics[j]]], e->count, exec);
        continue;
      }
      cov_keys(e->w, e->cx, ex, hk);
      int cacheable = 1;
      memset(rec, 0, sizeof rec);
      for (int j = 0; j < nm; j++) {
        int m = metrics[j], is_new;
        int64_t r = census_add(c, m, ex[m], hk[m], e->count, exec, &is_new);
        if (r < 0) {
          cacheable = 0;
          if (full < 0) full = m;
        } else {
          rec[m] = (uint32_t)r;
          new_keys[m] += (uint32_t)is_new;
        }
      }
      ecache_ent *y = cacheable ? evc_add(&ec.t, sizeof *y, EC_MAX, e, slot) : NULL;
      if (y) memcpy(y->rec, rec, sizeof y->rec); /* else not cached: merged the slow way next time too */
    }
    cov_evtab_clear(et);
  }
  cov_registry_unlock();
  return full;
}

void cov_census_discard(void) {
  uint64_t gen = cov_gen_now();
  cov_registry_lock();
  for (cov_evtab *et = cov_evtab_first(); et; et = et->next)
    if (et->gen == gen) cov_evtab_clear(et);
  cov_registry_unlock();
}

/* ---- files -------------------------------------------------------------------------------- */
static int mkdir_p(const char *dir, const char *sub, char *out, size_t outlen) {
  if ((size_t)snprintf(out, outlen, "%s/%s", dir, sub) >= outlen) return ENAMETOOLONG;
  if (mkdir(out, 0755) != 0 && errno != EEXIST) return errno;
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

typedef struct __attribute__((packed)) trace_rec {
  uint64_t key;
  uint32_t hk32;
  uint32_t count;
} trace_rec;

int cov_census_trace(cov_census *c, const char *dir, uint32_t seq,
                     uint32_t new_keys[COV_N_METRICS]) {
  memset(new_keys, 0, COV_N_METRICS * sizeof(uint32_t));
  char tdir[4096], path[4200];
  int err = mkdir_p(dir, "traces", tdir, sizeof tdir);
  if (err) {
    cov_census_discard();
    return err;
  }
  uint64_t gen = cov_gen_now();
  cov_registry_lock();
  size_t nev = 0;
  for (cov_evtab *et = cov_evtab_first(); et; et = et->next)
    if (et->gen == gen) nev += et->n;
  size_t tsize = 16;
  while (tsize < 2 * nev) tsize *= 2;
  uint32_t *index = calloc(tsize, sizeof *index);
  uint64_t *counts = calloc(nev ? nev : 1, sizeof *counts);
  /* block: u32 seq, u32 n, then n records */
  char *block = malloc(8 + (nev ? nev : 1) * sizeof(trace_rec));
  if (!index || !counts || !block) {
    err = ENOMEM;
    goto out;
  }
  uint64_t ex[COV_N_METRICS];
  uint32_t hk[COV_N_METRICS];
  for (int m = 0; m < COV_N_METRICS && !err; m++) {
    if (!(c->mask & (1u << m))) continue;
    trace_rec *recs = (trace_rec *)(block + 8);
    uint32_t n = 0;
    memset(index, 0, tsize * sizeof *index);
    for (cov_evtab *et = cov_evtab_first(); et; et = et->next) {
      if (et->gen != gen) continue;
      for (uint32_t i = 0; i < et->n; i++) {
        const cov_event *e = &et->ev[i];
        cov_keys(e->w, e->cx, ex, hk);
        uint64_t s = (ex[m] * 0x9e3779b97f4a7c15ull) >> 20 & (tsize - 1);
        for (;; s = (s + 1) & (tsize - 1)) {
          uint32_t j = index[s];
          if (!j) {
            recs[n].key = ex[m];
            recs[n].hk32 = hk[m];
            counts[n] = e->count;
            index[s] = ++n;
            break;
          }
          if (recs[j - 1].key == ex[m]) {
            counts[j - 1] += e->count;
            break;
          }
        }
      }
    }
    for (uint32_t i = 0; i < n; i++) {
      recs[i].count = counts[i] > 0xffffffffull ? 0xffffffffu : (uint32_t)counts[i];
      if (!census_find(c, m, recs[i].key)) new_keys[m]++;
    }
    memcpy(block, &seq, 4);
    memcpy(block + 4, &n, 4);
    snprintf(path, sizeof path, "%s/%s.bin", tdir, cov_metric_names[m]);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      err = errno;
      break;
    }
    err = write_all(fd, block, 8 + (size_t)n * sizeof(trace_rec));
    if (close(fd) != 0 && !err) err = errno;
  }
out:
  for (cov_evtab *et = cov_evtab_first(); et; et = et->next)
    if (et->gen == gen) cov_evtab_clear(et);
  cov_registry_unlock();
  free(index);
  free(counts);
  free(block);
  return err;
}

typedef struct __attribute__((packed)) census_hdr {
  char magic[8];
  uint32_t metric;
  uint32_t reserved;
  uint64_t n_entries;
  uint64_t dropped;
} census_hdr;

_Static_assert(sizeof(census_hdr) == 32, "census header is 32 bytes");
_Static_assert(sizeof(census_rec) == 40, "census record is 40 bytes");
_Static_assert(sizeof(trace_rec) == 16, "trace record is 16 bytes");

int cov_census_dump(const cov_census *c, const char *dir) {
  char cdir[4096], path[4200], tmp[4300];
  int err = mkdir_p(dir, "census", cdir, sizeof cdir);
  if (err) return err;
  for (int m = 0; m < COV_N_METRICS; m++) {
    if (!(c->mask & (1u << m))) continue;
    const cov_ctab *t = &c->t[m];
    size_t bytes = sizeof(census_hdr) + (size_t)t->n * sizeof(census_rec);
    char *buf = malloc(bytes);
    if (!buf) return ENOMEM;
    census_hdr h;
    memcpy(h.magic, "ATCENS01", 8);
    h.metric = (uint32_t)m;
    h.reserved = 0;
    h.n_entries = t->n;
    h.dropped = t->dropped;
    memcpy(buf, &h, sizeof h);
    const cov_crec *rec = crec(c, m);
    census_rec *out = (census_rec *)(buf + sizeof h);
    for (uint32_t i = 0; i < t->n; i++) out[i] = rec[i].kept;
    snprintf(path, sizeof path, "%s/%s.bin", cdir, cov_metric_names[m]);
    snprintf(tmp, sizeof tmp, "%s/.%s.bin.%ld.tmp", cdir, cov_metric_names[m], (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      free(buf);
      return errno;
    }
    err = write_all(fd, buf, bytes);
    free(buf);
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) {
      unlink(tmp);
      return err;
    }
  }
  return 0;
}

/* ---- the union map: afl-fuzz as the probe's engine ------------------------------------------ */
/* Every selected metric's keys of the current execution into one flat 8-bit map: key k of metric
 * m at slot mix64(k ^ salt(m)) & (slots - 1), its hits added saturating at 255 (afl-fuzz
 * classifies the counts itself). An input new for any metric is then new to afl-fuzz, up to the
 * map's collisions. The events are consumed (their tables cleared).
 * An event's slots are cached (process-local: a persistent child fills its own cache): the same
 * windows recur in almost every execution, and computing every metric's key is the main cost. */
typedef struct ucache_ent {
  evc_key key;
  uint32_t slot[COV_N_METRICS]; /* in metric order of the selected metrics */
} ucache_ent;

static struct {
  uint32_t epoch;      /* cov_seed_epoch the slots belong to */
  uint32_t metric_mask;
  uint64_t slots;
  evc_table t;
} uc;

#define UC_MAX (1u << 18)

static void uc_reset(uint32_t metric_mask, uint64_t slots) {
  evc_free(&uc.t);
  memset(&uc, 0, sizeof uc);
  uc.epoch = cov_seed_epoch_now();
  uc.metric_mask = metric_mask;
  uc.slots = slots;
}

/* The event's slots, from the cache or computed into *tmp (and cached when there is room). */
static const uint32_t *uc_slots(const cov_event *e, const int *metrics, int nm, uint32_t *tmp) {
  uint32_t s = 0;
  const ucache_ent *x = evc_find(&uc.t, sizeof *x, e, &s);
  if (x) return x->slot;
  uint64_t ex[COV_N_METRICS];
  uint32_t hk[COV_N_METRICS];
  cov_keys(e->w, e->cx, ex, hk);
  for (int j = 0; j < nm; j++)
    tmp[j] = (uint32_t)(cov_mix64(ex[metrics[j]] ^ ((uint64_t)(metrics[j] + 1) * 0x9e3779b97f4a7c15ull)) &
                        (uc.slots - 1));
  ucache_ent *y = evc_add(&uc.t, sizeof *y, UC_MAX, e, s);
  if (!y) return tmp;
  memcpy(y->slot, tmp, (size_t)nm * sizeof *tmp);
  return y->slot;
}

void cov_events_to_map(uint8_t *map, uint64_t slots, uint32_t metric_mask) {
  uint64_t gen = cov_gen_now();
  uint32_t tmp[COV_N_METRICS];
  int metrics[COV_N_METRICS], nm = 0;
  for (int m = 0; m < COV_N_METRICS; m++)
    if (metric_mask & (1u << m)) metrics[nm++] = m;
  if (uc.metric_mask != metric_mask || uc.slots != slots || uc.epoch != cov_seed_epoch_now())
    uc_reset(metric_mask, slots);
  cov_registry_lock();
  for (cov_evtab *et = cov_evtab_first(); et; et = et->next) {
    if (et->gen != gen || !et->n) continue;
    for (uint32_t i = 0; i < et->n; i++) {
      const cov_event *e = &et->ev[i];
      const uint32_t *sl = uc_slots(e, metrics, nm, tmp);
      uint64_t add = e->count > 255 ? 255 : e->count;
      for (int j = 0; j < nm; j++) {
        uint8_t *c = &map[sl[j]];
        uint64_t v = *c + add;
        *c = (uint8_t)(v > 255 ? 255 : v);
      }
    }
    cov_evtab_clear(et);
  }
  cov_registry_unlock();
}
