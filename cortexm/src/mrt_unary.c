/* micro_rt: element-wise activations and integer requantization (the unary family):
 *  - int8: mrt_unary_s8: RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH (gemmlowp fixed point,
 *    mrt_fixedpoint.c), HARD_SWISH (TFLM's int16 fixed point), QUANTIZE int8 -> int8;
 *  - int8 / int16 / int32: mrt_unary_int: QUANTIZE between integer types, RELU, RELU6,
 *    LEAKY_RELU;
 *  - float32: mrt_unary_f32: RELU, RELU6, LEAKY_RELU, HARD_SWISH (bit-exact with the numpy
 *    twins), LOGISTIC and TANH (newlib's expf / tanhf);
 *  - int16: mrt_sigmoid_s16: LOGISTIC and TANH on TFLM's sigmoid table.
 * All declared in mrt_nnfunctions.h; integer results are TFLM-exact. */
#include <math.h>
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* ================================================================ int8 */

/* ---- int16 fixed point for hard swish ---- */
static inline int32_t wrap16(int32_t x) { return (int32_t)(int16_t)(uint16_t)(uint32_t)x; }

static inline int32_t srdhm16(int32_t a, int32_t b)
{
    if (a == b && a == -32768) {
        return 32767;
    }
    const int32_t ab = a * b;
    const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return wrap16((ab + nudge) / (1 << 15));
}

static inline int32_t sdhm16(int32_t a, int32_t b)
{
    if (a == b && a == -32768) {
        return 32767;
    }
    return wrap16((a * b) / (1 << 15));
}

static inline int32_t sat_shl16(int32_t x, int32_t amount)
{
    return mrt_clamp(x * (1 << amount), -32768, 32767);
}

static int32_t hard_swish_one(const mrt_unary_s8_params *p, int32_t x)
{
    const mrt_unary_quant *q = &p->quant;
    const int32_t v = wrap16(x - q->in_off);
    const int32_t hires = wrap16(v * (1 << 7));
    const int32_t preshift_out = srdhm16(hires, q->m0);
    int32_t reluish = hires;
    const int32_t e = q->s1;
    if (e > 0) {
        reluish = sat_shl16(reluish, e - 1);
    }
    reluish = srdhm16(reluish, q->m1);
    if (e > 0) {
        reluish = sat_shl16(reluish, 1);
    }
    if (e < 0) {
        reluish = mrt_rdbpot(reluish, -e);
    }
    reluish = wrap16((reluish + (1 << 15)) >> 1);
    const int32_t pre = sdhm16(reluish, preshift_out);
    const int32_t out = wrap16(mrt_rdbpot(pre, -q->s0) + q->out_off);
    return mrt_clamp(out, -128, 127);
}

static int32_t gemmlowp_logistic(int32_t a)   /* F4 -> F0 */
{
    if (a == 0) {
        return 1 << 30;
    }
    const int32_t abs_a = a > 0 ? a : (int32_t)(0u - (uint32_t)a);
    const int32_t r = mrt_one_over_one_plus_x(mrt_exp_on_negative_values((int32_t)(0u - (uint32_t)abs_a), 4));
    return a > 0 ? r : (int32_t)((uint32_t)INT32_MAX - (uint32_t)r);
}

static int32_t gemmlowp_tanh(int32_t a)       /* F4 -> F0 */
{
    if (a == 0) {
        return 0;
    }
    const int32_t n = a < 0 ? a : (int32_t)(0u - (uint32_t)a);
    const int32_t t = mrt_one_minus_x_over_one_plus_x(mrt_exp_on_negative_values(n, 5));
    return a < 0 ? (int32_t)(0u - (uint32_t)t) : t;
}

int32_t mrt_unary_s8(const mrt_unary_s8_params *p)
{
    const mrt_unary_quant *q = &p->quant;
    for (int32_t i = 0; i < p->n; ++i) {
        const int32_t x = p->in[i];
        int32_t r;
        switch (p->op) {
        case MRT_UNARY_REQUANT:
            r = mrt_clamp(q->out_off + mrt_requantize(x - q->in_off, q->m0, q->s0), q->a0, q->a1);
            break;
        case MRT_UNARY_RELU6:
            r = x > q->a1 ? q->a1 : (x < q->a0 ? q->a0 : x);
            break;
        case MRT_UNARY_LEAKY: {
            const int32_t v = x - q->in_off;
            r = v >= 0 ? mrt_requantize(v, q->m0, q->s0) : mrt_requantize(v, q->m1, q->s1);
            r = mrt_clamp(r + q->out_off, -128, 127);
            break;
        }
        case MRT_UNARY_LOGISTIC:
        case MRT_UNARY_TANH: {      /* same saturation and F4 input; they differ in the F0 function */
            const int32_t v = x - q->in_off;
            if (v <= -q->a0) {
                r = -128;
            } else if (v >= q->a0) {
                r = 127;
            } else {
                const int32_t q4 = mrt_requantize(v, q->m0, q->s0);
                r = p->op == MRT_UNARY_LOGISTIC ? mrt_rdbpot(gemmlowp_logistic(q4), 23) - 128
                                                : mrt_rdbpot(gemmlowp_tanh(q4), 24);
                r = mrt_clamp(r, -128, 127);
            }
            break;
        }
        default:
            r = hard_swish_one(p, x);
            break;
        }
        p->out[i] = (int8_t)r;
    }
    return 0;
}

