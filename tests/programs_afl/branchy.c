/* A deterministic harness with nested byte comparisons and a loop, for the afl-fuzz tests of
 * kernels/aflfs.c. With AFLFS_TEST_LOG set it appends its pid to that file on every input
 * (the persistent-mode test counts inputs per process). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned sink;

static void log_pid(void) {
  const char *path = getenv("AFLFS_TEST_LOG"); /* every time: same blocks on every input */
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
}

static int classify(uint8_t b) {
  if (b < 0x20) return 0;
  if (b < 0x40) return 1;
  if (b < 0x60) return 2;
  if (b < 0x80) return 3;
  return 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  log_pid();
  if (size > 0 && data[0] == 'F') {
    sink += 1;
    if (size > 1 && data[1] == 'U') {
      sink += 2;
      if (size > 2 && data[2] == 'Z') {
        sink += 3;
        if (size > 3 && data[3] == 'Z') sink += 4;
      }
    }
  }
  unsigned counts[5] = {0};
  for (size_t i = 0; i < size && i < 64; i++) counts[classify(data[i])]++;
  for (int k = 0; k < 5; k++)
    if (counts[k] > 3) sink += (unsigned)k;
  return 0;
}
