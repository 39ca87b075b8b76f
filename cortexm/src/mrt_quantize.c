/* micro_rt: QUANTIZE float32 -> int8 / int16 and DEQUANTIZE int8 / int16 / uint8 -> float32
 * (mrt_nnfunctions.h), bit-exact with the numpy twins (soft-float calling convention), and
 * QUANTIZE between int8 and uint8 (mrt_requantize_u8). QUANTIZE between other integer types is
 * mrt_unary_int's (mrt_unary.c). */
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

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

int32_t mrt_dequantize_u8_f32(const uint8_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point)
{
    const double scale = (double)mrt_fbits(scale_bits);
    for (int32_t i = 0; i < n; ++i) {
        out[i] = dequantize_f32_one(in[i], scale, zero_point);
    }
    return 0;
}

/* ================================================================ int8 <-> uint8 */
/* QUANTIZE between int8 and uint8 (TFLM's reference_ops::Requantize, the old uint8
 * quantization at a model's edge): MultiplyByQuantizedMultiplier of x - input zero point, plus the
 * output zero point, clamped; or, when the scales are equal and the zero points 128 apart, TFLM's
 * fast path x ^ 0x80. Declared in mrt_nnfunctions.h; the numpy twin is kernels/quantize.requantize. */

int32_t mrt_requantize_u8(const mrt_requantize_u8_params *p)
{
    const int32_t n = p->n;
    if (p->xor_path) {
        const uint8_t *in = (const uint8_t *)p->in;
        uint8_t *out = (uint8_t *)p->out;
        for (int32_t i = 0; i < n; ++i) {
            out[i] = (uint8_t)(in[i] ^ 0x80u);
        }
    } else if (p->in_unsigned) {                   /* uint8 -> int8 */
        const uint8_t *in = (const uint8_t *)p->in;
        int8_t *out = (int8_t *)p->out;
        for (int32_t i = 0; i < n; ++i) {
            const int32_t v = mrt_requantize((int32_t)in[i] - p->in_off, p->mult, p->shift) + p->out_off;
            out[i] = (int8_t)mrt_clamp(v, -128, 127);
        }
    } else {                                       /* int8 -> uint8 */
        const int8_t *in = (const int8_t *)p->in;
        uint8_t *out = (uint8_t *)p->out;
        for (int32_t i = 0; i < n; ++i) {
            const int32_t v = mrt_requantize((int32_t)in[i] - p->in_off, p->mult, p->shift) + p->out_off;
            out[i] = (uint8_t)mrt_clamp(v, 0, 255);
        }
    }
    return 0;
}
