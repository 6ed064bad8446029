/* probe_server.c - the probe server (driver mode 1, docs/RUNTIME.md "The probe protocol").
 *
 * The server process reads 8-byte commands from $AUTOTUNE_PROBE_CTL_FD and answers each with one
 * reply on $AUTOTUNE_PROBE_ST_FD. Inputs run in a persistent forked child that shares the input
 * buffer ($DIR/input.buf) and the census (anonymous MAP_SHARED memory created before the fork).
 * The child runs an input, tells the server "harness returned" (one byte), merges the input's
 * keys into the census (RUN) or writes its trace (TRACE), then sends the reply. The time limit
 * covers the harness only: once the byte arrived the merge is never interrupted, so a census
 * can't be left half-updated. A child that dies or overruns the limit is reaped (SIGKILL) and
 * re-forked at the next input; nothing of that input reaches the census.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"

enum { OP_RUN = 1, OP_TRACE = 2, OP_DUMP = 3, OP_QUIT = 4 };
enum { ST_OK = 0, ST_CRASH = 1, ST_HANG = 2, ST_FULL = 3, ST_ERROR = 4 };
/* detail of a crash when the child exited instead of being killed by a signal */
#define DETAIL_EXIT_BASE 256u

typedef struct probe_reply { /* no padding: 8 + 8 + 52 + 52 bytes */
  uint32_t status;
  uint32_t detail;
  uint64_t exec_ns;
  uint32_t new_keys[COV_N_METRICS];
  uint32_t total_keys[COV_N_METRICS];
} probe_reply;
_Static_assert(sizeof(probe_reply) == 16 + 8 * COV_N_METRICS, "reply layout");

typedef struct probe_cfg {
  int ctl_fd, st_fd;
  const char *dir;
  uint64_t max_input;
  uint32_t capacity;
  uint32_t timeout_ms;
  uint32_t metrics;
  uint64_t seed;
} probe_cfg;

typedef struct probe_state {
  probe_cfg cfg;
  uint8_t *inbuf; /* u32 len; u32 reserved; u8 data[max_input] */
  cov_census *census;
  pid_t child;
  int to_child, from_child; /* pipes to / from the child */
} probe_state;

static int env_fail(const char *var, const char *val, const char *valid) {
  fprintf(stderr, "autotune probe server: %s='%s' is not valid; valid values: %s\n", var,
          val ? val : "", valid);
  return 2;
}

static int env_u64(const char *var, uint64_t dflt, uint64_t lo, uint64_t hi, int pow2,
                   uint64_t *out, const char *valid) {
  const char *v = getenv(var);
  if (!v || !*v) {
    *out = dflt;
    return 0;
  }
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 0);
  if (errno || *end || v[0] == '-' || x < lo || x > hi || (pow2 && (x & (x - 1))))
    return env_fail(var, v, valid);
  *out = x;
  return 0;
}

/* An open file descriptor named by $var (required). */
static int env_fd(const char *var, int *fd) {
  uint64_t v;
  int rc = env_u64(var, UINT64_MAX, 0, 1u << 20, 0, &v, "an open file descriptor number");
  if (rc) return rc;
  *fd = (int)v;
  if (v == UINT64_MAX || fcntl(*fd, F_GETFD) < 0)
    return env_fail(var, getenv(var), "an open file descriptor number (pass it with pass_fds)");
  return 0;
}

