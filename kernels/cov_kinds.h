/* cov_kinds.h - the build kinds (AUTOTUNE_CC_INSTRUMENT of `autotune cc`), one X-macro list
 * (docs/BUILD_KINDS.md).
 *
 * Adding a build kind: a line in COV_BUILD_KINDS, its autotune/buildkinds.py BuildKind (the
 * wrapper's flags, its pass plugin, the words for it) and its row of docs/BUILD_KINDS.md
 * (tests/test_buildkinds.py checks the three agree). cov.h's COV_BUILD_* ids, the link's
 * autotune_kind_<name> symbols, cov_build_kind_name(), the kinds the refusals name, and what
 * cov_metric_check, cov_census_check, the configuration and the map sink accept of a build are
 * generated from this list. A kind whose
 * blocks count in a new way (not one of the COUNTS below) needs runtime code too: how
 * cov_build_kind() recognises its modules, and its sink.
 *
 * X(ID, name, SERVES, CENSUS, COUNTS, FIX), in id order:
 *   ID      the enum name COV_BUILD_<ID>
 *   name    AUTOTUNE_CC_INSTRUMENT's value, a bare word: the string, and the symbol autotune_kind_<name>
 *           the link names (`-Wl,--defsym=autotune_instrument_kind=autotune_kind_<name>`)
 *   SERVES  the metrics the runtime serves (map sink, replay, afl-fuzz): COV_SERVES_ALL,
 *           COV_SERVES_NOSTACK (every metric not keyed by the call stack: no function hooks),
 *           COV_SERVES_NGRAM_N (ngram-N of the N the build's modules were compiled with),
 *           COV_SERVES_CTX_K (the call-context metric its modules were compiled with), or one
 *           metric's id COV_M_<ID>
 *   CENSUS  the census (the probe) it takes: COV_SERVES_ALL, COV_SERVES_NOSTACK or COV_SERVES_NONE
 *   COUNTS  how its blocks count: COV_COUNTS_HOOKS (trace-pc-guard calls into the sinks),
 *           COV_COUNTS_COUNTERS (clang's inline 8-bit counters, NeverZero, added into the map at
 *           each execution's end: 8-bit NeverZero only), COV_COUNTS_AREA (our pass, inline into a
 *           flat 8-bit NeverZero map keyed by AFL++'s hash: cov_config.c edge_config_check)
 *   FIX     cov_metric_check's fix for a metric it does not serve (COV_SERVES_NGRAM_N and
 *           COV_SERVES_CTX_K: their own message names the metric built) */
#ifndef AUTOTUNE_COV_KINDS_H
#define AUTOTUNE_COV_KINDS_H

#define COV_SERVES_ALL (-1)
#define COV_SERVES_NOSTACK (-2)
#define COV_SERVES_NGRAM_N (-3)
#define COV_SERVES_NONE (-4)
#define COV_SERVES_CTX_K (-5)
enum { COV_COUNTS_HOOKS, COV_COUNTS_COUNTERS, COV_COUNTS_AREA };

#define COV_BUILD_KINDS(X)                                                                        \
  X(FULL, full, COV_SERVES_ALL, COV_SERVES_ALL, COV_COUNTS_HOOKS, "")                             \
  X(BLOCKS, blocks, COV_SERVES_NOSTACK, COV_SERVES_NOSTACK, COV_COUNTS_HOOKS,                     \
    "set AUTOTUNE_METRIC to edge, ngram-N or guard, or rebuild with "                             \
    "AUTOTUNE_CC_INSTRUMENT=full (every metric)")                                                 \
  X(GUARD, guard, COV_M_GUARD, COV_SERVES_NONE, COV_COUNTS_COUNTERS,                              \
    "set AUTOTUNE_METRIC=guard (or unset it), or rebuild with "                                   \
    "AUTOTUNE_CC_INSTRUMENT=edge (edge), blocks (edge, ngram-N, guard) or full (every metric)")   \
  X(EDGE, edge, COV_M_EDGE, COV_SERVES_NONE, COV_COUNTS_AREA,                                     \
    "set AUTOTUNE_METRIC=edge (or unset it), or rebuild with AUTOTUNE_CC_INSTRUMENT=blocks "      \
    "(edge, ngram-N, guard) or full (every metric)")                                              \
  X(NGRAM, ngram, COV_SERVES_NGRAM_N, COV_SERVES_NONE, COV_COUNTS_AREA, "")                       \
  X(CTX, ctx, COV_SERVES_CTX_K, COV_SERVES_NONE, COV_COUNTS_AREA, "")

#endif
