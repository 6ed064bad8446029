/* chains: leaf reached through call chains that agree near leaf and differ further up.
 *
 *   H -> p -> x -> y -> m -> leaf        H -> q -> x -> y -> m -> leaf
 *
 * leaf's blocks see: caller = F(m) and ctx-2 = F(m)^F(y) on both chains (one context),
 * ctx-4 = F(m)^F(y)^F(x)^F(p|q), ctx-8 and ctx = ... ^F(H): two contexts.
 * Every function is one basic block (one guard), so leaf's only edges are its entry edges.
 * leaf has a loop so that it owns an internal edge: leaf(3) runs L0 -> L1 (x3) -> L2.
 */
#include <stddef.h>
#include <stdint.h>

volatile int sink;

__attribute__((noinline)) void leaf(int n) {
  for (int i = 0; i < n; i++) sink += i;
}
__attribute__((noinline)) void m(int n) { leaf(n); }
__attribute__((noinline)) void y(int n) { m(n); }
__attribute__((noinline)) void x(int n) { y(n); }
__attribute__((noinline)) void p(int n) { x(n); }
__attribute__((noinline)) void q(int n) { x(n); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  p(3);
  q(3);
  return 0;
}
