/* bench_hooks: in-process cost of the coverage hooks and sinks, without any IPC.
 * Link with an instrumented LLVMFuzzerTestOneInput (e.g. loopy.c) and the runtime, no driver:
 *   bench_hooks <none|map|census> <metrics|-> <input> <execs>
 * none: hooks only (no sink); map: twolevel 8-bit neverzero map sink of the first metric, with
 * afl-fuzz's per-exec map work; census: census sink of the metric list ("all" or a comma list),
 * merged after every execution. Prints one JSON line (harness and merge ns per exec). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bigmap.h"
#include "cov.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s <none|map|census> <metrics|-> <input> <execs>\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  const uint8_t *data = (const uint8_t *)argv[3];
  size_t size = strlen(argv[3]);
  long execs = atol(argv[4]);
  cov_census *census = NULL;
  bm_map map;
  uint8_t *virgin = NULL;
  if (strcmp(mode, "census") == 0) {
    uint32_t mask = cov_metric_mask_parse(argv[2], NULL, NULL);
    size_t bytes = cov_census_bytes(1u << 18, mask);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    census = cov_census_init(mem, bytes, 1u << 18, mask);
    if (!census) return 1;
    cov_census_sink_set(census);
  } else if (strcmp(mode, "map") == 0) {
    bm_config c = {.layout = BM_TWOLEVEL, .width_bits = 8, .policy = BM_NEVERZERO,
                   .index_slots = 1u << 24, .capacity = 1u << 16};
    if (bm_map_create(&map, &c, 0) != BM_OK) return 1;
    virgin = malloc(c.capacity);
    memset(virgin, 0xff, c.capacity);
    cov_map_sink_set(&map, cov_metric_id(argv[2]));
  }
  double harness = 0, merge = 0, t_all = now_ns();
  uint32_t new_keys[COV_N_METRICS];
  for (long i = 0; i < execs; i++) {
    if (virgin) bm_reset(&map);
    cov_exec_begin();
    double t0 = now_ns();
    LLVMFuzzerTestOneInput(data, size);
    double t1 = now_ns();
    cov_exec_end();
    if (census) cov_census_merge(census, new_keys);
    if (virgin && bm_classify_compare(&map, virgin)) (void)bm_hash(&map);
    harness += t1 - t0;
    merge += now_ns() - t1;
  }
  double total = now_ns() - t_all;
  uint32_t tot[COV_N_METRICS] = {0};
  if (census) cov_census_totals(census, tot);
  printf("{\"mode\": \"%s\", \"metrics\": \"%s\", \"execs\": %ld, \"execs_per_s\": %.0f, "
         "\"harness_ns_per_exec\": %.0f, \"after_ns_per_exec\": %.0f, \"edge_keys\": %u}\n",
         mode, argv[2], execs, execs / (total * 1e-9), harness / execs, merge / execs, tot[0]);
  return 0;
}
