/* lib_a: an instrumented shared object (see twolibs.c). */
__attribute__((noinline)) int lib_a_leaf(int x) { return x > 0 ? x + 1 : x - 1; }
int lib_a(int x) { return lib_a_leaf(x) * 2; }
