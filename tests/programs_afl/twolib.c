/* Harness of the two-module test: calls into two instrumented shared objects. */
#include <stddef.h>
#include <stdint.h>

unsigned twolib_a(const uint8_t *data, size_t size);
unsigned twolib_b(const uint8_t *data, size_t size);

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sink += twolib_a(data, size);
  if (size > 2 && data[2] == '!') sink += twolib_b(data, size);
  return 0;
}
