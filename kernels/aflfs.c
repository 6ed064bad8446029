/* aflfs.c - the AFL++ fork server of the autotune runtime (issue 7). See aflfs.h and
 * docs/DESIGN.md "Running under afl-fuzz".
 *
 * Protocol (learnt from AFL++'s instrumentation/afl-compiler-rt.o.c, src/afl-forkserver.c and
 * include/types.h, 4.04c and 4.22a; our own implementation). All words are u32, host order.
 * Handshake, one of two:
 *   old (4.04c)   target -> fd 199: FS_OPT_ENABLED | FS_OPT_MAPSIZE | ((D - 1) << 1)
 *                 [| FS_OPT_SHDMEM_FUZZ when we take test cases from __AFL_SHM_FUZZ_ID];
 *                 fd 198 -> target: one word, only when FS_OPT_SHDMEM_FUZZ was offered.
 *   versioned     target -> 0x41464C01 (version 1); fd 198 -> its complement 0xBEB9B3FE;
 *   (4.20c+)      target -> options: NEW_OPT_MAPSIZE [| NEW_OPT_SHDMEM_FUZZ]; target -> D
 *                 (the map-size parameter; shm fuzzing has none); target -> 0x41464C01.
 *   The target speaks first and afl-fuzz sends nothing that names its version, so the server
 *   picks the handshake from its parent's executable (the afl tool; see choose_handshake).
 * Per run (both): fd 198 -> u32 was_killed (the previous child timed out and was SIGKILLed);
 *   fd 199 <- u32 child pid; fd 199 <- u32 wait status (WIFSTOPPED = persistent child waiting
 *   for the next input). 4.22a still syncs persistent mode this way (SIGSTOP / WUNTRACED).
 * Futex sync (AFL++ 5.x, versioned handshake, persistent): the pipes carry only a new child's
 *   request, pid and death status; each further input is the sync word going RUN (afl) -> DONE
 *   (the child), with a futex wake on each side (serve_futex, child_loop_futex).
 * Test cases: the @@ file (first non-option argument) when given; else shared memory
 * [u32 length][data] when afl offers it; else stdin (afl rewinds its .cur_input, our fd 0).
 */
#include "aflfs.h"

#include "bigmap.h"
#include "cov.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* afl-fuzz looks for these NUL-terminated strings in the binary: "__AFL_SHM_ID" (instrumented,
 * also the getenv below) and the persistent-mode signature (it then sets __AFL_PERSISTENT). */
__attribute__((used)) static const char aflfs_sig_shm[] = "__AFL_SHM_ID";
__attribute__((used)) static const char aflfs_sig_persistent[] = "##SIG_AFL_PERSISTENT##";

#define AFLFS_DEFAULT_ITERS 10000u

typedef struct aflfs_config {
  bm_config map;          /* layout, width, policy, H, C */
  uint64_t map_bytes;     /* D: bytes of afl's map we report (flat: H, twolevel: C) */
  uint32_t metric;        /* metric id */
  uint32_t key_hash;      /* AUTOTUNE_KEY_HASH (COV_KEY_*) */
  uint64_t seed;
  uint32_t iters;         /* persistent iterations per child (1: a fork per input) */
  int shm_input;          /* take shared-memory test cases when afl offers them */
  aflfs_handshake handshake; /* AUTOTUNE_AFL_HANDSHAKE (auto: decided at the hello) */
  int child_reports;      /* AUTOTUNE_AFL_STATUS=child (the default): a persistent child talks to afl */
  int futex;              /* AUTOTUNE_AFL_FUTEX: accept AFL++ 5.x's futex sync when offered (default) */
  const char *index_file; /* AUTOTUNE_INDEX_FILE or NULL */
  uint32_t union_mask;    /* AUTOTUNE_AFL_UNION: these metrics' keys together in afl's map (0: off) */
} aflfs_config;

/* ---- errors: a clear message where the afl-fuzz user sees it --------------------------------- */

/* afl-fuzz sends the target's stderr to /dev/null (unless AFL_DEBUG_CHILD): then the message
 * also goes to the stderr of the parent when it is an afl tool, so it is printed just above
 * afl-fuzz's "Fork server handshake failed". */
static int fd_is_devnull(int fd) {
  struct stat a, b;
  if (fstat(fd, &a) != 0) return 1;
  if (stat("/dev/null", &b) != 0) return 0;
  return S_ISCHR(a.st_mode) && a.st_rdev == b.st_rdev;
}

static int parent_is_afl(pid_t ppid) {
  char path[64], comm[64] = {0};
  snprintf(path, sizeof path, "/proc/%d/comm", (int)ppid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, comm, sizeof comm - 1);
  close(fd);
  return n > 4 && strncmp(comm, "afl-", 4) == 0;
}

static void say(const char *msg) {
  size_t len = strlen(msg);
  if (write(2, msg, len) < 0) { /* nothing better to do */
  }
  pid_t ppid = getppid();
  if (!fd_is_devnull(2) || !parent_is_afl(ppid)) return;
  /* afl-fuzz's own stderr: the same open file (so a log file's offset moves with ours) when
   * pidfd_getfd is allowed, else a new open of it (fine for terminals and pipes). */
  int fd = -1;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  int pidfd = (int)syscall(SYS_pidfd_open, ppid, 0);
  if (pidfd >= 0) {
    fd = (int)syscall(SYS_pidfd_getfd, pidfd, 2, 0);
    close(pidfd);
  }
#endif
  if (fd < 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/2", (int)ppid);
    fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
  }
  if (fd >= 0) {
    if (write(fd, msg, len) < 0) {
    }
    close(fd);
  }
}

__attribute__((format(printf, 2, 3), noreturn)) static void fatal(const char *fix, const char *fmt,
                                                                   ...) {
  char msg[1024];
  int n = snprintf(msg, sizeof msg, "\n[autotune] error: ");
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  if (fix && n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, "\n[autotune]   fix: %s\n", fix);
  else if (n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, "\n");
  say(msg);
  _exit(1);
}

