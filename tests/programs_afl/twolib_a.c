/* First instrumented shared object of the two-module test. */
#include <stddef.h>
#include <stdint.h>

unsigned twolib_a(const uint8_t *data, size_t size) {
  unsigned r = 0;
  if (size > 0 && data[0] == 'A') {
    r += 1;
    if (size > 1 && data[1] == 'B') r += 2;
  }
  return r;
}
