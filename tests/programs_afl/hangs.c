/* Three hang paths behind one byte: "H" then a byte whose value mod 4 picks hang 1, 2 or 3 (0: a
 * normal return). Each hang loops for ever in blocks of its own, so a map taken when the child is
 * killed tells the three apart (tests/test_hangs.py). LLVMFuzzerTestOneInput harness; C11. */
#include <stddef.h>
#include <stdint.h>

static volatile unsigned sink;

__attribute__((noinline)) static void hang_a(void) {
  for (;;) sink += 1;
}

__attribute__((noinline)) static void hang_b(void) {
  for (;;) {
    if (sink & 1) sink += 3;
    else sink += 5;
  }
}

__attribute__((noinline)) static void hang_c(void) {
  for (;;) {
    sink ^= 0x5a;
    if (sink > 1000) sink = 0;
    else sink += 7;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || data[0] != 'H') return 0;
  switch (data[1] % 4) {
    case 1: hang_a(); break;
    case 2: hang_b(); break;
    case 3: hang_c(); break;
    default: sink += 1; break;
  }
  return 0;
}