static int parse_cfg(probe_cfg *c) {
  uint64_t v;
  int rc;
  if ((rc = env_fd("AUTOTUNE_PROBE_CTL_FD", &c->ctl_fd)) || (rc = env_fd("AUTOTUNE_PROBE_ST_FD", &c->st_fd)))
    return rc;
  c->dir = getenv("AUTOTUNE_PROBE_DIR");
  struct stat st;
  if (!c->dir || !*c->dir || stat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return env_fail("AUTOTUNE_PROBE_DIR", c->dir, "an existing directory");
  if ((rc = env_u64("AUTOTUNE_PROBE_MAX_INPUT", 1u << 20, 1, 1u << 30, 0, &c->max_input,
                    "1 .. 2^30 bytes")))
    return rc;
  if ((rc = env_u64("AUTOTUNE_PROBE_CAPACITY", 1u << 18, 1u << 4, 1u << 26, 1, &v,
                    "a power of two from 16 to 2^26")))
    return rc;
  c->capacity = (uint32_t)v;
  if ((rc = env_u64("AUTOTUNE_PROBE_TIMEOUT_MS", 1000, 1, 86400000, 0, &v, "1 .. 86400000 ms")))
    return rc;
  c->timeout_ms = (uint32_t)v;
  if ((rc = env_u64("AUTOTUNE_SEED", 0, 0, UINT64_MAX, 0, &c->seed, "an unsigned 64-bit integer")))
    return rc;
  const char *ms = getenv("AUTOTUNE_PROBE_METRICS");
  c->metrics = COV_ALL_METRICS;
  if (ms && *ms) {
    const char *badp = NULL;
    size_t badlen = 0;
    c->metrics = cov_metric_mask_parse(ms, &badp, &badlen);
    if (!c->metrics)
      return env_fail("AUTOTUNE_PROBE_METRICS", ms,
                      "'all' or a comma list of edge, ngram-2 .. ngram-8, ctx, caller, ctx-2, "
                      "ctx-4, ctx-8, guard");
  }
  char err[512];
  if (cov_census_check(c->metrics, err, sizeof err)) {
    fprintf(stderr, "autotune probe server: %s\n", err);
    return 2;
  }
  return 0;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int read_full(int fd, void *buf, size_t n) {
  char *p = buf;
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return got ? -2 : (r == 0 ? 0 : -1); /* 0: clean EOF */
    got += (size_t)r;
  }
  return 1;
}

static int write_full(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* ---- the child ---------------------------------------------------------------------------- */
__attribute__((noreturn)) static void child_main(probe_state *s, cov_test_one_fn test_one,
                                                 int rfd, int wfd) {
  close(s->cfg.ctl_fd);
  close(s->cfg.st_fd);
  signal(SIGPIPE, SIG_DFL);
  for (;;) {
    uint32_t cmd[2];
    if (read_full(rfd, cmd, sizeof cmd) != 1) _exit(0); /* the server went away */
    uint32_t len;
    memcpy(&len, s->inbuf, 4);
    /* a private copy of exactly len bytes, so overreads are caught and the buffer stays intact */
    uint8_t *data = malloc(len ? len : 1);
    if (!data) _exit(70);
    memcpy(data, s->inbuf + 8, len);
    cov_exec_begin();
    uint64_t t0 = now_ns();
    test_one(data, len);
    uint64_t t1 = now_ns();
    cov_exec_end();
    free(data);
    char done = 'D';
    if (write_full(wfd, &done, 1) != 0) _exit(0);
    probe_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.exec_ns = t1 - t0;
    if (cmd[0] == OP_TRACE) {
      int err = cov_census_trace(s->census, s->cfg.dir, cmd[1], rep.new_keys);
      if (err) {
        rep.status = ST_ERROR;
        rep.detail = (uint32_t)err;
      }
    } else {
      int full = cov_census_merge(s->census, rep.new_keys);
      if (full >= 0) {
        rep.status = ST_FULL;
        rep.detail = (uint32_t)full;
      }
    }
    cov_census_totals(s->census, rep.total_keys);
    if (write_full(wfd, &rep, sizeof rep) != 0) _exit(0);
  }
}

static int spawn(probe_state *s, cov_test_one_fn test_one) {
  int down[2], up[2];
  if (pipe2(down, O_CLOEXEC) != 0) return errno;
  if (pipe2(up, O_CLOEXEC) != 0) {
    int e = errno;
    close(down[0]);
    close(down[1]);
    return e;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
    return e;
  }
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    child_main(s, test_one, down[0], up[1]);
  }
  close(down[0]);
  close(up[1]);
  s->child = pid;
  s->to_child = down[1];
  s->from_child = up[0];
  return 0;
}

static void reap(probe_state *s, int kill_it, int *wstatus) {
  if (s->child <= 0) return;
  if (kill_it) kill(s->child, SIGKILL);
  int st = 0;
  while (waitpid(s->child, &st, 0) < 0 && errno == EINTR) {
  }
  if (wstatus) *wstatus = st;
  close(s->to_child);
  close(s->from_child);
  s->child = 0;
}

static void fill_totals(probe_state *s, probe_reply *rep) {
  cov_census_totals(s->census, rep->total_keys);
}

/* Run the input in the buffer in the child; fills rep. */
static void run_input(probe_state *s, cov_test_one_fn test_one, uint32_t op, uint32_t arg,
                      probe_reply *rep) {
  uint32_t len;
  memcpy(&len, s->inbuf, 4);
  if (len > s->cfg.max_input) {
    rep->status = ST_ERROR;
    rep->detail = E2BIG;
    fill_totals(s, rep);
    return;
  }
  if (s->child <= 0) {
    int e = spawn(s, test_one);
    if (e) {
      rep->status = ST_ERROR;
      rep->detail = (uint32_t)e;
      fill_totals(s, rep);
      return;
    }
  }
  uint64_t t0 = now_ns();
  uint32_t cmd[2] = {op, arg};
  int ok = write_full(s->to_child, cmd, sizeof cmd) == 0;
  /* wait for "harness returned" within the time limit */
  int got_done = 0, timed_out = 0;
  if (ok) {
    uint64_t deadline = t0 + (uint64_t)s->cfg.timeout_ms * 1000000ull;
    for (;;) {
      uint64_t t = now_ns();
      int left = t >= deadline ? 0 : (int)((deadline - t + 999999) / 1000000);
      struct pollfd p = {.fd = s->from_child, .events = POLLIN};
      int r = poll(&p, 1, left);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) { /* time is up */
        timed_out = 1;
        break;
      }
      char c;
      ssize_t n = read(s->from_child, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      got_done = n == 1;
      break;
    }
  }
  if (timed_out) { /* still running (or dying right now: then its signal decides) */
    int st;
    reap(s, 1, &st);
    if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
      rep->status = ST_CRASH;
      rep->detail = (uint32_t)WTERMSIG(st);
    } else {
      rep->status = ST_HANG;
      rep->detail = s->cfg.timeout_ms;
    }
    rep->exec_ns = now_ns() - t0;
    fill_totals(s, rep);
    return;
  }
  if (!got_done) { /* the child died inside the harness */
    int st = 0;
    reap(s, 0, &st);
    rep->status = ST_CRASH;
    rep->detail = WIFSIGNALED(st) ? (uint32_t)WTERMSIG(st)
                                  : DETAIL_EXIT_BASE + (uint32_t)WEXITSTATUS(st);
    rep->exec_ns = now_ns() - t0;
    fill_totals(s, rep);
    return;
  }
  if (read_full(s->from_child, rep, sizeof *rep) != 1) { /* died in the merge: our bug */
    int st = 0;
    reap(s, 0, &st);
    memset(rep, 0, sizeof *rep);
    rep->status = ST_ERROR;
    rep->detail = EPIPE;
    rep->exec_ns = now_ns() - t0;
    fill_totals(s, rep);
  }
}

