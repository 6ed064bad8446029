/* protocol_driver.c - a minimal fake fuzzer for benchmarks/protocol_cost.py (issue 26): drives a
 * fork-server target through one sync protocol as fast as the protocol allows, and prints the
 * wall-clock microseconds per execution. No mutation, no coverage evaluation: per execution it
 * does what every AFL++ does around the target and nothing else (writes the next test case to
 * shared memory, clears the map, runs the target, waits), so the time measured is the target's
 * plus the protocol's.
 *
 *   protocol_driver [-t MS] [-T SECONDS] pipes|futex EXECS INPUT... -- TARGET [ARGS...]
 *
 * pipes: AFL++ 4.04c..4.3x's protocol (either handshake, whichever the target sends; per
 *   execution: was_killed on fd 198, the pid and a wait status on fd 199; a persistent child
 *   answers itself or through its server, the driver cannot tell and need not).
 * futex: AFL++ 5.x's (AFL_CHILD_SYNC_SHM set; the target must advertise the option in the
 *   versioned handshake, else exit 3): a new child by the pipes, then RUN / DONE in the sync word.
 * -t MS: a timeout per execution, as afl-fuzz's (pipes: SIGKILL after MS without a status, then
 *   was_killed = 1 in the next request; futex: EXITED, a wake, SIGKILL, the status); without it
 *   the driver waits for ever (the benchmark's inputs do not hang).
 * -T SECONDS: stop after that long even if fewer than EXECS ran (the soak's time box).
 * The environment is passed to the target as is (the caller sets AUTOTUNE_*, __AFL_PERSISTENT).
 * Output, one line: "execs N seconds S us_per_exec U children C ok O crash R timeout T exit E"
 * (outcomes: ok = a stopped child or DONE; crash = ended by a signal other than our kill; exit =
 * ended by exit(); timeout = killed by us). Also the fault suite's futex check
 * (tests/test_fault_suite.py), since no AFL++ 5.x afl-fuzz runs here.
 * Our own code, written from the protocol as docs/DESIGN.md describes it. C11, Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CTL_FD 198
#define ST_FD 199
#define MAP_BYTES 65536u
#define SYNC_OFF (MAP_BYTES + 8u) /* where afl-fuzz 5.x puts the word after a 64 KiB SysV map */
#define FUZZ_BYTES (1u << 20)
#define OPT_FUTEX 0x4u
#define OPT_MAPSIZE 0x1u
#define OPT_AUTODICT 0x800u
#define OLD_ENABLED 0x80000001u
#define OLD_SHDMEM 0x01000000u
#define OLD_AUTODICT 0x10000000u
enum { IDLE = 0, RUN = 1, DONE = 2, EXITED = 3 };

static int ctl_w, st_r;

static void die(const char *what) {
  fprintf(stderr, "protocol_driver: %s: %s\n", what, errno ? strerror(errno) : "protocol error");
  exit(2);
}

static uint32_t rd(void) {
  uint32_t v;
  size_t got = 0;
  while (got < 4) {
    ssize_t r = read(st_r, (char *)&v + got, 4 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) die("read from the target");
    got += (size_t)r;
  }
  return v;
}

static void wr(uint32_t v) {
  if (write(ctl_w, &v, 4) != 4) die("write to the target");
}

static void skip(uint32_t n) { /* an autodictionary we do not want */
  char buf[256];
  while (n) {
    ssize_t r = read(st_r, buf, n < sizeof buf ? n : sizeof buf);
    if (r <= 0) die("read the dictionary");
    n -= (uint32_t)r;
  }
}

static int shm_new(size_t bytes, void **addr) {
  int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0) die("shmget");
  *addr = shmat(id, NULL, 0);
  if (*addr == (void *)-1) die("shmat");
  shmctl(id, IPC_RMID, NULL); /* gone when both sides detach */
  return id;
}

static void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0); }

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* DONE or EXITED, or IDLE when timeout_ms (> 0) passes first */
static uint32_t wait_done_or_exited(uint32_t *w, int timeout_ms) {
  const double deadline = now_s() + timeout_ms / 1000.0;
  for (;;) {
    uint32_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    if (v == DONE || v == EXITED) return v;
    if (timeout_ms <= 0) {
      syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0);
      continue;
    }
    double left = deadline - now_s();
    if (left <= 0) return IDLE;
    struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    syscall(SYS_futex, w, FUTEX_WAIT, v, &ts, NULL, 0);
  }
}

/* the status word, or -1 when timeout_ms (> 0) passes first */
static int status_within(int timeout_ms) {
  if (timeout_ms > 0) {
    struct pollfd p = {.fd = st_r, .events = POLLIN};
    int r;
    do r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0) return -1;
  }
  return (int)rd();
}

static long n_ok, n_crash, n_timeout, n_exit;

static void count(int status, int killed) {
  if (killed) n_timeout++;
  else if (WIFSIGNALED(status)) n_crash++;
  else if (WIFEXITED(status)) n_exit++;
  else n_ok++;
}

typedef struct {
  char *data;
  uint32_t len;
} input;

static input load(const char *path) {
  input in = {NULL, 0};
  FILE *f = fopen(path, "rb");
  if (!f) die(path);
  in.data = malloc(FUZZ_BYTES);
  if (!in.data) die("malloc");
  in.len = (uint32_t)fread(in.data, 1, FUZZ_BYTES - 4, f);
  fclose(f);
  return in;
}

