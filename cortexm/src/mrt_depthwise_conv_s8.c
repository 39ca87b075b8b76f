/* micro_rt: s8 depthwise convolution (CMSIS-NN compatible API, own implementation).
 *
 * Filter layout [1, KH, KW, C_OUT]; output channel ic * ch_mult + m reads input channel ic.
 * Taps outside the image are skipped (TFLM semantics). Output stage: per-channel
 * MultiplyByQuantizedMultiplier, + output offset, clamp.
 * - arm_depthwise_conv_s8: any ch_mult, dilation and batch count. The valid tap range of each
 *   output pixel is computed once; output channels sharing an input channel are done 4 at a
 *   time when ch_mult is a multiple of 4 (one input load per tap, one weight word; with DSP,
 *   SXTB16 + SMLABB/SMLATB).
 * - arm_depthwise_conv_3x3_s8 (ch_mult 1, 3x3, padding <= 1) and arm_depthwise_conv_s8_opt
 *   (ch_mult 1): 4 channels at a time. With DSP one word load gives 4 inputs and one 4 weights,
 *   SXTAB16 adds the input offset while widening to halfword pairs, SMLABB/SMLATT accumulate;
 *   interior 3x3 windows are fully unrolled. The opt kernel keeps the CMSIS-NN buffer size
 *   contract but needs no buffer.
 */
#include "arm_nnfunctions.h"
#include "mrt_math.h"

#define MRT_SIZES_DEPTHWISE_CONV_S8        /* this file's part of mrt_buffer_sizes.h */
#include "mrt_buffer_sizes.h"

arm_cmsis_nn_status arm_depthwise_conv_wrapper_s8(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    if (dw_conv_params->ch_mult == 1 && input_dims->n == 1 && dw_conv_params->dilation.w == 1 &&
        dw_conv_params->dilation.h == 1) {
        if (dw_is_3x3(dw_conv_params, filter_dims)) {
            return arm_depthwise_conv_3x3_s8(ctx, dw_conv_params, quant_params, input_dims, input_data, filter_dims,
                                             filter_data, bias_dims, bias_data, output_dims, output_data);
        }
        return arm_depthwise_conv_s8_opt(ctx, dw_conv_params, quant_params, input_dims, input_data, filter_dims,
                                         filter_data, bias_dims, bias_data, output_dims, output_data);
    }
    return arm_depthwise_conv_s8(ctx, dw_conv_params, quant_params, input_dims, input_data, filter_dims,
                                 filter_data, bias_dims, bias_data, output_dims, output_data);
}

/* Valid tap index range [k0, k1) along one axis: base + k * dil in [0, size). */
static inline void tap_range(int32_t base, int32_t dil, int32_t k_n, int32_t size, int32_t *k0, int32_t *k1)
{
    int32_t a = 0;
    while (a < k_n && base + a * dil < 0) {
        ++a;
    }
    int32_t b = a;
    while (b < k_n && base + b * dil < size) {
        ++b;
    }
    *k0 = a;
    *k1 = b;
}

/* The four accumulators of output channels c..c+3 start from their bias (0 without bias);
 * shared by the 4-channel paths of both kernels, outside their tap loops. A macro, not an
 * inline function: taking the accumulators' addresses slowed dw_mult1 by 1% on the M0+. */
#define MRT_BIAS4(bias, c, a0, a1, a2, a3)  \
    do {                                    \
        a0 = a1 = a2 = a3 = 0;              \
        if (bias) {                         \
            a0 = (bias)[(c)];               \
            a1 = (bias)[(c) + 1];           \
            a2 = (bias)[(c) + 2];           \
            a3 = (bias)[(c) + 3];           \
        }                                   \
    } while (0)

/* Output stage of channels c..c+3 into o[0..3]. */
MRT_INLINE void out_stage4(int8_t *o, int32_t a0, int32_t a1, int32_t a2, int32_t a3, const int32_t *qm,
                           const int32_t *qs, int32_t c, int32_t oo, int32_t lo, int32_t hi)
{
    o[0] = mrt_out_stage(a0, qm[c], qs[c], oo, lo, hi);
    o[1] = mrt_out_stage(a1, qm[c + 1], qs[c + 1], oo, lo, hi);
    o[2] = mrt_out_stage(a2, qm[c + 2], qs[c + 2], oo, lo, hi);
    o[3] = mrt_out_stage(a3, qm[c + 3], qs[c + 3], oo, lo, hi);
}

