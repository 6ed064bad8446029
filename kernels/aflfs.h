/* aflfs.h - the AFL++ fork server of the autotune runtime (issue 7).
 *
 * Taken by the driver (kernels/driver.c) when __AFL_SHM_ID is set and fd 199 is writable:
 * speaks afl-fuzz's fork-server protocol (AFL++ 4.20c+'s versioned handshake when the parent afl
 * tool is 4.20c or later, else 4.04c's "old" hello, which every AFL++ 4.x accepts), runs the harness in persistent mode, and points the coverage sink (kernels/cov_sink.c) at a map
 * whose dense counters are afl-fuzz's shared memory and whose key->slot index is shared by every
 * child (anonymous MAP_SHARED memory, or the file $AUTOTUNE_INDEX_FILE). docs/DESIGN.md
 * "Running under afl-fuzz" is the contract.
 */
#ifndef AUTOTUNE_AFLFS_H
#define AUTOTUNE_AFLFS_H

#include <stddef.h>
#include <stdint.h>

#include "cov.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fork-server file descriptors and hello options (afl-fuzz 4.04c include/config.h, types.h). */
#define AFLFS_CTL_FD 198
#define AFLFS_ST_FD 199
#define AFLFS_OPT_ENABLED 0x80000001u
#define AFLFS_OPT_MAPSIZE 0x40000000u
#define AFLFS_OPT_SHDMEM_FUZZ 0x01000000u
#define AFLFS_MAX_MAPSIZE (1u << 23)
#define AFLFS_OPT_SET_MAPSIZE(x) ((((uint32_t)(x)) - 1u) << 1)
#define AFLFS_MAX_INPUT (1u << 20) /* afl-fuzz's MAX_FILE */

/* The versioned handshake of AFL++ 4.20c+ (include/types.h FS_NEW_*, 4.22a): the target sends
 * AFLFS_NEW_VERSION (0x41464C00, "AFL" in its upper bytes, + protocol version 1), afl answers its complement, the
 * target sends an options word, each option's parameter in bit order, then the version again. */
#define AFLFS_NEW_MAGIC 0x41464C00u
#define AFLFS_NEW_VERSION (AFLFS_NEW_MAGIC + 1u)
#define AFLFS_NEW_OPT_MAPSIZE 0x00000001u     /* parameter: u32 map bytes */
#define AFLFS_NEW_OPT_SHDMEM_FUZZ 0x00000002u /* no parameter */
#define AFLFS_NEW_OPT_AUTODICT 0x00000800u    /* u32 length + entries (we send none) */
/* AFL++ 5.x's futex sync of a persistent child (pull requests #2724 "Implement futex-based
 * forkserver synchronization" and #2781 "Futex2", merged 2026-05; on by default, AFL_OLD_CHILD_SYNC
 * turns it off). afl-fuzz offers it by setting AFL_CHILD_SYNC_SHM for a persistent target: the
 * byte offset of a u32 sync word inside its coverage segment (__AFL_SHM_ID), past the map (the
 * 2026 sources; the 5.01c release put the word in a 4-byte segment of its own and passed that
 * segment's id in the same variable: both are read). The target accepts with AFLFS_NEW_OPT_FUTEX
 * in the versioned options word (no parameter). Its value is not in any source we could read
 * (include/types.h of 2026 was not available): the sources list the no-parameter options in the
 * order SHDMEM_FUZZ (0x2), FUTEX, ALLOCSIZE_DERIVE, ... AUTODICT (0x800), so FUTEX is taken to be
 * the next bit, 0x4. AUTOTUNE_AFL_FUTEX=0 never advertises it (pipes, as with AFL_OLD_CHILD_SYNC). */
#define AFLFS_NEW_OPT_FUTEX 0x00000004u
#define AFLFS_SYNC_ENV "AFL_CHILD_SYNC_SHM"
/* The sync word's states: afl writes RUN (run the next input; the test case is in place), the
 * child DONE (finished, waiting), the fork server EXITED (the child died; its wait status is in
 * the status pipe already) and IDLE before each new child; afl also writes EXITED before it kills
 * a child that timed out. */
enum { AFLFS_SYNC_IDLE = 0, AFLFS_SYNC_RUN = 1, AFLFS_SYNC_DONE = 2, AFLFS_SYNC_EXITED = 3 };
/* The first AFL++ release whose afl tools read the versioned handshake. */
#define AFLFS_NEW_SINCE_MAJOR 4u
#define AFLFS_NEW_SINCE_MINOR 20u

/* Which handshake the server speaks (AUTOTUNE_AFL_HANDSHAKE). */
typedef enum { AFLFS_HS_AUTO = 0, AFLFS_HS_OLD = 1, AFLFS_HS_VERSIONED = 2 } aflfs_handshake;

/* The index file ($AUTOTUNE_INDEX_FILE): a 64-byte header, then the bigmap shared control
 * region (bm_ctl with the live used_key / overflow_keys, then the index table). */
/* Version 3: the index entries store slot + 1 (0 = unassigned), so a new file (zero-filled by
 * ftruncate) is an empty index without being written; ngram-N entries are indexed by the fold of
 * the exact key. Older versions are refused with a clear error: version 1 stored 0xFFFFFFFF for
 * unassigned, version 2 indexed ngram-N by mix64 of the exact key (its slots would not be found). */
#define AFLFS_INDEX_MAGIC "ATAFLIX3"
#define AFLFS_INDEX_MAGIC_OLD "ATAFLIX" /* + '1' or '2' */
typedef struct aflfs_index_header {
  char magic[8];          /* "ATAFLIX3" */
  uint32_t header_bytes;  /* 64: offset of the bm_ctl region */
  uint32_t layout;        /* bm_layout (1 = twolevel) */
  uint32_t metric;        /* metric id (docs/DESIGN.md order) */
  uint32_t guards;         /* guards of the build that made it (cov_guard_count()) */
  uint64_t seed;          /* AUTOTUNE_SEED */
  uint64_t index_slots;   /* H */
  uint64_t dense_slots;   /* C (= AUTOTUNE_MAP_SIZE) */
  uint32_t ready;         /* 1 once the region is initialised */
  uint32_t key_hash;      /* AUTOTUNE_KEY_HASH (COV_KEY_*) */
  uint32_t reserved[2];
} aflfs_index_header;

/* The fork server (declared weak in cov.h, called by driver.c): never returns. */
int autotune_afl_forkserver_main(cov_test_one_fn test_one, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