int main(int argc, char **argv) {
  int timeout_ms = 0;
  double limit_s = 0;
  while (argc > 2 && (strcmp(argv[1], "-t") == 0 || strcmp(argv[1], "-T") == 0)) {
    if (argv[1][1] == 't') timeout_ms = atoi(argv[2]);
    else limit_s = atof(argv[2]);
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  int sep = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) { sep = i; break; }
  if (argc < 5 || !sep || sep < 4 || sep + 1 >= argc ||
      (strcmp(argv[1], "pipes") != 0 && strcmp(argv[1], "futex") != 0)) {
    fprintf(stderr, "usage: protocol_driver [-t MS] [-T SECONDS] pipes|futex EXECS INPUT... -- TARGET [ARGS...]\n");
    return 2;
  }
  const int futex = strcmp(argv[1], "futex") == 0;
  const long execs = strtol(argv[2], NULL, 10);
  const int n_in = sep - 3;
  input *ins = calloc((size_t)n_in, sizeof *ins);
  if (!ins || execs < 1) die("arguments");
  for (int i = 0; i < n_in; i++) ins[i] = load(argv[3 + i]);

  uint8_t *map;
  uint8_t *fuzz;
  int map_id = shm_new(SYNC_OFF + 4, (void **)&map);
  int fuzz_id = shm_new(FUZZ_BYTES, (void **)&fuzz);
  uint32_t *sync = (uint32_t *)(void *)(map + SYNC_OFF);
  __atomic_store_n(sync, IDLE, __ATOMIC_RELEASE);
  char buf[32];
  snprintf(buf, sizeof buf, "%d", map_id);
  setenv("__AFL_SHM_ID", buf, 1);
  snprintf(buf, sizeof buf, "%d", fuzz_id);
  setenv("__AFL_SHM_FUZZ_ID", buf, 1);
  if (futex) {
    snprintf(buf, sizeof buf, "%u", SYNC_OFF);
    setenv("AFL_CHILD_SYNC_SHM", buf, 1);
  }

  int ctl[2], st[2];
  if (pipe(ctl) || pipe(st)) die("pipe");
  pid_t server = fork();
  if (server < 0) die("fork");
  if (server == 0) {
    if (dup2(ctl[0], CTL_FD) < 0 || dup2(st[1], ST_FD) < 0) _exit(1);
    close(ctl[0]); close(ctl[1]); close(st[0]); close(st[1]);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) { dup2(devnull, 0); dup2(devnull, 1); }
    execv(argv[sep + 1], argv + sep + 1);
    _exit(127);
  }
  close(ctl[0]);
  close(st[1]);
  ctl_w = ctl[1];
  st_r = st[0];

  /* the handshake, either kind */
  uint32_t hello = rd(), opts = 0;
  if (hello == 0x41464C01u) {
    wr(~hello);
    opts = rd();
    if (opts & OPT_MAPSIZE) (void)rd();
    if (opts & OPT_AUTODICT) skip(rd());
    if (rd() != hello) die("the versioned handshake's closing word");
  } else if ((hello & OLD_ENABLED) == OLD_ENABLED) {
    if (hello & (OLD_SHDMEM | OLD_AUTODICT)) wr(OLD_ENABLED | OLD_SHDMEM); /* no dictionary, please */
  } else {
    die("the hello");
  }
  if (futex && !(opts & OPT_FUTEX)) {
    fprintf(stderr, "protocol_driver: the target did not accept futex sync (options 0x%08x)\n", opts);
    return 3;
  }

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t child = -1;
  long children = 0;
  uint32_t was_killed = 0;
  const double start = now_s();
  long e;
  for (e = 0; e < execs; e++) {
    if (limit_s > 0 && (e & 63) == 0 && now_s() - start > limit_s) break;
    const input *in = &ins[e % n_in];
    memcpy(fuzz, &in->len, 4);
    memcpy(fuzz + 4, in->data, in->len);
    memset(map, 0, MAP_BYTES);
    if (!futex) {
      wr(was_killed);
      was_killed = 0;
      pid_t pid = (pid_t)rd();
      if (pid != child) children++;
      child = pid;
      int status = status_within(timeout_ms), killed = 0;
      if (status == -1) { /* the timeout: kill, then the status of the kill */
        kill(pid, SIGKILL);
        status = (int)rd();
        killed = was_killed = 1;
      }
      count(status, killed);
      if (!WIFSTOPPED(status)) child = -1;
      continue;
    }
    uint32_t v;
    if (child <= 0) { /* a new child: it runs at once */
      wr(was_killed);
      was_killed = 0;
      child = (pid_t)rd();
      children++;
      v = wait_done_or_exited(sync, timeout_ms);
    } else if (__atomic_load_n(sync, __ATOMIC_ACQUIRE) == EXITED) {
      v = EXITED;
    } else {
      __atomic_store_n(sync, RUN, __ATOMIC_RELEASE);
      futex_wake(sync);
      v = wait_done_or_exited(sync, timeout_ms);
    }
    if (v == DONE) {
      n_ok++;
      continue;
    }
    int killed = v == IDLE; /* the timeout: EXITED first, so a child getting there exits quietly */
    if (killed) {
      __atomic_store_n(sync, EXITED, __ATOMIC_RELEASE);
      futex_wake(sync);
      kill(child, SIGKILL);
      was_killed = 1;
    }
    count((int)rd(), killed);
    __atomic_store_n(sync, IDLE, __ATOMIC_RELEASE);
    child = -1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("execs %ld seconds %.6f us_per_exec %.4f children %ld ok %ld crash %ld timeout %ld exit %ld\n", e, s,
         s * 1e6 / (double)(e ? e : 1), children, n_ok, n_crash, n_timeout, n_exit);
  close(ctl_w); /* the server sees the end and exits; the futex one kills its child */
  if (child > 0) kill(child, SIGKILL);
  kill(server, SIGTERM);
  waitpid(server, NULL, 0);
  return 0;
}
