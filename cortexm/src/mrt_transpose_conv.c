/* micro_rt: TRANSPOSE_CONV (own implementation; numpy twin: kernels/transpose_conv.py).
 *
 * int8: arm_transpose_conv_wrapper_s8, CMSIS-NN's two algorithms as TFLM's CMSIS-NN glue runs
 * them.
 *  - stride <= 2 and more than 16 input channels: the "reverse conv". The filter is reversed in
 *    y and x into the second scratch buffer, then a stride-1 convolution runs over the input
 *    upscaled by the stride (zeros between the pixels, never stored) with padding
 *    filter - 1 - pad: two im2col columns of q15 values (input + offset; 0 for padding and the
 *    upscale's holes), each 4 taps stored [x0 x2 x1 x3] so that SXTB16 of packed weights lines
 *    up with them, then 2 columns x 2 output channels by SMLAD (one column on the Cortex-M0+).
 *  - otherwise arm_transpose_conv_s8: one input row at a time is scattered into a rolling
 *    int32 buffer of max(KH, stride_h) output rows, initialised with the bias; an output row is
 *    requantized and written as soon as no later input row can reach it. The row kernel takes
 *    4 input pixels at a time and per filter tap adds their dot products over the input
 *    channels: SXTAB16 (input + offset) and SMLAD on the DSP cores; on the M0+ raw products plus
 *    offset * (sum of the weights), as CMSIS-NN's scalar path.
 *   Where CMSIS-NN 4ab83cc3 (the version TFLM pins) is wrong, this code is not: the number of
 *   rows flushed after each input row is the rows that became final (CMSIS-NN's later fix for
 *   pad % stride != 0), rows and columns outside what the input reaches hold the bias alone,
 *   and rows past the output are dropped (a filter smaller than the stride).
 * int16 (16x8) and float32: TFLM's reference kernel, which a CMSIS-NN build also runs for them:
 * the whole output's accumulators (int64 in the scratch buffer / float32 in the output) filled
 * in the reference's scatter order, then the bias, the output stage and the clamp.
 */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

#define MRT_SIZES_TRANSPOSE_CONV_S8        /* this file's part of mrt_buffer_sizes.h */
#include "mrt_buffer_sizes.h"

/* ------------------------------------------------------------------ rolling-buffer algorithm */

typedef struct {
    int32_t in_x, in_ch, out_x, out_y, out_ch, f_x, f_y, s_x, s_y, pad_x, pad_y;
    int32_t buf_x_elements, buf_x, buf_size;
    int32_t in_off, out_off, lo, hi;
    const int32_t *mult, *shift, *bias;
} tconv_rows;

/* A buffer row back to its start: the bias in every column, or zeros. */
static void reset_row(int32_t *row, const tconv_rows *g)
{
    if (g->bias) {
        for (int32_t x = 0; x < g->buf_x_elements; ++x) {
            __builtin_memcpy(row + x * g->out_ch, g->bias, (uint32_t)g->out_ch * sizeof(int32_t));
        }
    } else {
        __builtin_memset(row, 0, (uint32_t)g->buf_x * sizeof(int32_t));
    }
}

/* Requantize a finished buffer row into output row `out` (NULL: the row lies past the
 * output, only reset), then reset it. Columns past the buffer hold the bias alone. */
static void flush_row(int32_t *row, int8_t *out, const tconv_rows *g)
{
    if (out) {
        const int32_t *src = row + g->pad_x * g->out_ch;
        for (int32_t x = 0; x < g->out_x; ++x) {
            const int32_t inside = g->pad_x + x < g->buf_x_elements;
            for (int32_t z = 0; z < g->out_ch; ++z) {
                const int32_t acc = inside ? *src++ : (g->bias ? g->bias[z] : 0);
                *out++ = mrt_out_stage(acc, g->mult[z], g->shift[z], g->out_off, g->lo, g->hi);
            }
        }
    }
    reset_row(row, g);
}

/* n (4, 2 or 1) input pixels of one row times filter rows [r0, r1) of every output channel,
 * added into the rolling buffer starting at element `index` (the row of filter row r0). */
