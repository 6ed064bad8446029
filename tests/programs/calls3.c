/* calls3: one leaf function reached from three call sites in three different caller functions.
 *
 * Every function is one basic block except leaf, which has an if/else. At -O0 SanitizerCoverage
 * (default pruning) guards leaf's entry L0 (g=1), its then-block L1 (g=2) and its else-block
 * L2 (g=3); the join block is post-dominating and pruned. Guards follow source order:
 * a=4, b=5, c=6, the harness H=7. One execution (x > 0) runs
 *   H A L0 L1 B L0 L1 C L0 L1
 * Hand-derived numbers are in tests/test_metrics.py.
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

volatile int sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  int x = (int)size + 1;
  sink = a(x) + b(x) + c(x);  /* no comparison kept as a value: PCGUARD 5.02c would count one (2 points) */
  return 0;
}
