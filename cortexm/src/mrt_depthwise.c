/* micro_rt: s8 depthwise convolution (CMSIS-NN compatible API, own implementation).
 *
 * Filter layout [1, KH, KW, C_OUT]; output channel ic * ch_mult + m reads input channel ic.
 * Taps outside the image are skipped (TFLM semantics). Output stage: per-channel
 * MultiplyByQuantizedMultiplier, + output offset, clamp.
 * - arm_depthwise_conv_s8: any ch_mult, dilation and batch count (plain C).
 * - arm_depthwise_conv_3x3_s8: ch_mult 1, 3x3, padding <= 1: unrolled taps, no buffer.
 * - arm_depthwise_conv_s8_opt: ch_mult 1. With DSP the window of every output pixel is first
 *   copied (q15, offset added, 0 outside) into the scratch buffer, then channels are
 *   accumulated two at a time with SMLABB/SMLATT on packed halfword pairs.
 */
#include "arm_nnfunctions.h"
#include "mrt_math.h"

static inline int8_t dw_out(int32_t acc, const cmsis_nn_per_channel_quant_params *qp, int32_t ch,
                            const cmsis_nn_dw_conv_params *p)
{
    acc = mrt_requantize(acc, qp->multiplier[ch], qp->shift[ch]) + p->output_offset;
    return (int8_t)mrt_clamp(acc, p->activation.min, p->activation.max);
}

int32_t arm_depthwise_conv_s8_opt_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims)
{
#if MRT_DSP
    return input_dims->c * filter_dims->w * filter_dims->h * (int32_t)sizeof(int16_t);
#else
    (void)input_dims;
    (void)filter_dims;
    return 0;
#endif
}

static int dw_is_3x3(const cmsis_nn_dw_conv_params *p, const cmsis_nn_dims *f)
{
    return f->w == 3 && f->h == 3 && p->padding.h <= 1 && p->padding.w <= 1;
}

int32_t arm_depthwise_conv_wrapper_s8_get_buffer_size(const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims)
{
    if (input_dims->c == output_dims->c && input_dims->n == 1 && dw_conv_params->dilation.w == 1 &&
        dw_conv_params->dilation.h == 1) {
        if (dw_is_3x3(dw_conv_params, filter_dims)) {
            return 0;
        }
        return arm_depthwise_conv_s8_opt_get_buffer_size(input_dims, filter_dims);
    }
    return 0;
}

arm_cmsis_nn_status arm_depthwise_conv_wrapper_s8(MRT_DW_ARGS)
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