arm_cmsis_nn_status arm_depthwise_conv_s8(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)ctx;
    (void)bias_dims;
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t k_h = filter_dims->h, k_w = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t mult = dw_conv_params->ch_mult;
    const int32_t off = dw_conv_params->input_offset;
    const int32_t dil_h = dw_conv_params->dilation.h, dil_w = dw_conv_params->dilation.w;
    const int32_t oo = dw_conv_params->output_offset;
    const int32_t lo = dw_conv_params->activation.min, hi = dw_conv_params->activation.max;
    const int32_t *qm = quant_params->multiplier, *qs = quant_params->shift;
    const int32_t quad = (mult & 3) == 0;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *in_b = input_data + b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t base_y = oy * dw_conv_params->stride.h - dw_conv_params->padding.h;
            int32_t ky0, ky1;
            tap_range(base_y, dil_h, k_h, in_h, &ky0, &ky1);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t base_x = ox * dw_conv_params->stride.w - dw_conv_params->padding.w;
                int32_t kx0, kx1;
                tap_range(base_x, dil_w, k_w, in_w, &kx0, &kx1);
                for (int32_t ic = 0; ic < in_c; ++ic) {
                    int32_t m = 0;
                    if (quad) {
                        for (; m < mult; m += 4) {
                            const int32_t oc = ic * mult + m;
                            int32_t a0, a1, a2, a3;
                            MRT_BIAS4(bias_data, oc, a0, a1, a2, a3);
                            for (int32_t ky = ky0; ky < ky1; ++ky) {
                                const int8_t *ip = in_b + ((base_y + ky * dil_h) * in_w + base_x) * in_c + ic;
                                const int8_t *wp = filter_data + ky * k_w * out_c + oc;
                                for (int32_t kx = kx0; kx < kx1; ++kx) {
                                    const int32_t xv = ip[kx * dil_w * in_c] + off;
                                    const int8_t *w4 = wp + kx * out_c;
#if MRT_DSP
                                    const uint32_t wv = (uint32_t)mrt_read_s8x4(w4);
                                    const uint32_t wa = __sxtb16(wv), wb = mrt_sxtb16_r8(wv);
                                    a0 = __smlabb(wa, xv, a0);
                                    a2 = __smlatb(wa, xv, a2);
                                    a1 = __smlabb(wb, xv, a1);
                                    a3 = __smlatb(wb, xv, a3);
#else
                                    a0 += xv * w4[0];
                                    a1 += xv * w4[1];
                                    a2 += xv * w4[2];
                                    a3 += xv * w4[3];
#endif
                                }
                            }
                            out_stage4(output_data + oc, a0, a1, a2, a3, qm, qs, oc, oo, lo, hi);
                        }
                    }
                    for (; m < mult; ++m) {
                        const int32_t oc = ic * mult + m;
                        int32_t acc = bias_data ? bias_data[oc] : 0;
                        for (int32_t ky = ky0; ky < ky1; ++ky) {
                            const int8_t *ip = in_b + ((base_y + ky * dil_h) * in_w + base_x) * in_c + ic;
                            const int8_t *wp = filter_data + ky * k_w * out_c + oc;
                            for (int32_t kx = kx0; kx < kx1; ++kx) {
                                acc += (ip[kx * dil_w * in_c] + off) * wp[kx * out_c];
                            }
                        }
                        output_data[oc] = mrt_out_stage(acc, qm[oc], qs[oc], oo, lo, hi);
                    }
                }
                output_data += out_c;
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

