/* micro_rt: kernels for the remaining operators (see mrt_ops.h). TFLM-exact. */
#include "mrt_shared.h"

int32_t mrt_copy(const uint8_t *src, uint8_t *dst, int32_t nbytes)
{
    __builtin_memcpy(dst, src, (uint32_t)nbytes);
    return 0;
}

int32_t mrt_fill(uint8_t *dst, uint32_t value, int32_t count, int32_t elem_size)
{
    for (int32_t i = 0; i < count; ++i) {
        switch (elem_size) {
        case 1: dst[i] = (uint8_t)value; break;
        case 2: ((uint16_t *)dst)[i] = (uint16_t)value; break;
        default: ((uint32_t *)dst)[i] = value; break;
        }
    }
    return 0;
}

static inline void copy_elem(uint8_t *d, const uint8_t *s, int32_t size)
{
    switch (size) {
    case 1: *d = *s; break;
    case 2: *(uint16_t *)d = *(const uint16_t *)s; break;
    case 4: *(uint32_t *)d = *(const uint32_t *)s; break;
    default: __builtin_memcpy(d, s, (uint32_t)size); break;
    }
}

int32_t mrt_strided_copy(const mrt_copy_params *p)
{
    const int32_t *n = p->count;
    const int32_t *ss = p->src_stride;
    const int32_t *ds = p->dst_stride;
    const int32_t es = p->elem_size;
    for (int32_t i0 = 0; i0 < n[0]; ++i0)
    for (int32_t i1 = 0; i1 < n[1]; ++i1)
    for (int32_t i2 = 0; i2 < n[2]; ++i2)
    for (int32_t i3 = 0; i3 < n[3]; ++i3) {
        const uint8_t *s3 = p->src + i0 * ss[0] + i1 * ss[1] + i2 * ss[2] + i3 * ss[3];
        uint8_t *d3 = p->dst + i0 * ds[0] + i1 * ds[1] + i2 * ds[2] + i3 * ds[3];
        for (int32_t i4 = 0; i4 < n[4]; ++i4) {
            const uint8_t *s4 = s3 + i4 * ss[4];
            uint8_t *d4 = d3 + i4 * ds[4];
            if (ss[5] == es && ds[5] == es) {
                __builtin_memcpy(d4, s4, (uint32_t)(n[5] * es));
            } else {
                for (int32_t i5 = 0; i5 < n[5]; ++i5) {
                    copy_elem(d4 + i5 * ds[5], s4 + i5 * ss[5], es);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_binary_s8(const mrt_binary_s8_params *p)
{
    MRT_BROADCAST_BINARY(&p->dims, int8_t, p->in1, p->in2, p->out, x, y, mrt_binary_quant_one(p->op, &p->quant, x, y));
    return 0;
}

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

/* ---- float (soft-float calling convention; VFP on the FPU cores) ---- */
static inline float round_half_away(float x)
{
    /* roundf: |x| >= 2^23 is already integral. */
    const float ax = x < 0.0f ? -x : x;
    if (!(ax < 8388608.0f)) {
        return x;
    }
    const float t = (float)(int32_t)ax;
    const float r = (ax - t >= 0.5f) ? t + 1.0f : t;
    return x < 0.0f ? -r : r;
}

/* static_cast<int32_t>(float) as the host twin (x86 cvttss2si) does it: NaN and
 * out-of-range values give INT32_MIN (Arm's VCVT would saturate instead). */
static inline int32_t f32_to_i32_host(float x)
{
    if (x != x || x >= 2147483648.0f || x < -2147483648.0f) {
        return INT32_MIN;
    }
    return (int32_t)x;
}

/* QUANTIZE float32 -> integer: round half away, then the host twin's int32 cast and a wrapping
 * add of the zero point, clamped to [lo, hi]. */
static inline int32_t quantize_f32_one(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi)
{
    const int32_t q = f32_to_i32_host(round_half_away(x / scale));
    const int32_t v = (int32_t)((uint32_t)q + (uint32_t)zero_point);
    return mrt_clamp(v, lo, hi);
}

/* DEQUANTIZE integer -> float32, in double as the twin does. */
static inline float dequantize_f32_one(int32_t q, double scale, int32_t zero_point)
{
    return (float)(scale * (double)(q - zero_point));
}

int32_t mrt_quantize_f32_s8(const float *in, int8_t *out, int32_t n, uint32_t scale_bits, int32_t zero_point)
{
    const float scale = mrt_fbits(scale_bits);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = (int8_t)quantize_f32_one(in[i], scale, zero_point, -128, 127);
    }
    return 0;
}

int32_t mrt_dequantize_s8_f32(const int8_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point)
{
    const double scale = (double)mrt_fbits(scale_bits);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = dequantize_f32_one(in[i], scale, zero_point);
    }
    return 0;
}

int32_t mrt_quantize_f32_s16(const float *in, int16_t *out, int32_t n, uint32_t scale_bits, int32_t zero_point)
{
    const float scale = mrt_fbits(scale_bits);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = (int16_t)quantize_f32_one(in[i], scale, zero_point, -32768, 32767);
    }
    return 0;
}

int32_t mrt_dequantize_s16_f32(const int16_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point)
{
    const double scale = (double)mrt_fbits(scale_bits);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = dequantize_f32_one(in[i], scale, zero_point);
    }
    return 0;
}

int32_t mrt_mean_s8(const mrt_mean_s8_params *p)
{
    int32_t stride[4], ko[4], kr[4];
    (void)mrt_mean_axes(p->shape, p->reduce, stride, ko, kr);
    int8_t *out = p->out;
    for (int32_t a0 = 0; a0 < ko[0]; ++a0)
    for (int32_t a1 = 0; a1 < ko[1]; ++a1)
    for (int32_t a2 = 0; a2 < ko[2]; ++a2)
    for (int32_t a3 = 0; a3 < ko[3]; ++a3) {
        const int8_t *base = p->in + a0 * stride[0] + a1 * stride[1] + a2 * stride[2] + a3 * stride[3];
        int32_t acc = 0;
        for (int32_t r0 = 0; r0 < kr[0]; ++r0)
        for (int32_t r1 = 0; r1 < kr[1]; ++r1)
        for (int32_t r2 = 0; r2 < kr[2]; ++r2) {
            const int8_t *q = base + r0 * stride[0] + r1 * stride[1] + r2 * stride[2];
            for (int32_t r3 = 0; r3 < kr[3]; ++r3) {
                acc += q[r3] - p->in_zp;
            }
        }
        *out++ = (int8_t)mrt_clamp(mrt_requantize(acc, p->mult, p->shift) + p->out_zp, p->act_min, p->act_max);
    }
    return 0;
}
