/* cov_config.c - the run-time configuration: AUTOTUNE_* variables read and checked once
 * (cov_config_from_env), with one-line errors naming the variable, its value and the valid values.
 * See cov.h for the definitions; docs/DESIGN.md "Runtime configuration". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "cov_internal.h"

/* ---- configuration ------------------------------------------------------------------------ */
const char *cov_layout_name(bm_layout l) {
  return l == BM_FLAT ? "flat" : l == BM_TWOLEVEL ? "twolevel" : "exact";
}
const char *cov_policy_name(bm_policy p) {
  return p == BM_WRAP ? "wrap" : p == BM_NEVERZERO ? "neverzero" : "saturate";
}

/* The index of v in names (the enum values of the choice), -1 if it is none of them. */
static int choice(const char *v, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  return -1;
}

static int parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

static int bad(char *err, size_t errlen, const char *var, const char *val, const char *valid) {
  if (err && errlen) snprintf(err, errlen, "%s='%s' is not valid; valid values: %s", var, val, valid);
  return -1;
}

/* bad() for a choice variable: the valid values are the names of its table, so the message always
 * lists what this runtime accepts (autotune/vocabulary.py's registry is tested against it). */
static int bad_choice(char *err, size_t errlen, const char *var, const char *val,
                      const char *const *names, int n) {
  char valid[256];
  size_t len = 0;
  valid[0] = 0;
  for (int i = 0; i < n && len < sizeof valid; i++)
    len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "", names[i]);
  return bad(err, errlen, var, val, valid);
}

static int pow2_in(uint64_t v, unsigned lo, unsigned hi) {
  return v && !(v & (v - 1)) && v >= (1ull << lo) && v <= (1ull << hi);
}

/* AUTOTUNE_MAP_SIZE: a flat map's slots are its hash space, (key & (size - 1)), so a power of two; a
 * two-level map's dense slots are handed out in order, so any multiple of 64 (afl-fuzz's map
 * granularity) sized to the keys, not rounded up to the next power of two. */
#define MAP_SIZE_VALID "a power of two from 64 (2^6) to 2^30 (flat); a multiple of 64 in that range (twolevel)"

static int map_size_in(uint64_t v) { return v && v % 64 == 0 && v >= 64 && v <= (1ull << 30); }

/* "<VAR>=<value>: a program built with AUTOTUNE_CC_INSTRUMENT=edge|ngram|ctx <why>; fix: unset it (or <ok>), or
 * rebuild with AUTOTUNE_CC_INSTRUMENT=blocks" */
static int edge_refuse(char *err, size_t errlen, const char *var, const char *val, const char *why,
                       const char *ok) {
  if (err && errlen)
    snprintf(err, errlen, "%s=%s: a program built with AUTOTUNE_CC_INSTRUMENT=%s %s; fix: unset it "
             "(or %s), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks", var, val,
             cov_build_kind_name(cov_build_kind()), why, ok);
  return -1;
}

/* The edge build counts inline as AFL++'s CLASSIC: 8-bit NeverZero counters in a flat map, the
 * slot (cur ^ prev) & (map size - 1) of compile-time block ids; the ngram build as AFL++'s NGRAM-N,
 * the same way (the slot (cur ^ p1 ^ .. ^ p(N-1)) & (map size - 1), p = id >> 1); the ctx build as
 * AFL++'s CTX, CALLER and CTX-K (the slot (cur ^ prev ^ ctx) & (map size - 1)). Settings they
 * cannot follow are refused when given; unset, they take these values. */
