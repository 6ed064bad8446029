/* cpu.c - x86 feature detection with cpuid + xgetbv (the OS must save the vector state). */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long xgetbv0(void) {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long)edx << 32) | eax;
}

static unsigned detect(void) {
  unsigned a, b, c, d, f = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (c & (1u << 23)) f |= BM_CPU_POPCNT;
  int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
  if (!osxsave || !avx) return f;
  unsigned long long xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6) return f; /* SSE + AVX state */
  if (__get_cpuid_max(0, 0) < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  if (b & (1u << 5)) f |= BM_CPU_AVX2;
  int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1;
  if (avx512f && avx512bw && (xcr0 & 0xe0) == 0xe0) f |= BM_CPU_AVX512;
  return f;
}
#else
static unsigned detect(void) { return 0; }
#endif

unsigned bm_cpu_features(void) {
  /* bit 31 marks "computed"; racing first calls compute the same value. */
  static unsigned cached;
  unsigned v = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  if (v) return v & ~0x80000000u;
  v = detect() | 0x80000000u;
  __atomic_store_n(&cached, v, __ATOMIC_RELEASE);
  return v & ~0x80000000u;
}