arm_cmsis_nn_status arm_depthwise_conv_s8(MRT_DW_ARGS)
{
    (void)ctx;
    (void)bias_dims;
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t k_h = filter_dims->h, k_w = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w, out_c = output_dims->c;
    const int32_t mult = dw_conv_params->ch_mult;
    const int32_t off = dw_conv_params->input_offset;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *in_b = input_data + b * in_h * in_w * in_c;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t base_y = oy * dw_conv_params->stride.h - dw_conv_params->padding.h;
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t base_x = ox * dw_conv_params->stride.w - dw_conv_params->padding.w;
                for (int32_t ic = 0; ic < in_c; ++ic) {
                    for (int32_t m = 0; m < mult; ++m) {
                        const int32_t oc = ic * mult + m;
                        int32_t acc = bias_data ? bias_data[oc] : 0;
                        for (int32_t ky = 0; ky < k_h; ++ky) {
                            const int32_t iy = base_y + ky * dw_conv_params->dilation.h;
                            if (iy < 0 || iy >= in_h) {
                                continue;
                            }
                            for (int32_t kx = 0; kx < k_w; ++kx) {
                                const int32_t ix = base_x + kx * dw_conv_params->dilation.w;
                                if (ix < 0 || ix >= in_w) {
                                    continue;
                                }
                                acc += (in_b[(iy * in_w + ix) * in_c + ic] + off) *
                                       filter_data[(ky * k_w + kx) * out_c + oc];
                            }
                        }
                        *output_data++ = dw_out(acc, quant_params, oc, dw_conv_params);
                    }
                }
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_depthwise_conv_3x3_s8(MRT_DW_ARGS)
{
    (void)ctx;
    (void)bias_dims;
    const int32_t in_h = input_dims->h, in_w = input_dims->w, c_n = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int32_t off = dw_conv_params->input_offset;
    if (c_n != output_dims->c || filter_dims->w != 3 || filter_dims->h != 3 || dw_conv_params->padding.w > 1 ||
        dw_conv_params->padding.h > 1) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    for (int32_t oy = 0; oy < out_h; ++oy) {
        const int32_t base_y = oy * dw_conv_params->stride.h - dw_conv_params->padding.h;
        const int32_t ky0 = base_y < 0 ? -base_y : 0;
        const int32_t ky1 = MRT_MIN(3, in_h - base_y);
        for (int32_t ox = 0; ox < out_w; ++ox) {
            const int32_t base_x = ox * dw_conv_params->stride.w - dw_conv_params->padding.w;
            const int32_t kx0 = base_x < 0 ? -base_x : 0;
            const int32_t kx1 = MRT_MIN(3, in_w - base_x);
            const int8_t *in_px = input_data + (base_y * in_w + base_x) * c_n;
            for (int32_t c = 0; c < c_n; ++c) {
                int32_t acc = bias_data ? bias_data[c] : 0;
                if (kx0 == 0 && kx1 == 3) {
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        const int8_t *ip = in_px + ky * in_w * c_n + c;
                        const int8_t *wp = filter_data + ky * 3 * c_n + c;
                        acc += (ip[0] + off) * wp[0];
                        acc += (ip[c_n] + off) * wp[c_n];
                        acc += (ip[2 * c_n] + off) * wp[2 * c_n];
                    }
                } else {
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            acc += (in_px[(ky * in_w + kx) * c_n + c] + off) * filter_data[(ky * 3 + kx) * c_n + c];
                        }
                    }
                }
                *output_data++ = dw_out(acc, quant_params, c, dw_conv_params);
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_depthwise_conv_s8_opt(MRT_DW_ARGS)
{
    (void)bias_dims;
    const int32_t in_h = input_dims->h, in_w = input_dims->w, c_n = input_dims->c;
    const int32_t k_h = filter_dims->h, k_w = filter_dims->w;
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int32_t off = dw_conv_params->input_offset;
    if (c_n != output_dims->c || dw_conv_params->ch_mult != 1) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
#if MRT_DSP
    if (ctx == 0 || ctx->buf == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    int16_t *col = (int16_t *)ctx->buf;
    const int32_t taps = k_h * k_w;
    for (int32_t oy = 0; oy < out_h; ++oy) {
        const int32_t base_y = oy * dw_conv_params->stride.h - dw_conv_params->padding.h;
        for (int32_t ox = 0; ox < out_w; ++ox) {
            const int32_t base_x = ox * dw_conv_params->stride.w - dw_conv_params->padding.w;
            int16_t *dst = col;
            for (int32_t ky = 0; ky < k_h; ++ky) {
                const int32_t iy = base_y + ky;
                for (int32_t kx = 0; kx < k_w; ++kx) {
                    const int32_t ix = base_x + kx;
                    if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
                        for (int32_t c = 0; c < c_n; ++c) {
                            *dst++ = 0;
                        }
                    } else {
                        const int8_t *src = input_data + (iy * in_w + ix) * c_n;
                        int32_t c = 0;
                        const uint32_t off2 = ((uint32_t)off & 0xFFFFu) | ((uint32_t)off << 16);
                        for (; c + 4 <= c_n; c += 4) {
                            /* [x0+o x2+o], [x1+o x3+o] -> stored in channel order */
                            const uint32_t xv = (uint32_t)mrt_read_s8x4(src + c);
                            const uint32_t a = __sxtab16(off2, xv);
                            const uint32_t bq = __sxtab16(off2, mrt_ror(xv, 8));
                            mrt_write_s16x2(dst, (int32_t)((a & 0xFFFFu) | (bq << 16)));
                            mrt_write_s16x2(dst + 2, (int32_t)((bq & 0xFFFF0000u) | (a >> 16)));
                            dst += 4;
                        }
                        for (; c < c_n; ++c) {
                            *dst++ = (int16_t)(src[c] + off);
                        }
                    }
                }
            }
            int32_t c = 0;
            for (; c + 2 <= c_n; c += 2) {
                int32_t a0 = bias_data ? bias_data[c] : 0;
                int32_t a1 = bias_data ? bias_data[c + 1] : 0;
                const int16_t *cp = col + c;
                const int8_t *wp = filter_data + c;
                for (int32_t t = 0; t < taps; ++t) {
                    const int32_t xv = mrt_read_s16x2(cp);
                    const int32_t wv = (int32_t)(((uint32_t)(uint16_t)wp[0]) | ((uint32_t)(uint16_t)wp[1] << 16));
                    a0 = __smlabb(xv, wv, a0);
                    a1 = __smlatt(xv, wv, a1);
                    cp += c_n;
                    wp += c_n;
                }
                *output_data++ = dw_out(a0, quant_params, c, dw_conv_params);
                *output_data++ = dw_out(a1, quant_params, c + 1, dw_conv_params);
            }
            if (c < c_n) {
                int32_t a0 = bias_data ? bias_data[c] : 0;
                for (int32_t t = 0; t < taps; ++t) {
                    a0 += col[t * c_n + c] * filter_data[t * c_n + c];
                }
                *output_data++ = dw_out(a0, quant_params, c, dw_conv_params);
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
#else
    (void)ctx;
    for (int32_t oy = 0; oy < out_h; ++oy) {
        const int32_t base_y = oy * dw_conv_params->stride.h - dw_conv_params->padding.h;
        const int32_t ky0 = base_y < 0 ? -base_y : 0;
        const int32_t ky1 = MRT_MIN(k_h, in_h - base_y);
        for (int32_t ox = 0; ox < out_w; ++ox) {
            const int32_t base_x = ox * dw_conv_params->stride.w - dw_conv_params->padding.w;
            const int32_t kx0 = base_x < 0 ? -base_x : 0;
            const int32_t kx1 = MRT_MIN(k_w, in_w - base_x);
            for (int32_t c = 0; c < c_n; ++c) {
                int32_t acc = bias_data ? bias_data[c] : 0;
                for (int32_t ky = ky0; ky < ky1; ++ky) {
                    const int8_t *ip = input_data + ((base_y + ky) * in_w + base_x) * c_n + c;
                    const int8_t *wp = filter_data + ky * k_w * c_n + c;
                    for (int32_t kx = kx0; kx < kx1; ++kx) {
                        acc += (ip[kx * c_n] + off) * wp[kx * c_n];
                    }
                }
                *output_data++ = dw_out(acc, quant_params, c, dw_conv_params);
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
#endif
}
