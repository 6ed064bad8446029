/* Known-bug canaries: AUTOTUNE_BUG(NAME, cond) at a known bug's fix site counts that the bug was
 * *reached* and, when cond (the bug's condition, written from its fix) holds, *triggered*
 * (Magma's reached/triggered idea: Hazimeh et al., SIGMETRICS 2021; this code is our own).
 *
 * Header-only, C11 and C++, no dependency but libc, so a third-party library's source includes it
 * at the fix site whatever compiler builds it (afl-clang-fast, autotune cc, plain clang).
 *
 * Where the counts go:
 *   AUTOTUNE_CANARY_FILE=PATH  a file of AUTOTUNE_CANARY_BYTES bytes (the replay tool makes it),
 *                              mapped shared: the counts outlive the process (replay, attribution)
 *   unset                      a private page of the process (the counts are still there for a
 *                              debugger, and fatal mode works without a file)
 * Fatal mode (campaigns): AUTOTUNE_CANARY_FATAL=1 makes a trigger print
 *   "autotune-canary: triggered NAME" to stderr and abort(), so afl-fuzz saves the input as a
 * crash, with its time in the file name. Without it a trigger only counts (a persistent process
 * would count every later trigger too; a campaign wants the first, so campaigns run fatal).
 *
 * The page: a header and AUTOTUNE_CANARY_MAX entries {name, reached, triggered}; a site takes an
 * entry by its name the first time it runs (a linear search, then a claim by compare-and-swap on
 * the entry's first name byte), and keeps its index in a static of its own. Names are at most
 * AUTOTUNE_CANARY_NAME - 1 bytes ("PNG003", "TIF007", "DEMO001").
 */
#ifndef AUTOTUNE_CANARY_H
#define AUTOTUNE_CANARY_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define AUTOTUNE_CANARY_MAGIC 0x59524e43u /* "CNRY" */
#define AUTOTUNE_CANARY_VERSION 1u
#define AUTOTUNE_CANARY_MAX 255
#define AUTOTUNE_CANARY_NAME 24

struct autotune_canary_entry {
  char name[AUTOTUNE_CANARY_NAME];
  uint64_t reached;
  uint64_t triggered;
};

struct autotune_canary_page {
  uint32_t magic;
  uint32_t version;
  uint32_t max_entries;
  uint32_t reserved;
  uint64_t reserved2[4];
  struct autotune_canary_entry entry[AUTOTUNE_CANARY_MAX];
};

#define AUTOTUNE_CANARY_BYTES (sizeof(struct autotune_canary_page))

/* A canary is a measuring device, not part of the target: its functions are kept out of coverage
 * instrumentation and never inlined into an instrumented caller, so a canary adds no edge to any
 * fuzzer's feedback, and its once-a-process paths (mapping the page, claiming an entry, reading
 * the environment) are never "new coverage" of whichever input happens to run first (in a
 * persistent loop that would be instability; in autotune's census, keys a replay sees and a
 * census does not). Three means, because the instrumenters differ:
 *   - no_sanitize("coverage") (clang; gcc's no_sanitize_coverage): clang's SanitizerCoverage,
 *     which autotune cc's builds use, skips such functions;
 *   - no_instrument_function: no -finstrument-functions hooks, so the call-context metrics (ctx,
 *     caller, ctx-K) see no canary function enter or leave;
 *   - the names start with "__afl": AFL++'s passes skip every function so named (isIgnoreFunction,
 *     instrumentation/afl-llvm-common.cc); AFL++ 4.04c's PCGUARD pass ignores the attribute (a
 *     canary site built with it alone gained 5 edges there). */
#if defined(__clang__)
#define AUTOTUNE_CANARY_FN static __attribute__((unused, noinline, no_instrument_function, no_sanitize("coverage")))
#elif defined(__has_attribute)
#if __has_attribute(no_sanitize_coverage)
#define AUTOTUNE_CANARY_FN static __attribute__((unused, noinline, no_instrument_function, no_sanitize_coverage))
#else
#define AUTOTUNE_CANARY_FN static __attribute__((unused, noinline, no_instrument_function))
#endif
#else
#define AUTOTUNE_CANARY_FN static __attribute__((unused, noinline, no_instrument_function))
#endif

/* One page and one fatal flag per process, however many translation units include this header
 * (weak definitions merge at link time). */
