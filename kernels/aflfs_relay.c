/* aflfs_relay.c - AUTOTUNE_AFL_STATUS=server, AFL++'s design: the server relays every execution.
 * The child raise(SIGSTOP)s after each input; the server resumes it with SIGCONT and reports the
 * stopped status from waitpid(WUNTRACED); a child killed while stopped is reaped and replaced.
 * Also the fork per input (AUTOTUNE_AFL_PERSISTENT=1), and the rest of a run whose harness closed
 * fd 198/199 under a reporting child (aflfs_reporting.c). */
#include "aflfs_internal.h"

#include <string.h>

/* The child: run inputs, stop between them. */
void aflfs_child_loop_relay(aflfs_state *s, cov_test_one_fn test_one) {
  for (uint32_t it = 0;;) {
    aflfs_run_one(s, test_one);
    if (++it >= s->cfg.iters) _exit(0);
    raise(SIGSTOP); /* the server reports "stopped"; SIGCONT starts the next input */
  }
}

/* aflfs_proc.child_ended, set by SIGCHLD (SA_NOCLDSTOP: terminations only) in the server: a child
 * may have died. A hint that costs nothing per execution: before resuming a stopped child the
 * server checks it with waitpid only when this is set (a child killed behind afl's back while
 * stopped is then reaped and replaced). AFL++'s own runtime resumes without checking; an
 * unconditional waitpid(WNOHANG) per execution cost one system call more than it (0.5 us of lz4's
 * 39 us per execution under afl-fuzz 4.04c, perf cpu-clock). */
static void on_sigchld(int sig) {
  (void)sig;
  aflfs_proc.child_ended = 1;
}

static void watch_children(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGCHLD, &sa, &aflfs_proc.old_sigchld) != 0)
    aflfs_fatal(NULL, "sigaction(SIGCHLD): %s", strerror(errno));
  aflfs_proc.watching = 1;
}

void aflfs_serve_relay(aflfs_state *s, cov_test_one_fn test_one) {
  const int persistent = s->cfg.iters > 1;
  watch_children();
  pid_t server = getpid(), child = -1;
  int stopped = 0;
  for (;;) {
    uint32_t was_killed, status32;
    int status = 0;
    if (aflfs_read4(AFLFS_CTL_FD, &was_killed) != 0) aflfs_server_exit(stopped ? child : -1, 0);
    if (stopped && was_killed) { /* afl killed the stopped child after a timeout: reap it */
      stopped = 0;
      aflfs_wait_child(child, &status, 0);
    }
    int resumed = 0;
    if (stopped) { /* resume it, unless something else killed it meanwhile: then reap, fork */
      int alive = 1;
      if (aflfs_proc.child_ended) {
        aflfs_proc.child_ended = 0; /* cleared first: a death after this sets it again */
        alive = aflfs_wait_child(child, &status, WNOHANG) == 0;
      }
      if (alive && kill(child, SIGCONT) == 0) resumed = 1;
      stopped = 0;
    }
    if (!resumed) child = aflfs_spawn(s, test_one, server);
    if (aflfs_write4(AFLFS_ST_FD, (uint32_t)child) != 0) aflfs_server_exit(child, 0);
    if (aflfs_wait_child(child, &status, persistent ? WUNTRACED : 0) < 0)
      aflfs_fatal(NULL, "waitpid: %s", strerror(errno));
    if (WIFSTOPPED(status)) stopped = 1;
    status32 = (uint32_t)status;
    if (aflfs_write4(AFLFS_ST_FD, status32) != 0) aflfs_server_exit(child, 0);
  }
}
