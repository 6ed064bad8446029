/* autotune's demo target: a parser for "ATLV", a small chunked type-length-value format.
 *
 * An LLVMFuzzerTestOneInput harness (build it with `autotune cc -fsanitize=fuzzer`); C11, libc.
 *
 * Format:
 *   header  "ATLV", version (1: chunk lengths are 1 byte; 2: 2 bytes little-endian), flags
 *           (bit 0 strict: checksums must match and errors stop the parse; bit 1 stats)
 *   chunks  type (1 byte), length, payload; until the input ends
 *     'N' name        identifier characters, hashed
 *     'I' integers    LEB128 varints: count, sum, min, max
 *     'T' text        tokenised: words, numbers, punctuation, spaces
 *     'E' expression  integer arithmetic: + - * / % ( ), digits, spaces
 *     'R' run-length  (count, byte) pairs decoded into a 4 KiB buffer
 *     'K' key=value   "k=v;" pairs; known keys set fields of the document
 *     'L' loop        start, end, step, mode (bytes): i = start; i != end; i += step (mod 256),
 *                     at most 256 steps, except in mode 'W' (wait), which runs until i == end
 *     'G' group       nested chunks (up to depth 6)
 *     'C' checksum    one byte: CRC-8 of the input before this chunk
 *     'S' steps       a program for a tiny register machine, one step a byte, 'a'..'h' (each its own
 *                     operation on the register); any other byte is an error
 *
 * Helpers (read_varint, is_ident, crc8, note, ...) are called from several parser functions,
 * so call-context metrics see them in several contexts; they are noinline so that the context
 * survives optimisation.
 *
 * Documented bugs (autotune/demo/inputs/ holds one input for each):
 *   crash-abort   strict mode, an 'E' chunk dividing by zero: abort()            (SIGABRT)
 *   crash-null    a 'K' chunk setting an unknown key with a '!' value: NULL write (SIGSEGV)
 *   hang-loop     an 'L' chunk in mode 'W' whose step never reaches end (1, 2, 2, 'W'): loops forever
 *
 * A planted known bug, with a canary (kernels/canary.h, AUTOTUNE_BUG; autotune compare --yardstick bugs):
 *   DEMO001       an 'S' chunk whose steps contain b, a, d in that order, back to back ("bad").
 *                 (canary-demo001 in autotune/demo/inputs/ triggers it; with AUTOTUNE_CANARY_FATAL=1
 *                 it aborts, otherwise it only counts.)
 *   DEMO002       the steps h, c, f back to back ("hcf"; canary-demo002).
 *   DEMO003       the steps g, e, b, d back to back ("gebd"; canary-demo003).
 *   DEMO001 turned out shallow under AFL++ 5.02c: one havoc mutation of the seed 11-steps
 *   ("abcdefgh" -> "abadefgh") makes "bad". No two consecutive steps of DEMO002 or DEMO003 are
 *   adjacent in that seed, and every window of it differs from DEMO002's order in two steps or more
 *   and from DEMO003's in three or more, so no single byte change of the seed makes them; no order
 *   contains another, so a fatal trigger of one does not block the way to the others.
 *   (benchmarks/results/plan-2026-11-28-demo-deeper-bug.md)
 *   It is built on purpose so that edge coverage cannot see the way to it and an N-gram metric can:
 *   every step is one small block of its own, every step can follow every other, and the bug's
 *   condition is data (the last steps, shifted into a register, compared without a branch).
 *   Once a seed has run every step (the seed 11-steps runs a..h), edge coverage has seen every
 *   edge of parse_steps whatever the order, so it keeps no input for getting an order closer to
 *   "bad". An N-gram of blocks (AFL++'s NGRAM-N, autotune's ngram-N; about two to three blocks a
 *   step) is new for each new pair ("ba", "ad") or triple of consecutive steps, so the fuzzer keeps
 *   the partial orders and builds the whole one from them (Wang et al., RAID 2019, "Be
 *   Sensitive and Collaborative", make the same point with orderings of this kind).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The canary header: on the include path (the demo recipe adds -I<autotune's kernels dir>), else
 * found from here in a source checkout (autotune/demo -> kernels) or an installed wheel
 * (autotune/demo -> autotune/_data/kernels), so a plain `cc -c harness.c` builds it too. */
