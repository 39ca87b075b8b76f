/* micro_rt: fixed-point helpers shared by the kernels (TFLM / gemmlowp semantics).
 *
 * mrt_requantize() is TFLM's MultiplyByQuantizedMultiplier in the default (double rounding)
 * build: x * 2^max(shift,0) (wrapping), SaturatingRoundingDoublingHighMul, then
 * RoundingDivideByPOT(-min(shift,0)). The doubling high multiply is computed as
 * floor((a*b + 2^30) / 2^31), which equals gemmlowp's nudge-and-truncate form for every
 * pair except a == b == INT32_MIN (impossible: QuantizeMultiplier never yields INT32_MIN
 * as a multiplier); mrt_srdhm() below keeps the saturation for the general case.
 */
#ifndef MRT_MATH_H
#define MRT_MATH_H

#include <stdint.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define MRT_DSP 1
#include <arm_acle.h>
#else
#define MRT_DSP 0
#endif

#define MRT_INLINE static inline __attribute__((always_inline))
#define MRT_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MRT_MIN(a, b) ((a) < (b) ? (a) : (b))

MRT_INLINE int32_t mrt_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* gemmlowp RoundingDivideByPOT (halves away from zero). */
MRT_INLINE int32_t mrt_rdbpot(int32_t x, int32_t exponent)
{
    const uint32_t mask = (exponent >= 32) ? 0xFFFFFFFFu : ((1u << exponent) - 1u);
    const int32_t remainder = (int32_t)((uint32_t)x & mask);
    const int32_t threshold = (int32_t)(mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* floor((a*b + 2^30) / 2^31): SaturatingRoundingDoublingHighMul without the saturation. */
MRT_INLINE int32_t mrt_dhm_nosat(int32_t a, int32_t b)
{
    const int64_t p = (int64_t)a * (int64_t)b + (int64_t)(1 << 30);
    return (int32_t)(p >> 31);
}

/* gemmlowp SaturatingRoundingDoublingHighMul. */
MRT_INLINE int32_t mrt_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    return mrt_dhm_nosat(a, b);
}

MRT_INLINE int32_t mrt_shl_wrap(int32_t x, int32_t n)
{
    return (int32_t)((uint32_t)x << n);
}

/* TFLM MultiplyByQuantizedMultiplier (default double rounding). */
MRT_INLINE int32_t mrt_requantize(int32_t val, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return mrt_rdbpot(mrt_dhm_nosat(mrt_shl_wrap(val, left), multiplier), right);
}

/* Unaligned-safe loads: memcpy keeps GCC from merging them into LDRD/LDM. */
MRT_INLINE int32_t mrt_read_s8x4(const int8_t *p)
{
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}

MRT_INLINE int32_t mrt_read_s16x2(const int16_t *p)
{
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}

MRT_INLINE void mrt_write_s16x2(int16_t *p, int32_t v)
{
    __builtin_memcpy(p, &v, 4);
}

#if MRT_DSP
/* GCC 12's arm_acle.h has no __ror. */
MRT_INLINE uint32_t mrt_ror(uint32_t x, uint32_t n)
{
    return (x >> n) | (x << (32u - n));
}
#endif

/* ---- gemmlowp fixed point (int32 raw values) ---- */
int32_t mrt_sat_mul_pot(int32_t x, int32_t exponent);
int32_t mrt_exp_on_negative_values(int32_t a, int32_t integer_bits);
int32_t mrt_one_over_one_plus_x(int32_t a);
int32_t mrt_one_minus_x_over_one_plus_x(int32_t a);

#endif
