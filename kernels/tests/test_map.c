/* test_map.c - counter overflow, a full dense array, validation, cross-process slot sharing. */
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../bigmap.h"
#include "test_util.h"

static const char *const pol_name[3] = {"wrap", "neverzero", "saturate"};
static const char *const lay_name[3] = {"flat", "twolevel", "exact"};

static void set_counter(bm_map *m, uint64_t i, uint64_t v) {
  switch (m->width_bits) {
    case 8: ((uint8_t *)m->counters)[i] = (uint8_t)v; break;
    case 16: ((uint16_t *)m->counters)[i] = (uint16_t)v; break;
    case 32: ((uint32_t *)m->counters)[i] = (uint32_t)v; break;
    default: ((uint64_t *)m->counters)[i] = v; break;
  }
}

/* Hand-derived values of a counter after n hits from 0 (DESIGN.md policies):
 * 8-bit:  300 hits: wrap 300-256 = 44; neverzero skips 0 once per 255 -> (299 % 255) + 1 = 45;
 *         saturate 255. 65,600 hits: wrap 65600 % 256 = 64; neverzero (65599 % 255) + 1 = 65;
 *         saturate 255.
 * 16-bit: 300 hits: 300 for all. 65,600 hits: wrap 65600 - 65536 = 64; neverzero
 *         (65599 % 65535) + 1 = 65; saturate 65535.
 * 32/64-bit: both counts are exact. */
struct ovf_case {
  unsigned w;
  uint64_t hits, want[3];
  uint8_t bucket[3];
};
static const struct ovf_case ovf_cases[] = {
    {8, 300, {44, 45, 255}, {64, 64, 128}},
    {8, 65600, {64, 65, 255}, {64, 64, 128}},
    {16, 300, {300, 300, 300}, {128, 128, 128}},
    {16, 65600, {64, 65, 65535}, {64, 64, 128}},
    {32, 300, {300, 300, 300}, {128, 128, 128}},
    {32, 65600, {65600, 65600, 65600}, {128, 128, 128}},
    {64, 300, {300, 300, 300}, {128, 128, 128}},
    {64, 65600, {65600, 65600, 65600}, {128, 128, 128}},
};

void test_overflow(void) {
  char ctx[160];
  for (int l = BM_FLAT; l <= BM_EXACT; l++)
    for (size_t c = 0; c < sizeof ovf_cases / sizeof ovf_cases[0]; c++)
      for (int p = BM_WRAP; p <= BM_SATURATE; p++) {
        const struct ovf_case *oc = &ovf_cases[c];
        bm_config cfg = {(bm_layout)l, oc->w, (bm_policy)p, 64, 16};
        bm_map m;
        CHECK(bm_map_create(&m, &cfg, BM_F_NO_HUGEPAGE) == BM_OK, "create");
        /* the specialised inline function and the generic pointer must agree */
        uint64_t *keys = malloc(oc->hits * sizeof *keys);
        for (uint64_t i = 0; i < oc->hits; i++) keys[i] = 5;
        bm_update_many(&m, keys, oc->hits);
        free(keys);
        uint64_t slot = l == BM_FLAT ? 5 : 0;
        snprintf(ctx, sizeof ctx, "%s u%u %s %" PRIu64 " hits", lay_name[l], oc->w, pol_name[p],
                 oc->hits);
        CHECK_EQ_U64(bm_counter_get(&m, slot), oc->want[p], ctx);
        bm_classify(&m);
        CHECK_EQ_U64(m.trace[slot], oc->bucket[p], ctx);
        bm_map_destroy(&m);
      }
  /* 32/64-bit wrap-around: start 3 below the maximum, 5 hits.
   * wrap: max-2, max-1, max, 0, 1... from max-2: +5 -> 2 (mod 2^W);
   * neverzero: max-1, max, 1, 2, 3 -> 3; saturate: max. */
  for (unsigned w = 8; w <= 64; w *= 2)
    for (int p = BM_WRAP; p <= BM_SATURATE; p++) {
      uint64_t max = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
      bm_config cfg = {BM_FLAT, w, (bm_policy)p, 16, 0};
      bm_map m;
      CHECK(bm_map_create(&m, &cfg, BM_F_NO_HUGEPAGE) == BM_OK, "create");
      set_counter(&m, 3, max - 2);
      for (int i = 0; i < 5; i++) bm_update(&m, 3);
      uint64_t want[3] = {2, 3, max};
      snprintf(ctx, sizeof ctx, "u%u %s from max-2 +5", w, pol_name[p]);
      CHECK_EQ_U64(bm_counter_get(&m, 3), want[p], ctx);
      bm_map_destroy(&m);
    }
  /* the named specialised functions, called directly */
  bm_config cfg = {BM_TWOLEVEL, 16, BM_SATURATE, 1024, 8};
  bm_map m;
  CHECK(bm_map_create(&m, &cfg, 0) == BM_OK, "create");
  for (int i = 0; i < 70000; i++) bm_twolevel_update_u16_sat(&m, 77);
  CHECK_EQ_U64(bm_counter_get(&m, 0), 65535, "bm_twolevel_update_u16_sat");
  CHECK_EQ_U64(bm_map_used(&m), 1, "one key");
  bm_map_destroy(&m);
}

