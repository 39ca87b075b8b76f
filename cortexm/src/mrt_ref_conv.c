/* micro_rt reference flavour: CONV_2D and DEPTHWISE_CONV_2D int8 as TFLM's reference kernels
 * loop (mrt_ref_nnfunctions.h): output position, output channel, filter taps with a bounds
 * check each, one requantization per output. No DSP instructions, no im2col, no scratch. The
 * parameters are copied into locals first, as TFLM's kernels read theirs from the params
 * struct into consts (so the loops do not reload them after every store). */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

/* The parameters as TFLM's kernels hold them: consts read once from the block (FC is the
 * filter depth of a conv, the depth multiplier of a depthwise conv). */
#define MRT_REF_CONV_LOCALS(p, FC)                                                                        \
    const int8_t *const input = (p)->in, *const filter = (p)->filter;                                     \
    const int32_t *const bias = (p)->bias, *const mult = (p)->mult, *const shift = (p)->shift;            \
    const int32_t batches = (p)->geom.n, in_h = (p)->geom.ih, in_w = (p)->geom.iw, in_depth = (p)->geom.ic; \
    const int32_t out_h = (p)->geom.oh, out_w = (p)->geom.ow, out_depth = (p)->geom.oc;                   \
    const int32_t filter_h = (p)->geom.fh, filter_w = (p)->geom.fw, FC = (p)->geom.fc;                    \
    const int32_t stride_h = (p)->geom.sh, stride_w = (p)->geom.sw;                                       \
    const int32_t dil_h = (p)->geom.dh, dil_w = (p)->geom.dw, pad_h = (p)->geom.ph, pad_w = (p)->geom.pw; \
    const int32_t in_off = (p)->in_off, out_off = (p)->out_off;                                           \
    const int32_t act_min = (p)->act_min, act_max = (p)->act_max

int32_t mrt_ref_conv_s8(const mrt_ref_conv_s8_params *p)
{
    MRT_REF_CONV_LOCALS(p, filter_depth);
    int8_t *out = p->out;
    const int32_t filters_per_group = out_depth / (in_depth / filter_depth);
    for (int32_t b = 0; b < batches; ++b) {
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t in_y_origin = oy * stride_h - pad_h;
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t in_x_origin = ox * stride_w - pad_w;
                for (int32_t o = 0; o < out_depth; ++o) {
                    const int32_t group_channel = (o / filters_per_group) * filter_depth;
                    int32_t acc = 0;
                    for (int32_t ky = 0; ky < filter_h; ++ky) {
                        const int32_t in_y = in_y_origin + dil_h * ky;
                        for (int32_t kx = 0; kx < filter_w; ++kx) {
                            const int32_t in_x = in_x_origin + dil_w * kx;
                            if (in_x < 0 || in_x >= in_w || in_y < 0 || in_y >= in_h) {
                                continue;
                            }
                            const int8_t *v = input + ((b * in_h + in_y) * in_w + in_x) * in_depth + group_channel;
                            const int8_t *w = filter + ((o * filter_h + ky) * filter_w + kx) * filter_depth;
                            for (int32_t c = 0; c < filter_depth; ++c) {
                                acc += w[c] * (v[c] + in_off);
                            }
                        }
                    }
                    if (bias) {
                        acc += bias[o];
                    }
                    *out++ = mrt_out_stage(acc, mult[o], shift[o], out_off, act_min, act_max);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_ref_depthwise_conv_s8(const mrt_ref_conv_s8_params *p)
{
    MRT_REF_CONV_LOCALS(p, depth_multiplier);
    int8_t *const output = p->out;
    for (int32_t b = 0; b < batches; ++b) {
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t in_y_origin = oy * stride_h - pad_h;
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t in_x_origin = ox * stride_w - pad_w;
                for (int32_t ic = 0; ic < in_depth; ++ic) {
                    for (int32_t m = 0; m < depth_multiplier; ++m) {
                        const int32_t o = m + ic * depth_multiplier;
                        int32_t acc = 0;
                        for (int32_t ky = 0; ky < filter_h; ++ky) {
                            const int32_t in_y = in_y_origin + dil_h * ky;
                            for (int32_t kx = 0; kx < filter_w; ++kx) {
                                const int32_t in_x = in_x_origin + dil_w * kx;
                                if (in_x < 0 || in_x >= in_w || in_y < 0 || in_y >= in_h) {
                                    continue;
                                }
                                const int32_t v = input[((b * in_h + in_y) * in_w + in_x) * in_depth + ic];
                                const int32_t w = filter[(ky * filter_w + kx) * out_depth + o];
                                acc += w * (v + in_off);
                            }
                        }
                        if (bias) {
                            acc += bias[o];
                        }
                        output[((b * out_h + oy) * out_w + ox) * out_depth + o] =
                            mrt_out_stage(acc, mult[o], shift[o], out_off, act_min, act_max);
                    }
                }
            }
        }
    }
    return 0;
}