/* ch_mult 1, no dilation, batch 1: 4 channels per step (see the file comment). */
static void dw_mult1(const cmsis_nn_dw_conv_params *p, const cmsis_nn_per_channel_quant_params *qp,
                     const cmsis_nn_dims *input_dims, const int8_t *input_data, int32_t k_h, int32_t k_w,
                     const int8_t *filter_data, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
                     int8_t *output_data)
{
    const int32_t in_h = input_dims->h, in_w = input_dims->w, c_n = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int32_t off = p->input_offset;
    const int32_t oo = p->output_offset, lo = p->activation.min, hi = p->activation.max;
    const int32_t *qm = qp->multiplier, *qs = qp->shift;
    const int32_t row = in_w * c_n;              /* input row stride */
    const int32_t wrow = k_w * c_n;              /* filter row stride */
    const int32_t is3 = k_h == 3 && k_w == 3;
#if MRT_DSP
    const uint32_t off2 = mrt_dup16(off);
#endif
    for (int32_t oy = 0; oy < out_h; ++oy) {
        const int32_t base_y = oy * p->stride.h - p->padding.h;
        const int32_t ky0 = base_y < 0 ? -base_y : 0;
        const int32_t ky1 = MRT_MIN(k_h, in_h - base_y);
        for (int32_t ox = 0; ox < out_w; ++ox) {
            const int32_t base_x = ox * p->stride.w - p->padding.w;
            const int32_t kx0 = base_x < 0 ? -base_x : 0;
            const int32_t kx1 = MRT_MIN(k_w, in_w - base_x);
            const int32_t full3 = is3 && ky0 == 0 && kx0 == 0 && ky1 == 3 && kx1 == 3;
            const int8_t *in_px = input_data + (base_y * in_w + base_x) * c_n;
            int32_t c = 0;
            for (; c + 4 <= c_n; c += 4) {
                int32_t a0, a1, a2, a3;
                MRT_BIAS4(bias_data, c, a0, a1, a2, a3);
#if MRT_DSP
#define MRT_DW_TAP(ip, wp)                                                                      \
    do {                                                                                        \
        const uint32_t xv_ = (uint32_t)mrt_read_s8x4(ip);                                       \
        const uint32_t wv_ = (uint32_t)mrt_read_s8x4(wp);                                       \
        const uint32_t xa_ = __sxtab16(off2, xv_), xb_ = mrt_sxtab16_r8(off2, xv_);             \
        const uint32_t wa_ = __sxtb16(wv_), wb_ = mrt_sxtb16_r8(wv_);                           \
        a0 = __smlabb(xa_, wa_, a0);                                                            \
        a2 = __smlatt(xa_, wa_, a2);                                                            \
        a1 = __smlabb(xb_, wb_, a1);                                                            \
        a3 = __smlatt(xb_, wb_, a3);                                                            \
    } while (0)
#else
#define MRT_DW_TAP(ip, wp)                                                                      \
    do {                                                                                        \
        const int8_t *ip_ = (ip), *wp_ = (wp);                                                  \
        a0 += (ip_[0] + off) * wp_[0];                                                          \
        a1 += (ip_[1] + off) * wp_[1];                                                          \
        a2 += (ip_[2] + off) * wp_[2];                                                          \
        a3 += (ip_[3] + off) * wp_[3];                                                          \
    } while (0)
#endif
                const int8_t *wc = filter_data + c;
                if (full3) {
                    const int8_t *ip = in_px + c;
                    const int8_t *wp = wc;
                    for (int32_t ky = 0; ky < 3; ++ky) {
                        MRT_DW_TAP(ip, wp);
                        MRT_DW_TAP(ip + c_n, wp + c_n);
                        MRT_DW_TAP(ip + 2 * c_n, wp + 2 * c_n);
                        ip += row;
                        wp += wrow;
                    }
                } else {
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int8_t *ip = in_px + ky * row + c;
                        const int8_t *wp = wc + ky * wrow;
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            MRT_DW_TAP(ip + kx * c_n, wp + kx * c_n);
                        }
                    }
                }
#undef MRT_DW_TAP
                out_stage4(output_data, a0, a1, a2, a3, qm, qs, c, oo, lo, hi);
                output_data += 4;
            }
            for (; c < c_n; ++c) {
                int32_t acc = bias_data ? bias_data[c] : 0;
                for (int32_t ky = ky0; ky < ky1; ++ky) {
                    const int8_t *ip = in_px + ky * row + c;
                    const int8_t *wp = filter_data + ky * wrow + c;
                    for (int32_t kx = kx0; kx < kx1; ++kx) {
                        acc += (ip[kx * c_n] + off) * wp[kx * c_n];
                    }
                }
                *output_data++ = mrt_out_stage(acc, qm[c], qs[c], oo, lo, hi);
            }
        }
    }
}

arm_cmsis_nn_status arm_depthwise_conv_3x3_s8(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)ctx;
    (void)bias_dims;
    if (input_dims->c != output_dims->c || filter_dims->w != 3 || filter_dims->h != 3 ||
        dw_conv_params->padding.w > 1 || dw_conv_params->padding.h > 1) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    dw_mult1(dw_conv_params, quant_params, input_dims, input_data, 3, 3, filter_data, bias_data, output_dims,
             output_data);
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_depthwise_conv_s8_opt(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)bias_dims;
    if (input_dims->c != output_dims->c || dw_conv_params->ch_mult != 1) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
#if MRT_DSP
    if (ctx == 0 || ctx->buf == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;   /* CMSIS-NN contract: the DSP build asks for a buffer */
    }
#else
    (void)ctx;
#endif
    dw_mult1(dw_conv_params, quant_params, input_dims, input_data, filter_dims->h, filter_dims->w, filter_data,
             bias_data, output_dims, output_data);
    return ARM_CMSIS_NN_SUCCESS;
}
