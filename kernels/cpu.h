/* cpu.h - cached x86 CPU-feature check for choosing kernel variants (C11). */
#ifndef AUTOTUNE_CPU_H
#define AUTOTUNE_CPU_H

#define BM_CPU_AVX2 1u    /* AVX2 + OS-enabled YMM state */
#define BM_CPU_AVX512 2u  /* AVX-512 F+BW + OS-enabled ZMM/opmask state */
#define BM_CPU_POPCNT 4u

/* Feature mask of this CPU (computed once, cached; 0 off x86-64). */
unsigned bm_cpu_features(void);

#endif
