/* aflfs_map.c - the fork server's map: afl's shared memory as the counters (or, W > 8, the target
 * the wide counters are exported to), the key->slot index shared by every child (anonymous
 * MAP_SHARED memory, or the file $AUTOTUNE_INDEX_FILE), and AFL++ 5.x's futex sync word. */
#include "aflfs_internal.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>

void *aflfs_shm_attach(const char *var, int readonly) {
  const char *s = getenv(var);
  uint64_t id;
  if (aflfs_parse_u64(s, &id) || id > INT_MAX)
    aflfs_fatal("run the target under afl-fuzz (or unset __AFL_SHM_ID)", "bad %s=%s", var, s ? s : "");
  void *p = shmat((int)id, NULL, readonly ? SHM_RDONLY : 0);
  if (p == (void *)-1)
    aflfs_fatal("check that afl-fuzz is still running and that shared memory is not limited",
                "cannot attach afl's shared memory %s=%s: %s", var, s, strerror(errno));
  return p;
}

static void *anon(size_t bytes, int shared) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED)
    aflfs_fatal("lower AUTOTUNE_INDEX_SIZE / AUTOTUNE_MAP_SIZE or raise the memory limit (afl-fuzz -m)",
                "cannot map %zu bytes: %s", bytes, strerror(errno));
  return p;
}

/* Refuses (aflfs_fatal) an index file made by another runtime version, build or configuration. */
static void index_file_check(const aflfs_config *c, const aflfs_index_header *h, const char *fix_other) {
  if (memcmp(h->magic, AFLFS_INDEX_MAGIC_OLD, 7) == 0 && h->magic[7] >= '1' && h->magic[7] < AFLFS_INDEX_MAGIC[7])
    aflfs_fatal(fix_other,
                "AUTOTUNE_INDEX_FILE=%s has index format %c (made by an older autotune runtime), this "
                "runtime reads format %c",
                c->index_file, h->magic[7], AFLFS_INDEX_MAGIC[7]);
  if (memcmp(h->magic, AFLFS_INDEX_MAGIC, 8) != 0 || h->header_bytes != sizeof *h)
    aflfs_fatal(fix_other, "AUTOTUNE_INDEX_FILE=%s is not an autotune index file", c->index_file);
  if (h->guards != cov_guard_count())
    aflfs_fatal(fix_other,
                "AUTOTUNE_INDEX_FILE=%s was made by a build with %u coverage guards, this binary has %u "
                "(another or rebuilt target: its keys would land in the wrong slots)",
                c->index_file, h->guards, cov_guard_count());
  if (h->key_hash != c->key_hash)
    aflfs_fatal(fix_other, "AUTOTUNE_INDEX_FILE=%s was made with AUTOTUNE_KEY_HASH=%s, this run has %s",
                c->index_file, h->key_hash < 2 ? cov_key_hash_names[h->key_hash] : "?",
                cov_key_hash_names[c->key_hash]);
  if (h->layout != (uint32_t)c->map.layout || h->metric != c->metric || h->seed != c->seed ||
      h->index_slots != c->map.index_slots || h->dense_slots != c->map.capacity)
    aflfs_fatal(fix_other,
                "AUTOTUNE_INDEX_FILE=%s was made for metric %u, seed %llu, index %llu, map %llu; this "
                "run has metric %u, seed %llu, index %llu, map %llu",
                c->index_file, h->metric, (unsigned long long)h->seed,
                (unsigned long long)h->index_slots, (unsigned long long)h->dense_slots, c->metric,
                (unsigned long long)c->seed, (unsigned long long)c->map.index_slots,
                (unsigned long long)c->map.capacity);
}

/* Open or create the index file; returns the bm_ctl region inside it (MAP_SHARED). Creation is
 * serialised by an flock, so parallel afl-fuzz instances may share one file. */