/* The dense array is full: C = 4 slots, 10 distinct keys, each hit key+1 times. */
void test_full(void) {
  char ctx[96];
  for (int l = BM_TWOLEVEL; l <= BM_EXACT; l++) {
    bm_config cfg = {(bm_layout)l, 32, BM_WRAP, 64, 4};
    bm_map m;
    CHECK(bm_map_create(&m, &cfg, 0) == BM_OK, "create");
    for (uint64_t k = 0; k < 10; k++)
      for (uint64_t h = 0; h <= k; h++) bm_update(&m, 1000 + k * 7);
    snprintf(ctx, sizeof ctx, "%s full", lay_name[l]);
    CHECK_EQ_U64(bm_map_used(&m), 4, ctx);
    CHECK_EQ_U64(*m.overflow_keys, 6, ctx);
    /* slots 0..2 hold keys 0..2 (1, 2, 3 hits); the overflow slot 3 holds key 3 (4 hits) and
     * the 6 overflow keys 4..9 (5+6+7+8+9+10 = 45 hits) */
    CHECK_EQ_U64(bm_counter_get(&m, 0), 1, ctx);
    CHECK_EQ_U64(bm_counter_get(&m, 1), 2, ctx);
    CHECK_EQ_U64(bm_counter_get(&m, 2), 3, ctx);
    CHECK_EQ_U64(bm_counter_get(&m, 3), 4 + 45, ctx);
    /* known overflow keys are remembered: hitting them again counts no new overflow */
    bm_update(&m, 1000 + 9 * 7);
    CHECK_EQ_U64(*m.overflow_keys, 6, ctx);
    const char *why;
    CHECK(bm_validate(&m, &why), "%s: %s", ctx, why);
    bm_map_destroy(&m);
  }
  /* exact: the full 64-bit key decides, the low bits alone do not (twolevel collides) */
  bm_config ce = {BM_EXACT, 8, BM_WRAP, 16, 16}, ct = {BM_TWOLEVEL, 8, BM_WRAP, 16, 16};
  bm_map e, t;
  CHECK(bm_map_create(&e, &ce, 0) == BM_OK && bm_map_create(&t, &ct, 0) == BM_OK, "create");
  const uint64_t ks[5] = {5, 5 + 16, 5ull << 40 | 5, 0, UINT64_MAX};
  for (int i = 0; i < 4; i++) {
    bm_update(&e, ks[i]);
    bm_update(&t, ks[i]);
  }
  CHECK_EQ_U64(bm_map_used(&e), 4, "exact keeps 4 keys apart");
  CHECK_EQ_U64(bm_map_used(&t), 2, "twolevel: 5, 21 and 5<<40|5 share index entry 5");
  CHECK_EQ_U64(bm_index_decode(e.ctl->special_slot), 3, "exact: the key 0 has its own slot");
  bm_update(&e, 0);
  CHECK_EQ_U64(((uint8_t *)e.counters)[3], 2, "exact: the key 0 hit twice");
  const char *why;
  CHECK(bm_validate(&e, &why), "exact: %s", why);
  CHECK(bm_validate(&t, &why), "twolevel: %s", why);
  bm_map_destroy(&t);
  /* exact with C == H == 16: the table holds 3 keys (the key 0 lives outside it) and 4 slots
   * are used; UINT64_MAX, an ordinary key now, takes slot 4; of 12 more keys, 11 take slots
   * 5..15 and the 12th the overflow slot (counted), which fills the key table's 16 entries; a
   * further key finds the table full: it shares the overflow slot, counted by table_full only */
  bm_reset(&e);
  bm_update(&e, ks[4]);
  CHECK_EQ_U64(bm_map_used(&e), 5, "exact: UINT64_MAX is an ordinary key");
  for (uint64_t k = 0; k < 12; k++) bm_update(&e, 0x100 + k);
  CHECK_EQ_U64(bm_map_used(&e), 16, "exact: C = 16 used");
  CHECK_EQ_U64(*e.overflow_keys, 1, "exact: one overflow key");
  CHECK_EQ_U64(e.ctl->table_full, 0, "no table-full yet");
  bm_update(&e, 0x999);
  CHECK_EQ_U64(e.ctl->table_full, 1, "table full counted");
  CHECK(bm_validate(&e, &why), "exact full: %s", why);
  bm_map_destroy(&e);
}

