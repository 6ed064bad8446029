/* aflfs_internal.h - what the fork server's files share (aflfs.h is the API, docs/DESIGN.md
 * "Running under afl-fuzz" the contract). The files, by what they serve:
 *   aflfs.c            the entry: set-up, handshake, then the serving mode; spawning and reaping
 *                      children (every mode's server)
 *   aflfs_config.c     errors where the afl-fuzz user sees them; the AUTOTUNE_AFL_* variables
 *   aflfs_map.c        afl's shared memory as the counters, the shared index (file), the futex word,
 *                      wide counters exported into afl's map
 *   aflfs_input.c      test cases, one input, the warm-up, the run without a fork server
 *   aflfs_handshake.c  the two hellos (old, versioned) and how one is chosen
 *   aflfs_relay.c      AUTOTUNE_AFL_STATUS=server: AFL++'s relay (SIGSTOP/SIGCONT, SIGCHLD)
 *   aflfs_reporting.c  AUTOTUNE_AFL_STATUS=child (the default): the child answers afl itself
 *   aflfs_futex.c      AFL++ 5.x's futex sync of a persistent child
 * Every symbol here is aflfs_-prefixed (the runtime archive links into the user's program) and
 * hidden (addressed PC-relative, as a file's static is). */
#ifndef AUTOTUNE_AFLFS_INTERNAL_H
#define AUTOTUNE_AFLFS_INTERNAL_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aflfs.h"
#include "bigmap.h"
#include "cov.h"

#define AFLFS_HIDDEN __attribute__((visibility("hidden")))

/* ---- configuration and the server's state (aflfs_config.c, aflfs_map.c) -------------------- */

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
  int guard_pages;        /* AUTOTUNE_AFL_GUARD_MAP=pages (default): afl's map over a guard build's counters */
  const char *index_file; /* AUTOTUNE_INDEX_FILE or NULL */
  uint32_t union_mask;    /* AUTOTUNE_AFL_UNION: these metrics' keys together in afl's map (0: off) */
} aflfs_config;

/* One per process: the server's, copied into each child by fork. */
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

/* ---- the process-wide state of the serving modes (defined in aflfs.c) -----------------------
 * Everything the modes keep outside aflfs_state, in one place: set by the server before it forks,
 * inherited by each child, read by aflfs_spawn to pick the child's loop, and (child_ended) written
 * by the relay's SIGCHLD handler, which touches nothing else. */
struct aflfs_shared; /* the reporting child's stage word (aflfs_reporting.c) */
typedef struct aflfs_process {
  /* AUTOTUNE_AFL_STATUS=child: MAP_SHARED, the child writes, the server reads; NULL: another mode
   * (the relay's children close both fds and stop between inputs) */
  volatile struct aflfs_shared *sh;
  /* futex sync: MAP_SHARED, the current futex child was given a RUN (aflfs_futex.c) */
  volatile uint32_t *asked;
  /* the relay: set by SIGCHLD (SA_NOCLDSTOP: terminations only), a child may have died
   * (aflfs_relay.c); the handler's only store */
  volatile sig_atomic_t child_ended;
  int watching;                 /* the relay's SIGCHLD handler is installed */
  struct sigaction old_sigchld; /* the harness's SIGCHLD disposition, given back to each child */
} aflfs_process;
extern aflfs_process aflfs_proc AFLFS_HIDDEN;

/* ---- errors and configuration (aflfs_config.c) ----------------------------------------------- */

/* msg on our stderr and, when that is /dev/null under an afl tool, on the afl tool's stderr. */
void aflfs_say(const char *msg) AFLFS_HIDDEN;
/* "[autotune] error: ..." (and "fix: ..." unless fix is NULL) via aflfs_say, then _exit(1). */
__attribute__((format(printf, 2, 3), noreturn)) void aflfs_fatal(const char *fix, const char *fmt, ...)
    AFLFS_HIDDEN;
