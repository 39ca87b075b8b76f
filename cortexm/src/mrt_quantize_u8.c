/* micro_rt: QUANTIZE between int8 and uint8 (TFLM's reference_ops::Requantize, the old uint8
 * quantization at a model's edge): MultiplyByQuantizedMultiplier of x - input zero point, plus the
 * output zero point, clamped; or, when the scales are equal and the zero points 128 apart, TFLM's
 * fast path x ^ 0x80. Declared in mrt_nnfunctions.h; the numpy twin is kernels/quantize.requantize. */
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

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
