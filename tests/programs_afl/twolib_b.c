/* Second instrumented shared object of the two-module test. */
#include <stddef.h>
#include <stdint.h>

unsigned twolib_b(const uint8_t *data, size_t size) {
  unsigned r = 0;
  for (size_t i = 0; i < size && i < 16; i++)
    if (data[i] == 'z') r++;
  if (r > 2) r *= 3;
  return r;
}
