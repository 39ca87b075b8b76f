/* micro_rt: int16 kernels (TFLM's 16-bit activation paths), bit-exact with the numpy twins.
 *
 *  - mrt_conv_s16: CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED with int16 activations and
 *    int8 weights (16x8): int64 accumulator, int32 or int64 bias, then TFLM's int64
 *    MultiplyByQuantizedMultiplier (16-bit reduced multiplier, one rounding).
 *  - mrt_binary_s16: ADD / SUB / MUL / MAXIMUM / MINIMUM on int16 with broadcasting.
 *  - mrt_unary_int: element-wise requantization between int8 / int16 / int32 (QUANTIZE),
 *    int16 RELU, RELU6 and LEAKY_RELU. */
#include "mrt_ops.h"
#include "mrt_math.h"

/* TFLM MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift). */
static inline int64_t requantize_wide(int64_t acc, int32_t multiplier, int32_t shift)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    return (acc * reduced + ((int64_t)1 << (total_shift - 1))) >> total_shift;
}

static inline int64_t clamp64(int64_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

int32_t mrt_conv_s16(const mrt_conv_s16_params *p)
{
    const int32_t dw = p->depth_multiplier > 0;
    const int32_t groups = dw ? 1 : p->ic / p->fc;
    const int32_t ocg = p->oc / groups;
    int16_t *out = p->out;
    for (int32_t b = 0; b < p->n; ++b) {
        const int16_t *in_b = p->in + b * p->ih * p->iw * p->ic;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t y0 = oy * p->sh - p->ph;
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t x0 = ox * p->sw - p->pw;
                for (int32_t o = 0; o < p->oc; ++o) {
                    int64_t acc = 0;
                    for (int32_t ky = 0; ky < p->fh; ++ky) {
                        const int32_t y = y0 + ky * p->dh;
                        if (y < 0 || y >= p->ih) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < p->fw; ++kx) {
                            const int32_t x = x0 + kx * p->dw;
                            if (x < 0 || x >= p->iw) {
                                continue;
                            }
                            const int16_t *v = in_b + (y * p->iw + x) * p->ic;
                            if (dw) {
                                const int32_t w = p->filter[(ky * p->fw + kx) * p->oc + o];
                                acc += (int64_t)((v[o / p->depth_multiplier] + p->in_off) * (w + p->filter_off));
                            } else {
                                const int8_t *w = p->filter + ((o * p->fh + ky) * p->fw + kx) * p->fc;
                                const int16_t *vc = v + (o / ocg) * p->fc;
                                for (int32_t c = 0; c < p->fc; ++c) {
                                    acc += (int64_t)((vc[c] + p->in_off) * (w[c] + p->filter_off));
                                }
                            }
                        }
                    }
                    if (p->bias_size == 8) {
                        acc += ((const int64_t *)p->bias)[o];
                    } else if (p->bias_size == 4) {
                        acc += ((const int32_t *)p->bias)[o];
                    }
                    const int32_t ch = p->per_channel ? o : 0;
                    const int64_t r = requantize_wide(acc, p->mult[ch], p->shift[ch]) + p->out_off;
                    *out++ = (int16_t)clamp64(r, p->act_min, p->act_max);
                }
            }
        }
    }
    return 0;
}

static inline int32_t binary_one16(const mrt_binary_s16_params *p, int32_t a, int32_t b)
{
    switch (p->op) {
    case MRT_OP_ADD:
    case MRT_OP_SUB: {
        const int32_t x1 = mrt_requantize(mrt_shl_wrap(a + p->in1_offset, p->left_shift), p->in1_mult, p->in1_shift);
        const int32_t x2 = mrt_requantize(mrt_shl_wrap(b + p->in2_offset, p->left_shift), p->in2_mult, p->in2_shift);
        const int32_t raw = (int32_t)(p->op == MRT_OP_ADD ? (uint32_t)x1 + (uint32_t)x2 : (uint32_t)x1 - (uint32_t)x2);
        return mrt_clamp(mrt_requantize(raw, p->out_mult, p->out_shift) + p->out_offset, p->act_min, p->act_max);
    }
    case MRT_OP_MUL: {
        const int32_t prod = (int32_t)((uint32_t)(a + p->in1_offset) * (uint32_t)(b + p->in2_offset));
        return mrt_clamp(mrt_requantize(prod, p->out_mult, p->out_shift) + p->out_offset, p->act_min, p->act_max);
    }
    case MRT_OP_MAX:
        return a > b ? a : b;
    default:
        return a < b ? a : b;
    }
}

int32_t mrt_binary_s16(const mrt_binary_s16_params *p)
{
    const int32_t *n = p->count;
    int16_t *out = p->out;
    for (int32_t i0 = 0; i0 < n[0]; ++i0)
    for (int32_t i1 = 0; i1 < n[1]; ++i1)
    for (int32_t i2 = 0; i2 < n[2]; ++i2)
    for (int32_t i3 = 0; i3 < n[3]; ++i3)
    for (int32_t i4 = 0; i4 < n[4]; ++i4) {
        const int16_t *a = p->in1 + i0 * p->stride1[0] + i1 * p->stride1[1] + i2 * p->stride1[2] +
                           i3 * p->stride1[3] + i4 * p->stride1[4];
        const int16_t *b = p->in2 + i0 * p->stride2[0] + i1 * p->stride2[1] + i2 * p->stride2[2] +
                           i3 * p->stride2[3] + i4 * p->stride2[4];
        for (int32_t i5 = 0; i5 < n[5]; ++i5) {
            *out++ = (int16_t)binary_one16(p, a[i5 * p->stride1[5]], b[i5 * p->stride2[5]]);
        }
    }
    return 0;
}

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
    for (int32_t i = 0; i < p->n; ++i) {
        const int32_t x = load_int(p->in, i, p->in_size);
        int64_t r;
        switch (p->op) {
        case MRT_UNARY_REQUANT: {
            const int32_t v = (int32_t)((uint32_t)x - (uint32_t)p->in_off);
            r = (int64_t)mrt_requantize(v, p->m0, p->s0) + p->out_off;
            break;
        }
        case MRT_UNARY_RELU6:
            r = x > p->a1 ? p->a1 : (x < p->a0 ? p->a0 : x);
            break;
        default: {              /* MRT_UNARY_LEAKY */
            const int32_t v = x - p->in_off;
            r = (int64_t)(v >= 0 ? mrt_requantize(v, p->m0, p->s0) : mrt_requantize(v, p->m1, p->s1)) + p->out_off;
            break;
        }
        }
        store_int(p->out, i, p->out_size, (int32_t)clamp64(r, p->lo, p->hi));
    }
    return 0;
}
