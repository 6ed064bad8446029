/* libFuzzer-style harness of the example library (docs/BUGS.md, "Your own library"). */
#include <stddef.h>
#include <stdint.h>

#include "mini.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t sum = 0;
  (void)mini_checksum(data, size, &sum);
  return 0;
}
