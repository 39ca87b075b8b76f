/* micro_rt: s8 convolution (CMSIS-NN compatible API, own implementation).
 *
 * arm_convolve_s8: partial im2col into a q15 buffer (input + input_offset, 0 for padded
 * taps, i.e. TFLM skips them), then a matrix multiply over all output channels.
 * With the DSP extension two columns are built at a time and each group of 4 taps is stored
 * as [x0 x2 x1 x3] so that SXTB16(w) / SXTB16(ROR(w, 8)) of 4 packed weights line up with
 * the two halfword pairs; SMLAD then does 2 MACs per instruction (2 columns x 2 channels).
 * Without DSP (Cortex-M0+) one column is built and dotted in plain C.
 * The output stage is TFLM's per-channel MultiplyByQuantizedMultiplier (mrt_requantize).
 */
#include "arm_nnfunctions.h"
#include "mrt_support.h"

#define MRT_SIZES_CONV_S8        /* this file's part of mrt_buffer_sizes.h */
#include "mrt_buffer_sizes.h"

arm_cmsis_nn_status arm_convolve_wrapper_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    if (is_1x1(conv_params, input_dims, filter_dims)) {
        if (is_1x1_fast(conv_params)) {
            return arm_convolve_1x1_s8_fast(ctx, conv_params, quant_params, input_dims, input_data, filter_dims,
                                            filter_data, bias_dims, bias_data, output_dims, output_data);
        }
        return arm_convolve_1x1_s8(ctx, conv_params, quant_params, input_dims, input_data, filter_dims,
                                   filter_data, bias_dims, bias_data, output_dims, output_data);
    }
    if (is_1_x_n(conv_params, input_dims, filter_dims, output_dims)) {
        return arm_convolve_1_x_n_s8(ctx, conv_params, quant_params, input_dims, input_data, filter_dims,
                                     filter_data, bias_dims, bias_data, output_dims, output_data);
    }
    return arm_convolve_s8(ctx, conv_params, quant_params, input_dims, input_data, filter_dims, filter_data,
                           bias_dims, bias_data, output_dims, output_data);
}

arm_cmsis_nn_status arm_convolve_1_x_n_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    /* Without MVE the 1xN case is the general kernel. */
    return arm_convolve_s8(ctx, conv_params, quant_params, input_dims, input_data, filter_dims, filter_data,
                           bias_dims, bias_data, output_dims, output_data);
}