/* ---- configuration (read once, validated) -------------------------------------------------- */

static int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s) return -1;
  for (const char *p = s; *p; p++)
    if (*p < '0' || *p > '9') return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

static void read_config(aflfs_config *c) {
  memset(c, 0, sizeof *c);
  char err[512];
  static cov_config cc; /* static: index_file points into it */
  if (cov_config_from_env(&cc, err, sizeof err) != 0)
    fatal("correct or unset the variable (docs/DESIGN.md, runtime configuration)", "%s", err);
  if (cc.map_size > AFLFS_MAX_MAPSIZE)
    fatal("set AUTOTUNE_MAP_SIZE to at most 8388608 (2^23)",
          "AUTOTUNE_MAP_SIZE=%llu is larger than the largest map afl-fuzz's fork server can be "
          "told (8388608 bytes)", (unsigned long long)cc.map_size);
  /* every layout cov_config_from_env accepts runs here; a dense one needs H >= C */
  if (cc.layout != BM_FLAT && cc.map_size > cc.index_size)
    fatal("make AUTOTUNE_INDEX_SIZE at least AUTOTUNE_MAP_SIZE",
          "AUTOTUNE_MAP_SIZE=%llu dense slots exceed AUTOTUNE_INDEX_SIZE=%llu index slots",
          (unsigned long long)cc.map_size, (unsigned long long)cc.index_size);
  cov_config_to_bm(&cc, &c->map);
  c->metric = (uint32_t)cc.metric;
  c->key_hash = (uint32_t)cc.key_hash;
  c->seed = cc.seed;
  c->map_bytes = cc.map_size;
  c->index_file = cc.index_file[0] ? cc.index_file : NULL;

  const char *it = getenv("AUTOTUNE_AFL_PERSISTENT");
  uint64_t iv = AFLFS_DEFAULT_ITERS;
  if (it && *it && (parse_u64(it, &iv) || iv < 1 || iv > INT_MAX))
    fatal("set AUTOTUNE_AFL_PERSISTENT to the inputs per child process (1 = a fork per input)",
          "bad AUTOTUNE_AFL_PERSISTENT=%s: must be an integer between 1 and %d", it, INT_MAX);
  c->iters = (uint32_t)iv;

  const char *si = getenv("AUTOTUNE_AFL_SHM_INPUT");
  if (!si || !*si || strcmp(si, "1") == 0) c->shm_input = 1;
  else if (strcmp(si, "0") == 0) c->shm_input = 0;
  else fatal("set AUTOTUNE_AFL_SHM_INPUT to 0 or 1", "bad AUTOTUNE_AFL_SHM_INPUT=%s", si);

  /* The probe's afl-fuzz engine: afl-fuzz sees every listed metric's keys at once (a flat 8-bit
   * map of AUTOTUNE_MAP_SIZE slots), so it keeps an input new for any of them. */
  const char *un = getenv("AUTOTUNE_AFL_UNION");
  if (un && *un && strcmp(un, "0") != 0) {
    const char *badp = NULL;
    size_t badn = 0;
    uint32_t mask = strcmp(un, "1") == 0 ? COV_ALL_METRICS : cov_metric_mask_parse(un, &badp, &badn);
    if (!mask)
      fatal("set AUTOTUNE_AFL_UNION to 1 (every metric) or a comma-separated list of metrics",
            "bad AUTOTUNE_AFL_UNION=%s: unknown metric '%.*s'", un, (int)badn, badp ? badp : "");
    if (cov_census_check(mask, err, sizeof err) != 0)
      fatal("build the harness with autotune cc's default (full) kind: unset AUTOTUNE_CC_INSTRUMENT",
            "AUTOTUNE_AFL_UNION=%s: %s", un, err);
    if (cc.layout != BM_FLAT || cc.map_size & (cc.map_size - 1))
      fatal("set AUTOTUNE_LAYOUT=flat and AUTOTUNE_MAP_SIZE to a power of two",
            "AUTOTUNE_AFL_UNION needs a flat map of a power-of-two size");
    c->union_mask = mask;
  }

  const char *rs = getenv("AUTOTUNE_AFL_STATUS");
  if (!rs || !*rs || strcmp(rs, "child") == 0) c->child_reports = 1;
  else if (strcmp(rs, "server") == 0) c->child_reports = 0; /* AFL++'s relay */
  else fatal("set AUTOTUNE_AFL_STATUS to child (the default) or server",
             "bad AUTOTUNE_AFL_STATUS=%s", rs);

  const char *fx = getenv("AUTOTUNE_AFL_FUTEX");
  if (!fx || !*fx || strcmp(fx, "1") == 0) c->futex = 1;
  else if (strcmp(fx, "0") == 0) c->futex = 0;
  else fatal("set AUTOTUNE_AFL_FUTEX to 1 (accept AFL++ 5.x's futex sync when afl-fuzz offers it, the "
             "default) or 0 (pipes only)", "bad AUTOTUNE_AFL_FUTEX=%s", fx);

  const char *hs = getenv("AUTOTUNE_AFL_HANDSHAKE");
  if (!hs || !*hs || strcmp(hs, "auto") == 0) c->handshake = AFLFS_HS_AUTO;
  else if (strcmp(hs, "old") == 0) c->handshake = AFLFS_HS_OLD;
  else if (strcmp(hs, "versioned") == 0) c->handshake = AFLFS_HS_VERSIONED;
  else
    fatal("set AUTOTUNE_AFL_HANDSHAKE to auto, old (AFL++ before 4.20c) or versioned (4.20c and later)",
          "bad AUTOTUNE_AFL_HANDSHAKE=%s", hs);
}

/* ---- the map: afl's shm as the counters, the index shared by every child --------------------- */