/* ================================================================ int8 / int16 / int32 */

static inline int32_t load_int(const void *base, int32_t i, int32_t size)
{
    switch (size) {
    case 1: return ((const int8_t *)base)[i];
    case 2: return ((const int16_t *)base)[i];
    default: return ((const int32_t *)base)[i];
    }
}

static inline void store_int(void *base, int32_t i, int32_t size, int32_t v)
{
    switch (size) {
    case 1: ((int8_t *)base)[i] = (int8_t)v; break;
    case 2: ((int16_t *)base)[i] = (int16_t)v; break;
    default: ((int32_t *)base)[i] = v; break;
    }
}

int32_t mrt_unary_int(const mrt_unary_int_params *p)
{
    const mrt_unary_quant *q = &p->quant;
    for (int32_t i = 0; i < p->n; ++i) {
        const int32_t x = load_int(p->in, i, p->in_size);
        int64_t r;
        switch (p->op) {
        case MRT_UNARY_REQUANT: {
            const int32_t v = (int32_t)((uint32_t)x - (uint32_t)q->in_off);
            r = (int64_t)mrt_requantize(v, q->m0, q->s0) + q->out_off;
            break;
        }
        case MRT_UNARY_RELU6:
            r = x > q->a1 ? q->a1 : (x < q->a0 ? q->a0 : x);
            break;
        default: {              /* MRT_UNARY_LEAKY */
            const int32_t v = x - q->in_off;
            r = (int64_t)(v >= 0 ? mrt_requantize(v, q->m0, q->s0) : mrt_requantize(v, q->m1, q->s1)) + q->out_off;
            break;
        }
        }
        store_int(p->out, i, p->out_size, (int32_t)mrt_clamp64(r, p->lo, p->hi));
    }
    return 0;
}

/* ================================================================ float32 */

int32_t mrt_unary_f32(const mrt_unary_f32_params *p)
{
    const float alpha = mrt_fbits(p->alpha);
    for (int32_t i = 0; i < p->n; ++i) {
        const float x = p->in[i];
        float r;
        switch (p->op) {
        case MRT_UNARY_F32_RELU:
            r = mrt_np_max(x, 0.0f);
            break;
        case MRT_UNARY_F32_RELU6:
            r = x > 6.0f ? 6.0f : (x < 0.0f ? 0.0f : x);
            break;
        case MRT_UNARY_F32_LEAKY:
            r = x > 0.0f ? x : x * alpha;
            break;
        case MRT_UNARY_F32_LOGISTIC:
            r = mrt_logistic_f32(x);
            break;
        case MRT_UNARY_F32_TANH:
            r = tanhf(x);
            break;
        default: {                  /* HARD_SWISH: x * min(6, max(0, x + 3)) / 6 */
            const float m = mrt_np_min(6.0f, mrt_np_max(0.0f, x + 3.0f));
            r = (x * m) / 6.0f;
            break;
        }
        }
        p->out[i] = r;
    }
    return 0;
}

/* ================================================================ int16 LOGISTIC and TANH */
/* int16 LOGISTIC and TANH (TFLM's reference_integer_ops::Logistic / Tanh on int16; TFLM's
 * CMSIS-NN glue has no kernel for them): the input rescaled by the op's multiplier and shift, then
 * TFLM's 256-entry sigmoid table, linearly interpolated on the low bits (tanh(x) = 2 sigmoid(2x) - 1).
 * The table is TFLM's sigmoid_table_uint16, which the glue places in flash from the twin's
 * kernels/fixedpoint.SIGMOID_TABLE_UINT16 (one copy of the numbers in the project).
 * Declared in mrt_nnfunctions.h; the numpy twins are kernels/fixedpoint.logistic_int16 / tanh_int16. */

int32_t mrt_sigmoid_s16(const int16_t *in, int16_t *out, int32_t n, int32_t input_multiplier,
                        int32_t input_left_shift, int32_t is_tanh, const uint16_t *sigmoid_table_uint16)
{
    if (input_multiplier == 0) {      /* power-of-two input scale */
        input_multiplier = 3 << input_left_shift;
        input_left_shift = 0;
    }
    const int32_t round = input_left_shift > 0 ? 1 << (input_left_shift - 1) : 0;
    if (!is_tanh) {
        for (int32_t i = 0; i < n; ++i) {
            const int32_t x = (in[i] * input_multiplier + round) >> input_left_shift;
            const uint32_t a = (uint32_t)(x < 0 ? -x : x);
            const uint32_t uh = a >> 9;
            uint32_t r;
            if (uh >= 255u) {
                r = 0x7FFFu << 10;
            } else {
                const uint32_t ua = sigmoid_table_uint16[uh], ub = sigmoid_table_uint16[uh + 1];
                r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
            }
            r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
            out[i] = (int16_t)(r >> 10);
        }
    } else {
        for (int32_t i = 0; i < n; ++i) {
            const int32_t x = (in[i] * input_multiplier + round) >> input_left_shift;
            const uint32_t a = (uint32_t)(x < 0 ? -x : x);
            const uint32_t uh = a >> 8;
            int32_t r;
            if (uh >= 255u) {
                r = (int32_t)(0xFFFFu << 8);
            } else {
                const uint32_t ua = sigmoid_table_uint16[uh], ub = sigmoid_table_uint16[uh + 1];
                r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
            }
            r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
            out[i] = (int16_t)(r >> 8);
        }
    }
    return 0;
}
