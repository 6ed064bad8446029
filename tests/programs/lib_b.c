/* lib_b: a second instrumented shared object (see twolibs.c). */
__attribute__((noinline)) int lib_b_leaf(int x) { return x > 5 ? x * 3 : x + 7; }
int lib_b(int x) { return lib_b_leaf(x) + 1; }