#if __has_include("canary.h")
#include "canary.h"
#elif __has_include("../../kernels/canary.h")
#include "../../kernels/canary.h"
#elif __has_include("../_data/kernels/canary.h")
#include "../_data/kernels/canary.h"
#else
#error "canary.h not found: add -I<autotune's kernels directory> (autotune.paths.kernels_dir())"
#endif

#define NOINLINE __attribute__((noinline))
#define MAX_DEPTH 6

struct doc {
  int strict, stats;
  unsigned version;
  uint32_t name_hash;
  long ints_sum, ints_min, ints_max, n_ints;
  unsigned words, numbers, puncts, spaces;
  long expr_value;
  uint32_t reg;    /* the 'S' machine's register */
  uint32_t recent; /* its last steps, one a byte, the newest lowest */
  unsigned rle_len;
  int width, height, level;
  char title[16];
  unsigned notes[16];
  unsigned errors;
};

static volatile unsigned sink; /* keeps loops and results observable */

/* ---- helpers shared by several parsers ------------------------------------------------------ */

static NOINLINE void note(struct doc *d, unsigned what) {
  if (what < 16) d->notes[what]++;
  if (d->stats && d->notes[what] % 64 == 0) sink += what;
}

static NOINLINE int fail(struct doc *d, unsigned code) {
  d->errors++;
  note(d, code & 15);
  return d->strict ? -1 : 0;
}

static NOINLINE int is_ident(uint8_t c, int first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return 1;
  if (!first && c >= '0' && c <= '9') return 1;
  return 0;
}

static NOINLINE uint8_t crc8(const uint8_t *p, size_t n) {
  uint8_t c = 0;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int b = 0; b < 8; b++) c = (uint8_t)((c & 0x80) ? (c << 1) ^ 0x07 : c << 1);
  }
  return c;
}

/* LEB128: returns bytes used, 0 when truncated or longer than 9 bytes. */
static NOINLINE size_t read_varint(const uint8_t *p, size_t n, uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && i < 9; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  return 0;
}

static NOINLINE long parse_number(const uint8_t *p, size_t n, size_t *used) {
  long v = 0;
  size_t i = 0;
  while (i < n && p[i] >= '0' && p[i] <= '9' && i < 12) {
    v = v * 10 + (p[i] - '0');
    i++;
  }
  *used = i;
  return v;
}

/* ---- chunk parsers -------------------------------------------------------------------------- */

static int parse_name(struct doc *d, const uint8_t *p, size_t n) {
  if (n == 0) return fail(d, 1);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) {
    if (!is_ident(p[i], i == 0)) return fail(d, 2);
    h = (h ^ p[i]) * 16777619u;
  }
  d->name_hash = h;
  if (n >= 8) note(d, 3);
  return 0;
}

static int parse_ints(struct doc *d, const uint8_t *p, size_t n) {
  size_t off = 0;
  while (off < n) {
    uint64_t v;
    size_t k = read_varint(p + off, n - off, &v);
    if (k == 0) return fail(d, 4);
    long s = (v & 1) ? -(long)(v >> 1) : (long)(v >> 1); /* zigzag */
    if (d->n_ints == 0 || s < d->ints_min) d->ints_min = s;
    if (d->n_ints == 0 || s > d->ints_max) d->ints_max = s;
    d->ints_sum += s;
    d->n_ints++;
    if (k > 4) note(d, 5);
    off += k;
  }
  return 0;
}

enum tok { T_SPACE, T_WORD, T_NUM, T_PUNCT };

