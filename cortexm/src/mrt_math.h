/* micro_rt: scalar arithmetic shared by the kernels, all inline: TFLM / gemmlowp fixed point,
 * unaligned loads, the DSP extension's helpers, and float32 with numpy's semantics.
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

/* SXTB16 / SXTAB16 with the operand rotated by 8 in the same instruction (GCC does not fold
 * a separate ROR into them): bytes 1 and 3 sign-extended to two halfwords. */
MRT_INLINE uint32_t mrt_sxtb16_r8(uint32_t x)
{
    uint32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

MRT_INLINE uint32_t mrt_sxtab16_r8(uint32_t a, uint32_t x)
{
    uint32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
    return r;
}

/* Two copies of the low halfword of v: [v v]. */
MRT_INLINE uint32_t mrt_dup16(int32_t v)
{
    return ((uint32_t)v & 0xFFFFu) | ((uint32_t)v << 16);
}

/* The DSP instructions as CMSIS-NN writes them for GCC (arm_nn_compiler.h): SMLAD / SMULBB /
 * SMULTT as volatile asm (GCC's own __smlad schedules worse, CMSIS-NN notes), PKHBT / PKHTB
 * as asm. The 16x8, LSTM and SVDF kernels use these so their code matches CMSIS-NN's. */
MRT_INLINE int32_t mrt_smlad_v(uint32_t a, uint32_t b, int32_t acc)
{
    int32_t r;
    __asm__ volatile("smlad %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
    return r;
}

MRT_INLINE int32_t mrt_smulbb(uint32_t a, uint32_t b)
{
    int32_t r;
    __asm__ volatile("smulbb %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

MRT_INLINE int32_t mrt_smultt(uint32_t a, uint32_t b)
{
    int32_t r;
    __asm__ volatile("smultt %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* [lo(a) | hi(b << 16)] and [hi(a) | lo(b >> 16)]. */
MRT_INLINE uint32_t mrt_pkhbt16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

MRT_INLINE uint32_t mrt_pkhtb16(uint32_t a, uint32_t b)
{
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/* CMSIS-NN's read_and_pad: four int8 weights w0..w3 as two halfword pairs in order,
 * lo = [w0 w1], hi = [w2 w3] (SXTB16, SXTB16 ROR 8, PKHBT, PKHTB); returns src + 4. */
MRT_INLINE const int8_t *mrt_read_and_pad(const int8_t *src, uint32_t *lo, uint32_t *hi)
{
    const uint32_t v = (uint32_t)mrt_read_s8x4(src);
    const uint32_t odd = mrt_sxtb16_r8(v), even = __sxtb16(v);
    *hi = mrt_pkhtb16(odd, even);
    *lo = mrt_pkhbt16(even, odd);
    return src + 4;
}
#endif

/* Output stage shared by conv / depthwise / fully connected: TFLM's
 * MultiplyByQuantizedMultiplier, + output offset, clamp to the activation range. */
MRT_INLINE int8_t mrt_out_stage(int32_t acc, int32_t mult, int32_t shift, int32_t out_off, int32_t lo, int32_t hi)
{
    acc = mrt_requantize(acc, mult, shift) + out_off;
    return (int8_t)mrt_clamp(acc, lo, hi);
}

/* TFLM's MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift): the multiplier
 * reduced to 16 bits, one rounding (the int16 kernels' int64 accumulators). */
MRT_INLINE int64_t mrt_requantize_wide(int64_t acc, int32_t multiplier, int32_t shift)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    return (acc * reduced + ((int64_t)1 << (total_shift - 1))) >> total_shift;
}

/* int64 value clamped to [lo, hi] (the int16 kernels' wide results). */
static inline int64_t mrt_clamp64(int64_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* ---- float32 (the float kernels' conventions: mrt_nnfunctions.h and README.md) ---- */

/* A float parameter passed as its IEEE bit pattern (soft-float calling convention). */
MRT_INLINE float mrt_fbits(uint32_t b)
{
    float f;
    __builtin_memcpy(&f, &b, 4);
    return f;
}

/* np.maximum / np.minimum on float32: NaN in either operand propagates, ties give b. */
static inline float mrt_np_max(float a, float b)
{
    return (a != a) ? a : (a > b ? a : b);
}

static inline float mrt_np_min(float a, float b)
{
    return (a != a) ? a : (a < b ? a : b);
}

/* np.minimum(np.maximum(x, lo), hi): the fused activation of the float kernels. */
static inline float mrt_act_clamp_f32(float x, float lo, float hi)
{
    return mrt_np_min(mrt_np_max(x, lo), hi);
}

#endif
