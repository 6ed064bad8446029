/* A loop whose edge runs 100, 300 or 65,600 times depending on the first byte ('a', 'b',
 * 'c'): the counter-width test of kernels/aflfs.c (8-bit counters wrap above 255). */
#include <stddef.h>
#include <stdint.h>

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned n = 0;
  if (size > 0 && data[0] == 'a') n = 100;
  if (size > 0 && data[0] == 'b') n = 300;
  if (size > 0 && data[0] == 'c') n = 65600;
  for (unsigned i = 0; i < n; i++) sink += i;
  return 0;
}