MRT_INLINE void scatter_pixels(const int8_t *lhs, const int8_t *filter, int32_t *out_start, int32_t index,
                               int32_t r0, int32_t r1, const int32_t n, const tconv_rows *g)
{
    const int32_t ic = g->in_ch;
    const int32_t pixel_step = g->s_x * g->out_ch;
#if MRT_DSP
    const uint32_t off2 = mrt_dup16(g->in_off);
#endif
    for (int32_t oc = 0; oc < g->out_ch; ++oc) {
        const int8_t *rhs = filter + (oc * g->f_y + r0) * g->f_x * ic;
        int32_t idx = index;
        for (int32_t r = r0; r < r1; ++r) {
            int32_t *o = out_start + idx + oc;
            for (int32_t kx = 0; kx < g->f_x; ++kx) {
                int32_t acc[4] = {0, 0, 0, 0};
                int32_t c = 0;
#if MRT_DSP
                for (; c + 4 <= ic; c += 4) {
                    const uint32_t w = (uint32_t)mrt_read_s8x4(rhs + c);
                    const uint32_t wa = __sxtb16(w), wb = mrt_sxtb16_r8(w);
                    for (int32_t p = 0; p < n; ++p) {
                        const uint32_t x = (uint32_t)mrt_read_s8x4(lhs + p * ic + c);
                        acc[p] = __smlad(__sxtab16(off2, x), wa, acc[p]);
                        acc[p] = __smlad(mrt_sxtab16_r8(off2, x), wb, acc[p]);
                    }
                }
                for (; c < ic; ++c) {
                    const int32_t w = rhs[c];
                    for (int32_t p = 0; p < n; ++p) {
                        acc[p] += (lhs[p * ic + c] + g->in_off) * w;
                    }
                }
#else
                int32_t rhs_sum = 0;
                for (; c < ic; ++c) {
                    const int32_t w = rhs[c];
                    for (int32_t p = 0; p < n; ++p) {
                        acc[p] += lhs[p * ic + c] * w;
                    }
                    rhs_sum += w;
                }
                for (int32_t p = 0; p < n; ++p) {
                    acc[p] += rhs_sum * g->in_off;
                }
#endif
                for (int32_t p = 0; p < n; ++p) {
                    o[p * pixel_step] += acc[p];
                }
                rhs += ic;
                o += g->out_ch;
            }
            idx = (idx + g->buf_x) % g->buf_size;
        }
    }
}

/* One input row's filter rows [r0, r1) into the rolling buffer (arm_nn_transpose_conv_row_s8_s32). */
static void scatter_row(const int8_t *lhs, const int8_t *filter, int32_t *buf, int32_t index, int32_t r0,
                        int32_t r1, const tconv_rows *g)
{
    int32_t *out_start = buf;
    int32_t x = 0;
    for (; x + 4 <= g->in_x; x += 4) {
        scatter_pixels(lhs, filter, out_start, index, r0, r1, 4, g);
        out_start += 4 * g->s_x * g->out_ch;
        lhs += 4 * g->in_ch;
    }
    if ((g->in_x - x) & 2) {
        scatter_pixels(lhs, filter, out_start, index, r0, r1, 2, g);
        out_start += 2 * g->s_x * g->out_ch;
        lhs += 2 * g->in_ch;
    }
    if ((g->in_x - x) & 1) {
        scatter_pixels(lhs, filter, out_start, index, r0, r1, 1, g);
    }
}

