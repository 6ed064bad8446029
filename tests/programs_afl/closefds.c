/* Closes fds 198 and 199 (afl's fork-server pipes) when the first byte is 'K', as a harness that
 * closes every descriptor it did not open would; otherwise a few comparisons. For the protocol
 * test of kernels/aflfs.c's child-reports mode, whose child needs both. */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

static volatile unsigned sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  if (data[0] == 'K') {
    close(198);
    close(199);
  }
  if (data[0] == 'x') sink += 1;
  if (size > 1 && data[1] == 'y') sink += 2;
  return 0;
}
