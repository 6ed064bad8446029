/* test_util.h - a minimal test harness: CHECK counts, the summary line is "N passed, N failed". */
#ifndef AUTOTUNE_TEST_UTIL_H
#define AUTOTUNE_TEST_UTIL_H
#include <inttypes.h>
#include <stdio.h>

extern unsigned long t_passed, t_failed;
extern uint64_t t_rng_state;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (cond) {                                                              \
      t_passed++;                                                            \
    } else {                                                                 \
      t_failed++;                                                            \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                          \
      fputc('\n', stderr);                                                   \
    }                                                                        \
  } while (0)

#define CHECK_EQ_U64(a, b, ctx)                                                              \
  CHECK((uint64_t)(a) == (uint64_t)(b), "%s: %" PRIu64 " != %" PRIu64, ctx, (uint64_t)(a), \
        (uint64_t)(b))

static inline uint64_t t_rand(void) { /* splitmix64 */
  uint64_t z = (t_rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* test groups (one file each) */
void test_figure5(void);
void test_hash_example(void);
void test_overflow(void);
void test_full(void);
void test_validate(void);
void test_shared_processes(void);
void test_threads(void);
void test_differential(void);
void test_variants(void);
void test_lazy_index(void);
void test_cnt_flush(void);
#endif