static int edge_config_check(cov_config *cfg, char *err, size_t errlen) {
  const char *v;
  const int kind = cov_build_kind(), ngram = kind == COV_BUILD_NGRAM, ctx = kind == COV_BUILD_CTX;
  const int indexed = cov_build_indexed();
  if ((v = getenv("AUTOTUNE_LAYOUT")) && *v && cfg->layout != (indexed ? BM_TWOLEVEL : BM_FLAT))
    return edge_refuse(err, errlen, "AUTOTUNE_LAYOUT", v,
                       indexed ? "counts inline through a two-level map's index (AUTOTUNE_CC_INDEX=1)"
                               : "counts inline into a flat map",
                       indexed ? "twolevel" : "flat");
  if (cfg->counter_bits != 8) {
    char bits[8];
    snprintf(bits, sizeof bits, "%u", cfg->counter_bits);
    return edge_refuse(err, errlen, "AUTOTUNE_COUNTER_BITS", bits, "counts in 8-bit counters", "8");
  }
  if ((v = getenv("AUTOTUNE_OVERFLOW")) && *v && cfg->overflow != BM_NEVERZERO)
    return edge_refuse(err, errlen, "AUTOTUNE_OVERFLOW", v,
                       ngram ? "counts as AFL++'s NGRAM does, skipping zero on overflow (NeverZero)"
                       : ctx ? "counts as AFL++'s CTX does, skipping zero on overflow (NeverZero)"
                             : "counts as AFL++'s CLASSIC does, skipping zero on overflow (NeverZero)",
                       "neverzero");
  if ((v = getenv("AUTOTUNE_KEY_HASH")) && *v && cfg->key_hash != COV_KEY_AFL)
    return edge_refuse(err, errlen, "AUTOTUNE_KEY_HASH", v,
                       ngram ? "keys each N-gram as AFL++'s NGRAM does, cur ^ (p1 >> 1) ^ .. ^ (p(N-1) >> 1) of "
                               "block ids fixed at compile time"
                       : ctx ? "keys each edge in its call context as AFL++'s CTX does, (cur ^ prev >> 1 ^ ctx) of "
                               "block and function ids fixed at compile time"
                             : "keys each edge as AFL++'s CLASSIC does, (cur ^ prev >> 1) of block ids fixed at "
                               "compile time",
                       "afl");
  if (cfg->seed != 0)
    return edge_refuse(err, errlen, "AUTOTUNE_SEED", getenv("AUTOTUNE_SEED"),
                       "has block ids fixed at compile time (kernels/plugin/autotune_edges.cpp)", "0");
  cfg->layout = indexed ? BM_TWOLEVEL : BM_FLAT;
  cfg->overflow = BM_NEVERZERO;
  cfg->key_hash = COV_KEY_AFL;
  return 0;
}

