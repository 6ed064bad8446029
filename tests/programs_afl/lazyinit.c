/* A harness with one-time initialisation inside LLVMFuzzerTestOneInput, as libtiff registers its
 * codecs on first use: the first call in a process runs init()'s blocks, later calls do not. With
 * LAZYINIT_HANG set the init never returns. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static int ready;
static volatile uint8_t table[64];
static volatile unsigned sink;

static void init(void) {
  if (getenv("LAZYINIT_HANG"))
    for (;;)
      sink++;
  for (unsigned i = 0; i < sizeof table; i++) {
    if (i % 3 == 0)
      table[i] = (uint8_t)(i * 7u);
    else if (i % 3 == 1)
      table[i] = (uint8_t)(i ^ 0x5au);
    else
      table[i] = (uint8_t)i;
  }
  ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ready) init();
  unsigned acc = 0;
  for (size_t i = 0; i < size; i++) {
    if (data[i] == 'A')
      acc += table[i % sizeof table];
    else if (data[i] > 0x80)
      acc ^= 1u;
  }
  sink = acc;
  return 0;
}
