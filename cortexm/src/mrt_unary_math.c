/* micro_rt: the unary math family (TFLM's elementwise.cc, ceil.cc, elu.cc, exp.cc, floor.cc,
 * neg.cc, round.cc; ZEROS_LIKE runs mrt_fill of mrt_data.c):
 *  - float32: mrt_unary_math_f32: ABS CEIL COS ELU EXP FLOOR LOG NEG ROUND RSQRT SIN SQRT SQUARE,
 *    with newlib's cosf / sinf / logf / expf / expm1f where TFLM calls std:: functions;
 *  - int8 / int16: mrt_abs_rsqrt_int: quantized ABS and RSQRT per element, as TFLM computes them;
 *  - int8: mrt_lut_s8: ELU's 256-entry table;
 *  - bool: mrt_logical_not.
 * Declared in mrt_nnfunctions.h; the numpy twins are in kernels/unary_math.py. */
#include <math.h>
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* ================================================================ float32 */

/* reference_ops::RoundToNearest: floorf, then halves to even. */
static float round_to_nearest(float v)
{
    const float f = floorf(v);
    const float diff = v - f;
    if (diff < 0.5f || (diff == 0.5f && ((int32_t)f % 2) == 0)) {
        return f;
    }
    return f + 1.0f;
}

int32_t mrt_unary_math_f32(const mrt_unary_math_f32_params *p)
{
    const float *in = p->in;
    float *out = p->out;
    const int32_t n = p->n;
    switch (p->op) {
    case MRT_MATH_F32_ABS:
        for (int32_t i = 0; i < n; ++i) out[i] = fabsf(in[i]);
        break;
    case MRT_MATH_F32_CEIL:
        for (int32_t i = 0; i < n; ++i) out[i] = ceilf(in[i]);
        break;
    case MRT_MATH_F32_COS:
        for (int32_t i = 0; i < n; ++i) out[i] = cosf(in[i]);
        break;
    case MRT_MATH_F32_ELU:
        for (int32_t i = 0; i < n; ++i) {
            const float v = in[i];
            out[i] = v < 0.0f ? expm1f(v) : v;
        }
        break;
    case MRT_MATH_F32_EXP:
        for (int32_t i = 0; i < n; ++i) out[i] = expf(in[i]);
        break;
    case MRT_MATH_F32_FLOOR:
        for (int32_t i = 0; i < n; ++i) out[i] = floorf(in[i]);
        break;
    case MRT_MATH_F32_LOG:
        for (int32_t i = 0; i < n; ++i) out[i] = logf(in[i]);
        break;
    case MRT_MATH_F32_NEG:
        for (int32_t i = 0; i < n; ++i) out[i] = -in[i];
        break;
    case MRT_MATH_F32_ROUND:
        for (int32_t i = 0; i < n; ++i) out[i] = round_to_nearest(in[i]);
        break;
    case MRT_MATH_F32_RSQRT:
        for (int32_t i = 0; i < n; ++i) out[i] = 1.0f / sqrtf(in[i]);
        break;
    case MRT_MATH_F32_SIN:
        for (int32_t i = 0; i < n; ++i) out[i] = sinf(in[i]);
        break;
    case MRT_MATH_F32_SQRT:
        for (int32_t i = 0; i < n; ++i) out[i] = sqrtf(in[i]);
        break;
    case MRT_MATH_F32_SQUARE:
        for (int32_t i = 0; i < n; ++i) out[i] = in[i] * in[i];
        break;
    default:
        break;
    }
    return 0;
}

/* ================================================================ int8 / int16 */

static int32_t abs_rsqrt_one(const mrt_abs_rsqrt_int_params *p, int32_t x, int32_t kmax)
{
    if (p->op == MRT_MATH_INT_ABS_PLAIN) {
        return x < 0 ? -x : x;
    }
    int32_t value = x - p->in_off;
    if (p->op == MRT_MATH_INT_ABS) {
        value = value < 0 ? -value : value;
        return p->rescale ? mrt_requantize(value, p->mult, p->shift) + p->out_off : value + p->out_off;
    }
    if (value <= 0) {                  /* below the zero point: refused before the call */
        return kmax;
    }
    int32_t inv_mult, inv_shift;
    mrt_inv_sqrt_multiplier_exp(value, -1, &inv_mult, &inv_shift);
    const int32_t data = mrt_requantize(1, inv_mult, inv_shift + 20);
    return mrt_requantize(data, p->mult, p->shift - 20) + p->out_off;
}

int32_t mrt_abs_rsqrt_int(const mrt_abs_rsqrt_int_params *p)
{
    const int32_t n = p->n;
    if (p->elem_size == 1) {
        const int8_t *in = (const int8_t *)p->in;
        int8_t *out = (int8_t *)p->out;
        for (int32_t i = 0; i < n; ++i) {
            out[i] = (int8_t)mrt_clamp(abs_rsqrt_one(p, in[i], 127), -128, 127);
        }
    } else {
        const int16_t *in = (const int16_t *)p->in;
        int16_t *out = (int16_t *)p->out;
        if (p->op == MRT_MATH_INT_ABS_PLAIN) {         /* std::abs, then the int16 conversion */
            for (int32_t i = 0; i < n; ++i) {
                out[i] = (int16_t)abs_rsqrt_one(p, in[i], 32767);
            }
        } else {
            for (int32_t i = 0; i < n; ++i) {
                out[i] = (int16_t)mrt_clamp(abs_rsqrt_one(p, in[i], 32767), -32768, 32767);
            }
        }
    }
    return 0;
}

int32_t mrt_lut_s8(const int8_t *in, int8_t *out, int32_t n, const int8_t *table)
{
    for (int32_t i = 0; i < n; ++i) {
        out[i] = table[(uint8_t)in[i]];
    }
    return 0;
}

/* ================================================================ bool */

int32_t mrt_logical_not(const uint8_t *in, uint8_t *out, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        out[i] = (uint8_t)!in[i];
    }
    return 0;
}
