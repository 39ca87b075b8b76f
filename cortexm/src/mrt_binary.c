/* micro_rt: ADD / SUB / MUL / MAXIMUM / MINIMUM (the binary family), TFLM-exact:
 *  - int8, same shape: CMSIS-NN's arm_elementwise_add_s8 / arm_elementwise_mul_s8
 *    (arm_nnfunctions.h);
 *  - int16 and float32, broadcasting: mrt_binary_s16 / mrt_binary_f32 (mrt_nnfunctions.h).
 * The broadcasting int8 kernel, mrt_binary_s8, is in mrt_binary_s8.c: it shares
 * mrt_binary_quant_one (mrt_support.h) with mrt_binary_s16, and compiled together GCC would
 * outline part of that helper and change both kernels' code. */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

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
