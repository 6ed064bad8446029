/* twolibs: a harness calling into two instrumented shared objects (lib_a.so, lib_b.so). Guards
 * of all three modules are numbered in one sequence; function ids are module-relative. */
#include <stddef.h>
#include <stdint.h>

int lib_a(int x);
int lib_b(int x);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int x = size > 0 ? data[0] : 0;
  return lib_a(x) + lib_b(x) == 12345;
}
