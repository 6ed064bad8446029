/* The fork server's fault suite (issue 26): one harness source, one fault per build, chosen by
 * -DFAULT=<name> (FAULT_SEGV, FAULT_ABORT, ...). Every build has the same few comparisons on the
 * first bytes, so afl-fuzz finds new paths; the fault fires on inputs whose first byte is 'F'
 * (afl's havoc sets a random byte there within seconds), except FAULT_RARE (one input in a
 * hundred, by a hash of the whole input) and the harnesses that misbehave on every input
 * (threads, fork, leak). Built twice by tests/test_fault_suite.py and
 * benchmarks/fault_soak.py: by autotune cc and by AFL++'s afl-clang-fast, and their saved crashes
 * and hangs replayed through both. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAULT_NONE 0
#define FAULT_SEGV 1     /* a store through a null pointer */
#define FAULT_ABORT 2    /* abort() */
#define FAULT_ASAN 3     /* a heap read one past the end (build with -fsanitize=address) */
#define FAULT_UBSAN 4    /* signed overflow (build with -fsanitize=undefined, no recovery) */
#define FAULT_HANG 5     /* spins forever */
#define FAULT_SLOW 6     /* sleeps 1 s, past the suite's 250 ms timeout, then returns */
#define FAULT_EXIT 7     /* exit(0) in the middle of the input */
#define FAULT_FORK 8     /* forks a child that runs half the work, waits for it */
#define FAULT_THREADS 9  /* the work on two threads, joined */
#define FAULT_CLOSEFDS 10 /* closes fds 198 and 199 (afl's fork-server pipes) */
#define FAULT_LEAK 11    /* leaks 4 KiB on every input */
#define FAULT_RARE 12    /* crashes (SIGSEGV) on one input in a hundred */

#ifndef FAULT
#define FAULT FAULT_NONE
#endif

static volatile unsigned sink;
#if FAULT == FAULT_SEGV || FAULT == FAULT_RARE
static int *volatile null_ptr; /* never set: a store through it faults */
#endif

static unsigned work(const uint8_t *data, size_t size) {
  unsigned v = 0;
  if (size > 0 && data[0] == 'x') v += 1;
  if (size > 1 && data[1] == 'y') v += 2;
  if (size > 2 && data[2] == 'z') v += 4;
  if (size > 3 && data[3] > 0x80) v += 8;
  return v;
}

#if FAULT == FAULT_THREADS
#include "two_threads.h"

static void *run_job(void *arg) {
  job *j = arg;
  j->out = work(j->data, j->size);
  return NULL;
}
#endif

/* FNV-1a of the whole input: FAULT_RARE's one in a hundred */
static uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
  return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const int fire = size > 0 && data[0] == 'F';
  (void)fire;
  (void)fnv1a;
#if FAULT == FAULT_SEGV
  if (fire) *null_ptr = 1;
#elif FAULT == FAULT_ABORT
  if (fire) abort();
#elif FAULT == FAULT_ASAN
  if (fire) {
    uint8_t *copy = malloc(size);
    memcpy(copy, data, size);
    sink += copy[size]; /* one past the end */
    free(copy);
  }
#elif FAULT == FAULT_UBSAN
  if (fire) {
    volatile int big = 0x7fffffff;
    sink += (unsigned)(big + (int)size); /* size >= 1: overflows */
  }
#elif FAULT == FAULT_HANG
  if (fire)
    for (;;) sink++;
#elif FAULT == FAULT_SLOW
  if (fire) usleep(1000 * 1000);
#elif FAULT == FAULT_EXIT
  if (fire) exit(0);
#elif FAULT == FAULT_FORK
  pid_t pid = fork();
  if (pid == 0) {
    sink += work(data, size / 2);
    _exit(0);
  }
  if (pid > 0) waitpid(pid, NULL, 0);
#elif FAULT == FAULT_THREADS
  job a = {data, size, 0}, b = {data + size / 2, size - size / 2, 0};
  run_two_jobs(run_job, &a, run_job, &b);
  sink += a.out + b.out;
#elif FAULT == FAULT_CLOSEFDS
  if (fire) {
    close(198);
    close(199);
  }
#elif FAULT == FAULT_LEAK
  void *p = malloc(4096);
  if (p) memset(p, (int)size, 4096);
  sink += p != NULL;
#elif FAULT == FAULT_RARE
  if (fnv1a(data, size) % 100u == 0) *null_ptr = 1;
#endif
  sink += work(data, size);
  return 0;
}
