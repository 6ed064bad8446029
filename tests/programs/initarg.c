/* initarg: LLVMFuzzerInitialize runs once before any input; each input prints its size. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static int initialized;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argv;
  initialized = *argc;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  printf("init=%d size=%zu first=%c\n", initialized, size, size ? data[0] : '-');
  return 0;
}