static void *shm_attach(const char *var, int readonly) {
  const char *s = getenv(var);
  uint64_t id;
  if (parse_u64(s, &id) || id > INT_MAX)
    fatal("run the target under afl-fuzz (or unset __AFL_SHM_ID)", "bad %s=%s", var, s ? s : "");
  void *p = shmat((int)id, NULL, readonly ? SHM_RDONLY : 0);
  if (p == (void *)-1)
    fatal("check that afl-fuzz is still running and that shared memory is not limited",
          "cannot attach afl's shared memory %s=%s: %s", var, s, strerror(errno));
  return p;
}

static void *anon(size_t bytes, int shared) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED)
    fatal("lower AUTOTUNE_INDEX_SIZE / AUTOTUNE_MAP_SIZE or raise the memory limit (afl-fuzz -m)",
          "cannot map %zu bytes: %s", bytes, strerror(errno));
  return p;
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
    fatal("set AUTOTUNE_INDEX_FILE to a writable path", "cannot open AUTOTUNE_INDEX_FILE=%s: %s",
          c->index_file, strerror(errno));
  if (flock(fd, LOCK_EX) != 0)
    fatal(NULL, "cannot lock AUTOTUNE_INDEX_FILE=%s: %s", c->index_file, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) fatal(NULL, "cannot stat %s: %s", c->index_file, strerror(errno));
  int fresh = st.st_size == 0;
  if (fresh && ftruncate(fd, (off_t)total) != 0)
    fatal("free disk space, or choose a smaller AUTOTUNE_INDEX_SIZE",
          "cannot size AUTOTUNE_INDEX_FILE=%s to %zu bytes: %s", c->index_file, total, strerror(errno));
  if (!fresh && (size_t)st.st_size != total)
    fatal(fix_other, "AUTOTUNE_INDEX_FILE=%s has %lld bytes, this configuration needs %zu",
          c->index_file, (long long)st.st_size, total);
  char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    fatal(NULL, "cannot map AUTOTUNE_INDEX_FILE=%s: %s", c->index_file, strerror(errno));
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
  } else if (memcmp(h->magic, AFLFS_INDEX_MAGIC_OLD, 7) == 0 && h->magic[7] >= '1' &&
             h->magic[7] < AFLFS_INDEX_MAGIC[7]) {
    fatal(fix_other,
          "AUTOTUNE_INDEX_FILE=%s has index format %c (made by an older autotune runtime), this "
          "runtime reads format %c",
          c->index_file, h->magic[7], AFLFS_INDEX_MAGIC[7]);
  } else if (memcmp(h->magic, AFLFS_INDEX_MAGIC, 8) != 0 || h->header_bytes != sizeof *h) {
    fatal(fix_other, "AUTOTUNE_INDEX_FILE=%s is not an autotune index file", c->index_file);
  } else if (h->guards != cov_guard_count()) {
    fatal(fix_other,
          "AUTOTUNE_INDEX_FILE=%s was made by a build with %u coverage guards, this binary has %u "
          "(another or rebuilt target: its keys would land in the wrong slots)",
          c->index_file, h->guards, cov_guard_count());
  } else if (h->key_hash != c->key_hash) {
    fatal(fix_other, "AUTOTUNE_INDEX_FILE=%s was made with AUTOTUNE_KEY_HASH=%s, this run has %s",
          c->index_file, h->key_hash < 2 ? cov_key_hash_names[h->key_hash] : "?",
          cov_key_hash_names[c->key_hash]);
  } else if (h->layout != (uint32_t)c->map.layout || h->metric != c->metric || h->seed != c->seed ||
             h->index_slots != c->map.index_slots || h->dense_slots != c->map.capacity) {
    fatal(fix_other,
          "AUTOTUNE_INDEX_FILE=%s was made for metric %u, seed %llu, index %llu, map %llu; this "
          "run has metric %u, seed %llu, index %llu, map %llu",
          c->index_file, h->metric, (unsigned long long)h->seed,
          (unsigned long long)h->index_slots, (unsigned long long)h->dense_slots, c->metric,
          (unsigned long long)c->seed, (unsigned long long)c->map.index_slots,
          (unsigned long long)c->map.capacity);
  }
  flock(fd, LOCK_UN);
  close(fd);
  return p + sizeof *h;
}

typedef struct aflfs_state {
  aflfs_config cfg;
  bm_map map;
  uint8_t *afl_map;  /* afl's shm: the 8-bit counters (W == 8) or the export target (W > 8) */
  void *wide;        /* W > 8: this process's private counters */
  uint8_t *shm_in;   /* shared-memory test cases, or NULL */
  const char *file;  /* @@ file, or NULL for stdin */
  uint8_t *buf;      /* file/stdin input buffer */
  size_t buf_cap;
  uint32_t *sync;    /* AFL++ 5.x's futex sync word, or NULL (pipes) */
} aflfs_state;