void test_validate(void) {
  const char *why = NULL;
  bm_config cfg = {BM_TWOLEVEL, 8, BM_NEVERZERO, 64, 8};
  bm_map m;
  CHECK(bm_map_create(&m, &cfg, 0) == BM_OK, "create");
  bm_update(&m, 1);
  bm_update(&m, 2);
  CHECK(bm_validate(&m, &why), "fresh: %s", why);
  m.index[40] = bm_index_encode(5); /* beyond used_key */
  CHECK(!bm_validate(&m, &why), "index beyond used_key not detected");
  CHECK(why && strstr(why, "used_key"), "reason: %s", why ? why : "(null)");
  m.index[40] = bm_index_encode(0); /* two entries share slot 0, not the overflow slot */
  CHECK(!bm_validate(&m, &why), "shared slot not detected");
  m.index[40] = BM_INDEX_EMPTY;
  ((uint8_t *)m.counters)[6] = 1; /* a counter beyond used_key */
  CHECK(!bm_validate(&m, &why), "counter beyond used_key not detected");
  ((uint8_t *)m.counters)[6] = 0;
  CHECK(bm_validate(&m, &why), "restored: %s", why);
  /* a lost publish race, replayed by hand: a process reserved slot 2 (used_key 2 -> 3), then its
   * CAS on the index entry lost; slot 2 is a hole that stays zero, the next key gets slot 3 */
  (*m.used_key)++;
  bm_update(&m, 3);
  CHECK_EQ_U64(bm_index_get(&m, 3), 3, "slot after the hole");
  CHECK_EQ_U64(bm_map_holes(&m), 1, "one hole");
  CHECK(bm_validate(&m, &why), "a zero hole is valid: %s", why);
  ((uint8_t *)m.counters)[2] = 1;
  CHECK(!bm_validate(&m, &why), "a non-zero hole is not");
  ((uint8_t *)m.counters)[2] = 0;
  bm_map_destroy(&m);
  /* bad configurations are refused */
  bm_config bad[] = {{BM_FLAT, 12, BM_WRAP, 64, 0},       {BM_FLAT, 8, BM_WRAP, 48, 0},
                     {BM_TWOLEVEL, 8, BM_WRAP, 64, 0},    {BM_EXACT, 8, BM_WRAP, 16, 32},
                     {(bm_layout)7, 8, BM_WRAP, 64, 8},   {BM_FLAT, 8, (bm_policy)9, 64, 0}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(bm_map_create(&m, &bad[i], 0) == BM_E_CONFIG, "bad config %zu accepted", i);
}

/* Caller-provided memory: counters and control region in MAP_SHARED memory, four forked
 * processes insert the same 3000 keys in different orders at once. Every key must end up with
 * one slot that all processes agree on; slots lost to CAS races stay zero (holes). */
void test_shared_processes(void) {
  enum { NPROC = 4, NKEYS = 3000 };
  /* Room for the worst case: a key's first insertion may reserve a slot in every process and
   * all but one become holes, so up to NPROC * NKEYS slots. Two processes inserting in the same
   * order in lockstep (likely on a loaded host) waste about one slot per key; with 4096 slots
   * the array filled and keys shared the overflow slot, failing "keys with a slot". */
  bm_config cfg = {BM_TWOLEVEL, 16, BM_WRAP, 1u << 16, 1u << 14};
  for (int l = BM_TWOLEVEL; l <= BM_EXACT; l++) {
    cfg.layout = (bm_layout)l;
    size_t cb = bm_counters_bytes(&cfg), sb = bm_shared_bytes(&cfg);
    /* twolevel: both regions MAP_SHARED anonymous; exact: counters in a SysV segment (as
     * afl-fuzz hands them over) and the control region in a MAP_SHARED file (an index file) */
    int shm_id = -1, fd = -1;
    char path[] = "/tmp/bm-index-XXXXXX";
    void *counters, *shared;
    if (l == BM_TWOLEVEL) {
      counters = mmap(NULL, cb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      shared = mmap(NULL, sb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    } else {
      shm_id = shmget(IPC_PRIVATE, cb, IPC_CREAT | 0600);
      CHECK(shm_id >= 0, "shmget");
      counters = shmat(shm_id, NULL, 0);
      if (counters == (void *)-1) counters = MAP_FAILED;
      fd = mkstemp(path);
      CHECK(fd >= 0 && ftruncate(fd, (off_t)sb) == 0, "index file");
      shared = mmap(NULL, sb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    CHECK(counters != MAP_FAILED && shared != MAP_FAILED, "mmap");
    bm_map m;
    CHECK(bm_map_attach(&m, &cfg, counters, shared, 0) == BM_E_SHARED,
          "attaching an uninitialised region is refused");
    /* twolevel: garbage in the region, cleared by the full init; exact: a new file and a fresh
     * segment are all zero, so only the header is written */
    if (l == BM_TWOLEVEL) memset(shared, 0x5a, sb);
    unsigned init = BM_F_INIT_SHARED | BM_F_ZERO_COUNTERS | (l == BM_EXACT ? BM_F_SHARED_ZEROED : 0);
    CHECK(bm_map_attach(&m, &cfg, counters, shared, init) == BM_OK, "attach");
    pid_t pids[NPROC];
    for (int p = 0; p < NPROC; p++) {
      pids[p] = fork();
      if (pids[p] == 0) {
        bm_map c; /* a child attaches to the already initialised region */
        if (bm_map_attach(&c, &cfg, counters, shared, 0) != BM_OK) _exit(3);
        for (int round = 0; round < 3; round++)
          for (int i = 0; i < NKEYS; i++) {
            int k = p & 1 ? NKEYS - 1 - i : i;
            bm_update(&c, 0xabc00000ull + (uint64_t)k * 0x10001ull);
          }
        bm_map_destroy(&c);
        _exit(0);
      }
    }
    int ok = 1;
    for (int p = 0; p < NPROC; p++) {
      int st;
      waitpid(pids[p], &st, 0);
      ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    CHECK(ok, "%s: children failed", l == BM_TWOLEVEL ? "twolevel" : "exact");
    const char *why;
    CHECK(bm_validate(&m, &why), "shared %d: %s", l, why);
    uint64_t used = bm_map_used(&m), holes = bm_map_holes(&m);
    /* index entries distinct per key: twolevel keys k*0x10001 differ in their low 16 bits */
    CHECK_EQ_U64(*m.overflow_keys, 0, "overflow keys");
    CHECK_EQ_U64(used - holes, NKEYS, "keys with a slot");
    CHECK_EQ_U64(bm_count_nonzero(&m), NKEYS, "non-zero slots");
    uint64_t total = 0;
    for (uint64_t s = 0; s < used; s++) total += ((uint16_t *)counters)[s];
    /* plain increments may lose a few under contention; never more than were made */
    CHECK(total <= (uint64_t)NPROC * 3 * NKEYS && total > 0, "total %" PRIu64, total);
    printf("shared %s: used_key %" PRIu64 ", holes %" PRIu64 "\n", l == 1 ? "twolevel" : "exact",
           used, holes);
    if (l == BM_EXACT) { /* the index file outlives the processes: a new map attaches to it */
      bm_map again;
      CHECK(bm_map_attach(&again, &cfg, counters, shared, 0) == BM_OK, "re-attach");
      bm_update(&again, 0xabc00000ull); /* key 0: known, no new slot */
      CHECK_EQ_U64(bm_map_used(&again), used, "re-attached map keeps slot assignments");
      bm_map_destroy(&again);
    }
    bm_map_destroy(&m);
    munmap(shared, sb);
    if (l == BM_TWOLEVEL) {
      munmap(counters, cb);
    } else {
      shmdt(counters);
      shmctl(shm_id, IPC_RMID, NULL);
      close(fd);
      unlink(path);
    }
  }
}

/* The same race between threads of one process (the map struct copied per thread). */
struct thr_arg {
  bm_map m;
  int dir;
};
static void *thr_main(void *p) {
  struct thr_arg *a = p;
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 5000; i++) {
      int k = a->dir ? 4999 - i : i;
      bm_update(&a->m, 0x5000ull + (uint64_t)k * 0x10001ull);
    }
  return NULL;
}

void test_threads(void) {
  for (int l = BM_TWOLEVEL; l <= BM_EXACT; l++) {
    /* Room for every key and every hole: each key raced by the 4 threads may burn up to 3 reserved
     * slots (the CAS losers' holes), so 5000 keys need up to 20000 slots. With 8192, threads
     * running in lockstep filled the dense array and later keys shared the overflow slot. */
    bm_config cfg = {(bm_layout)l, 8, BM_SATURATE, 1u << 16, 1u << 15};
    bm_map m;
    CHECK(bm_map_create(&m, &cfg, 0) == BM_OK, "create");
    struct thr_arg args[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
      args[t].m = m; /* a bm_map may be copied: it holds no pointer to itself */
      args[t].dir = t & 1;
      CHECK(pthread_create(&th[t], NULL, thr_main, &args[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    const char *why;
    CHECK(bm_validate(&m, &why), "threads %d: %s", l, why);
    CHECK_EQ_U64(*m.overflow_keys, 0, "threads: overflow keys");
    CHECK_EQ_U64(bm_map_used(&m) - bm_map_holes(&m), 5000, "threads: keys with a slot");
    CHECK_EQ_U64(bm_count_nonzero(&m), 5000, "threads: non-zero slots");
    bm_map_destroy(&m);
  }
}
