/* micro_rt: DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, PRELU (broadcasting) and ADD_N, TFLM's
 * reference kernels (div.cc, floor_div.cc, floor_mod.cc, squared_difference.cc, prelu.cc,
 * add_n.cc) element by element in their loop order. Numpy twins: kernels/binary_ops.py. Apart from
 * mrt_binary.c for the reason given there. */
#include <math.h>

#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* ================================================================ float32 */

/* TFLM's ActivationFunctionWithMinMax: std::min(std::max(v, lo), hi) (NaN passes, -0.0 stays). */
MRT_INLINE float act_min_max_f32(float v, float lo, float hi)
{
    v = v < lo ? lo : v;
    return hi < v ? hi : v;
}

MRT_INLINE float floor_mod_f32(float x, float y)
{
    const float m = fmodf(x, y);
    return (m != 0.0f && ((y < 0.0f) != (m < 0.0f))) ? m + y : m;
}

int32_t mrt_binary_ops_f32(const mrt_binary_ops_params *p)
{
    const float *in1 = (const float *)p->in1, *in2 = (const float *)p->in2;
    float *out = (float *)p->out;
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    switch (p->op) {
    case MRT_OP_DIV:
        MRT_BROADCAST_BINARY(&p->dims, float, in1, in2, out, x, y, act_min_max_f32(x / y, lo, hi));
        break;
    case MRT_OP_FLOOR_DIV:
        MRT_BROADCAST_BINARY(&p->dims, float, in1, in2, out, x, y, (float)floor((double)x / (double)y));
        break;
    case MRT_OP_FLOOR_MOD:
        MRT_BROADCAST_BINARY(&p->dims, float, in1, in2, out, x, y, floor_mod_f32(x, y));
        break;
    case MRT_OP_SQUARED_DIFF:
        MRT_BROADCAST_BINARY(&p->dims, float, in1, in2, out, x, y, (x - y) * (x - y));
        break;
    default:
        MRT_BROADCAST_BINARY(&p->dims, float, in1, in2, out, x, y, x >= 0.0f ? x : x * y);
        break;
    }
    return 0;
}

/* ================================================================ int32 */

int32_t mrt_binary_ops_s32(const mrt_binary_ops_params *p)
{
    const int32_t *in1 = (const int32_t *)p->in1, *in2 = (const int32_t *)p->in2;
    int32_t *out = (int32_t *)p->out;
    const int32_t lo = (int32_t)p->act_min, hi = (int32_t)p->act_max;
    if (p->op == MRT_OP_DIV) {
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(x / y, lo, hi));
    } else {
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y,
                             (int32_t)(((uint32_t)x - (uint32_t)y) * ((uint32_t)x - (uint32_t)y)));
    }
    return 0;
}

/* ================================================================ int8 / int16 */

MRT_INLINE int32_t clz32(uint32_t x)
{
    return x == 0u ? 32 : __builtin_clz(x);
}

/* RoundingDivideByPOT for exponents 0 .. 63 as TFLM's x86 build computes them (the oracle): the
 * mask is all ones from 32 on and the shift count is taken modulo 32. */
MRT_INLINE int32_t rdbpot_x86(int32_t x, int32_t exponent)
{
    const int32_t mask = exponent >= 32 ? -1 : (int32_t)((1u << exponent) - 1u);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> (exponent & 31)) + (remainder > threshold ? 1 : 0);
}

/* reference_ops::DivElementwise on one int8 pair. */
static int32_t div_one_s8(const mrt_binary_ops_q_params *p, int32_t a, int32_t b)
{
    int32_t n = a + p->in1_offset, d = b + p->in2_offset;
    if (d < 0) {
        n = -n;
        d = -d;
    }
    /* GetReciprocal(d, 31) */
    const int32_t headroom_plus_one = clz32((uint32_t)d);
    const int32_t recip_shift = 31 - headroom_plus_one;
    const uint32_t shifted = headroom_plus_one >= 32 ? 0u : (uint32_t)d << headroom_plus_one;
    const int32_t inv = mrt_one_over_one_plus_x((int32_t)(shifted - 0x80000000u));
    const int32_t headroom = clz32((uint32_t)(n < 0 ? ~n : n)) - 1;
    const int32_t quotient = mrt_srdhm(mrt_shl_wrap(n, headroom), inv);
    const int32_t exponent = -(p->out_shift - recip_shift - headroom);
    const int32_t r = rdbpot_x86(mrt_srdhm(quotient, p->out_mult), exponent) + p->out_offset;
    return mrt_clamp(r, p->act_min, p->act_max);
}

