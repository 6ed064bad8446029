/* test_lazy.c - creating a map writes none of its index / key table: a zero-filled region is an
 * empty index (stored slot + 1, 0 = unassigned; key table empty marker 0). Pages, not time:
 * mincore() counts the resident pages of the shared region after create and a few updates. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../bigmap.h"
#include "test_util.h"

/* Resident bytes of [p, p + len) (p page-aligned). */
static uint64_t resident_bytes(const void *p, size_t len) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page;
  unsigned char *vec = malloc(n);
  if (!vec || mincore((void *)p, len, vec) != 0) {
    free(vec);
    return UINT64_MAX;
  }
  uint64_t r = 0;
  for (size_t i = 0; i < n; i++) r += vec[i] & 1;
  free(vec);
  return r * page;
}

enum { UPDATES = 8 };

static void lazy_case(bm_layout layout, unsigned flags) {
  char ctx[96];
  snprintf(ctx, sizeof ctx, "lazy %s%s", layout == BM_EXACT ? "exact" : "twolevel",
           flags & BM_F_NO_HUGEPAGE ? " (no huge pages)" : "");
  bm_config cfg = {layout, 8, BM_NEVERZERO, 1u << 24, 1u << 16};
  bm_map m;
  CHECK(bm_map_create(&m, &cfg, flags) == BM_OK, "%s: create", ctx);
  /* a page is 4 KiB, or 2 MiB where a transparent huge page backs the touched address */
  uint64_t unit = flags & BM_F_NO_HUGEPAGE ? (uint64_t)sysconf(_SC_PAGESIZE) : 2u << 20;
  uint64_t after_create = resident_bytes(m.alloc_shared, m.alloc_shared_bytes);
  CHECK(after_create <= unit, "%s: %" PRIu64 " bytes of the %zu-byte index region resident after "
        "create (only the header page may be)", ctx, after_create, m.alloc_shared_bytes);
  for (int i = 0; i < UPDATES; i++) bm_update(&m, t_rand());
  /* each new key touches one index page (exact: one key-table page too) */
  uint64_t pages_per_key = layout == BM_EXACT ? 2 : 1;
  uint64_t after = resident_bytes(m.alloc_shared, m.alloc_shared_bytes);
  CHECK(after <= (1 + pages_per_key * UPDATES) * unit,
        "%s: %" PRIu64 " bytes resident after %d updates", ctx, after, UPDATES);
  CHECK(after < m.alloc_shared_bytes / 2, "%s: the index region was filled", ctx);
  CHECK_EQ_U64(bm_map_used(&m), UPDATES, ctx);
  const char *why;
  CHECK(bm_validate(&m, &why), "%s: %s", ctx, why);
  bm_map_destroy(&m);
}

void test_lazy_index(void) {
  for (int l = BM_TWOLEVEL; l <= BM_EXACT; l++) {
    lazy_case((bm_layout)l, BM_F_NO_HUGEPAGE);
    lazy_case((bm_layout)l, 0);
  }
  /* attach: memory of unknown contents is cleared by BM_F_INIT_SHARED alone, a region known to be
   * zero (BM_F_SHARED_ZEROED) keeps its untouched pages untouched */
  bm_config cfg = {BM_TWOLEVEL, 8, BM_WRAP, 1u << 16, 256};
  size_t sb = bm_shared_bytes(&cfg);
  uint8_t *counters = calloc(1, bm_counters_bytes(&cfg));
  void *shared = mmap(NULL, sb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(counters && shared != MAP_FAILED, "alloc");
  bm_map m;
  CHECK(bm_map_attach(&m, &cfg, counters, shared, BM_F_INIT_SHARED | BM_F_SHARED_ZEROED) == BM_OK,
        "attach zeroed");
  CHECK(resident_bytes(shared, sb) <= (uint64_t)sysconf(_SC_PAGESIZE), "zeroed attach touched the index");
  bm_update(&m, 77);
  CHECK_EQ_U64(bm_index_get(&m, 77), 0, "first key, slot 0");
  CHECK_EQ_U64(m.index[77], bm_index_encode(0), "stored as slot + 1");
  CHECK_EQ_U64(bm_index_get(&m, 78), BM_UNASSIGNED, "unassigned decodes to BigMap's -1");
  bm_map_destroy(&m);
  memset(shared, 0xab, sb); /* garbage from an earlier user */
  CHECK(bm_map_attach(&m, &cfg, counters, shared, BM_F_INIT_SHARED | BM_F_ZERO_COUNTERS) == BM_OK,
        "attach dirty");
  const char *why;
  CHECK(bm_validate(&m, &why), "re-initialised region: %s", why);
  CHECK_EQ_U64(bm_map_used(&m), 0, "re-initialised region is empty");
  bm_update(&m, 77);
  CHECK_EQ_U64(bm_index_get(&m, 77), 0, "first key after re-init, slot 0");
  bm_map_destroy(&m);
  munmap(shared, sb);
  free(counters);
}
