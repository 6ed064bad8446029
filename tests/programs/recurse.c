/* recurse: rec(n) calls itself n times (n = 100 * input size): deeper than the runtime's call
 * stack (255 frames), where the context stops changing. Contexts of rec's blocks at depth d
 * (callers: rec x (d-1), then H), with XOR cancelling pairs as in AFL++:
 *   caller {F(H), F(rec)}                 ctx   {F(H), F(rec)^F(H)}
 *   ctx-2  {F(H), F(rec)^F(H), 0}         ctx-4, ctx-8: {F(H), F(rec)^F(H), 0}
 */
#include <stddef.h>
#include <stdint.h>

volatile int sink;

__attribute__((noinline)) void rec(int n) {
  if (n > 0) rec(n - 1);
  sink++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  rec((int)size * 100);
  return 0;
}