static NOINLINE void count_token(struct doc *d, enum tok t, size_t len) {
  switch (t) {
  case T_WORD: d->words++; if (len > 10) note(d, 6); break;
  case T_NUM: d->numbers++; if (len > 5) note(d, 7); break;
  case T_PUNCT: d->puncts++; break;
  case T_SPACE: d->spaces++; break;
  }
}

static int parse_text(struct doc *d, const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    size_t start = i;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
      count_token(d, T_SPACE, i - start);
    } else if (is_ident(c, 1)) {
      while (i < n && is_ident(p[i], 0)) i++;
      count_token(d, T_WORD, i - start);
    } else if (c >= '0' && c <= '9') {
      size_t used;
      (void)parse_number(p + i, n - i, &used);
      i += used;
      count_token(d, T_NUM, used);
    } else if (c == '"') {
      i++;
      while (i < n && p[i] != '"') i += (p[i] == '\\' && i + 1 < n) ? 2 : 1;
      if (i >= n) return fail(d, 8);
      i++;
      count_token(d, T_WORD, i - start);
    } else if (c < 0x20 || c > 0x7e) {
      return fail(d, 9);
    } else {
      i++;
      count_token(d, T_PUNCT, 1);
    }
  }
  return 0;
}

/* Recursive-descent integer expressions. */
struct expr {
  struct doc *d;
  const uint8_t *p;
  size_t n, i;
  int err, depth;
};

static long expr_sum(struct expr *e);

static NOINLINE void skip_spaces(struct expr *e) {
  while (e->i < e->n && e->p[e->i] == ' ') e->i++;
}

static long expr_atom(struct expr *e) {
  skip_spaces(e);
  if (e->i >= e->n) { e->err = 1; return 0; }
  uint8_t c = e->p[e->i];
  if (c == '(') {
    if (++e->depth > 16) { e->err = 1; return 0; }
    e->i++;
    long v = expr_sum(e);
    skip_spaces(e);
    if (e->i >= e->n || e->p[e->i] != ')') { e->err = 1; return 0; }
    e->i++;
    e->depth--;
    return v;
  }
  if (c == '-') {
    e->i++;
    return -expr_atom(e);
  }
  if (c >= '0' && c <= '9') {
    size_t used;
    long v = parse_number(e->p + e->i, e->n - e->i, &used);
    e->i += used;
    return v;
  }
  e->err = 1;
  return 0;
}

static long expr_product(struct expr *e) {
  long v = expr_atom(e);
  for (;;) {
    skip_spaces(e);
    if (e->err || e->i >= e->n) return v;
    uint8_t op = e->p[e->i];
    if (op != '*' && op != '/' && op != '%') return v;
    e->i++;
    long r = expr_atom(e);
    if (op == '*') {
      v = (long)((unsigned long)v * (unsigned long)r);
    } else if (r == 0) {
      if (e->d->strict) abort(); /* documented bug: crash-abort */
      e->err = 1;
      return 0;
    } else if (r == -1) {
      v = (long)(0ul - (unsigned long)v);
    } else {
      v = op == '/' ? v / r : v % r;
    }
  }
}

static long expr_sum(struct expr *e) {
  long v = expr_product(e);
  for (;;) {
    skip_spaces(e);
    if (e->err || e->i >= e->n) return v;
    uint8_t op = e->p[e->i];
    if (op != '+' && op != '-') return v;
    e->i++;
    long r = expr_product(e);
    v = (long)(op == '+' ? (unsigned long)v + (unsigned long)r : (unsigned long)v - (unsigned long)r);
  }
}

static int parse_expr(struct doc *d, const uint8_t *p, size_t n) {
  struct expr e = {d, p, n, 0, 0, 0};
  long v = expr_sum(&e);
  skip_spaces(&e);
  if (e.err || e.i != n) return fail(d, 10);
  d->expr_value = v;
  if (v > 1000000) note(d, 11);
  return 0;
}

