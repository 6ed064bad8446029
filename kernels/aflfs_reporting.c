/* aflfs_reporting.c - AUTOTUNE_AFL_STATUS=child (the default): a persistent child that answers
 * afl itself, and the server that sleeps until it dies and then sends what afl is still owed. */
#include "aflfs_internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

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
/* aflfs_proc.sh: MAP_SHARED, the child writes, the server reads */
struct aflfs_shared {
  uint32_t stage; /* AFLFS_IDLE .. AFLFS_REPORT */
  uint32_t lost;  /* the child lost fd 198/199 */
};

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
  aflfs_proc.sh->stage = stage;
  aflfs_proc.sh->lost = 1;
  _exit(0);
}

/* The child takes afl's request: RUN before the pid. afl's timeout kill can land as soon as afl
 * has read the pid, even before this child runs another instruction (afl-fuzz, woken by the pid,
 * often takes the core); a child dying there owes a status only. With the store after the write,
 * such a death read as ASKED and the server sent the pid a second time: afl-fuzz 4.04c read it as
 * the status ("crashes" with the pid's low bits as the signal) and later aborted ("Fork server is
 * misbehaving"), once in 27 million lz4 executions under a 20 ms timeout. */
static void child_answers(uint32_t self) {
  aflfs_proc.sh->stage = AFLFS_RUN;
  if (aflfs_write4(AFLFS_ST_FD, self) != 0) child_lost_pipes(AFLFS_ASKED);
}

void aflfs_child_loop_reporting(aflfs_state *s, cov_test_one_fn test_one) {
  const uint32_t self = (uint32_t)getpid();
  (void)fcntl(AFLFS_CTL_FD, F_SETFD, FD_CLOEXEC); /* not for programs the harness runs */
  (void)fcntl(AFLFS_ST_FD, F_SETFD, FD_CLOEXEC);
  child_answers(self); /* the first request was read by the server */
  aflfs_warm_up(s, test_one); /* after the pid: in afl's timed window, as AFL++'s driver's call is */
  for (uint32_t it = 0;;) {
    aflfs_run_one(s, test_one);
    if (++it >= s->cfg.iters) _exit(0); /* the server sends "exited 0" (stage RUN) */
    aflfs_proc.sh->stage = AFLFS_REPORT;
    if (aflfs_write4(AFLFS_ST_FD, AFLFS_STOPPED_STATUS) != 0) child_lost_pipes(AFLFS_RUN);
    aflfs_proc.sh->stage = AFLFS_IDLE;
    short ev;
    if (aflfs_wait_readable(AFLFS_CTL_FD, -1, &ev) < 0 || ev & POLLNVAL) child_lost_pipes(AFLFS_IDLE); /* fd gone */
    aflfs_proc.sh->stage = AFLFS_ASKED;
    uint32_t was_killed;
    errno = 0;
    if (aflfs_read4(AFLFS_CTL_FD, &was_killed) != 0) { /* afl went away (end of file), or the fd did */
      if (errno) child_lost_pipes(AFLFS_IDLE);
      aflfs_proc.sh->stage = AFLFS_IDLE; /* nothing taken, nothing owed: the server sees the end too */
      _exit(0);
    }
    child_answers(self);
  }
}

/* The server of aflfs_child_loop_reporting: it reads a request only when no child lives, starts a
 * child for it, and sleeps until that child dies; then it sends what afl is owed (see the
 * stages above) and waits for the next request. Returns when a child lost its pipes (the
 * caller goes on as the relay). */
void aflfs_serve_reporting(aflfs_state *s, cov_test_one_fn test_one) {
  void *m = mmap(NULL, sizeof(struct aflfs_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) aflfs_fatal(NULL, "mmap of the child's stage word: %s", strerror(errno));
  aflfs_proc.sh = m;
  const pid_t server = getpid();
  int retry = 0; /* a new child answers the request its dead predecessor took */
  while (!aflfs_proc.sh->lost) {
    if (!retry) { /* no child lives: nothing for the server to reap */
      uint32_t was_killed;
      if (aflfs_read4(AFLFS_CTL_FD, &was_killed) != 0) aflfs_server_exit(-1, 0);
    }
    aflfs_proc.sh->stage = AFLFS_ASKED;
    pid_t child = aflfs_spawn(s, test_one, server);
    int status;
    if (aflfs_wait_child(child, &status, 0) < 0) aflfs_fatal(NULL, "waitpid: %s", strerror(errno));
    uint32_t stage = aflfs_proc.sh->stage;
    if (stage == AFLFS_ASKED && !aflfs_proc.sh->lost && !retry) {
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
      owed = aflfs_wait_readable(AFLFS_CTL_FD, AFLFS_REPORT_WAIT_MS, &ev) == 0;
    }
    if (stage == AFLFS_ASKED && aflfs_write4(AFLFS_ST_FD, (uint32_t)child) != 0) aflfs_server_exit(-1, 0);
    if (owed && aflfs_write4(AFLFS_ST_FD, (uint32_t)status) != 0) aflfs_server_exit(-1, 0);
  }
  aflfs_proc.sh = NULL; /* the relay's children close both fds and stop between inputs */
}
