/* ngram: the harness H (one block) calls work(n) with n = input size. At -O0 SanitizerCoverage
 * guards work's entry (g=1), its loop increment (g=2, run n times) and its exit (g=3); H is g=4.
 * One execution with n = 4 runs  H 1 2 2 2 2 3  (hand-derived numbers in tests/test_metrics.py).
 */
#include <stddef.h>
#include <stdint.h>

volatile int sink;

__attribute__((noinline)) void work(int n) {
  for (int i = 0; i < n; i++) sink += i;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  work((int)size);
  return 0;
}