arm_cmsis_nn_status arm_convolve_1x1_s8_fast(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)ctx;
    (void)bias_dims;
    if (conv_params->padding.w != 0 || conv_params->padding.h != 0 || conv_params->stride.w != 1 ||
        conv_params->stride.h != 1) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const int32_t pixels = input_dims->n * input_dims->h * input_dims->w;
    const int32_t k_len = input_dims->c;
    mrt_gemm_s8(input_data, pixels, k_len, k_len, conv_params->input_offset, filter_data, bias_data, output_dims->c,
                quant_params->multiplier, quant_params->shift, 1, conv_params->output_offset,
                conv_params->activation.min, conv_params->activation.max, output_data);
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_convolve_1x1_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)ctx;
    (void)bias_dims;
    (void)filter_dims;
    if (conv_params->padding.w != 0 || conv_params->padding.h != 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const int32_t k_len = input_dims->c;
    const int32_t out_ch = output_dims->c;
    const int32_t sx = conv_params->stride.w;
    const int32_t sy = conv_params->stride.h;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *in_b = input_data + b * input_dims->h * input_dims->w * k_len;
        for (int32_t oy = 0; oy < output_dims->h; ++oy) {
            const int8_t *row = in_b + (oy * sy) * input_dims->w * k_len;
            mrt_gemm_s8(row, output_dims->w, sx * k_len, k_len, conv_params->input_offset, filter_data, bias_data,
                        out_ch, quant_params->multiplier, quant_params->shift, 1, conv_params->output_offset,
                        conv_params->activation.min, conv_params->activation.max, output_data);
            output_data += output_dims->w * out_ch;
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

/* Build one im2col column (q15, offset added, 0 outside the image) for output (oy, ox) of
 * group g. With DSP, each complete group of 4 taps is stored reordered as [0 2 1 3]. */
static void im2col_q15(const int8_t *in_b, const cmsis_nn_dims *in, const cmsis_nn_dims *f,
                       const cmsis_nn_conv_params *p, int32_t g, int32_t oy, int32_t ox, int16_t *col)
{
    const int32_t cg = f->c;
    const int32_t off = p->input_offset;
    const int32_t base_y = oy * p->stride.h - p->padding.h;
    const int32_t base_x = ox * p->stride.w - p->padding.w;
    int16_t *dst = col;
    for (int32_t ky = 0; ky < f->h; ++ky) {
        const int32_t iy = base_y + ky * p->dilation.h;
        for (int32_t kx = 0; kx < f->w; ++kx) {
            const int32_t ix = base_x + kx * p->dilation.w;
            if (iy < 0 || iy >= in->h || ix < 0 || ix >= in->w) {
                for (int32_t c = 0; c < cg; ++c) {
                    *dst++ = 0;
                }
            } else {
                const int8_t *src = in_b + (iy * in->w + ix) * in->c + g * cg;
                MRT_Q15_FROM_S8(dst, src, cg, off);
            }
        }
    }
    MRT_Q15_REORDER_COLUMN(col, cg, f->h * f->w * cg);
}

#if MRT_DSP
/* Two columns x all output channels of one group. */
static void matmul_2cols(const int8_t *w, int32_t k_len, const int16_t *col0, const int16_t *col1,
                         const int32_t *bias, const cmsis_nn_per_channel_quant_params *qp,
                         const cmsis_nn_conv_params *p, int32_t c_begin, int32_t c_count, int8_t *out0,
                         int8_t *out1)
{
    const int32_t oo = p->output_offset, lo = p->activation.min, hi = p->activation.max;
    int32_t c = 0;
    for (; c + 2 <= c_count; c += 2) {
        const int32_t ch = c_begin + c;
        const int8_t *wa = w + ch * k_len;
        const int8_t *wb = wa + k_len;
        int32_t a00 = bias ? bias[ch] : 0, a01 = a00;        /* channel ch: col0, col1 */
        int32_t a10 = bias ? bias[ch + 1] : 0, a11 = a10;    /* channel ch+1 */
        int32_t k = 0;
        for (; k + 4 <= k_len; k += 4) {
            const uint32_t w0 = (uint32_t)mrt_read_s8x4(wa + k);
            const uint32_t w1 = (uint32_t)mrt_read_s8x4(wb + k);
            const uint32_t w0a = __sxtb16(w0), w0b = mrt_sxtb16_r8(w0);
            const uint32_t w1a = __sxtb16(w1), w1b = mrt_sxtb16_r8(w1);
            const uint32_t c0a = (uint32_t)mrt_read_s16x2(col0 + k), c0b = (uint32_t)mrt_read_s16x2(col0 + k + 2);
            const uint32_t c1a = (uint32_t)mrt_read_s16x2(col1 + k), c1b = (uint32_t)mrt_read_s16x2(col1 + k + 2);
            a00 = __smlad(w0a, c0a, a00);
            a00 = __smlad(w0b, c0b, a00);
            a01 = __smlad(w0a, c1a, a01);
            a01 = __smlad(w0b, c1b, a01);
            a10 = __smlad(w1a, c0a, a10);
            a10 = __smlad(w1b, c0b, a10);
            a11 = __smlad(w1a, c1a, a11);
            a11 = __smlad(w1b, c1b, a11);
        }
        for (; k < k_len; ++k) {
            a00 += wa[k] * col0[k];
            a01 += wa[k] * col1[k];
            a10 += wb[k] * col0[k];
            a11 += wb[k] * col1[k];
        }
        out0[ch] = mrt_out_stage(a00, qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
        out1[ch] = mrt_out_stage(a01, qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
        out0[ch + 1] = mrt_out_stage(a10, qp->multiplier[ch + 1], qp->shift[ch + 1], oo, lo, hi);
        out1[ch + 1] = mrt_out_stage(a11, qp->multiplier[ch + 1], qp->shift[ch + 1], oo, lo, hi);
    }
    if (c < c_count) {
        const int32_t ch = c_begin + c;
        const int8_t *wa = w + ch * k_len;
        int32_t a00 = bias ? bias[ch] : 0, a01 = a00;
        int32_t k = 0;
        for (; k + 4 <= k_len; k += 4) {
            const uint32_t w0 = (uint32_t)mrt_read_s8x4(wa + k);
            const uint32_t w0a = __sxtb16(w0), w0b = mrt_sxtb16_r8(w0);
            a00 = __smlad(w0a, (uint32_t)mrt_read_s16x2(col0 + k), a00);
            a00 = __smlad(w0b, (uint32_t)mrt_read_s16x2(col0 + k + 2), a00);
            a01 = __smlad(w0a, (uint32_t)mrt_read_s16x2(col1 + k), a01);
            a01 = __smlad(w0b, (uint32_t)mrt_read_s16x2(col1 + k + 2), a01);
        }
        for (; k < k_len; ++k) {
            a00 += wa[k] * col0[k];
            a01 += wa[k] * col1[k];
        }
        out0[ch] = mrt_out_stage(a00, qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
        out1[ch] = mrt_out_stage(a01, qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
    }
}
#endif

/* One column x all output channels of one group (also the DSP tail column). */
static void matmul_1col(const int8_t *w, int32_t k_len, const int16_t *col, const int32_t *bias,
                        const cmsis_nn_per_channel_quant_params *qp, const cmsis_nn_conv_params *p,
                        int32_t c_begin, int32_t c_count, int8_t *out)
{
    const int32_t oo = p->output_offset, lo = p->activation.min, hi = p->activation.max;
    for (int32_t c = 0; c < c_count; ++c) {
        const int32_t ch = c_begin + c;
        const int8_t *wa = w + ch * k_len;
        int32_t acc = bias ? bias[ch] : 0;
        int32_t k = 0;
#if MRT_DSP
        for (; k + 4 <= k_len; k += 4) {
            const uint32_t w0 = (uint32_t)mrt_read_s8x4(wa + k);
            acc = __smlad(__sxtb16(w0), (uint32_t)mrt_read_s16x2(col + k), acc);
            acc = __smlad(mrt_sxtb16_r8(w0), (uint32_t)mrt_read_s16x2(col + k + 2), acc);
        }
#endif
        for (; k < k_len; ++k) {
            acc += wa[k] * col[k];
        }
        out[ch] = mrt_out_stage(acc, qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
    }
}

arm_cmsis_nn_status arm_convolve_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)bias_dims;
    if (ctx == 0 || ctx->buf == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    int16_t *buf = (int16_t *)ctx->buf;
    const int32_t cg = filter_dims->c;
    if (cg <= 0 || input_dims->c % cg != 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const int32_t groups = input_dims->c / cg;
    const int32_t out_ch = output_dims->c;
    const int32_t ocg = out_ch / groups;
    const int32_t k_len = filter_dims->h * filter_dims->w * cg;
    const int32_t rem = k_len % 4;
    const int32_t k_aligned = rem ? k_len + 4 - rem : k_len;
    const int32_t pixels = output_dims->h * output_dims->w;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int8_t *in_b = input_data + b * input_dims->h * input_dims->w * input_dims->c;
        int8_t *out_b = output_data + b * pixels * out_ch;
        for (int32_t g = 0; g < groups; ++g) {
            int32_t pix = 0;
#if MRT_DSP
            int16_t *col1 = buf + k_aligned;
            for (; pix + 2 <= pixels; pix += 2) {
                im2col_q15(in_b, input_dims, filter_dims, conv_params, g, pix / output_dims->w,
                           pix % output_dims->w, buf);
                im2col_q15(in_b, input_dims, filter_dims, conv_params, g, (pix + 1) / output_dims->w,
                           (pix + 1) % output_dims->w, col1);
                matmul_2cols(filter_data, k_len, buf, col1, bias_data, quant_params, conv_params, g * ocg, ocg,
                             out_b + pix * out_ch, out_b + (pix + 1) * out_ch);
            }
#else
            (void)k_aligned;
#endif
            for (; pix < pixels; ++pix) {
                im2col_q15(in_b, input_dims, filter_dims, conv_params, g, pix / output_dims->w,
                           pix % output_dims->w, buf);
                matmul_1col(filter_data, k_len, buf, bias_data, quant_params, conv_params, g * ocg, ocg,
                            out_b + pix * out_ch);
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}