arm_cmsis_nn_status arm_transpose_conv_s8(const cmsis_nn_context *ctx, const cmsis_nn_context *output_ctx,
    const cmsis_nn_transpose_conv_params *transpose_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    (void)output_ctx;
    (void)bias_dims;
    if (ctx == 0 || ctx->buf == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const cmsis_nn_transpose_conv_params *p = transpose_conv_params;
    tconv_rows g;
    g.in_x = input_dims->w;
    g.in_ch = input_dims->c;
    g.out_x = output_dims->w;
    g.out_y = output_dims->h;
    g.out_ch = output_dims->c;
    g.f_x = filter_dims->w;
    g.f_y = filter_dims->h;
    g.s_x = p->stride.w;
    g.s_y = p->stride.h;
    g.pad_x = p->padding.w;
    g.pad_y = p->padding.h;
    g.buf_x_elements = (g.in_x - 1) * g.s_x + MRT_MAX(g.f_x, g.s_x);
    g.buf_x = g.buf_x_elements * g.out_ch;
    const int32_t buf_y = MRT_MAX(g.f_y, g.s_y);
    g.buf_size = buf_y * g.buf_x;
    g.in_off = p->input_offset;
    g.out_off = p->output_offset;
    g.lo = p->activation.min;
    g.hi = p->activation.max;
    g.mult = quant_params->multiplier;
    g.shift = quant_params->shift;
    g.bias = bias_data;
    int32_t *buf = (int32_t *)ctx->buf;
    const int8_t *input = input_data;
    int8_t *output = output_data;
    const int32_t out_row = g.out_x * g.out_ch;

    for (int32_t batch = 0; batch < input_dims->n; ++batch) {
        for (int32_t y = 0; y < buf_y; ++y) {
            reset_row(buf + y * g.buf_x, &g);
        }
        int32_t buf_row = 0;      /* element index of the buffer row of output row `done` */
        int32_t done = 0;         /* output rows written (or dropped) */
        for (int32_t j = 0; j < input_dims->h; ++j) {
            const int32_t top = MRT_MAX(0, g.pad_y - j * g.s_y);
            const int32_t bottom = MRT_MAX(0, (j * g.s_y + g.f_y) - (g.pad_y + g.out_y) - 1);
            if (g.f_y - bottom > top) {
                scatter_row(input, filter_data, buf, buf_row, top, g.f_y - bottom, &g);
            }
            input += g.in_ch * g.in_x;
            /* The output rows no later input row reaches. */
            const int32_t final_rows = MRT_MAX(0, (j + 1) * g.s_y - g.pad_y) - MRT_MAX(0, j * g.s_y - g.pad_y);
            for (int32_t y = 0; y < final_rows; ++y) {
                flush_row(buf + buf_row, done < g.out_y ? output + done * out_row : 0, &g);
                ++done;
                buf_row = (buf_row + g.buf_x) % g.buf_size;
            }
        }
        for (; done < g.out_y; ++done) {
            flush_row(buf + buf_row, output + done * out_row, &g);
            buf_row = (buf_row + g.buf_x) % g.buf_size;
        }
        output += g.out_y * out_row;
    }
    return ARM_CMSIS_NN_SUCCESS;
}

/* ------------------------------------------------------------------------- reverse conv */

typedef struct {
    int32_t in_h, in_w, in_ch, up_y, up_x;     /* input, and the upscale (stride 1 or 2) per axis */
    int32_t f_h, f_w, pad_h, pad_w;            /* the stride-1 convolution's padding */
    int32_t in_off;
} upscaled_conv;

/* One q15 im2col column for output pixel (oy, ox) of the upscaled input. With DSP, each
 * complete group of 4 taps is stored [x0 x2 x1 x3]. */
static void im2col_upscaled(const int8_t *in_b, const upscaled_conv *u, int32_t oy, int32_t ox, int16_t *col)
{
    const int32_t ic = u->in_ch;
    int16_t *dst = col;
    for (int32_t ky = 0; ky < u->f_h; ++ky) {
        const int32_t uy = oy - u->pad_h + ky;
        const int32_t row_in = uy >= 0 && uy < u->in_h * u->up_y && uy % u->up_y == 0;
        for (int32_t kx = 0; kx < u->f_w; ++kx) {
            const int32_t ux = ox - u->pad_w + kx;
            if (!row_in || ux < 0 || ux >= u->in_w * u->up_x || ux % u->up_x != 0) {
                __builtin_memset(dst, 0, (uint32_t)ic * sizeof(int16_t));
                dst += ic;
                continue;
            }
            const int8_t *src = in_b + ((uy / u->up_y) * u->in_w + ux / u->up_x) * ic;
            MRT_Q15_FROM_S8(dst, src, ic, u->in_off);
        }
    }
    MRT_Q15_REORDER_COLUMN(col, ic, u->f_h * u->f_w * ic);
}

/* Output channel ch of one column: bias + sum_k w[k] * col[k]. */
MRT_INLINE int32_t dot_q15(const int8_t *w, const int16_t *col, int32_t k_len, int32_t acc)
{
    int32_t k = 0;
#if MRT_DSP
    for (; k + 4 <= k_len; k += 4) {
        const uint32_t wv = (uint32_t)mrt_read_s8x4(w + k);
        acc = __smlad(__sxtb16(wv), (uint32_t)mrt_read_s16x2(col + k), acc);
        acc = __smlad(mrt_sxtb16_r8(wv), (uint32_t)mrt_read_s16x2(col + k + 2), acc);
    }
#endif
    for (; k < k_len; ++k) {
        acc += w[k] * col[k];
    }
    return acc;
}

#if MRT_DSP
/* Two columns x two output channels: 16 MACs per 4 taps (8 SMLAD). */
static void dot_q15_2x2(const int8_t *wa, const int8_t *wb, const int16_t *c0, const int16_t *c1, int32_t k_len,
                        int32_t *acc)
{
    int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
    int32_t k = 0;
    for (; k + 4 <= k_len; k += 4) {
        const uint32_t w0 = (uint32_t)mrt_read_s8x4(wa + k);
        const uint32_t w1 = (uint32_t)mrt_read_s8x4(wb + k);
        const uint32_t w0a = __sxtb16(w0), w0b = mrt_sxtb16_r8(w0);
        const uint32_t w1a = __sxtb16(w1), w1b = mrt_sxtb16_r8(w1);
        const uint32_t c0a = (uint32_t)mrt_read_s16x2(c0 + k), c0b = (uint32_t)mrt_read_s16x2(c0 + k + 2);
        const uint32_t c1a = (uint32_t)mrt_read_s16x2(c1 + k), c1b = (uint32_t)mrt_read_s16x2(c1 + k + 2);
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
        a00 += wa[k] * c0[k];
        a01 += wa[k] * c1[k];
        a10 += wb[k] * c0[k];
        a11 += wb[k] * c1[k];
    }
    acc[0] = a00;
    acc[1] = a01;
    acc[2] = a10;
    acc[3] = a11;
}
#endif

static void reverse_conv(int16_t *cols, const upscaled_conv *u, const cmsis_nn_transpose_conv_params *p,
                         const cmsis_nn_per_channel_quant_params *qp, const int8_t *input, const int8_t *w,
                         const int32_t *bias, const cmsis_nn_dims *output_dims, int32_t batches, int8_t *output)
{
    const int32_t oc = output_dims->c, ow = output_dims->w;
    const int32_t pixels = output_dims->h * ow;
    const int32_t k_len = u->f_h * u->f_w * u->in_ch;
    const int32_t oo = p->output_offset, lo = p->activation.min, hi = p->activation.max;
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *in_b = input + b * u->in_h * u->in_w * u->in_ch;
        int8_t *out_b = output + b * pixels * oc;
        int32_t pix = 0;
#if MRT_DSP
        int16_t *col1 = cols + aligned4(k_len);
        for (; pix + 2 <= pixels; pix += 2) {
            im2col_upscaled(in_b, u, pix / ow, pix % ow, cols);
            im2col_upscaled(in_b, u, (pix + 1) / ow, (pix + 1) % ow, col1);
            int8_t *o0 = out_b + pix * oc, *o1 = o0 + oc;
            int32_t ch = 0;
            for (; ch + 2 <= oc; ch += 2) {
                int32_t acc[4];
                acc[0] = acc[1] = bias ? bias[ch] : 0;
                acc[2] = acc[3] = bias ? bias[ch + 1] : 0;
                dot_q15_2x2(w + ch * k_len, w + (ch + 1) * k_len, cols, col1, k_len, acc);
                o0[ch] = mrt_out_stage(acc[0], qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
                o1[ch] = mrt_out_stage(acc[1], qp->multiplier[ch], qp->shift[ch], oo, lo, hi);
                o0[ch + 1] = mrt_out_stage(acc[2], qp->multiplier[ch + 1], qp->shift[ch + 1], oo, lo, hi);
                o1[ch + 1] = mrt_out_stage(acc[3], qp->multiplier[ch + 1], qp->shift[ch + 1], oo, lo, hi);
            }
            for (; ch < oc; ++ch) {
                const int32_t b0 = bias ? bias[ch] : 0;
                o0[ch] = mrt_out_stage(dot_q15(w + ch * k_len, cols, k_len, b0), qp->multiplier[ch], qp->shift[ch],
                                       oo, lo, hi);
                o1[ch] = mrt_out_stage(dot_q15(w + ch * k_len, col1, k_len, b0), qp->multiplier[ch], qp->shift[ch],
                                       oo, lo, hi);
            }
        }
#endif
        for (; pix < pixels; ++pix) {
            im2col_upscaled(in_b, u, pix / ow, pix % ow, cols);
            int8_t *o = out_b + pix * oc;
            for (int32_t ch = 0; ch < oc; ++ch) {
                o[ch] = mrt_out_stage(dot_q15(w + ch * k_len, cols, k_len, bias ? bias[ch] : 0), qp->multiplier[ch],
                                      qp->shift[ch], oo, lo, hi);
            }
        }
    }
}

arm_cmsis_nn_status arm_transpose_conv_wrapper_s8(const cmsis_nn_context *ctx, const cmsis_nn_context *reverse_conv_ctx,
    const cmsis_nn_transpose_conv_params *transpose_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    if (ctx == 0 || ctx->buf == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    const cmsis_nn_transpose_conv_params *p = transpose_conv_params;
    if (!reverse_conv_used(p, input_dims)) {
        return arm_transpose_conv_s8(ctx, reverse_conv_ctx, p, quant_params, input_dims, input_data, filter_dims,
                                     filter_data, bias_dims, bias_data, output_dims, output_data);
    }
    if (reverse_conv_ctx == 0 || reverse_conv_ctx->buf == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    /* The filter reversed in y and x, per output channel. */
    const int32_t ic = input_dims->c, fh = filter_dims->h, fw = filter_dims->w;
    const int32_t filter_size = fh * fw * ic;
    int8_t *reversed = (int8_t *)reverse_conv_ctx->buf;
    const int8_t *in_ptr = filter_data;
    int8_t *out_ptr = reversed + filter_size;
    for (int32_t i = 0; i < output_dims->c; ++i) {
        for (int32_t k = 0; k < fh * fw; ++k) {
            out_ptr -= ic;
            __builtin_memcpy(out_ptr, in_ptr, (uint32_t)ic);
            in_ptr += ic;
        }
        out_ptr += 2 * filter_size;
    }
    const upscaled_conv u = {input_dims->h, input_dims->w, ic, p->stride.h, p->stride.w,
                             fh, fw, fh - 1 - p->padding.h, fw - 1 - p->padding.w, p->input_offset};
    reverse_conv((int16_t *)ctx->buf, &u, p, quant_params, input_data, reversed, bias_data, output_dims,
                 input_dims->n, output_data);
    return ARM_CMSIS_NN_SUCCESS;
}

/* ------------------------------------------------------------------ int16 and float32 */



int32_t mrt_transpose_conv_s16(const mrt_transpose_conv_s16_params *p)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t elements = g->n * g->oh * g->ow * g->oc;
    int64_t *acc = p->acc;
    __builtin_memset(acc, 0, (uint32_t)elements * sizeof(int64_t));
    const int64_t *bias = 0;
    if (p->bias && p->bias_size == 2) {
        /* TFLM widens an int16 bias into its second scratch buffer on every invoke. */
        for (int32_t i = 0; i < g->oc; ++i) {
            p->bias_wide[i] = ((const int16_t *)p->bias)[i];
        }
        bias = p->bias_wide;
    } else if (p->bias) {
        bias = (const int64_t *)p->bias;
    }
    MRT_TCONV_SCATTER(g, int16_t, int8_t, int64_t, int32_t, p->in, 0, p->filter, acc);
    int16_t *out = p->out;
    for (int32_t i = 0; i < elements; ++i) {
        const int32_t o = i % g->oc;
        const int64_t a = acc[i] + (bias ? bias[o] : 0);
        *out++ = (int16_t)mrt_clamp64(mrt_requantize_wide(a, p->mult[o], p->shift[o]), p->act_min, p->act_max);
    }
    return 0;
}

int32_t mrt_transpose_conv_f32(const mrt_transpose_conv_f32_params *p)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t elements = g->n * g->oh * g->ow * g->oc;
    float *out = p->out;
    for (int32_t i = 0; i < elements; ++i) {
        out[i] = 0.0f;
    }
    MRT_TCONV_SCATTER(g, float, float, float, float, p->in, -0.0f, p->filter, out);
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    for (int32_t i = 0; i < elements; ++i) {
        float acc = out[i];
        if (p->bias) {
            acc += p->bias[i % g->oc];
        }
        out[i] = mrt_act_clamp_f32(acc, lo, hi);
    }
    return 0;
}
