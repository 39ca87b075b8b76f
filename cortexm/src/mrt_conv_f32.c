/* micro_rt: CONV_2D and DEPTHWISE_CONV_2D float32 (mrt_nnfunctions.h), bit-exact with the numpy
 * twins (float32 conventions: mrt_nnfunctions.h). */
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

/* CONV_2D sum for output channel o at window origin (y0, x0): taps in TFLM's loop order from
 * 0.0f, padded taps as 0.0f products (the twin multiplies a zero-padded buffer). */
static inline float conv_sum_f32(const mrt_conv_f32_params *p, const float *in_b, int32_t y0, int32_t x0,
                                 int32_t o, int32_t ocg)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t c0 = (o / ocg) * g->fc;
    const float *w = p->filter + o * g->fh * g->fw * g->fc;
    float acc = 0.0f;
    for (int32_t ky = 0; ky < g->fh; ++ky) {
        const int32_t y = y0 + ky * g->dh;
        const int32_t yin = y >= 0 && y < g->ih;
        for (int32_t kx = 0; kx < g->fw; ++kx) {
            const int32_t x = x0 + kx * g->dw;
            const float *wk = w + (ky * g->fw + kx) * g->fc;
            if (yin && x >= 0 && x < g->iw) {
                const float *v = in_b + (y * g->iw + x) * g->ic + c0;
                for (int32_t c = 0; c < g->fc; ++c) {
                    acc += v[c] * wk[c];
                }
            } else {
                for (int32_t c = 0; c < g->fc; ++c) {
                    acc += 0.0f * wk[c];
                }
            }
        }
    }
    return acc;
}

/* DEPTHWISE_CONV_2D sum for output channel o (input channel o / depth multiplier). */
static inline float depthwise_sum_f32(const mrt_conv_f32_params *p, const float *in_b, int32_t y0, int32_t x0,
                                      int32_t o, int32_t mult)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t c = o / mult;
    float acc = 0.0f;
    for (int32_t ky = 0; ky < g->fh; ++ky) {
        const int32_t y = y0 + ky * g->dh;
        for (int32_t kx = 0; kx < g->fw; ++kx) {
            const int32_t x = x0 + kx * g->dw;
            const float v = (y >= 0 && y < g->ih && x >= 0 && x < g->iw)
                            ? in_b[(y * g->iw + x) * g->ic + c] : 0.0f;
            const float prod = v * p->filter[(ky * g->fw + kx) * g->oc + o];
            acc = (ky == 0 && kx == 0) ? prod : acc + prod;   /* twin: first tap, no 0 + */
        }
    }
    return acc;
}

/* Both convolutions walk the output alike (batch, row, column, channel), then add the bias
 * after the sum and clamp; `depthwise` is a constant in each caller, so each gets its own loop. */
static inline __attribute__((always_inline)) int32_t conv_walk_f32(const mrt_conv_f32_params *p, int32_t depthwise)
{
    const mrt_conv_geometry *g = &p->geom;
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    const int32_t mult = g->fc;                         /* depthwise: depth multiplier */
    const int32_t ocg = depthwise ? 0 : g->oc / (g->ic / g->fc);   /* conv: channels per group */
    float *out = p->out;
    for (int32_t b = 0; b < g->n; ++b) {
        const float *in_b = p->in + b * g->ih * g->iw * g->ic;
        for (int32_t oy = 0; oy < g->oh; ++oy) {
            const int32_t y0 = oy * g->sh - g->ph;
            for (int32_t ox = 0; ox < g->ow; ++ox) {
                const int32_t x0 = ox * g->sw - g->pw;
                for (int32_t o = 0; o < g->oc; ++o) {
                    float acc = depthwise ? depthwise_sum_f32(p, in_b, y0, x0, o, mult)
                                          : conv_sum_f32(p, in_b, y0, x0, o, ocg);
                    if (p->bias) {
                        acc += p->bias[o];
                    }
                    *out++ = mrt_act_clamp_f32(acc, lo, hi);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_conv_f32(const mrt_conv_f32_params *p)
{
    return conv_walk_f32(p, 0);
}

int32_t mrt_depthwise_conv_f32(const mrt_conv_f32_params *p)
{
    return conv_walk_f32(p, 1);
}