MRT_INLINE int32_t rescale(int32_t x, int32_t offset, int32_t left_shift, int32_t mult, int32_t shift)
{
    return mrt_requantize(mrt_shl_wrap(x + offset, left_shift), mult, shift);
}

MRT_INLINE int32_t squared_diff_one(const mrt_binary_ops_q_params *p, int32_t a, int32_t b)
{
    const uint32_t d = (uint32_t)rescale(a, p->in1_offset, p->left_shift, p->in1_mult, p->in1_shift) -
                       (uint32_t)rescale(b, p->in2_offset, p->left_shift, p->in2_mult, p->in2_shift);
    const int32_t r = mrt_requantize((int32_t)(d * d), p->out_mult, p->out_shift) + p->out_offset;
    return mrt_clamp(r, p->act_min, p->act_max);
}

MRT_INLINE int32_t prelu_one(const mrt_binary_ops_q_params *p, int32_t x, int32_t alpha)
{
    const int32_t v = x + p->in1_offset;
    const int32_t r = v >= 0 ? mrt_requantize(v, p->in1_mult, p->in1_shift)
                             : mrt_requantize((int32_t)((uint32_t)v * (uint32_t)(alpha + p->in2_offset)),
                                              p->in2_mult, p->in2_shift);
    return mrt_clamp(r + p->out_offset, p->act_min, p->act_max);
}

int32_t mrt_binary_ops_s8(const mrt_binary_ops_q_params *p)
{
    const int8_t *in1 = (const int8_t *)p->in1, *in2 = (const int8_t *)p->in2;
    int8_t *out = (int8_t *)p->out;
    switch (p->op) {
    case MRT_OP_DIV:
        MRT_BROADCAST_BINARY(&p->dims, int8_t, in1, in2, out, x, y, div_one_s8(p, x, y));
        break;
    case MRT_OP_SQUARED_DIFF:
        MRT_BROADCAST_BINARY(&p->dims, int8_t, in1, in2, out, x, y, squared_diff_one(p, x, y));
        break;
    default:
        MRT_BROADCAST_BINARY(&p->dims, int8_t, in1, in2, out, x, y, prelu_one(p, x, y));
        break;
    }
    return 0;
}

int32_t mrt_binary_ops_s16(const mrt_binary_ops_q_params *p)
{
    const int16_t *in1 = (const int16_t *)p->in1;
    int16_t *out = (int16_t *)p->out;
    if (p->op == MRT_OP_SQUARED_DIFF) {
        MRT_BROADCAST_BINARY(&p->dims, int16_t, in1, (const int16_t *)p->in2, out, x, y, squared_diff_one(p, x, y));
    } else {
        MRT_BROADCAST_MIXED(&p->dims, int16_t, int8_t, int16_t, in1, (const int8_t *)p->in2, out, x, y,
                            prelu_one(p, x, y));
    }
    return 0;
}

/* ================================================================ ADD_N */

int32_t mrt_add_n_f32(const mrt_add_n_params *p)
{
    float *out = (float *)p->out;
    for (int32_t i = 0; i < p->size; ++i) {
        float sum = 0.0f;
        for (int32_t j = 0; j < p->n; ++j) {
            sum += ((const float *)p->in[j])[i];
        }
        out[i] = sum;
    }
    return 0;
}

int32_t mrt_add_n_s8(const mrt_add_n_params *p)
{
    int8_t *out = (int8_t *)p->out;
    const int32_t start = rescale(0, p->in_offset, 20, p->in_mult, p->in_shift);
    for (int32_t i = 0; i < p->size; ++i) {
        uint32_t sum = (uint32_t)start;
        for (int32_t j = 0; j < p->n; ++j) {
            sum += (uint32_t)rescale(((const int8_t *)p->in[j])[i], p->in_offset, 20, p->in_mult, p->in_shift);
        }
        const int32_t r = mrt_requantize((int32_t)sum, p->out_mult, p->out_shift) + p->out_offset;
        out[i] = (int8_t)mrt_clamp(r, p->act_min, p->act_max);
    }
    return 0;
}