static void map_setup(aflfs_state *s) {
  aflfs_config *c = &s->cfg;
  s->afl_map = shm_attach("__AFL_SHM_ID", 0);
  if (c->union_mask) { /* no metric's map: the events of each execution fill afl's map (run_one) */
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
  if (rc != BM_OK) fatal(NULL, "cannot set up the coverage map: %s", bm_strerror(rc));
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
static uint32_t *sync_word(const aflfs_state *s) {
  const aflfs_config *c = &s->cfg;
  const char *v = getenv(AFLFS_SYNC_ENV);
  uint64_t off;
  if (!c->futex || c->iters < 2 || !v || !*v || parse_u64(v, &off) || off > INT_MAX) return NULL;
  uint64_t id;
  struct shmid_ds ds;
  if (parse_u64(getenv("__AFL_SHM_ID"), &id) == 0 && shmctl((int)id, IPC_STAT, &ds) == 0 &&
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

static void export_wide(aflfs_state *s) {
  size_t n = (size_t)bm_map_used(&s->map);
  if (n > s->cfg.map_bytes) n = (size_t)s->cfg.map_bytes; /* guard: H may exceed afl's map */
  switch (s->cfg.map.width_bits) {
    case 16: export_u16(s->afl_map, s->wide, n); break;
    case 32: export_u32(s->afl_map, s->wide, n); break;
    default: export_u64(s->afl_map, s->wide, n); break;
  }
}

/* ---- test cases -------------------------------------------------------------------------- */

static const char *file_argument(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-') return argv[i];
  return NULL;
}

static size_t read_all(aflfs_state *s, int fd) {
  size_t n = 0;
  for (;;) {
    if (n == s->buf_cap) {
      size_t cap = s->buf_cap ? s->buf_cap * 2 : 4096;
      uint8_t *b = realloc(s->buf, cap);
      if (!b) fatal(NULL, "out of memory reading a test case");
      s->buf = b;
      s->buf_cap = cap;
    }
    ssize_t r = read(fd, s->buf + n, s->buf_cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
  }
  return n;
}

/* The next test case, copied to a heap block of exactly its size (so a sanitizer sees reads
 * past its end, as under libFuzzer). The caller frees it. */
static uint8_t *next_input(aflfs_state *s, size_t *len) {
  const uint8_t *src;
  size_t n;
  if (s->shm_in) {
    uint32_t l;
    memcpy(&l, s->shm_in, 4);
    n = l > AFLFS_MAX_INPUT ? AFLFS_MAX_INPUT : l;
    src = s->shm_in + 4;
  } else if (s->file) {
    int fd = open(s->file, O_RDONLY | O_CLOEXEC);
    n = 0;
    if (fd >= 0) {
      n = read_all(s, fd);
      close(fd);
    }
    src = s->buf;
  } else {
    (void)lseek(0, 0, SEEK_SET);
    n = read_all(s, 0);
    src = s->buf;
  }
  uint8_t *copy = malloc(n ? n : 1);
  if (!copy) fatal(NULL, "out of memory copying a test case of %zu bytes", n);
  if (n) memcpy(copy, src, n);
  *len = n;
  return copy;
}

/* One input: per-thread history and call stack reset (cov_exec_begin), wide counters of the
 * used slots zeroed, the harness, then the wide counters saturated into afl's map. */
static void run_one(aflfs_state *s, cov_test_one_fn test_one) {
  size_t len;
  uint8_t *data = next_input(s, &len);
  cov_exec_begin();
  if (s->wide) memset(s->wide, 0, (size_t)bm_map_used(&s->map) * (s->cfg.map.width_bits / 8));
  test_one(data, len);
  cov_exec_end();
  if (s->cfg.union_mask) cov_events_to_map(s->afl_map, s->cfg.map_bytes, s->cfg.union_mask);
  if (s->wide) export_wide(s);
  free(data);
}

/* Before its first input a child runs the harness once on 4 zero bytes and forgets that run's
 * coverage, as AFL++'s libFuzzer driver does (utils/aflpp_driver: one call on a 4-byte input after
 * the fork server starts, its coverage cleared by the first __AFL_LOOP). One-time initialisation
 * inside LLVMFuzzerTestOneInput (static tables, lazily registered codecs) then never shows as the
 * first input's coverage in each new child: without it afl-fuzz 4.04c saw variable edges on
 * libtiff's guard build (stability 99.79 %, 4 variable bytes; AFL++'s own build 100 %) and spent
 * its long calibration on them. It runs after afl has the child's pid, so afl's timeout covers it
 * as it covers AFL++'s call (a harness that hangs on it is killed, never waited for). afl cleared
 * its map before the request that started this child; the warm-up's counts are cleared here
 * (afl's map; the wide counters are zeroed per input). */
static void warm_up(aflfs_state *s, cov_test_one_fn test_one) {
  static const uint8_t dummy[4];
  cov_exec_begin();
  test_one(dummy, sizeof dummy);
  cov_exec_end();
  memset(s->afl_map, 0, (size_t)s->cfg.map_bytes);
}

/* ---- afl's pipes: one host-order u32 at a time ------------------------------------------------ */

static int read4(int fd, uint32_t *v) {
  size_t got = 0;
  while (got < 4) {
    ssize_t r = read(fd, (char *)v + got, 4 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static int write4(int fd, uint32_t v) {
  for (;;) {
    ssize_t r = write(fd, &v, 4);
    if (r < 0 && errno == EINTR) continue;
    return r == 4 ? 0 : -1;
  }
}

/* poll() for input on fd, retried on EINTR; returns poll's result, *revents its events. */
static int wait_readable(int fd, int timeout_ms, short *revents) {
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  int r;
  do r = poll(&pfd, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  *revents = pfd.revents;
  return r;
}

/* ---- the child: run inputs, stop between them ------------------------------------------------ */

__attribute__((noreturn)) static void child_loop(aflfs_state *s, cov_test_one_fn test_one) {
  for (uint32_t it = 0;;) {
    run_one(s, test_one);
    if (++it >= s->cfg.iters) _exit(0);
    raise(SIGSTOP); /* the server reports "stopped"; SIGCONT starts the next input */
  }
}

/* A persistent child that talks to afl itself (AUTOTUNE_AFL_STATUS=child, the default).
 *
 * In AFL++'s design (and ours with AUTOTUNE_AFL_STATUS=server) every execution wakes the fork
 * server twice: afl's request (the server sends SIGCONT and the child's pid) and the child's
 * SIGSTOP (the server reads the stop from waitpid and sends it on). Here the child reads afl's
 * request, sends its own pid, runs the input and sends the status a stopped child would have
 * (W_STOPCODE(SIGSTOP)); the server sleeps in waitpid until the child dies, and then sends what
 * afl is still owed, told by the stage the child left in shared memory:
 *   IDLE    waiting (in poll) for a request, none consumed: nothing owed; the server reads the
 *           request itself when it comes
 *   ASKED   a request came, and the child may or may not have read it when it died (only an
 *           outside kill ends a child here, e.g. afl's timeout kill of a child that had just
 *           answered). Still in the pipe (FIONREAD): nothing owed, as IDLE. Consumed: the
 *           server starts a new child for it; if that one dies in ASKED too, afl gets its pid
 *           and its death's status.
 *   RUN     the pid is being sent or sent, the input runs (a crash, exit(), afl's timeout kill,
 *           or the child's last input, after which it exits 0): the death's wait status, as
 *           AFL++'s server sends
 *   REPORT  between the stage store and the status write: afl's timeout kill landed on those
 *           few instructions. Written if afl comes back with its next request (the server waits
 *           for one, AFLFS_REPORT_WAIT_MS); else the death's status is sent.
 * Afl reads the same words in the same order either way, so 4.04c and 4.22a need nothing new. */
enum { AFLFS_IDLE = 0, AFLFS_ASKED = 1, AFLFS_RUN = 2, AFLFS_REPORT = 3 };
#define AFLFS_REPORT_WAIT_MS 2000
#define AFLFS_STOPPED_STATUS 0x137fu /* W_STOPCODE(SIGSTOP): what waitpid(WUNTRACED) reports */
typedef struct aflfs_shared {
  uint32_t stage; /* AFLFS_IDLE .. AFLFS_REPORT */
  uint32_t lost;  /* the child lost fd 198/199 */
} aflfs_shared;
static volatile aflfs_shared *aflfs_sh; /* MAP_SHARED: the child writes, the server reads; NULL: relay */

/* Why the child polls before it reads (the stage IDLE store alone is not enough): a child
 * SIGKILLed while blocked in read(fd 198) dies only when it next runs, and if afl's next request
 * is in the pipe by then the kernel's pipe read copies it out first. The request was gone with
 * the stage still IDLE: the server waited for another request, afl for a pid (the hang of
 * test_persistent_child_killed_while_stopped[child]). poll() takes nothing from the pipe, so a
 * child that dies before its ASKED store has not consumed the request, and after it the server
 * can tell from the bytes left in the pipe. Cost: one poll per execution. */

/* The harness closed (or replaced) fd 198 or 199 under the child: it cannot answer afl. It
 * leaves what it owes to the server (a status not written: stage RUN) and says so; the server
 * then serves the rest of the run as AFL++'s relay (AUTOTUNE_AFL_STATUS=server), whose children
 * need neither fd. */
__attribute__((noreturn)) static void child_lost_pipes(uint32_t stage) {
  aflfs_sh->stage = stage;
  aflfs_sh->lost = 1;
  _exit(0);
}

/* The child takes afl's request: RUN before the pid. afl's timeout kill can land as soon as afl
 * has read the pid, even before this child runs another instruction (afl-fuzz, woken by the pid,
 * often takes the core); a child dying there owes a status only. With the store after the write,
 * such a death read as ASKED and the server sent the pid a second time: afl-fuzz 4.04c read it as
 * the status ("crashes" with the pid's low bits as the signal) and later aborted ("Fork server is
 * misbehaving"), once in 27 million lz4 executions under a 20 ms timeout. */
static void child_answers(uint32_t self) {
  aflfs_sh->stage = AFLFS_RUN;
  if (write4(AFLFS_ST_FD, self) != 0) child_lost_pipes(AFLFS_ASKED);
}

__attribute__((noreturn)) static void child_loop_reporting(aflfs_state *s, cov_test_one_fn test_one) {
  const uint32_t self = (uint32_t)getpid();
  (void)fcntl(AFLFS_CTL_FD, F_SETFD, FD_CLOEXEC); /* not for programs the harness runs */
  (void)fcntl(AFLFS_ST_FD, F_SETFD, FD_CLOEXEC);
  child_answers(self); /* the first request was read by the server */
  warm_up(s, test_one); /* after the pid: in afl's timed window, as AFL++'s driver's call is */
  for (uint32_t it = 0;;) {
    run_one(s, test_one);
    if (++it >= s->cfg.iters) _exit(0); /* the server sends "exited 0" (stage RUN) */
    aflfs_sh->stage = AFLFS_REPORT;
    if (write4(AFLFS_ST_FD, AFLFS_STOPPED_STATUS) != 0) child_lost_pipes(AFLFS_RUN);
    aflfs_sh->stage = AFLFS_IDLE;
    short ev;
    if (wait_readable(AFLFS_CTL_FD, -1, &ev) < 0 || ev & POLLNVAL) child_lost_pipes(AFLFS_IDLE); /* fd gone */
    aflfs_sh->stage = AFLFS_ASKED;
    uint32_t was_killed;
    errno = 0;
    if (read4(AFLFS_CTL_FD, &was_killed) != 0) { /* afl went away (end of file), or the fd did */
      if (errno) child_lost_pipes(AFLFS_IDLE);
      aflfs_sh->stage = AFLFS_IDLE; /* nothing taken, nothing owed: the server sees the end too */
      _exit(0);
    }
    child_answers(self);
  }
}

/* ---- the child under AFL++ 5.x's futex sync ---------------------------------------------------- */

static volatile uint32_t *aflfs_asked; /* MAP_SHARED: the current futex child was given a RUN */

static void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0); }

/* Sleeps while *w holds v (returns at once if it does not; EINTR and spurious wake-ups return
 * too: the caller reloads). Shared, not FUTEX_PRIVATE: the word is in afl's segment. */
static void futex_wait(uint32_t *w, uint32_t v) { syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0); }

/* The first input of a child runs at once (afl wrote it before the request); after each input
 * the child moves the word to DONE (from RUN, or from IDLE after its first input) and wakes afl,
 * then sleeps until afl stores RUN. EXITED (afl timed out and is about to kill, or stops) ends it
 * quietly. The last of its AUTOTUNE_AFL_PERSISTENT inputs sends no DONE: it exits 0 and the
 * server sends that status, as for a crash. The fork-server pipes are closed: the child never
 * needs them, and a harness that closes fds (closefds) cannot confuse it. Its first RUN is noted in
 * aflfs_asked (one store a child, not one an execution), for the server's check that afl took the
 * futex (serve_futex). */
__attribute__((noreturn)) static void child_loop_futex(aflfs_state *s, cov_test_one_fn test_one) {
  uint32_t *w = s->sync;
  int asked = 0;
  for (uint32_t it = 0;;) {
    run_one(s, test_one);
    if (++it >= s->cfg.iters) _exit(0);
    uint32_t expect = AFLFS_SYNC_RUN;
    while (!__atomic_compare_exchange_n(w, &expect, AFLFS_SYNC_DONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      if (expect == AFLFS_SYNC_EXITED) _exit(0);
    futex_wake(w);
    uint32_t v;
    while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) == AFLFS_SYNC_DONE) futex_wait(w, AFLFS_SYNC_DONE);
    if (v == AFLFS_SYNC_EXITED) _exit(0);
    if (!asked) *aflfs_asked = asked = 1;
  }
}

/* ---- the server ---------------------------------------------------------------------------- */

static pid_t wait_child(pid_t pid, int *status, int options) {
  for (;;) {
    pid_t r = waitpid(pid, status, options);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

static void server_exit(pid_t child, int code) {
  if (child > 0) {
    kill(child, SIGKILL);
    int st;
    wait_child(child, &st, 0);
  }
  _exit(code);
}

/* Set by SIGCHLD (SA_NOCLDSTOP: terminations only) in the server: a child may have died. A hint
 * that costs nothing per execution: before resuming a stopped child the server checks it with
 * waitpid only when this is set (a child killed behind afl's back while stopped is then reaped
 * and replaced). AFL++'s own runtime resumes without checking; an unconditional waitpid(WNOHANG)
 * per execution cost one system call more than it (0.5 us of lz4's 39 us per execution under
 * afl-fuzz 4.04c, perf cpu-clock). */
static volatile sig_atomic_t aflfs_child_ended;
static struct sigaction aflfs_old_sigchld;
static int aflfs_watching; /* the handler is installed (the server-reports mode) */

static void on_sigchld(int sig) {
  (void)sig;
  aflfs_child_ended = 1;
}

static void watch_children(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGCHLD, &sa, &aflfs_old_sigchld) != 0)
    fatal(NULL, "sigaction(SIGCHLD): %s", strerror(errno));
  aflfs_watching = 1;
}

static pid_t spawn(aflfs_state *s, cov_test_one_fn test_one, pid_t server) {
  pid_t pid = fork();
  if (pid < 0) fatal("lower the number of processes or raise the limit", "fork: %s", strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the server, even when stopped */
    if (getppid() != server) _exit(0);
    if (aflfs_watching) sigaction(SIGCHLD, &aflfs_old_sigchld, NULL); /* the harness's own */
    if (aflfs_sh) child_loop_reporting(s, test_one); /* it warms up once it has sent its pid */
    close(AFLFS_CTL_FD);
    close(AFLFS_ST_FD);
    warm_up(s, test_one); /* the server sends the pid: afl's timed window, as for AFL++'s driver */
    if (s->sync) child_loop_futex(s, test_one);
    child_loop(s, test_one);
  }
  return pid;
}

/* __AFL_SHM_ID without a fork server (afl-showmap's single-file mode execs the target directly,
 * as does afl-fuzz with AFL_NO_FORKSRV): each file argument (else stdin) runs once, its
 * coverage lands in afl's map. */
__attribute__((noreturn)) static void run_direct(aflfs_state *s, cov_test_one_fn test_one,
                                                 int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i <= argc; i++) {
    if (i < argc && argv[i][0] == '-') continue;
    if (i == argc && ran) break;
    s->file = i < argc ? argv[i] : NULL; /* i == argc: stdin, when no file was given */
    run_one(s, test_one);
    ran = 1;
  }
  exit(0);
}

/* ---- the handshake ------------------------------------------------------------------------- */

/* The first "++<major>.<minor><letter>" in buf[0..n): AFL++'s VERSION string ("++4.04c",
 * "++4.22a"), which every afl tool prints in its banner and so carries in its executable.
 * Returns 0 when found. */
static int find_aflpp_version(const unsigned char *buf, size_t n, unsigned *major, unsigned *minor) {
  const unsigned char *end = buf + n;
  for (const unsigned char *p = buf; p + 2 < end; p++) {
    p = memchr(p, '+', (size_t)(end - p));
    if (!p || p + 2 >= end) break;
    if (p[1] != '+') continue;
    const unsigned char *q = p + 2;
    unsigned v[2] = {0, 0};
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
      int digits = 0;
      while (q < end && *q >= '0' && *q <= '9' && digits < 4) {
        v[k] = v[k] * 10u + (unsigned)(*q - '0');
        q++;
        digits++;
      }
      if (!digits) ok = 0;
      else if (k == 0 && q < end && *q == '.') q++;
      else if (k == 0) ok = 0;
    }
    if (ok && q < end && *q >= 'a' && *q <= 'z') {
      *major = v[0];
      *minor = v[1];
      return 0;
    }
  }
  return -1;
}

/* The AFL++ version of the afl tool that started us (our parent, named afl-*), read from its
 * executable (/proc/<ppid>/exe), once per fork server: 0.04-0.3 ms here for afl-fuzz/afl-showmap
 * 4.04c and 4.22a (the string sits early in the file). */
static int parent_aflpp_version(unsigned *major, unsigned *minor) {
  pid_t ppid = getppid();
  if (!parent_is_afl(ppid)) return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", (int)ppid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  int rc = find_aflpp_version(m, (size_t)st.st_size, major, minor);
  munmap(m, (size_t)st.st_size);
  return rc;
}

/* The target speaks first, and neither afl-fuzz 4.04c nor 4.22a tells the target its version
 * (AFL++'s own runtime always sends the versioned hello unless AFL_OLD_FORKSERVER is set, so its
 * targets need an afl-fuzz of their own age). We choose: AUTOTUNE_AFL_HANDSHAKE when not auto;
 * else old when AFL_OLD_FORKSERVER is set (AFL++'s runtime variable); else versioned when the
 * parent afl tool is AFL++ 4.20c or later; else old, which every AFL++ 4.x accepts (4.20c+ with
 * the warning "Old fork server model is used by the target"). */
static aflfs_handshake choose_handshake(const aflfs_config *c) {
  if (c->handshake != AFLFS_HS_AUTO) return c->handshake;
  if (getenv("AFL_OLD_FORKSERVER")) return AFLFS_HS_OLD;
  unsigned major, minor;
  if (parent_aflpp_version(&major, &minor) == 0 &&
      (major > AFLFS_NEW_SINCE_MAJOR || (major == AFLFS_NEW_SINCE_MAJOR && minor >= AFLFS_NEW_SINCE_MINOR)))
    return AFLFS_HS_VERSIONED;
  return AFLFS_HS_OLD;
}

static void send4(uint32_t v) {
  if (write4(AFLFS_ST_FD, v) != 0) fatal(NULL, "cannot write to afl-fuzz (fd %d)", AFLFS_ST_FD);
}

static void hello_old(const aflfs_state *s) {
  uint32_t hello = AFLFS_OPT_ENABLED | AFLFS_OPT_MAPSIZE | AFLFS_OPT_SET_MAPSIZE(s->cfg.map_bytes);
  if (s->shm_in) hello |= AFLFS_OPT_SHDMEM_FUZZ;
  send4(hello);
  if (s->shm_in) { /* afl confirms shared-memory test cases with one word */
    uint32_t reply;
    if (read4(AFLFS_CTL_FD, &reply) != 0) _exit(0); /* afl-fuzz went away */
  }
}

static void hello_versioned(const aflfs_state *s) {
  send4(AFLFS_NEW_VERSION);
  uint32_t reply;
  if (read4(AFLFS_CTL_FD, &reply) != 0) _exit(0); /* afl-fuzz went away */
  if (reply != ~AFLFS_NEW_VERSION)
    fatal("set AUTOTUNE_AFL_HANDSHAKE=old for an afl-fuzz older than AFL++ 4.20c",
          "afl answered 0x%08x to the versioned fork-server hello 0x%08x (expected 0x%08x): it does "
          "not speak AFL++ 4.20c's handshake", reply, AFLFS_NEW_VERSION, ~AFLFS_NEW_VERSION);
  send4(AFLFS_NEW_OPT_MAPSIZE | (s->shm_in ? AFLFS_NEW_OPT_SHDMEM_FUZZ : 0u) | (s->sync ? AFLFS_NEW_OPT_FUTEX : 0u));
  send4((uint32_t)s->cfg.map_bytes); /* NEW_OPT_MAPSIZE's parameter; SHDMEM_FUZZ has none */
  send4(AFLFS_NEW_VERSION);         /* the closing word */
}

/* The server of child_loop_reporting: it reads a request only when no child lives, starts a
 * child for it, and sleeps until that child dies; then it sends what afl is owed (see the
 * stages above) and waits for the next request. Returns when a child lost its pipes (the
 * caller goes on as the relay). */
static void serve_reporting(aflfs_state *s, cov_test_one_fn test_one) {
  void *m = mmap(NULL, sizeof(aflfs_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fatal(NULL, "mmap of the child's stage word: %s", strerror(errno));
  aflfs_sh = m;
  const pid_t server = getpid();
  int retry = 0; /* a new child answers the request its dead predecessor took */
  while (!aflfs_sh->lost) {
    if (!retry) { /* no child lives: nothing for the server to reap */
      uint32_t was_killed;
      if (read4(AFLFS_CTL_FD, &was_killed) != 0) server_exit(-1, 0);
    }
    aflfs_sh->stage = AFLFS_ASKED;
    pid_t child = spawn(s, test_one, server);
    int status;
    if (wait_child(child, &status, 0) < 0) fatal(NULL, "waitpid: %s", strerror(errno));
    uint32_t stage = aflfs_sh->stage;
    if (stage == AFLFS_ASKED && !aflfs_sh->lost && !retry) {
      int unread = 0;
      if (ioctl(AFLFS_CTL_FD, FIONREAD, &unread) != 0) unread = 0;
      if (unread < 4) { /* the child took the request with it: a new child answers it */
        retry = 1;
        continue;
      }
      stage = AFLFS_IDLE; /* still in the pipe: read as any other */
    }
    retry = 0;
    int owed = stage == AFLFS_RUN || stage == AFLFS_ASKED;
    if (stage == AFLFS_REPORT) { /* sent, if afl comes back with its next request */
      short ev;
      owed = wait_readable(AFLFS_CTL_FD, AFLFS_REPORT_WAIT_MS, &ev) == 0;
    }
    if (stage == AFLFS_ASKED && write4(AFLFS_ST_FD, (uint32_t)child) != 0) server_exit(-1, 0);
    if (owed && write4(AFLFS_ST_FD, (uint32_t)status) != 0) server_exit(-1, 0);
  }
  aflfs_sh = NULL; /* the relay's children close both fds and stop between inputs */
}

/* Waits for the child to die, as waitpid(child, status, 0), but also for afl to go away: under
 * futex sync afl writes to fd 198 only once the child is dead, so while it lives the pipe can
 * only end (afl stopped or died without killing it, and the child sleeps in its futex wait for
 * ever): then the server kills the child and exits. poll() on fd 198 and a pidfd of the child;
 * plain waitpid where pidfd_open is missing (Linux before 5.3). Data on fd 198 before the child
 * died is not ours to read yet: it is left there and only the child is watched. */
static pid_t wait_child_or_afl(pid_t child, int *status) {
#ifdef SYS_pidfd_open
  int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
  if (pidfd >= 0) {
    struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = AFLFS_CTL_FD, .events = POLLIN}};
    nfds_t n = 2;
    for (;;) {
      int r = poll(p, n, -1);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 || p[0].revents) break;
      if (p[1].revents & (POLLHUP | POLLERR | POLLNVAL)) {
        close(pidfd);
        server_exit(child, 0);
      }
      if (p[1].revents) n = 1; /* a request with a child alive: read once the child is gone */
    }
    close(pidfd);
  }
#endif
  return wait_child(child, status, 0);
}

/* The server under futex sync: a request on the pipe only when afl needs a new child. It stores
 * IDLE (clearing the EXITED of the last child, which may race with afl's own IDLE store), forks,
 * sends the pid and sleeps in waitpid for the child's whole life, however many inputs it runs;
 * then it sends the wait status and only after it stores EXITED and wakes afl, which reads the
 * status as soon as it sees EXITED.
 *
 * Returns if afl turned out not to use the futex after all (the option bit is inferred, not read
 * from AFL++'s headers: afl-fuzz that does not recognise it warns "target does not support futex
 * synchronization" and syncs by the pipes). Then afl waits on the pipe for a status after the
 * first input, times out and kills the child, which is found dead by a kill signal in DONE,
 * never given a RUN: no futex-speaking afl does that (its timeout stores EXITED before the kill).
 * After AFLFS_FUTEX_STRIKES such children in a row (three timeouts at the start of the campaign)
 * the caller serves the pipes instead. */
#define AFLFS_FUTEX_STRIKES 3
static void serve_futex(aflfs_state *s, cov_test_one_fn test_one) {
  const pid_t server = getpid();
  void *m = mmap(NULL, sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fatal(NULL, "mmap of the futex child's RUN flag: %s", strerror(errno));
  aflfs_asked = m;
  int strikes = 0;
  for (;;) {
    uint32_t was_killed; /* nothing to do with it: the last child was reaped before this request */
    if (read4(AFLFS_CTL_FD, &was_killed) != 0) server_exit(-1, 0);
    __atomic_store_n(s->sync, AFLFS_SYNC_IDLE, __ATOMIC_RELEASE);
    pid_t child = spawn(s, test_one, server);
    if (write4(AFLFS_ST_FD, (uint32_t)child) != 0) server_exit(child, 0);
    int status;
    if (wait_child_or_afl(child, &status) < 0) fatal(NULL, "waitpid: %s", strerror(errno));
    if (write4(AFLFS_ST_FD, (uint32_t)status) != 0) server_exit(-1, 0);
    const int unasked = !*aflfs_asked && WIFSIGNALED(status) &&
                        (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM) &&
                        __atomic_load_n(s->sync, __ATOMIC_ACQUIRE) == AFLFS_SYNC_DONE;
    *aflfs_asked = 0;
    __atomic_store_n(s->sync, AFLFS_SYNC_EXITED, __ATOMIC_RELEASE);
    futex_wake(s->sync);
    strikes = unasked ? strikes + 1 : 0;
    if (strikes >= AFLFS_FUTEX_STRIKES) {
      say("\n[autotune] warning: afl-fuzz offered futex sync (AFL_CHILD_SYNC_SHM) but did not take it; "
          "syncing by the pipes from now on\n[autotune]   fix: set AUTOTUNE_AFL_FUTEX=0 for this afl-fuzz\n");
      s->sync = NULL;
      return;
    }
  }
}

int autotune_afl_forkserver_main(cov_test_one_fn test_one, int argc, char **argv) {
  static aflfs_state s; /* static: shared by the server and (copied into) its children */
  read_config(&s.cfg);
  map_setup(&s);
  int fl = fcntl(AFLFS_ST_FD, F_GETFL);
  if (fl == -1 || (fl & O_ACCMODE) == O_RDONLY) run_direct(&s, test_one, argc, argv);
  /* A file argument (afl's @@) is read as given, like libFuzzer/libAFLDriver do; without one
   * the test cases come from shared memory when afl offers it, else from stdin. */
  const char *fuzz_id = getenv("__AFL_SHM_FUZZ_ID");
  s.file = file_argument(argc, argv);
  if (!s.file && s.cfg.shm_input && fuzz_id && *fuzz_id) {
    s.shm_in = shm_attach("__AFL_SHM_FUZZ_ID", 1);
  }
  s.sync = sync_word(&s);
  if (choose_handshake(&s.cfg) == AFLFS_HS_VERSIONED) {
    hello_versioned(&s);
  } else {
    s.sync = NULL; /* afl turns its futex sync off for the old hello */
    hello_old(&s);
  }
  if (s.sync) serve_futex(&s, test_one); /* returns: afl did not take the futex */
  const int persistent = s.cfg.iters > 1;
  if (persistent && s.cfg.child_reports) serve_reporting(&s, test_one); /* returns: lost pipes */
  watch_children();
  pid_t server = getpid(), child = -1;
  int stopped = 0;
  for (;;) {
    uint32_t was_killed, status32;
    int status = 0;
    if (read4(AFLFS_CTL_FD, &was_killed) != 0) server_exit(stopped ? child : -1, 0);
    if (stopped && was_killed) { /* afl killed the stopped child after a timeout: reap it */
      stopped = 0;
      wait_child(child, &status, 0);
    }
    int resumed = 0;
    if (stopped) { /* resume it, unless something else killed it meanwhile: then reap, fork */
      int alive = 1;
      if (aflfs_child_ended) {
        aflfs_child_ended = 0; /* cleared first: a death after this sets it again */
        alive = wait_child(child, &status, WNOHANG) == 0;
      }
      if (alive && kill(child, SIGCONT) == 0) resumed = 1;
      stopped = 0;
    }
    if (!resumed) child = spawn(&s, test_one, server);
    if (write4(AFLFS_ST_FD, (uint32_t)child) != 0) server_exit(child, 0);
    if (wait_child(child, &status, persistent ? WUNTRACED : 0) < 0)
      fatal(NULL, "waitpid: %s", strerror(errno));
    if (WIFSTOPPED(status)) stopped = 1;
    status32 = (uint32_t)status;
    if (write4(AFLFS_ST_FD, status32) != 0) server_exit(child, 0);
  }
}
