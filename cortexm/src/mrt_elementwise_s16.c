/* micro_rt: int16 ADD and MUL of two tensors of the same shape with CMSIS-NN's algorithms
 * (arm_elementwise_add_s16 / arm_elementwise_mul_s16, arm_nnfunctions.h), the kernels TFLM's
 * CMSIS-NN glue calls when no broadcast is needed: two halfwords per load and per store, each
 * value requantized on its own (TFLM's MultiplyByQuantizedMultiplier, mrt_requantize); MUL
 * forms its products with SMULBB / SMULTT on the DSP cores. Offsets are not read: TFLM requires
 * int16 zero points of 0 for both operators. Broadcasting, SUB, MAXIMUM, MINIMUM and anything
 * else stay on mrt_binary_s16 (mrt_binary.c). */
#include "arm_nnfunctions.h"
#include "mrt_math.h"

/* One ADD output: both inputs shifted left and requantized, summed, requantized, clamped.
 * int16 << 15 and the requantized inputs (multipliers below one half) stay inside int32. */
MRT_INLINE int16_t add_one_s16(int32_t a, int32_t b, int32_t m1, int32_t s1, int32_t m2, int32_t s2,
                               int32_t left_shift, int32_t mo, int32_t so, int32_t lo, int32_t hi)
{
    const int32_t x1 = mrt_requantize(mrt_shl_wrap(a, left_shift), m1, s1);
    const int32_t x2 = mrt_requantize(mrt_shl_wrap(b, left_shift), m2, s2);
    return (int16_t)mrt_clamp(mrt_requantize(x1 + x2, mo, so), lo, hi);
}

arm_cmsis_nn_status arm_elementwise_add_s16(const int16_t *input_1_vect, const int16_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_1_mult, const int32_t input_1_shift,
    const int32_t input_2_offset, const int32_t input_2_mult, const int32_t input_2_shift,
    const int32_t left_shift, int16_t *output, const int32_t out_offset, const int32_t out_mult,
    const int32_t out_shift, const int32_t out_activation_min, const int32_t out_activation_max,
    const int32_t block_size)
{
    for (int32_t n = block_size / 2; n > 0; --n) {
        const int32_t a = mrt_read_s16x2(input_1_vect), b = mrt_read_s16x2(input_2_vect);
        input_1_vect += 2;
        input_2_vect += 2;
        const int16_t lo16 = add_one_s16((int16_t)(a & 0xFFFF), (int16_t)(b & 0xFFFF), input_1_mult, input_1_shift,
                                         input_2_mult, input_2_shift, left_shift, out_mult, out_shift,
                                         out_activation_min, out_activation_max);
        const int16_t hi16 = add_one_s16(a >> 16, b >> 16, input_1_mult, input_1_shift, input_2_mult, input_2_shift,
                                         left_shift, out_mult, out_shift, out_activation_min, out_activation_max);
        mrt_write_s16x2(output, (int32_t)(((uint32_t)(uint16_t)hi16 << 16) | (uint16_t)lo16));
        output += 2;
    }
    if (block_size & 1) {
        *output = add_one_s16(*input_1_vect, *input_2_vect, input_1_mult, input_1_shift, input_2_mult,
                              input_2_shift, left_shift, out_mult, out_shift, out_activation_min,
                              out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}

/* One MUL output from its int32 product (|a * b| <= 2^30). */
MRT_INLINE int16_t mul_out_s16(int32_t prod, int32_t mult, int32_t shift, int32_t lo, int32_t hi)
{
    return (int16_t)mrt_clamp(mrt_requantize(prod, mult, shift), lo, hi);
}

arm_cmsis_nn_status arm_elementwise_mul_s16(const int16_t *input_1_vect, const int16_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_2_offset, int16_t *output, const int32_t out_offset,
    const int32_t out_mult, const int32_t out_shift, const int32_t out_activation_min,
    const int32_t out_activation_max, const int32_t block_size)
{
    for (int32_t n = block_size / 2; n > 0; --n) {
        const int32_t a = mrt_read_s16x2(input_1_vect), b = mrt_read_s16x2(input_2_vect);
        input_1_vect += 2;
        input_2_vect += 2;
#if MRT_DSP
        const int32_t p0 = mrt_smulbb((uint32_t)a, (uint32_t)b), p1 = mrt_smultt((uint32_t)a, (uint32_t)b);
#else
        const int32_t p0 = (int16_t)(a & 0xFFFF) * (int16_t)(b & 0xFFFF), p1 = (a >> 16) * (b >> 16);
#endif
        const int16_t lo16 = mul_out_s16(p0, out_mult, out_shift, out_activation_min, out_activation_max);
        const int16_t hi16 = mul_out_s16(p1, out_mult, out_shift, out_activation_min, out_activation_max);
        mrt_write_s16x2(output, (int32_t)(((uint32_t)(uint16_t)hi16 << 16) | (uint16_t)lo16));
        output += 2;
    }
    if (block_size & 1) {
        *output = mul_out_s16(*input_1_vect * *input_2_vect, out_mult, out_shift, out_activation_min,
                              out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}