static void *index_file_map(const aflfs_config *c) {
  const char *fix_other = "delete the file, or point AUTOTUNE_INDEX_FILE at a new path for this "
                          "configuration";
  size_t region = bm_shared_bytes(&c->map);
  size_t total = sizeof(aflfs_index_header) + region;
  int fd = open(c->index_file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    aflfs_fatal("set AUTOTUNE_INDEX_FILE to a writable path", "cannot open AUTOTUNE_INDEX_FILE=%s: %s",
                c->index_file, strerror(errno));
  if (flock(fd, LOCK_EX) != 0)
    aflfs_fatal(NULL, "cannot lock AUTOTUNE_INDEX_FILE=%s: %s", c->index_file, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) aflfs_fatal(NULL, "cannot stat %s: %s", c->index_file, strerror(errno));
  int fresh = st.st_size == 0;
  if (fresh && ftruncate(fd, (off_t)total) != 0)
    aflfs_fatal("free disk space, or choose a smaller AUTOTUNE_INDEX_SIZE",
                "cannot size AUTOTUNE_INDEX_FILE=%s to %zu bytes: %s", c->index_file, total, strerror(errno));
  if (!fresh && (size_t)st.st_size != total)
    aflfs_fatal(fix_other, "AUTOTUNE_INDEX_FILE=%s has %lld bytes, this configuration needs %zu",
                c->index_file, (long long)st.st_size, total);
  char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    aflfs_fatal(NULL, "cannot map AUTOTUNE_INDEX_FILE=%s: %s", c->index_file, strerror(errno));
  aflfs_index_header *h = (aflfs_index_header *)p;
  if (fresh || !h->ready) {
    memset(h, 0, sizeof *h);
    memcpy(h->magic, AFLFS_INDEX_MAGIC, 8);
    h->header_bytes = sizeof *h;
    h->layout = (uint32_t)c->map.layout;
    h->metric = c->metric;
    h->guards = cov_guard_count();
    h->key_hash = c->key_hash;
    h->seed = c->seed;
    h->index_slots = c->map.index_slots;
    h->dense_slots = c->map.capacity;
    /* a new file reads as zero (an empty index): write the header only; a file left
     * unfinished by a creator that died holds unknown bytes: clear it */
    if (fresh)
      bm_shared_init_zeroed(p + sizeof *h, &c->map);
    else
      bm_shared_init(p + sizeof *h, &c->map);
    __atomic_store_n(&h->ready, 1u, __ATOMIC_RELEASE);
  } else {
    index_file_check(c, h, fix_other); /* a file another process finished: it must match */
  }
  flock(fd, LOCK_UN);
  close(fd);
  return p + sizeof *h;
}

/* A guard build's counters on pages of their own (kernels/guard_counters.ld, cov_cnt_map_pages):
 * afl's whole segment attached over them (SHM_REMAP), so that every block counts straight into
 * afl's map, as in AFL++'s PCGUARD build. Nothing is copied after an input, and what a child
 * counted is in the map when afl-fuzz kills it (a hang, whatever AFL_KILL_SIGNAL is). NULL (the
 * copy then) when the segment is larger than those pages hold, e.g. afl-fuzz's map set larger than
 * the program's with AFL_MAP_SIZE. The bytes are the guard metric's slots either way. */
static void *attach_over_counters(const aflfs_config *c) {
  size_t span;
  uint8_t *page;
  uint64_t id;
  struct shmid_ds ds;
  if (!c->guard_pages || c->metric != COV_M_GUARD || c->map.width_bits != 8 || c->union_mask ||
      !(page = cov_cnt_map_pages(&span)) || aflfs_parse_u64(getenv("__AFL_SHM_ID"), &id) || id > INT_MAX ||
      shmctl((int)id, IPC_STAT, &ds) != 0 || ds.shm_segsz > span || ds.shm_segsz < c->map_bytes)
    return NULL;
  void *p = shmat((int)id, page, SHM_REMAP);
  return p == (void *)-1 ? NULL : p;
}

void aflfs_map_setup(aflfs_state *s) {
  aflfs_config *c = &s->cfg;
  s->afl_map = attach_over_counters(c);
  if (!s->afl_map) s->afl_map = aflfs_shm_attach("__AFL_SHM_ID", 0);
  if (c->union_mask) { /* no metric's map: the events of each execution fill afl's map (aflfs_run_one) */
    cov_map_sink_set(NULL, -1);
    cov_event_sink_set(c->union_mask);
    return;
  }
  void *shared = NULL;
  if (c->map.layout != BM_FLAT)
    shared = c->index_file ? index_file_map(c) : anon(bm_shared_bytes(&c->map), 1);
  void *counters = s->afl_map;
  if (c->map.width_bits > 8) s->wide = counters = anon(bm_counters_bytes(&c->map), 0);
  unsigned flags = BM_F_NO_HUGEPAGE;
  if (shared && !c->index_file) flags |= BM_F_INIT_SHARED | BM_F_SHARED_ZEROED; /* fresh mmap */
  int rc = bm_map_attach(&s->map, &c->map, counters, shared, flags);
  if (rc != BM_OK) aflfs_fatal(NULL, "cannot set up the coverage map: %s", bm_strerror(rc));
  cov_map_sink_set(&s->map, (int)c->metric);
}

/* AFL++ 5.x's sync word (AFL_CHILD_SYNC_SHM), found before the handshake: NULL when afl-fuzz does
 * not offer it or it cannot be used (then the options word does not advertise it and afl syncs by
 * the pipes, warning "target does not support futex synchronization").
 *  - 2026 sources: a byte offset into afl's coverage segment, past the map afl created (rounded up
 *    to 4; 65544 for the default 64 KiB map). It must lie past the map this target reports (AFL++'s
 *    runtime drops the word when the offset is below its map size) and inside the segment.
 *  - 5.01c: the id of a SysV segment of its own (4 bytes, made by afl-fuzz, our parent), tried
 *    when the value is no such offset. */
uint32_t *aflfs_sync_word(const aflfs_state *s) {
  const aflfs_config *c = &s->cfg;
  const char *v = getenv(AFLFS_SYNC_ENV);
  uint64_t off;
  if (!c->futex || c->iters < 2 || !v || !*v || aflfs_parse_u64(v, &off) || off > INT_MAX) return NULL;
  uint64_t id;
  struct shmid_ds ds;
  if (aflfs_parse_u64(getenv("__AFL_SHM_ID"), &id) == 0 && shmctl((int)id, IPC_STAT, &ds) == 0 &&
      off % 4 == 0 && off >= c->map_bytes && off + 4 <= (uint64_t)ds.shm_segsz)
    return (uint32_t *)(void *)(s->afl_map + off);
  /* a segment id only if it is one afl made for this: 4 bytes, created by our parent (afl-fuzz
   * execs the fork server itself); an offset that failed the checks above may well be the id of
   * some other process's segment */
  if (shmctl((int)off, IPC_STAT, &ds) == 0 && ds.shm_segsz >= 4 && ds.shm_segsz < 4096 &&
      ds.shm_cpid == getppid()) {
    void *p = shmat((int)off, NULL, 0);
    if (p != (void *)-1) return p;
  }
  return NULL;
}

/* W > 8: afl-fuzz gets min(count, 255) of each used slot (it classifies the bytes itself). */
#define AFLFS_DEF_EXPORT(W)                                                                \
  static void export_u##W(uint8_t *dst, const uint##W##_t *src, size_t n) {               \
    for (size_t i = 0; i < n; i++) dst[i] = (uint8_t)(src[i] > 255 ? 255 : src[i]);       \
  }
AFLFS_DEF_EXPORT(16)
AFLFS_DEF_EXPORT(32)
AFLFS_DEF_EXPORT(64)

void aflfs_export_wide(aflfs_state *s) {
  size_t n = (size_t)bm_map_used(&s->map);
  if (n > s->cfg.map_bytes) n = (size_t)s->cfg.map_bytes; /* guard: H may exceed afl's map */
  switch (s->cfg.map.width_bits) {
    case 16: export_u16(s->afl_map, s->wide, n); break;
    case 32: export_u32(s->afl_map, s->wide, n); break;
    default: export_u64(s->afl_map, s->wide, n); break;
  }
}
