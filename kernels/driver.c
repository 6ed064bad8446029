/* driver.c - main() for LLVMFuzzerTestOneInput harnesses (linked by `autotune cc` for
 * -fsanitize=fuzzer). Modes (docs/DESIGN.md "Driver modes"), after LLVMFuzzerInitialize:
 *   1. probe server   AUTOTUNE_PROBE_CTL_FD set               (probe_server.c)
 *   2. AFL++ server   __AFL_SHM_ID set                        (aflfs.c, weak hook)
 *   3. replay         AUTOTUNE_REPLAY_ROUNDS=N: run the inputs N timed rounds (after one warm-up
 *                     round) with the map sink configured from AUTOTUNE_*, doing afl-fuzz's
 *                     per-exec map work (reset, classify+compare against a virgin map, hash when
 *                     new) with the bigmap.h kernels; prints one JSON line
 *   4. standalone     run each file (each regular file of each directory, sorted) once, stdin
 *                     when no file is given; arguments starting with '-' are ignored (libFuzzer
 *                     flags). Exit 0, or the harness's crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bigmap.h"
#include "cov.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

typedef struct input {
  uint8_t *data;
  size_t size;
  char *name;
} input;

typedef struct inputs {
  input *v;
  size_t n, cap;
} inputs;

static void die(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "autotune driver: ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  exit(1);
}

static uint8_t *read_fd(int fd, size_t *size) {
  size_t cap = 4096, n = 0;
  uint8_t *buf = malloc(cap);
  if (!buf) return NULL;
  for (;;) {
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        return NULL;
      }
      buf = nb;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      free(buf);
      return NULL;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  /* exactly size bytes, so that an overread by the harness is caught by ASan */
  uint8_t *exact = malloc(n ? n : 1);
  if (exact) memcpy(exact, buf, n);
  free(buf);
  *size = n;
  return exact;
}

static void add_input(inputs *in, const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open %s: %s", path, strerror(errno));
  size_t size;
  uint8_t *data = read_fd(fd, &size);
  int e = errno;
  close(fd);
  if (!data) die("cannot read %s: %s", path, strerror(e));
  if (in->n == in->cap) {
    in->cap = in->cap ? in->cap * 2 : 16;
    in->v = realloc(in->v, in->cap * sizeof *in->v);
    if (!in->v) die("out of memory%s%s", "", "");
  }
  in->v[in->n].data = data;
  in->v[in->n].size = size;
  in->v[in->n].name = strdup(path);
  in->n++;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(inputs *in, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) die("cannot open %s: %s", path, strerror(errno));
  if (!S_ISDIR(st.st_mode)) {
    add_input(in, path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) die("cannot open directory %s: %s", path, strerror(errno));
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char *full = malloc(strlen(path) + strlen(de->d_name) + 2);
    if (!full) die("out of memory%s%s", "", "");
    sprintf(full, "%s/%s", path, de->d_name);
    struct stat fs;
    if (stat(full, &fs) != 0 || !S_ISREG(fs.st_mode)) {
      free(full);
      continue;
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      names = realloc(names, cap * sizeof *names);
      if (!names) die("out of memory%s%s", "", "");
    }
    names[n++] = full;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++) {
    add_input(in, names[i]);
    free(names[i]);
  }
  free(names);
}

static void collect(inputs *in, int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (argv[i][0] != '-') add_path(in, argv[i]);
  if (in->n == 0) {
    size_t size;
    uint8_t *data = read_fd(0, &size);
    if (!data) die("cannot read stdin: %s%s", strerror(errno), "");
    in->v = malloc(sizeof *in->v);
    if (!in->v) die("out of memory%s%s", "", "");
    in->v[0].data = data;
    in->v[0].size = size;
    in->v[0].name = strdup("<stdin>");
    in->n = 1;
  }
}

