/* aflfs.c - the AFL++ fork server of the autotune runtime (issue 7): its entry and its children.
 * See aflfs.h, aflfs_internal.h (the files and what they share) and docs/DESIGN.md "Running under
 * afl-fuzz".
 *
 * Protocol (learnt from AFL++'s instrumentation/afl-compiler-rt.o.c, src/afl-forkserver.c and
 * include/types.h, 4.04c and 4.22a; our own implementation). All words are u32, host order.
 * Handshake, one of two (aflfs_handshake.c):
 *   old (4.04c)   target -> fd 199: FS_OPT_ENABLED | FS_OPT_MAPSIZE | ((D - 1) << 1)
 *                 [| FS_OPT_SHDMEM_FUZZ when we take test cases from __AFL_SHM_FUZZ_ID];
 *                 fd 198 -> target: one word, only when FS_OPT_SHDMEM_FUZZ was offered.
 *   versioned     target -> 0x41464C01 (version 1); fd 198 -> its complement 0xBEB9B3FE;
 *   (4.20c+)      target -> options: NEW_OPT_MAPSIZE [| NEW_OPT_SHDMEM_FUZZ]; target -> D
 *                 (the map-size parameter; shm fuzzing has none); target -> 0x41464C01.
 *   The target speaks first and afl-fuzz sends nothing that names its version, so the server
 *   picks the handshake from its parent's executable (the afl tool; see aflfs_choose_handshake).
 * Per run (both): fd 198 -> u32 was_killed (the previous child timed out and was SIGKILLed);
 *   fd 199 <- u32 child pid; fd 199 <- u32 wait status (WIFSTOPPED = persistent child waiting
 *   for the next input). 4.22a still syncs persistent mode this way (SIGSTOP / WUNTRACED).
 *   Who sends them: the persistent child itself (aflfs_reporting.c, the default) or the server
 *   (aflfs_relay.c, AFL++'s design).
 * Futex sync (AFL++ 5.x, versioned handshake, persistent): the pipes carry only a new child's
 *   request, pid and death status; each further input is the sync word going RUN (afl) -> DONE
 *   (the child), with a futex wake on each side (aflfs_futex.c).
 * Test cases: the @@ file (first non-option argument) when given; else shared memory
 * [u32 length][data] when afl offers it; else stdin (afl rewinds its .cur_input, our fd 0).
 */
#include "aflfs_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

/* afl-fuzz looks for these NUL-terminated strings in the binary: "__AFL_SHM_ID" (instrumented,
 * also the getenv in aflfs_map.c) and the persistent-mode signature (it then sets __AFL_PERSISTENT). */
__attribute__((used)) static const char aflfs_sig_shm[] = "__AFL_SHM_ID";
__attribute__((used)) static const char aflfs_sig_persistent[] = "##SIG_AFL_PERSISTENT##";

aflfs_process aflfs_proc;

void aflfs_server_exit(pid_t child, int code) {
  if (child > 0) {
    kill(child, SIGKILL);
    int st;
    aflfs_wait_child(child, &st, 0);
  }
  _exit(code);
}

pid_t aflfs_spawn(aflfs_state *s, cov_test_one_fn test_one, pid_t server) {
  pid_t pid = fork();
  if (pid < 0) aflfs_fatal("lower the number of processes or raise the limit", "fork: %s", strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the server, even when stopped */
    if (getppid() != server) _exit(0);
    if (aflfs_proc.watching) sigaction(SIGCHLD, &aflfs_proc.old_sigchld, NULL); /* the harness's own */
    if (aflfs_proc.sh) aflfs_child_loop_reporting(s, test_one); /* it warms up once it has sent its pid */
    close(AFLFS_CTL_FD);
    close(AFLFS_ST_FD);
    aflfs_warm_up(s, test_one); /* the server sends the pid: afl's timed window, as for AFL++'s driver */
    if (s->sync) aflfs_child_loop_futex(s, test_one);
    aflfs_child_loop_relay(s, test_one);
  }
  return pid;
}

int autotune_afl_forkserver_main(cov_test_one_fn test_one, int argc, char **argv) {
  static aflfs_state s; /* static: shared by the server and (copied into) its children */
  aflfs_read_config(&s.cfg);
  aflfs_map_setup(&s);
  int fl = fcntl(AFLFS_ST_FD, F_GETFL);
  if (fl == -1 || (fl & O_ACCMODE) == O_RDONLY) aflfs_run_direct(&s, test_one, argc, argv);
  /* A file argument (afl's @@) is read as given, like libFuzzer/libAFLDriver do; without one
   * the test cases come from shared memory when afl offers it, else from stdin. */
  const char *fuzz_id = getenv("__AFL_SHM_FUZZ_ID");
  s.file = aflfs_file_argument(argc, argv);
  if (!s.file && s.cfg.shm_input && fuzz_id && *fuzz_id) {
    s.shm_in = aflfs_shm_attach("__AFL_SHM_FUZZ_ID", 1);
  }
  s.sync = aflfs_sync_word(&s);
  if (aflfs_choose_handshake(&s.cfg) == AFLFS_HS_VERSIONED) {
    aflfs_hello_versioned(&s);
  } else {
    s.sync = NULL; /* afl turns its futex sync off for the old hello */
    aflfs_hello_old(&s);
  }
  if (s.sync) aflfs_serve_futex(&s, test_one); /* returns: afl did not take the futex */
  if (s.cfg.iters > 1 && s.cfg.child_reports) aflfs_serve_reporting(&s, test_one); /* returns: lost pipes */
  aflfs_serve_relay(&s, test_one);
}
