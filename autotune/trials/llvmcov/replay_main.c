/* autotune's replay main for the llvm-cov yardstick: the $LIB_FUZZING_ENGINE of a clang
 * source-based coverage build (-fprofile-instr-generate -fcoverage-mapping) of a libFuzzer
 * harness. It has no coverage instrumentation of its own and no fuzzing engine: it runs
 * LLVMFuzzerInitialize (when the harness defines it) once, then LLVMFuzzerTestOneInput once on
 * each input, in order, and exits; the profile runtime writes $LLVM_PROFILE_FILE at exit.
 *
 *   replay [-list=FILE] [-progress=FILE] [-timeout_ms=N] [FILE ...]
 *
 * Inputs: the files named on the command line, then those listed in -list (one path a line).
 * Flags are libFuzzer-style (-name=value) so a harness's LLVMFuzzerInitialize that parses
 * libFuzzer flags sees the same kind of argv; other arguments starting with '-' are ignored.
 *
 * -progress=FILE: before each input its 0-based index is written at offset 0 of FILE (fixed
 * width), and "done" after the last one, so the caller knows which input a crash or timeout
 * stopped at.
 *
 * On a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) the profile is written before the
 * process dies by the same signal, so the inputs run before the crash keep their coverage (and
 * the crashing input what it ran); -timeout_ms bounds each input's wall time (SIGALRM): the
 * profile is written and the process exits with REPLAY_TIMEOUT_EXIT. Writing the profile from a
 * signal handler is not async-signal-safe; the caller checks the profile and replays again
 * without it when it is missing or unreadable.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define REPLAY_TIMEOUT_EXIT 124
#define REPLAY_USAGE_EXIT 2
#define PROGRESS_WIDTH 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
/* clang's profile runtime (linked by -fprofile-instr-generate); weak so the main links without it */
__attribute__((weak)) int __llvm_profile_write_file(void);

static int progress_fd = -1;
static volatile sig_atomic_t dumping;
static char alt_stack[1 << 16];

static void progress(const char *text) {
  char buf[PROGRESS_WIDTH];
  size_t n = strlen(text);
  if (progress_fd < 0) return;
  memset(buf, ' ', sizeof buf);
  memcpy(buf, text, n < sizeof buf - 1 ? n : sizeof buf - 1);
  buf[sizeof buf - 1] = '\n';
  if (pwrite(progress_fd, buf, sizeof buf, 0) < 0) {
    /* progress is advisory: the caller then treats the batch as stopped at its start */
  }
}

static void dump_profile(void) {
  if (!dumping) {
    dumping = 1;
    if (__llvm_profile_write_file) __llvm_profile_write_file();
  }
}

static void on_fatal(int sig) {
  dump_profile();
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}

static void on_timeout(int sig) {
  (void)sig;
  dump_profile();
  _exit(REPLAY_TIMEOUT_EXIT);
}

static void install_handlers(void) {
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  stack_t ss;
  struct sigaction sa;
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ss.ss_flags = 0;
  sigaltstack(&ss, NULL); /* a stack overflow's SIGSEGV needs a stack of its own */
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK;
  sa.sa_handler = on_fatal;
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &sa, NULL);
  sa.sa_handler = on_timeout;
  sigaction(SIGALRM, &sa, NULL);
}

static void arm_timer(long timeout_ms) {
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_value.tv_sec = timeout_ms / 1000;
  it.it_value.tv_usec = (timeout_ms % 1000) * 1000;
  setitimer(ITIMER_REAL, &it, NULL);
}

static int run_one(const char *path, long index, long timeout_ms) {
  char text[PROGRESS_WIDTH];
  FILE *f = fopen(path, "rb");
  uint8_t *data = NULL;
  long size = 0;
  if (!f) {
    fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    fclose(f);
    return -1;
  }
  data = malloc(size > 0 ? (size_t)size : 1);
  if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    free(data);
    fclose(f);
    return -1;
  }
  fclose(f);
  snprintf(text, sizeof text, "%ld", index);
  progress(text);
  if (timeout_ms > 0) arm_timer(timeout_ms);
  LLVMFuzzerTestOneInput(data, (size_t)size);
  if (timeout_ms > 0) arm_timer(0);
  free(data);
  return 0;
}

static const char *flag_value(const char *arg, const char *name) {
  size_t n = strlen(name);
  return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

int main(int argc, char **argv) {
  const char *list = NULL, *progress_path = NULL, *v;
  long timeout_ms = 0, index = 0;
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    if ((v = flag_value(argv[i], "-list"))) list = v;
    else if ((v = flag_value(argv[i], "-progress"))) progress_path = v;
    else if ((v = flag_value(argv[i], "-timeout_ms"))) timeout_ms = strtol(v, NULL, 10);
  }
  if (progress_path) {
    progress_fd = open(progress_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (progress_fd < 0) {
      fprintf(stderr, "replay: cannot write %s: %s\n", progress_path, strerror(errno));
      return REPLAY_USAGE_EXIT;
    }
  }
  install_handlers();
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-') continue;
    failed |= run_one(argv[i], index++, timeout_ms) != 0;
  }
  if (list) {
    FILE *lf = fopen(list, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    if (!lf) {
      fprintf(stderr, "replay: cannot read %s: %s\n", list, strerror(errno));
      return REPLAY_USAGE_EXIT;
    }
    while ((len = getline(&line, &cap, lf)) >= 0) {
      while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
      if (len == 0) continue;
      failed |= run_one(line, index++, timeout_ms) != 0;
    }
    free(line);
    fclose(lf);
  }
  progress("done");
  return failed ? 1 : 0;
}