static void free_inputs(inputs *in) {
  for (size_t i = 0; i < in->n; i++) {
    free(in->v[i].data);
    free(in->v[i].name);
  }
  free(in->v);
  in->v = NULL;
  in->n = in->cap = 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int replay(int argc, char **argv, const char *rounds_s) {
  char *end;
  errno = 0;
  unsigned long long rounds = strtoull(rounds_s, &end, 10);
  if (errno || *end || rounds < 1 || rounds > 1000000000ull || rounds_s[0] == '-') {
    fprintf(stderr, "autotune driver: AUTOTUNE_REPLAY_ROUNDS='%s' is not valid; valid values: "
            "an integer from 1 to 10^9\n", rounds_s);
    return 2;
  }
  cov_config cfg;
  char err[512];
  if (cov_config_from_env(&cfg, err, sizeof err) != 0) {
    fprintf(stderr, "autotune driver: %s\n", err);
    return 2;
  }
  inputs in = {0};
  collect(&in, argc, argv);
  bm_config bc;
  cov_config_to_bm(&cfg, &bc);
  bm_map map;
  int rc = bm_map_create(&map, &bc, 0);
  if (rc != BM_OK) {
    fprintf(stderr, "autotune driver: cannot create the %s map (%s)\n", cov_layout_name(cfg.layout),
            bm_strerror(rc));
    return 1;
  }
  size_t vbytes = cfg.layout == BM_FLAT ? bc.index_slots : bc.capacity;
  uint8_t *virgin = malloc(vbytes);
  if (!virgin) die("out of memory%s%s", "", "");
  memset(virgin, 0xff, vbytes);
  cov_set_seed(cfg.seed);
  cov_map_sink_set(&map, cfg.metric);
  /* how the blocks count: inline (edge build), a specialised hook, or the general hook */
  const char *hooks = cov_edge_inline_active() ? "inline" : cov_fast_hook_active() ? "fast" : "general";

  uint64_t execs = 0, new_execs = 0, hash_acc = 0;
  double t0 = 0;
  for (unsigned long long r = 0; r <= rounds; r++) { /* round 0: untimed warm-up */
    if (r == 1) {
      t0 = now_s();
      execs = new_execs = 0;
    }
    for (size_t i = 0; i < in.n; i++) {
      bm_reset(&map);
      cov_exec_begin();
      LLVMFuzzerTestOneInput(in.v[i].data, in.v[i].size);
      cov_exec_end();
      if (bm_classify_compare(&map, virgin)) {
        hash_acc ^= bm_hash(&map);
        new_execs++;
      }
      execs++;
    }
  }
  double dt = now_s() - t0;
  cov_map_sink_set(NULL, 0);
  uint64_t covered = 0;
  for (size_t i = 0; i < vbytes; i++) covered += virgin[i] != 0xff;
  printf("{\"execs_per_s\": %.1f, \"execs\": %llu, \"time_s\": %.6f, \"rounds\": %llu, "
         "\"inputs\": %zu, \"warmup_rounds\": 1, \"new_coverage_execs\": %llu, "
         "\"used_keys\": %llu, \"covered_slots\": %llu, \"overflow_keys\": %u, "
         "\"metric\": \"%s\", \"layout\": \"%s\", \"index_size\": %llu, \"map_size\": %llu, "
         "\"counter_bits\": %u, \"overflow\": \"%s\", \"seed\": %llu, \"key_hash\": \"%s\", "
         "\"kernel_variant\": \"%s\", \"hugepage_advised\": %s, \"hooks\": \"%s\", "
         "\"coverage_digest\": \"%016llx\"}\n",
         dt > 0 ? (double)execs / dt : 0.0, (unsigned long long)execs, dt, rounds, in.n,
         (unsigned long long)new_execs, (unsigned long long)bm_map_used(&map),
         (unsigned long long)covered, *map.overflow_keys, cov_metric_names[cfg.metric],
         cov_layout_name(cfg.layout), (unsigned long long)cfg.index_size,
         (unsigned long long)cfg.map_size, cfg.counter_bits, cov_policy_name(cfg.overflow),
         (unsigned long long)cfg.seed, cov_key_hash_names[cfg.key_hash],
         bm_variant_name(bm_active_variant()),
         map.hugepage_advised ? "true" : "false", hooks,
         (unsigned long long)hash_acc);
  fflush(stdout);
  bm_map_destroy(&map);
  free(virgin);
  free_inputs(&in);
  return 0;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  const char *v;
  if ((v = getenv("AUTOTUNE_PROBE_CTL_FD")) && *v)
    return autotune_probe_server_main(LLVMFuzzerTestOneInput);
  /* aflfs.c serves afl-fuzz when fd 199 is open, else runs each input once into afl's map
   * (afl-showmap's single-file mode and AFL_NO_FORKSRV exec the target without a server) */
  if ((v = getenv("__AFL_SHM_ID")) && *v) {
    if (autotune_afl_forkserver_main)
      return autotune_afl_forkserver_main(LLVMFuzzerTestOneInput, argc, argv);
    fprintf(stderr, "autotune driver: __AFL_SHM_ID is set but this runtime has no AFL++ fork "
            "server; running the inputs standalone\n");
  }
  if ((v = getenv("AUTOTUNE_REPLAY_ROUNDS")) && *v) return replay(argc, argv, v);
  inputs in = {0};
  collect(&in, argc, argv);
  for (size_t i = 0; i < in.n; i++) {
    cov_exec_begin();
    LLVMFuzzerTestOneInput(in.v[i].data, in.v[i].size);
    cov_exec_end();
  }
  free_inputs(&in);
  return 0;
}