int autotune_probe_server_main(cov_test_one_fn test_one) {
  probe_state s;
  memset(&s, 0, sizeof s);
  int rc = parse_cfg(&s.cfg);
  if (rc) return rc;
  signal(SIGPIPE, SIG_IGN);

  char path[4200];
  snprintf(path, sizeof path, "%s/input.buf", s.cfg.dir);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  size_t inbytes = 8 + (size_t)s.cfg.max_input;
  if (fd < 0 || ftruncate(fd, (off_t)inbytes) != 0) {
    fprintf(stderr, "autotune probe server: cannot create %s: %s\n", path, strerror(errno));
    return 1;
  }
  s.inbuf = mmap(NULL, inbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (s.inbuf == MAP_FAILED) {
    fprintf(stderr, "autotune probe server: cannot map %s: %s\n", path, strerror(errno));
    return 1;
  }
  size_t cbytes = cov_census_bytes(s.cfg.capacity, s.cfg.metrics);
  void *cmem = mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
  if (cmem == MAP_FAILED) {
    fprintf(stderr, "autotune probe server: cannot map %zu bytes of census tables: %s "
            "(lower AUTOTUNE_PROBE_CAPACITY)\n", cbytes, strerror(errno));
    return 1;
  }
  s.census = cov_census_init(cmem, cbytes, s.cfg.capacity, s.cfg.metrics);
  cov_set_seed(s.cfg.seed);
  cov_census_sink_set(s.census);

  for (;;) {
    uint32_t cmd[2];
    int r = read_full(s.cfg.ctl_fd, cmd, sizeof cmd);
    if (r != 1) break; /* the client went away */
    probe_reply rep;
    memset(&rep, 0, sizeof rep);
    switch (cmd[0]) {
      case OP_RUN:
      case OP_TRACE:
        run_input(&s, test_one, cmd[0], cmd[1], &rep);
        break;
      case OP_DUMP: {
        uint64_t t0 = now_ns();
        int e = cov_census_dump(s.census, s.cfg.dir);
        if (e) {
          rep.status = ST_ERROR;
          rep.detail = (uint32_t)e;
        }
        rep.exec_ns = now_ns() - t0;
        fill_totals(&s, &rep);
        break;
      }
      case OP_QUIT:
        fill_totals(&s, &rep);
        reap(&s, 1, NULL);
        (void)write_full(s.cfg.st_fd, &rep, sizeof rep);
        return 0;
      default:
        rep.status = ST_ERROR;
        rep.detail = EINVAL;
        fill_totals(&s, &rep);
    }
    if (write_full(s.cfg.st_fd, &rep, sizeof rep) != 0) break;
  }
  reap(&s, 1, NULL);
  return 0;
}
