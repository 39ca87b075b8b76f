/* micro_rt: what the Signal library's C kernels share (mrt_signal.c, mrt_signal_filterbank.c). */
#ifndef MRT_SIGNAL_COMMON_H
#define MRT_SIGNAL_COMMON_H

#include <stdint.h>

/* MostSignificantBit32 as TFLM's GCC build computes it: 32 - clz(x), and 32 for x == 0. */
static inline int32_t msb32(uint32_t x)
{
    return x ? 32 - __builtin_clz(x) : 32;
}

static inline int32_t msb64(uint64_t x)
{
    const uint32_t high = (uint32_t)(x >> 32);
    if (high) {
        return 64 - __builtin_clz(high);
    }
    return x ? 32 - __builtin_clz((uint32_t)x) : 64;
}

#endif
