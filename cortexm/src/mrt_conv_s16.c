/* micro_rt: CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED with int16 activations and int8
 * weights (16x8; mrt_conv_s16, declared in mrt_nnfunctions.h), bit-exact with the numpy twins:
 * int64 accumulator and bias, then TFLM's int64 MultiplyByQuantizedMultiplier (16-bit reduced
 * multiplier, one rounding); with an int32 bias (bias_size 4) TFLM's int32 variant: wrapping
 * int32 sum, double-rounding requantization. */
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

/* TFLM MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier, int shift). */
static inline int64_t requantize_wide(int64_t acc, int32_t multiplier, int32_t shift)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? ((int64_t)multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    return (acc * reduced + ((int64_t)1 << (total_shift - 1))) >> total_shift;
}

int32_t mrt_conv_s16(const mrt_conv_s16_params *p)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t dw = p->depth_multiplier > 0;
    const int32_t groups = dw ? 1 : g->ic / g->fc;
    const int32_t ocg = g->oc / groups;
    int16_t *out = p->out;
    for (int32_t b = 0; b < g->n; ++b) {
        const int16_t *in_b = p->in + b * g->ih * g->iw * g->ic;
        for (int32_t oy = 0; oy < g->oh; ++oy) {
            const int32_t y0 = oy * g->sh - g->ph;
            for (int32_t ox = 0; ox < g->ow; ++ox) {
                const int32_t x0 = ox * g->sw - g->pw;
                for (int32_t o = 0; o < g->oc; ++o) {
                    int64_t acc = 0;
                    for (int32_t ky = 0; ky < g->fh; ++ky) {
                        const int32_t y = y0 + ky * g->dh;
                        if (y < 0 || y >= g->ih) {
                            continue;
                        }
                        for (int32_t kx = 0; kx < g->fw; ++kx) {
                            const int32_t x = x0 + kx * g->dw;
                            if (x < 0 || x >= g->iw) {
                                continue;
                            }
                            const int16_t *v = in_b + (y * g->iw + x) * g->ic;
                            if (dw) {
                                const int32_t w = p->filter[(ky * g->fw + kx) * g->oc + o];
                                acc += (int64_t)((v[o / p->depth_multiplier] + p->in_off) * (w + p->filter_off));
                            } else {
                                const int8_t *w = p->filter + ((o * g->fh + ky) * g->fw + kx) * g->fc;
                                const int16_t *vc = v + (o / ocg) * g->fc;
                                for (int32_t c = 0; c < g->fc; ++c) {
                                    acc += (int64_t)((vc[c] + p->in_off) * (w[c] + p->filter_off));
                                }
                            }
                        }
                    }
                    const int32_t ch = p->per_channel ? o : 0;
                    int64_t r;
                    if (p->bias_size == 4) {
                        /* TFLM's int32-accumulator variant (int32 bias, or none with an int32
                         * quantized bias type): the sum wraps as an int32 running sum would
                         * (wrapping the exact sum is the same mod 2^32), then the int32
                         * MultiplyByQuantizedMultiplier (double rounding). */
                        uint32_t acc32 = (uint32_t)acc;
                        if (p->bias) {
                            acc32 += (uint32_t)((const int32_t *)p->bias)[o];
                        }
                        r = (int64_t)mrt_requantize((int32_t)acc32, p->mult[ch], p->shift[ch]) + p->out_off;
                    } else {
                        if (p->bias_size == 8 && p->bias) {
                            acc += ((const int64_t *)p->bias)[o];
                        }
                        r = requantize_wide(acc, p->mult[ch], p->shift[ch]) + p->out_off;
                    }
                    *out++ = (int16_t)mrt_clamp64(r, p->act_min, p->act_max);
                }
            }
        }
    }
    return 0;
}