static int parse_rle(struct doc *d, const uint8_t *p, size_t n) {
  uint8_t out[4096];
  size_t len = 0;
  for (size_t i = 0; i < n; i += 2) {
    if (i + 1 >= n) return fail(d, 12);
    uint64_t count;
    size_t k = read_varint(p + i, 1, &count); /* one-byte varint: count < 128 */
    if (k == 0) count = p[i] & 0x7f;
    if (count == 0) { note(d, 13); continue; }
    if (len + count > sizeof out) return fail(d, 12);
    memset(out + len, p[i + 1], count);
    len += count;
  }
  d->rle_len = (unsigned)len;
  if (len) sink += crc8(out, len);
  return 0;
}

struct field {
  const char *key;
  int *slot;
};

static NOINLINE int *field_slot(struct doc *d, const uint8_t *k, size_t n) {
  struct field fields[] = {{"width", &d->width}, {"height", &d->height}, {"level", &d->level}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (strlen(fields[i].key) == n && memcmp(fields[i].key, k, n) == 0) return fields[i].slot;
  return NULL;
}

static int parse_kv(struct doc *d, const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t ks = i;
    while (i < n && is_ident(p[i], i == ks)) i++;
    size_t klen = i - ks;
    if (klen == 0 || i >= n || p[i] != '=') return fail(d, 14);
    i++;
    size_t vs = i;
    while (i < n && p[i] != ';') i++;
    const uint8_t *v = p + vs;
    size_t vlen = i - vs;
    if (i < n) i++; /* ';' */
    if (klen == 5 && memcmp(p + ks, "title", 5) == 0) {
      size_t m = vlen < sizeof d->title - 1 ? vlen : sizeof d->title - 1;
      memcpy(d->title, v, m);
      d->title[m] = 0;
      continue;
    }
    int *slot = field_slot(d, p + ks, klen);
    if (vlen > 0 && v[0] == '!') {
      size_t used;
      *slot = (int)parse_number(v + 1, vlen - 1, &used); /* documented bug: crash-null */
      continue;
    }
    if (slot == NULL) {
      note(d, 15);
      continue;
    }
    size_t used;
    long val = parse_number(v, vlen, &used);
    if (used != vlen) return fail(d, 14);
    *slot = (int)val;
  }
  return 0;
}

static int parse_loop(struct doc *d, const uint8_t *p, size_t n) {
  if (n != 4) return fail(d, 1);
  uint8_t start = p[0], end = p[1], step = p[2], mode = p[3];
  if (step == 0) return fail(d, 1);
  unsigned iters = 0;
  for (uint8_t i = start; i != end; i = (uint8_t)(i + step)) {
    sink += i;
    iters++;
    if (mode != 'W' && iters >= 256) { /* bounded mode: give up after one lap */
      note(d, 1);
      break;
    }
    /* mode 'W' waits for i == end: documented bug hang-loop when step never reaches it */
  }
  if (iters > 100) note(d, 2);
  return 0;
}

/* The steps of the planted bugs, as they sit in d->recent's low bytes after the last of them:
 * DEMO001 "bad", DEMO002 "hcf", DEMO003 "gebd". */
#define DEMO001_ORDER ((uint32_t)'b' << 16 | (uint32_t)'a' << 8 | (uint32_t)'d')
#define DEMO002_ORDER ((uint32_t)'h' << 16 | (uint32_t)'c' << 8 | (uint32_t)'f')
#define DEMO003_ORDER ((uint32_t)'g' << 24 | (uint32_t)'e' << 16 | (uint32_t)'b' << 8 | (uint32_t)'d')
#define LAST3_MASK 0xffffffu

