/* A loop run as many times as the input's decimal number says (at most 100,000): the NeverZero
 * test of the guard build kind (a block hit 256 times reads 1, not 0, in afl's map). */
#include <stddef.h>
#include <stdint.h>

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned n = 0;
  for (size_t i = 0; i < size && i < 6 && data[i] >= '0' && data[i] <= '9'; i++) n = n * 10 + (data[i] - '0');
  if (n > 100000) n = 100000;
  for (unsigned i = 0; i < n; i++) sink += i;
  return 0;
}
