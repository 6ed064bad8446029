/* loopy: a byte loop with a data-dependent branch, and a bulk loop for throughput figures:
 * input "L<n>" spins n thousand iterations of a two-way branch. */
#include <stddef.h>
#include <stdint.h>

volatile unsigned sink;

__attribute__((noinline)) static void spin(unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (i & 1)
      sink += i;
    else
      sink ^= i;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size >= 1 && data[0] == 'L') {
    unsigned n = 0;
    for (size_t i = 1; i < size && data[i] >= '0' && data[i] <= '9'; i++) n = n * 10 + (data[i] - '0');
    spin(n * 1000u);
    return 0;
  }
  for (size_t i = 0; i < size; i++) {
    if (data[i] == 'x')
      sink += 1;
    else
      sink += 2;
  }
  return 0;
}