__attribute__((weak)) struct autotune_canary_page *autotune_canary_page_v;
__attribute__((weak)) int autotune_canary_fatal_v = -1; /* -1: the environment not read yet */
__attribute__((weak)) struct autotune_canary_page autotune_canary_private_v;

AUTOTUNE_CANARY_FN struct autotune_canary_page *__afl_autotune_canary_page(void) {
  struct autotune_canary_page *p = __atomic_load_n(&autotune_canary_page_v, __ATOMIC_ACQUIRE);
  if (p) return p;
  p = &autotune_canary_private_v;
  const char *path = getenv("AUTOTUNE_CANARY_FILE");
  if (path && *path) {
    int fd = open(path, O_RDWR);
    if (fd >= 0) {
      void *m = mmap(NULL, AUTOTUNE_CANARY_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
      if (m != MAP_FAILED) p = (struct autotune_canary_page *)m;
    }
  }
  uint32_t zero = 0;
  if (__atomic_compare_exchange_n(&p->magic, &zero, AUTOTUNE_CANARY_MAGIC, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    p->version = AUTOTUNE_CANARY_VERSION;
    p->max_entries = AUTOTUNE_CANARY_MAX;
  }
  __atomic_store_n(&autotune_canary_page_v, p, __ATOMIC_RELEASE);
  return p;
}

/* The entry of NAME: found, or claimed (-1 when the page is full). */
AUTOTUNE_CANARY_FN int __afl_autotune_canary_slot(const char *name) {
  struct autotune_canary_page *p = __afl_autotune_canary_page();
  size_t len = strlen(name);
  if (len >= AUTOTUNE_CANARY_NAME) len = AUTOTUNE_CANARY_NAME - 1;
  for (int i = 0; i < AUTOTUNE_CANARY_MAX; i++) {
    struct autotune_canary_entry *e = &p->entry[i];
    char first = __atomic_load_n(&e->name[0], __ATOMIC_ACQUIRE);
    if (first == 0) {
      char expected = 0;
      if (__atomic_compare_exchange_n(&e->name[0], &expected, name[0], 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        memcpy(&e->name[1], name + 1, len - 1);
        e->name[len] = 0;
        return i;
      }
      first = expected;
    }
    /* a claimed entry's name may still be being written by another process; it is short */
    if (first == name[0] && strncmp(e->name, name, AUTOTUNE_CANARY_NAME) == 0) return i;
  }
  return -1;
}

AUTOTUNE_CANARY_FN int __afl_autotune_canary_fatal(void) {
  int f = __atomic_load_n(&autotune_canary_fatal_v, __ATOMIC_RELAXED);
  if (f < 0) {
    const char *v = getenv("AUTOTUNE_CANARY_FATAL");
    f = v && *v && strcmp(v, "0") != 0;
    __atomic_store_n(&autotune_canary_fatal_v, f, __ATOMIC_RELAXED);
  }
  return f;
}

AUTOTUNE_CANARY_FN void __afl_autotune_canary_hit(int *slot, const char *name, int triggered) {
  if (*slot < 0) *slot = __afl_autotune_canary_slot(name);
  if (*slot >= 0) {
    struct autotune_canary_entry *e = &__afl_autotune_canary_page()->entry[*slot];
    __atomic_fetch_add(&e->reached, 1, __ATOMIC_RELAXED);
    if (triggered) __atomic_fetch_add(&e->triggered, 1, __ATOMIC_RELAXED);
  }
  if (triggered && __afl_autotune_canary_fatal()) {
    static const char msg[] = "autotune-canary: triggered ";
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(2, name, strlen(name));
    r = write(2, "\n", 1);
    (void)r;
    abort();
  }
}

/* At the bug's fix site: NAME a bare identifier (PNG003), cond the bug's condition. Evaluates
 * cond once, has no other effect on the program (in fatal mode a trigger aborts). */
#define AUTOTUNE_BUG(NAME, cond)                                                                   \
  do {                                                                                             \
    static int autotune_canary_slot_##NAME = -1;                                                   \
    __afl_autotune_canary_hit(&autotune_canary_slot_##NAME, #NAME, (cond) ? 1 : 0);                      \
  } while (0)

#endif /* AUTOTUNE_CANARY_H */
