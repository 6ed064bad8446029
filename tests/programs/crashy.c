/* crashy: first byte 'S' segfaults, 'A' aborts, 'H' hangs, 'E' exits(3), each after calling
 * doomed() (one block, the first function: guard 1 at -O0, run by no input that returns).
 * Any other input runs low() or high() (first byte < 'm' or not). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

volatile int sink;
volatile int *volatile nowhere;

__attribute__((noinline)) void doomed(void) { sink += 3; }
__attribute__((noinline)) void low(void) { sink += 1; }
__attribute__((noinline)) void high(void) { sink += 2; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  switch (data[0]) {
    case 'S': doomed(); *nowhere = 1; break;
    case 'A': doomed(); abort();
    case 'H': doomed(); for (;;) sink++;
    case 'E': doomed(); exit(3);
    default: break;
  }
  if (data[0] < 'm')
    low();
  else
    high();
  return 0;
}
