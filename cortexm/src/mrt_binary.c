/* micro_rt: ADD / SUB / MUL / MAXIMUM / MINIMUM (the binary family; CMSIS-NN's
 * BasicMathFunctions), TFLM-exact:
 *  - int8, same shape: CMSIS-NN's arm_elementwise_add_s8 / arm_elementwise_mul_s8
 *    (arm_nnfunctions.h);
 *  - int16 and float32, broadcasting: mrt_binary_s16 / mrt_binary_f32 (mrt_nnfunctions.h);
 *  - int32 and int64, broadcasting: mrt_binary_s32 / mrt_binary_s64 (mrt_nnfunctions.h);
 *  - int16, same shape: CMSIS-NN's arm_elementwise_add_s16 / arm_elementwise_mul_s16.
 * Two translation units of the family stand apart, because compiling them with this one changes
 * kernels' code (and so the cycle figures measured on it):
 *  - mrt_binary_s8.c, the broadcasting int8 kernel: it shares mrt_binary_quant_one
 *    (mrt_support.h) with mrt_binary_s16, and compiled together GCC would outline part of that
 *    helper and change both kernels' code;
 *  - mrt_binary_ops.c (DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, PRELU, ADD_N): compiled
 *    here, GCC emits another mrt_binary_ops_f32 on the Cortex-M4. */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_support.h"
#include "mrt_math.h"

/* ================================================================ int8, same shape (CMSIS-NN API) */

arm_cmsis_nn_status arm_elementwise_add_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_1_mult, const int32_t input_1_shift,
    const int32_t input_2_offset, const int32_t input_2_mult, const int32_t input_2_shift,
    const int32_t left_shift, int8_t *output, const int32_t out_offset, const int32_t out_mult,
    const int32_t out_shift, const int32_t out_activation_min, const int32_t out_activation_max,
    const int32_t block_size)
{
    for (int32_t i = 0; i < block_size; ++i) {
        const int32_t a = mrt_requantize((input_1_vect[i] + input_1_offset) << left_shift, input_1_mult, input_1_shift);
        const int32_t b = mrt_requantize((input_2_vect[i] + input_2_offset) << left_shift, input_2_mult, input_2_shift);
        int32_t s = mrt_requantize(a + b, out_mult, out_shift) + out_offset;
        output[i] = (int8_t)mrt_clamp(s, out_activation_min, out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_elementwise_mul_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_2_offset, int8_t *output, const int32_t out_offset,
    const int32_t out_mult, const int32_t out_shift, const int32_t out_activation_min,
    const int32_t out_activation_max, const int32_t block_size)
{
    for (int32_t i = 0; i < block_size; ++i) {
        const int32_t prod = (input_1_vect[i] + input_1_offset) * (input_2_vect[i] + input_2_offset);
        int32_t r = mrt_requantize(prod, out_mult, out_shift) + out_offset;
        output[i] = (int8_t)mrt_clamp(r, out_activation_min, out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}


/* ================================================================ int16, broadcasting */

int32_t mrt_binary_s16(const mrt_binary_s16_params *p)
{
    MRT_BROADCAST_BINARY(&p->dims, int16_t, p->in1, p->in2, p->out, x, y, mrt_binary_quant_one(p->op, &p->quant, x, y));
    return 0;
}

/* ================================================================ float32, broadcasting */

static inline float binary_one_f32(int32_t op, float x, float y, float lo, float hi)
{
    switch (op) {
    case MRT_OP_ADD: return mrt_act_clamp_f32(x + y, lo, hi);
    case MRT_OP_SUB: return mrt_act_clamp_f32(x - y, lo, hi);
    case MRT_OP_MUL: return mrt_act_clamp_f32(x * y, lo, hi);
    case MRT_OP_MAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

int32_t mrt_binary_f32(const mrt_binary_f32_params *p)
{
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    MRT_BROADCAST_BINARY(&p->dims, float, p->in1, p->in2, p->out, x, y, binary_one_f32(p->op, x, y, lo, hi));
    return 0;
}

/* ================================================================ int32 and int64, broadcasting */
/* ADD / SUB / MUL / MAXIMUM / MINIMUM on int32 and MAXIMUM / MINIMUM on int64
 * (broadcasting), TFLM's reference kernels (add.cc / sub.cc / mul.cc with
 * reference_ops::BroadcastAdd / Sub / Mul on int32, maximum_minimum.cc) element by element over
 * the 6-D walk the other binary kernels share (MRT_BROADCAST_BINARY). Numpy twin:
 * kernels/elementwise.py (kind "int32" and the plain MAXIMUM / MINIMUM). */

/* int32 ADD / SUB / MUL wrap (TFLM's x86 build computes in int32 without a saturation), then
 * clamp to the fused activation's range: [INT32_MIN, INT32_MAX] for ADD, whose int32 path
 * ignores the activation. One loop per op, as TFLM's kernels are one per op (no switch per
 * element). */
#define WRAP32(a, OP, b) ((int32_t)((uint32_t)(a) OP (uint32_t)(b)))

int32_t mrt_binary_s32(const mrt_binary_ops_params *p)
{
    const int32_t *in1 = (const int32_t *)p->in1, *in2 = (const int32_t *)p->in2;
    int32_t *out = (int32_t *)p->out;
    const int32_t lo = (int32_t)p->act_min, hi = (int32_t)p->act_max;
    switch (p->op) {
    case MRT_OP_ADD:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(WRAP32(x, +, y), lo, hi));
        break;
    case MRT_OP_SUB:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(WRAP32(x, -, y), lo, hi));
        break;
    case MRT_OP_MUL:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(WRAP32(x, *, y), lo, hi));
        break;
    case MRT_OP_MAX:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, x > y ? x : y);
        break;
    default:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, x < y ? x : y);
        break;
    }
    return 0;
}

int32_t mrt_binary_s64(const mrt_binary_ops_params *p)
{
    const int64_t *in1 = (const int64_t *)p->in1, *in2 = (const int64_t *)p->in2;
    int64_t *out = (int64_t *)p->out;
    if (p->op == MRT_OP_MAX) {
        MRT_BROADCAST_BINARY(&p->dims, int64_t, in1, in2, out, x, y, x > y ? x : y);
    } else if (p->op == MRT_OP_MIN) {
        MRT_BROADCAST_BINARY(&p->dims, int64_t, in1, in2, out, x, y, x < y ? x : y);
    } else {
        return -1;
    }
    return 0;
}

/* ================================================================ int16, same shape (CMSIS-NN API) */
/* int16 ADD and MUL of two tensors of the same shape with CMSIS-NN's algorithms
 * (arm_elementwise_add_s16 / arm_elementwise_mul_s16, arm_nnfunctions.h), the kernels TFLM's
 * CMSIS-NN glue calls when no broadcast is needed: two halfwords per load and per store, each
 * value requantized on its own (TFLM's MultiplyByQuantizedMultiplier, mrt_requantize); MUL
 * forms its products with SMULBB / SMULTT on the DSP cores. Offsets are not read: TFLM requires
 * int16 zero points of 0 for both operators. Broadcasting, SUB, MAXIMUM, MINIMUM and anything
 * else stay on mrt_binary_s16 (above). */

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
