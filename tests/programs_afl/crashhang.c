/* Crashes when the first byte is 'C', hangs (spins forever) when it is 'H'; otherwise a few
 * comparisons. For the crash and hang tests of kernels/aflfs.c under afl-fuzz. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  if (data[0] == 'C') abort();
  if (data[0] == 'H')
    for (;;) sink++;
  if (data[0] == 'x') sink += 1;
  if (size > 1 && data[1] == 'y') sink += 2;
  return 0;
}