static int parse_steps(struct doc *d, const uint8_t *p, size_t n) {
  uint32_t reg = d->reg, recent = d->recent;
  unsigned hit = 0, hit2 = 0, hit3 = 0;
  for (size_t i = 0; i < n; i++) {
    switch (p[i]) { /* each step its own block; any step may follow any other */
    case 'a': reg += 1; break;
    case 'b': reg ^= 0x5a5a5a5au; break;
    case 'c': reg = reg << 3 | reg >> 29; break;
    case 'd': reg = ~reg; break;
    case 'e': reg *= 2654435761u; break;
    case 'f': reg -= 7; break;
    case 'g': reg >>= 1; break;
    case 'h': reg = reg * reg + 1; break;
    default: return fail(d, 9);
    }
    recent = recent << 8 | p[i];
    /* data, not a branch: edges do not see how close an order is */
    hit |= (recent & LAST3_MASK) == DEMO001_ORDER;
    hit2 |= (recent & LAST3_MASK) == DEMO002_ORDER;
    hit3 |= recent == DEMO003_ORDER;
  }
  d->reg = reg;
  d->recent = recent;
  sink += reg;
  AUTOTUNE_BUG(DEMO001, hit);  /* planted known bug: the steps b, a, d back to back */
  AUTOTUNE_BUG(DEMO002, hit2); /* h, c, f: no two of them adjacent in any seed */
  AUTOTUNE_BUG(DEMO003, hit3); /* g, e, b, d: likewise, one step longer */
  return 0;
}

static int parse_chunks(struct doc *d, const uint8_t *base, size_t off, size_t end, int depth);

static int parse_group(struct doc *d, const uint8_t *base, size_t off, size_t end, int depth) {
  if (depth >= MAX_DEPTH) return fail(d, 6);
  note(d, 0);
  return parse_chunks(d, base, off, end, depth + 1);
}

static int parse_checksum(struct doc *d, const uint8_t *base, size_t chunk_off, const uint8_t *p, size_t n) {
  if (n != 1) return fail(d, 5);
  uint8_t c = crc8(base, chunk_off);
  if (c != p[0]) return fail(d, 3);
  note(d, 4);
  return 0;
}

static int parse_chunks(struct doc *d, const uint8_t *base, size_t off, size_t end, int depth) {
  while (off < end) {
    size_t chunk_off = off;
    uint8_t type = base[off++];
    size_t len;
    if (d->version == 1) {
      if (off + 1 > end) return fail(d, 7);
      len = base[off];
      off += 1;
    } else {
      if (off + 2 > end) return fail(d, 7);
      len = (size_t)base[off] | (size_t)base[off + 1] << 8;
      off += 2;
    }
    if (len > end - off) return fail(d, 7);
    const uint8_t *p = base + off;
    int rc;
    switch (type) {
    case 'N': rc = parse_name(d, p, len); break;
    case 'I': rc = parse_ints(d, p, len); break;
    case 'T': rc = parse_text(d, p, len); break;
    case 'E': rc = parse_expr(d, p, len); break;
    case 'R': rc = parse_rle(d, p, len); break;
    case 'K': rc = parse_kv(d, p, len); break;
    case 'L': rc = parse_loop(d, p, len); break;
    case 'G': rc = parse_group(d, base, off, off + len, depth); break;
    case 'C': rc = parse_checksum(d, base, chunk_off, p, len); break;
    case 'S': rc = parse_steps(d, p, len); break;
    default: rc = fail(d, 8); break;
    }
    if (rc < 0) return rc;
    off += len;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct doc d;
  memset(&d, 0, sizeof d);
  if (size < 6 || memcmp(data, "ATLV", 4) != 0) return 0;
  d.version = data[4];
  if (d.version != 1 && d.version != 2) return 0;
  d.strict = data[5] & 1;
  d.stats = (data[5] >> 1) & 1;
  int rc = parse_chunks(&d, data, 6, size, 0);
  if (rc == 0 && d.stats) sink += d.words + d.numbers + (unsigned)d.ints_sum + d.rle_len;
  return 0;
}
