/* The example library of docs/BUGS.md ("Your own library"): a known bug with its canary.
 *
 * MINI001, the known bug: a 'C' record's length is summed before it is checked against what is
 * left of the input, so a record that claims more than the file holds reads past its end. The fix
 * checks first (`if (len > left) return -1;` above the loop). The canary states the fix's
 * condition at the fix site: reached whenever a 'C' record is summed, triggered when its length
 * runs past the end. */
#include <string.h>

#include "canary.h" /* kernels/canary.h: on the include path by -I"$AUTOTUNE_CANARY_INCLUDE" */
#include "mini.h"

int mini_checksum(const uint8_t *data, size_t size, uint32_t *sum) {
  if (size < 5 || memcmp(data, "MINI", 4) != 0 || data[4] != 2)
    return -1;
  const uint8_t *p = data + 5, *end = data + size;
  *sum = 0;
  while (end - p >= 2) {
    uint8_t type = p[0];
    size_t len = p[1];
    p += 2;
    size_t left = (size_t)(end - p);
    if (type == 'C') {
      AUTOTUNE_BUG(MINI001, len > left);
      for (size_t i = 0; i < len && i < left + 8; i++) /* the bug: reads up to 8 bytes past the end */
        *sum += p[i];
    }
    if (len > left)
      return -1;
    p += len;
  }
  return 0;
}
