/* aflfs_futex.c - AFL++ 5.x's futex sync of a persistent child: after a new child's first input
 * the pipes stay quiet and each input is the sync word (AFL_CHILD_SYNC_SHM, aflfs_map.c) going
 * RUN (afl) -> DONE (the child), with a futex wake on each side; the server sleeps for the
 * child's whole life. */
#include "aflfs_internal.h"

#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* ---- the child ---------------------------------------------------------------------------- */

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
 * aflfs_proc.asked (one store a child, not one an execution), for the server's check that afl took the
 * futex (aflfs_serve_futex). */
void aflfs_child_loop_futex(aflfs_state *s, cov_test_one_fn test_one) {
  uint32_t *w = s->sync;
  int asked = 0;
  for (uint32_t it = 0;;) {
    aflfs_run_one(s, test_one);
    if (++it >= s->cfg.iters) _exit(0);
    uint32_t expect = AFLFS_SYNC_RUN;
    while (!__atomic_compare_exchange_n(w, &expect, AFLFS_SYNC_DONE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      if (expect == AFLFS_SYNC_EXITED) _exit(0);
    futex_wake(w);
    uint32_t v;
    while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) == AFLFS_SYNC_DONE) futex_wait(w, AFLFS_SYNC_DONE);
    if (v == AFLFS_SYNC_EXITED) _exit(0);
    if (!asked) *aflfs_proc.asked = asked = 1;
  }
}


/* Waits for the child to die, as waitpid(child, status, 0), but also for afl to go away: under
 * futex sync afl writes to fd 198 only once the child is dead, so while it lives the pipe can
 * only end (afl stopped or died without killing it, and the child sleeps in its futex wait for
 * ever): then the server kills the child and exits. poll() on fd 198 and a pidfd of the child;
 * plain waitpid where pidfd_open is missing (Linux before 5.3). Data on fd 198 before the child
 * died is not ours to read yet: it is left there and only the child is watched. */
/* ---- the server --------------------------------------------------------------------------- */

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
        aflfs_server_exit(child, 0);
      }
      if (p[1].revents) n = 1; /* a request with a child alive: read once the child is gone */
    }
    close(pidfd);
  }
#endif
  return aflfs_wait_child(child, status, 0);
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
void aflfs_serve_futex(aflfs_state *s, cov_test_one_fn test_one) {
  const pid_t server = getpid();
  void *m = mmap(NULL, sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) aflfs_fatal(NULL, "mmap of the futex child's RUN flag: %s", strerror(errno));
  aflfs_proc.asked = m;
  int strikes = 0;
  for (;;) {
    uint32_t was_killed; /* nothing to do with it: the last child was reaped before this request */
    if (aflfs_read4(AFLFS_CTL_FD, &was_killed) != 0) aflfs_server_exit(-1, 0);
    __atomic_store_n(s->sync, AFLFS_SYNC_IDLE, __ATOMIC_RELEASE);
    pid_t child = aflfs_spawn(s, test_one, server);
    if (aflfs_write4(AFLFS_ST_FD, (uint32_t)child) != 0) aflfs_server_exit(child, 0);
    int status;
    if (wait_child_or_afl(child, &status) < 0) aflfs_fatal(NULL, "waitpid: %s", strerror(errno));
    if (aflfs_write4(AFLFS_ST_FD, (uint32_t)status) != 0) aflfs_server_exit(-1, 0);
    const int unasked = !*aflfs_proc.asked && WIFSIGNALED(status) &&
                        (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM) &&
                        __atomic_load_n(s->sync, __ATOMIC_ACQUIRE) == AFLFS_SYNC_DONE;
    *aflfs_proc.asked = 0;
    __atomic_store_n(s->sync, AFLFS_SYNC_EXITED, __ATOMIC_RELEASE);
    futex_wake(s->sync);
    strikes = unasked ? strikes + 1 : 0;
    if (strikes >= AFLFS_FUTEX_STRIKES) {
      aflfs_say("\n[autotune] warning: afl-fuzz offered futex sync (AFL_CHILD_SYNC_SHM) but did not take it; "
                "syncing by the pipes from now on\n[autotune]   fix: set AUTOTUNE_AFL_FUTEX=0 for this afl-fuzz\n");
      s->sync = NULL;
      return;
    }
  }
}
