/* calls3: one leaf function reached from three call sites in three different caller functions.
 *
 * Every function is a single basic block except leaf, which has an if/else. At -O0 with
 * SanitizerCoverage's default pruning, leaf(x > 0) runs three guarded blocks: its entry L0, the
 * then-block L1 and the join L3 (the else-block L2 is not run). The harness H calls a, b and c
 * in order, each of which calls leaf once. Guard sequence of one execution:
 *   H A L0 L1 L3 B L0 L1 L3 C L0 L1 L3
 * (hand-derived numbers in tests/test_metrics.py).
 */
#include <stddef.h>
#include <stdint.h>

__attribute__((noinline)) int leaf(int x) {
  int y;
  if (x > 0)
    y = 1;
  else
    y = 2;
  return y;
}
__attribute__((noinline)) int a(int x) { return leaf(x) + 1; }
__attribute__((noinline)) int b(int x) { return leaf(x) + 2; }
__attribute__((noinline)) int c(int x) { return leaf(x) + 3; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  int x = (int)size + 1;
  return (a(x) + b(x) + c(x)) == 0;
}
