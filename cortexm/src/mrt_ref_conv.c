/* micro_rt reference flavour: CONV_2D and DEPTHWISE_CONV_2D int8 as TFLM's reference kernels
 * loop (mrt_ref_nnfunctions.h): output position, output channel, filter taps with a bounds
 * check each, one requantization per output. No DSP instructions, no im2col, no scratch. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

int32_t mrt_ref_conv_s8(const mrt_ref_conv_s8_params *p)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t groups = g->ic / g->fc;
    const int32_t filters_per_group = g->oc / groups;
    int8_t *out = p->out;
    for (int32_t b = 0; b < g->n; ++b) {
        const int8_t *in_b = p->in + b * g->ih * g->iw * g->ic;
        for (int32_t oy = 0; oy < g->oh; ++oy) {
            const int32_t in_y_origin = oy * g->sh - g->ph;
            for (int32_t ox = 0; ox < g->ow; ++ox) {
                const int32_t in_x_origin = ox * g->sw - g->pw;
                for (int32_t o = 0; o < g->oc; ++o) {
                    const int32_t group_channel = (o / filters_per_group) * g->fc;
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < g->fh; ++ky) {
                        const int32_t in_y = in_y_origin + g->dh * ky;
                        for (int32_t kx = 0; kx < g->fw; ++kx) {
                            const int32_t in_x = in_x_origin + g->dw * kx;
                            if (in_x < 0 || in_x >= g->iw || in_y < 0 || in_y >= g->ih) {
                                continue;
                            }
                            const int8_t *v = in_b + (in_y * g->iw + in_x) * g->ic + group_channel;
                            const int8_t *w = p->filter + ((o * g->fh + ky) * g->fw + kx) * g->fc;
                            for (int32_t c = 0; c < g->fc; ++c) {
                                acc += w[c] * (v[c] + p->in_off);
                            }
                        }
                    }
                    if (p->bias) {
                        acc += p->bias[o];
                    }
                    *out++ = mrt_out_stage(acc, p->mult[o], p->shift[o], p->out_off, p->act_min, p->act_max);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_ref_depthwise_conv_s8(const mrt_ref_conv_s8_params *p)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t depth_multiplier = g->fc;
    for (int32_t b = 0; b < g->n; ++b) {
        const int8_t *in_b = p->in + b * g->ih * g->iw * g->ic;
        for (int32_t oy = 0; oy < g->oh; ++oy) {
            const int32_t in_y_origin = oy * g->sh - g->ph;
            for (int32_t ox = 0; ox < g->ow; ++ox) {
                const int32_t in_x_origin = ox * g->sw - g->pw;
                int8_t *out = p->out + ((b * g->oh + oy) * g->ow + ox) * g->oc;
                for (int32_t ic = 0; ic < g->ic; ++ic) {
                    for (int32_t m = 0; m < depth_multiplier; ++m) {
                        const int32_t o = m + ic * depth_multiplier;
                        int32_t acc = 0;
                        for (int32_t ky = 0; ky < g->fh; ++ky) {
                            const int32_t in_y = in_y_origin + g->dh * ky;
                            for (int32_t kx = 0; kx < g->fw; ++kx) {
                                const int32_t in_x = in_x_origin + g->dw * kx;
                                if (in_x < 0 || in_x >= g->iw || in_y < 0 || in_y >= g->ih) {
                                    continue;
                                }
                                const int32_t v = in_b[(in_y * g->iw + in_x) * g->ic + ic];
                                const int32_t w = p->filter[(ky * g->fw + kx) * g->oc + o];
                                acc += w * (v + p->in_off);
                            }
                        }
                        if (p->bias) {
                            acc += p->bias[o];
                        }
                        out[o] = mrt_out_stage(acc, p->mult[o], p->shift[o], p->out_off, p->act_min, p->act_max);
                    }
                }
            }
        }
    }
    return 0;
}
