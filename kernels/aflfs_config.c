/* aflfs_config.c - the fork server's errors, where the afl-fuzz user sees them, and its
 * configuration: the AUTOTUNE_* variables, read once and validated before the hello. */
#include "aflfs_internal.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

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

int aflfs_parent_is_afl(pid_t ppid) {
  char path[64], comm[64] = {0};
  snprintf(path, sizeof path, "/proc/%d/comm", (int)ppid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, comm, sizeof comm - 1);
  close(fd);
  return n > 4 && strncmp(comm, "afl-", 4) == 0;
}

void aflfs_say(const char *msg) {
  size_t len = strlen(msg);
  if (write(2, msg, len) < 0) { /* nothing better to do */
  }
  pid_t ppid = getppid();
  if (!fd_is_devnull(2) || !aflfs_parent_is_afl(ppid)) return;
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

void aflfs_fatal(const char *fix, const char *fmt, ...) {
  char msg[1024];
  int n = snprintf(msg, sizeof msg, "\n[autotune] error: ");
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  if (fix && n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, "\n[autotune]   fix: %s\n", fix);
  else if (n < (int)sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, "\n");
  aflfs_say(msg);
  _exit(1);
}

/* ---- configuration (read once, validated) -------------------------------------------------- */

int aflfs_parse_u64(const char *s, uint64_t *out) {
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

/* $var as an index into names[] (n of them): unset or empty is names[0], the default; any other
 * value is an error naming the fix. */
static int env_choice(const char *var, const char *const names[], int n, const char *fix) {
  const char *v = getenv(var);
  if (!v || !*v) return 0;
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  aflfs_fatal(fix, "bad %s=%s", var, v);
}

/* AUTOTUNE_AFL_UNION, the probe's afl-fuzz engine: afl-fuzz sees every listed metric's keys at
 * once (a flat 8-bit map of AUTOTUNE_MAP_SIZE slots), so it keeps an input new for any of them.
 * The metrics' mask, 0 when off. */
static uint32_t read_union(const cov_config *cc) {
  const char *un = getenv("AUTOTUNE_AFL_UNION");
  if (!un || !*un || strcmp(un, "0") == 0) return 0;
  char err[512];
  const char *badp = NULL;
  size_t badn = 0;
  uint32_t mask = strcmp(un, "1") == 0 ? COV_ALL_METRICS : cov_metric_mask_parse(un, &badp, &badn);
  if (!mask)
    aflfs_fatal("set AUTOTUNE_AFL_UNION to 1 (every metric) or a comma-separated list of metrics",
                "bad AUTOTUNE_AFL_UNION=%s: unknown metric '%.*s'", un, (int)badn, badp ? badp : "");
  if (cov_census_check(mask, err, sizeof err) != 0)
    aflfs_fatal("build the harness with autotune cc's default (full) kind: unset AUTOTUNE_CC_INSTRUMENT",
                "AUTOTUNE_AFL_UNION=%s: %s", un, err);
  if (cc->layout != BM_FLAT || cc->map_size & (cc->map_size - 1))
    aflfs_fatal("set AUTOTUNE_LAYOUT=flat and AUTOTUNE_MAP_SIZE to a power of two",
                "AUTOTUNE_AFL_UNION needs a flat map of a power-of-two size");
  return mask;
}

void aflfs_read_config(aflfs_config *c) {
  memset(c, 0, sizeof *c);
  char err[512];
  static cov_config cc; /* static: index_file points into it */
  if (cov_config_from_env(&cc, err, sizeof err) != 0)
    aflfs_fatal("correct or unset the variable (docs/DESIGN.md, runtime configuration)", "%s", err);
  if (cc.map_size > AFLFS_MAX_MAPSIZE)
    aflfs_fatal("set AUTOTUNE_MAP_SIZE to at most 8388608 (2^23)",
                "AUTOTUNE_MAP_SIZE=%llu is larger than the largest map afl-fuzz's fork server can be "
                "told (8388608 bytes)", (unsigned long long)cc.map_size);
  /* every layout cov_config_from_env accepts runs here; a dense one needs H >= C */
  if (cc.layout != BM_FLAT && cc.map_size > cc.index_size)
    aflfs_fatal("make AUTOTUNE_INDEX_SIZE at least AUTOTUNE_MAP_SIZE",
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
  if (it && *it && (aflfs_parse_u64(it, &iv) || iv < 1 || iv > INT_MAX))
    aflfs_fatal("set AUTOTUNE_AFL_PERSISTENT to the inputs per child process (1 = a fork per input)",
                "bad AUTOTUNE_AFL_PERSISTENT=%s: must be an integer between 1 and %d", it, INT_MAX);
  c->iters = (uint32_t)iv;

  static const char *const on_off[] = {"1", "0"};
  c->shm_input = env_choice("AUTOTUNE_AFL_SHM_INPUT", on_off, 2, "set AUTOTUNE_AFL_SHM_INPUT to 0 or 1") == 0;
  c->union_mask = read_union(&cc);
  static const char *const statuses[] = {"child", "server"}; /* server: AFL++'s relay */
  c->child_reports =
      env_choice("AUTOTUNE_AFL_STATUS", statuses, 2, "set AUTOTUNE_AFL_STATUS to child (the default) or server") == 0;
  c->futex = env_choice("AUTOTUNE_AFL_FUTEX", on_off, 2,
                        "set AUTOTUNE_AFL_FUTEX to 1 (accept AFL++ 5.x's futex sync when afl-fuzz offers it, "
                        "the default) or 0 (pipes only)") == 0;
  static const char *const guard_maps[] = {"pages", "copy"};
  c->guard_pages = env_choice("AUTOTUNE_AFL_GUARD_MAP", guard_maps, 2,
                              "set AUTOTUNE_AFL_GUARD_MAP to pages (a guard build counts straight into afl's map "
                              "where it fits, the default) or copy (its counters copied after each input)") == 0;
  static const char *const handshakes[] = {"auto", "old", "versioned"}; /* aflfs_handshake's order */
  c->handshake = (aflfs_handshake)env_choice(
      "AUTOTUNE_AFL_HANDSHAKE", handshakes, 3,
      "set AUTOTUNE_AFL_HANDSHAKE to auto, old (AFL++ before 4.20c) or versioned (4.20c and later)");
}
