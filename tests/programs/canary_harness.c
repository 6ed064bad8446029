/* A tiny libFuzzer-style harness with two known-bug canaries, for the canary page's tests.
 * BUG001 is reached by every input starting with 'A' and triggered when the second byte is 'Z';
 * BUG002 is reached by inputs starting with 'B' and triggered when the input is 4 bytes long.
 * An input "sizeof" prints sizeof(struct autotune_canary_page) to stdout (the page's size); an input
 * "crash" aborts (a fault of the target that is no known bug); an input "hang" never returns. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "canary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 6 && data[0] == 's' && data[1] == 'i' && data[2] == 'z' && data[3] == 'e') {
    printf("%zu\n", AUTOTUNE_CANARY_BYTES);
    return 0;
  }
  if (size == 5 && memcmp(data, "crash", 5) == 0) abort();
  if (size == 4 && memcmp(data, "hang", 4) == 0)
    for (;;) pause();
  if (size >= 1 && data[0] == 'A') AUTOTUNE_BUG(BUG001, size >= 2 && data[1] == 'Z');
  if (size >= 1 && data[0] == 'B') AUTOTUNE_BUG(BUG002, size == 4);
  return 0;
}