int aflfs_parent_is_afl(pid_t ppid) AFLFS_HIDDEN; /* its comm starts with "afl-" */
int aflfs_parse_u64(const char *s, uint64_t *out) AFLFS_HIDDEN; /* decimal digits only; 0 = ok */
void aflfs_read_config(aflfs_config *c) AFLFS_HIDDEN;             /* or aflfs_fatal */

/* ---- the map (aflfs_map.c) --------------------------------------------------------------------- */

void *aflfs_shm_attach(const char *var, int readonly) AFLFS_HIDDEN; /* the SysV segment $var */
void aflfs_map_setup(aflfs_state *s) AFLFS_HIDDEN;
uint32_t *aflfs_sync_word(const aflfs_state *s) AFLFS_HIDDEN;       /* or NULL: the pipes */
void aflfs_export_wide(aflfs_state *s) AFLFS_HIDDEN;                /* W > 8: min(count, 255) */

/* ---- test cases (aflfs_input.c) ------------------------------------------------------------- */

const char *aflfs_file_argument(int argc, char **argv) AFLFS_HIDDEN; /* afl's @@, or NULL */
void aflfs_run_one(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;
void aflfs_warm_up(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;
__attribute__((noreturn)) void aflfs_run_direct(aflfs_state *s, cov_test_one_fn test_one, int argc,
                                                char **argv) AFLFS_HIDDEN;

/* ---- the handshake (aflfs_handshake.c) ------------------------------------------------------- */

aflfs_handshake aflfs_choose_handshake(const aflfs_config *c) AFLFS_HIDDEN;
void aflfs_hello_old(const aflfs_state *s) AFLFS_HIDDEN;
void aflfs_hello_versioned(const aflfs_state *s) AFLFS_HIDDEN;

/* ---- the modes: each a server loop and the loop of its children ------------------------------ */

/* aflfs_relay.c: never returns */
__attribute__((noreturn)) void aflfs_serve_relay(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;
__attribute__((noreturn)) void aflfs_child_loop_relay(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;
/* aflfs_reporting.c: returns when a child lost its pipes (the caller goes on as the relay) */
void aflfs_serve_reporting(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;
__attribute__((noreturn)) void aflfs_child_loop_reporting(aflfs_state *s, cov_test_one_fn test_one)
    AFLFS_HIDDEN;
/* aflfs_futex.c: returns when afl did not take the futex (the caller serves the pipes) */
void aflfs_serve_futex(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;
__attribute__((noreturn)) void aflfs_child_loop_futex(aflfs_state *s, cov_test_one_fn test_one) AFLFS_HIDDEN;

/* aflfs.c: a child of the server for the mode in aflfs_proc / s->sync (never returns in the child) */
pid_t aflfs_spawn(aflfs_state *s, cov_test_one_fn test_one, pid_t server) AFLFS_HIDDEN;
/* kill and reap the child (if > 0), then _exit(code) */
__attribute__((noreturn)) void aflfs_server_exit(pid_t child, int code) AFLFS_HIDDEN;

/* ---- afl's pipes: one host-order u32 at a time ------------------------------------------------ */

static inline int aflfs_read4(int fd, uint32_t *v) {
  size_t got = 0;
  while (got < 4) {
    ssize_t r = read(fd, (char *)v + got, 4 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static inline int aflfs_write4(int fd, uint32_t v) {
  for (;;) {
    ssize_t r = write(fd, &v, 4);
    if (r < 0 && errno == EINTR) continue;
    return r == 4 ? 0 : -1;
  }
}

/* poll() for input on fd, retried on EINTR; returns poll's result, *revents its events. */
static inline int aflfs_wait_readable(int fd, int timeout_ms, short *revents) {
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  int r;
  do r = poll(&pfd, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  *revents = pfd.revents;
  return r;
}

/* waitpid, retried on EINTR */
static inline pid_t aflfs_wait_child(pid_t pid, int *status, int options) {
  for (;;) {
    pid_t r = waitpid(pid, status, options);
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

#endif