int cov_config_from_env(cov_config *cfg, char *err, size_t errlen) {
  memset(cfg, 0, sizeof *cfg);
  cfg->seed = 0;
  cfg->metric = cov_default_metric(cov_build_kind()); /* the build's one metric, else edge */
  cfg->layout = BM_TWOLEVEL;
  cfg->index_size = 1ull << 24;
  cfg->map_size = 65536;
  cfg->counter_bits = 8;
  cfg->overflow = BM_NEVERZERO;
  cfg->key_hash = COV_KEY_EXACT;
  const char *v;
  if ((v = getenv("AUTOTUNE_SEED")) && *v && parse_u64(v, &cfg->seed))
    return bad(err, errlen, "AUTOTUNE_SEED", v, "an unsigned 64-bit integer");
  if ((v = getenv("AUTOTUNE_METRIC")) && *v && (cfg->metric = cov_metric_id(v)) < 0)
    return bad_choice(err, errlen, "AUTOTUNE_METRIC", v, cov_metric_names, COV_N_METRICS);
  static const char *const layouts[] = {"flat", "twolevel"};          /* BM_FLAT, BM_TWOLEVEL */
  static const char *const policies[] = {"wrap", "neverzero", "saturate"}; /* bm_policy order */
  static const char *const hooks[] = {"auto", "general"};                /* COV_HOOKS_* order */
  int c;
  if ((v = getenv("AUTOTUNE_LAYOUT")) && *v) {
    if ((c = choice(v, layouts, 2)) < 0) return bad_choice(err, errlen, "AUTOTUNE_LAYOUT", v, layouts, 2);
    cfg->layout = (bm_layout)c;
  }
  if ((v = getenv("AUTOTUNE_INDEX_SIZE")) && *v &&
      (parse_u64(v, &cfg->index_size) || !pow2_in(cfg->index_size, 10, 30)))
    return bad(err, errlen, "AUTOTUNE_INDEX_SIZE", v, "a power of two from 1024 (2^10) to 2^30");
  const char *map_text = getenv("AUTOTUNE_MAP_SIZE");
  if (map_text && *map_text && (parse_u64(map_text, &cfg->map_size) || !map_size_in(cfg->map_size)))
    return bad(err, errlen, "AUTOTUNE_MAP_SIZE", map_text, MAP_SIZE_VALID);
  if ((v = getenv("AUTOTUNE_COUNTER_BITS")) && *v) {
    uint64_t b;
    if (parse_u64(v, &b) || (b != 8 && b != 16 && b != 32 && b != 64))
      return bad(err, errlen, "AUTOTUNE_COUNTER_BITS", v, "8, 16, 32, 64");
    cfg->counter_bits = (unsigned)b;
  }
  if ((v = getenv("AUTOTUNE_OVERFLOW")) && *v) {
    if ((c = choice(v, policies, 3)) < 0)
      return bad_choice(err, errlen, "AUTOTUNE_OVERFLOW", v, policies, 3);
    cfg->overflow = (bm_policy)c;
  }
  if ((v = getenv("AUTOTUNE_KEY_HASH")) && *v && (cfg->key_hash = cov_key_hash_id(v)) < 0)
    return bad_choice(err, errlen, "AUTOTUNE_KEY_HASH", v, cov_key_hash_names, 2);
  if ((v = getenv("AUTOTUNE_HOOKS")) && *v && (cfg->hooks = choice(v, hooks, 2)) < 0)
    return bad_choice(err, errlen, "AUTOTUNE_HOOKS", v, hooks, 2);
  if ((v = getenv("AUTOTUNE_INDEX_FILE")) && *v) {
    if (strlen(v) >= sizeof cfg->index_file)
      return bad(err, errlen, "AUTOTUNE_INDEX_FILE", "...", "a path shorter than 4096 bytes");
    strcpy(cfg->index_file, v);
  }
  if (cov_metric_check(cfg->metric, err, errlen)) return -1;
  if (cov_build_counts(cov_build_kind()) == COV_COUNTS_AREA && edge_config_check(cfg, err, errlen))
    return -1;
  /* the default (65536) is a power of two, so a flat map of another size was given as map_text */
  if (cfg->metric != COV_M_GUARD && cfg->layout == BM_FLAT && !pow2_in(cfg->map_size, 6, 30))
    return bad(err, errlen, "AUTOTUNE_MAP_SIZE", map_text, MAP_SIZE_VALID);
  if (cfg->metric == COV_M_GUARD) { /* one slot per guard: layout and sizes do not apply */
    if (cov_build_counts(cov_build_kind()) == COV_COUNTS_COUNTERS) { /* clang's inline counters: 8-bit, NeverZero */
      if (cfg->counter_bits != 8) {
        if (err && errlen)
          snprintf(err, errlen, "AUTOTUNE_COUNTER_BITS=%u: a program built with "
                   "AUTOTUNE_CC_INSTRUMENT=guard counts in clang's inline 8-bit counters; fix: "
                   "unset it (or 8), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks", cfg->counter_bits);
        return -1;
      }
      if ((v = getenv("AUTOTUNE_OVERFLOW")) && *v && cfg->overflow != BM_NEVERZERO) {
        if (err && errlen)
          snprintf(err, errlen, "AUTOTUNE_OVERFLOW=%s: a program built with "
                   "AUTOTUNE_CC_INSTRUMENT=guard counts in inline 8-bit counters that skip 0 "
                   "(NeverZero); fix: unset it (or neverzero), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks", v);
        return -1;
      }
      cfg->overflow = BM_NEVERZERO;
    }
    cfg->layout = BM_FLAT;
    cfg->map_size = cov_guard_map_bytes();
    cfg->index_size = 64;
    while (cfg->index_size < cfg->map_size) cfg->index_size <<= 1;
  }
  cov_set_key_hash(cfg->key_hash); /* the map sink's key hash from now on */
  cov_set_hooks(cfg->hooks);
  return 0;
}

void cov_config_to_bm(const cov_config *cfg, bm_config *out) {
  memset(out, 0, sizeof *out);
  out->layout = cfg->layout;
  out->width_bits = cfg->counter_bits;
  out->policy = cfg->overflow;
  if (cfg->metric == COV_M_GUARD) { /* H: a power of two >= the guard map (cov_config_from_env) */
    out->index_slots = cfg->index_size;
    out->capacity = cfg->index_size;
  } else if (cfg->layout == BM_FLAT) {
    out->index_slots = cfg->map_size;
    out->capacity = cfg->map_size;
  } else {
    out->index_slots = cfg->index_size;
    out->capacity = cfg->map_size;
  }
}

/* clang links UBSan's standalone runtime whenever -fsanitize-coverage is given without another
 * sanitizer, and its deadly-signal handlers turn a SIGSEGV or an abort() into exit(1). Fuzzers
 * and the probe server detect crashes by the signal, so hand the signals back (AFL++ passes the
 * same settings in UBSAN_OPTIONS). UBSAN_OPTIONS from the environment still wins. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0";
}
