/* aflfs_handshake.c - the fork server's hello: AFL++ 4.04c's one word ("old") or 4.20c's
 * versioned exchange, and which one this afl tool reads (docs/DESIGN.md "Running under afl-fuzz"
 * has the words of each). */
#include "aflfs_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* The first "++<major>.<minor><letter>" in buf[0..n): AFL++'s VERSION string ("++4.04c",
 * "++4.22a"), which every afl tool prints in its banner and so carries in its executable.
 * Returns 0 when found. */
static int find_aflpp_version(const unsigned char *buf, size_t n, unsigned *major, unsigned *minor) {
  const unsigned char *end = buf + n;
  for (const unsigned char *p = buf; p + 2 < end; p++) {
    p = memchr(p, '+', (size_t)(end - p));
    if (!p || p + 2 >= end) break;
    if (p[1] != '+') continue;
    const unsigned char *q = p + 2;
    unsigned v[2] = {0, 0};
    int ok = 1;
    for (int k = 0; k < 2 && ok; k++) {
      int digits = 0;
      while (q < end && *q >= '0' && *q <= '9' && digits < 4) {
        v[k] = v[k] * 10u + (unsigned)(*q - '0');
        q++;
        digits++;
      }
      if (!digits) ok = 0;
      else if (k == 0 && q < end && *q == '.') q++;
      else if (k == 0) ok = 0;
    }
    if (ok && q < end && *q >= 'a' && *q <= 'z') {
      *major = v[0];
      *minor = v[1];
      return 0;
    }
  }
  return -1;
}

/* The AFL++ version of the afl tool that started us (our parent, named afl-*), read from its
 * executable (/proc/<ppid>/exe), once per fork server: 0.04-0.3 ms here for afl-fuzz/afl-showmap
 * 4.04c and 4.22a (the string sits early in the file). */
static int parent_aflpp_version(unsigned *major, unsigned *minor) {
  pid_t ppid = getppid();
  if (!aflfs_parent_is_afl(ppid)) return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", (int)ppid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  void *m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return -1;
  int rc = find_aflpp_version(m, (size_t)st.st_size, major, minor);
  munmap(m, (size_t)st.st_size);
  return rc;
}

/* The target speaks first, and neither afl-fuzz 4.04c nor 4.22a tells the target its version
 * (AFL++'s own runtime always sends the versioned hello unless AFL_OLD_FORKSERVER is set, so its
 * targets need an afl-fuzz of their own age). We choose: AUTOTUNE_AFL_HANDSHAKE when not auto;
 * else old when AFL_OLD_FORKSERVER is set (AFL++'s runtime variable); else versioned when the
 * parent afl tool is AFL++ 4.20c or later; else old, which every AFL++ 4.x accepts (4.20c+ with
 * the warning "Old fork server model is used by the target"). */
aflfs_handshake aflfs_choose_handshake(const aflfs_config *c) {
  if (c->handshake != AFLFS_HS_AUTO) return c->handshake;
  if (getenv("AFL_OLD_FORKSERVER")) return AFLFS_HS_OLD;
  unsigned major, minor;
  if (parent_aflpp_version(&major, &minor) == 0 &&
      (major > AFLFS_NEW_SINCE_MAJOR || (major == AFLFS_NEW_SINCE_MAJOR && minor >= AFLFS_NEW_SINCE_MINOR)))
    return AFLFS_HS_VERSIONED;
  return AFLFS_HS_OLD;
}

static void send4(uint32_t v) {
  if (aflfs_write4(AFLFS_ST_FD, v) != 0) aflfs_fatal(NULL, "cannot write to afl-fuzz (fd %d)", AFLFS_ST_FD);
}

void aflfs_hello_old(const aflfs_state *s) {
  uint32_t hello = AFLFS_OPT_ENABLED | AFLFS_OPT_MAPSIZE | AFLFS_OPT_SET_MAPSIZE(s->cfg.map_bytes);
  if (s->shm_in) hello |= AFLFS_OPT_SHDMEM_FUZZ;
  send4(hello);
  if (s->shm_in) { /* afl confirms shared-memory test cases with one word */
    uint32_t reply;
    if (aflfs_read4(AFLFS_CTL_FD, &reply) != 0) _exit(0); /* afl-fuzz went away */
  }
}

void aflfs_hello_versioned(const aflfs_state *s) {
  send4(AFLFS_NEW_VERSION);
  uint32_t reply;
  if (aflfs_read4(AFLFS_CTL_FD, &reply) != 0) _exit(0); /* afl-fuzz went away */
  if (reply != ~AFLFS_NEW_VERSION)
    aflfs_fatal("set AUTOTUNE_AFL_HANDSHAKE=old for an afl-fuzz older than AFL++ 4.20c",
                "afl answered 0x%08x to the versioned fork-server hello 0x%08x (expected 0x%08x): it does "
                "not speak AFL++ 4.20c's handshake", reply, AFLFS_NEW_VERSION, ~AFLFS_NEW_VERSION);
  send4(AFLFS_NEW_OPT_MAPSIZE | (s->shm_in ? AFLFS_NEW_OPT_SHDMEM_FUZZ : 0u) | (s->sync ? AFLFS_NEW_OPT_FUTEX : 0u));
  send4((uint32_t)s->cfg.map_bytes); /* NEW_OPT_MAPSIZE's parameter; SHDMEM_FUZZ has none */
  send4(AFLFS_NEW_VERSION);         /* the closing word */
}
