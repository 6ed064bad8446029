/* 1024 switch cases selected by the first two bytes: each input of two bytes hits a few edges
 * of its own, so a set of inputs makes as many keys as wanted (the overflow test). Build it
 * without optimisation so the switch stays a jump table of distinct blocks. */
#include <stddef.h>
#include <stdint.h>

static volatile unsigned sink;

#define C1(n) case n: sink += (n) * 7u + 1u; break;
#define C4(n) C1(n) C1(n + 1) C1(n + 2) C1(n + 3)
#define C16(n) C4(n) C4(n + 4) C4(n + 8) C4(n + 12)
#define C64(n) C16(n) C16(n + 16) C16(n + 32) C16(n + 48)
#define C256(n) C64(n) C64(n + 64) C64(n + 128) C64(n + 192)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  unsigned v = ((unsigned)data[0] | (unsigned)data[1] << 8) & 1023u;
  switch (v) {
    C256(0)
    C256(256)
    C256(512)
    C256(768)
    default: break;
  }
  return 0;
}
