/* micro_rt: CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED 16x8 (int16 activations, int8
 * weights, int64 or int32 bias) with the algorithms and DSP instruction use of the CMSIS-NN
 * kernels TFLM's CMSIS-NN glue calls (own implementation; declared in arm_nnfunctions.h):
 *  - CONV_2D: arm_convolve_wrapper_s16 -> arm_convolve_s16: im2col of two output pixels into
 *    int16 columns, then 2 channels x 2 pixels per step: int8 weights widened four at a time
 *    (read_and_pad: SXTB16, PKHBT / PKHTB), 8 SMLAD per 4 taps (16 MACs) on the DSP cores,
 *    plain multiplies on the M0+. With an int64 bias the first 512 taps accumulate in int32,
 *    the rest in int64 (CMSIS-NN's MAX_COL_COUNT); an int32 bias accumulates in int32
 *    throughout (TFLM's int32-accumulator variant).
 *  - DEPTHWISE_CONV_2D: arm_depthwise_conv_s16, the generic kernel (int64 accumulator, one
 *    tap at a time): TFLM's glue calls it, not the wrapper's fast variant.
 *  - FULLY_CONNECTED: arm_fully_connected_s16 -> two weight rows per step, 4 SMLAD per 4
 *    inputs (first 512 inputs in int32, the rest in int64), one int64 row at a time on the M0+.
 * Output stage: the int64 sum is requantized with the 16-bit reduced multiplier and one
 * rounding (TFLM's int64 MultiplyByQuantizedMultiplier, CMSIS-NN's arm_nn_requantize_s64),
 * or, with an int32 bias, TFLM's int32 MultiplyByQuantizedMultiplier (double rounding).
 *
 * These kernels ignore input and output offsets (TFLM's CMSIS-NN glue requires int16 zero
 * points of 0) and groups; the glue (cortexm/ops/conv_s16.py) sends such layers, and the rare
 * ones whose sums could leave the int32 window or the requantization's int32 range, to
 * mrt_conv_s16 (the reference loop), so results are always bit-exact with the numpy twins.
 * Two CMSIS-NN details are not copied because they break that: its leftover-pixel path sums
 * every tap in int32 (we keep the 512-tap split), and its odd-channel path takes the tail
 * count from all taps instead of the int32 window (we use the window's). */
#include <stddef.h>

#include "arm_nnfunctions.h"
#include "mrt_math.h"

/* Taps summed in int32 before the int64 accumulator takes over (CMSIS-NN's MAX_COL_COUNT). */
#define MRT_S16_MAX_COL_COUNT 512

/* CMSIS-NN's REDUCE_MULTIPLIER: the Q31 multiplier rounded to Q15. */
MRT_INLINE int32_t reduce_multiplier(int32_t m)
{
    return m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
}

/* arm_nn_requantize_s64: (acc * reduced) / 2^(15 - shift), rounded half up. */
MRT_INLINE int32_t requantize_s64(int64_t acc, int32_t reduced, int32_t shift)
{
    const int64_t p = acc * reduced;
    const int32_t r = (int32_t)(p >> (14 - shift));
    return (r + 1) >> 1;
}

/* One output value of the int64 output stage: bias, requantize, clamp. */
MRT_INLINE int16_t out_s64(int64_t acc, const int64_t *bias, int32_t reduced, int32_t shift, int32_t lo, int32_t hi)
{
    if (bias) {
        acc += *bias;
    }
    return (int16_t)mrt_clamp(requantize_s64(acc, reduced, shift), lo, hi);
}

/* ... and of the int32 one (TFLM's int32-accumulator variant). */
MRT_INLINE int16_t out_s32(int32_t acc, const int32_t *bias, int32_t mult, int32_t shift, int32_t lo, int32_t hi)
{
    if (bias) {
        acc += *bias;
    }
    return (int16_t)mrt_clamp(mrt_requantize(acc, mult, shift), lo, hi);
}

/* n int16 values from src to dst (an im2col column segment), as a word-wise memcpy would
 * move them: pairs on the cores that allow unaligned words, single values on the M0+. Out of
 * line, as CMSIS-NN calls memcpy / memset per tap (the firmware's own memcpy copies bytes). */
static __attribute__((noinline)) void copy_q15(int16_t *dst, const int16_t *src, int32_t n)
{
#if MRT_DSP
    for (; n >= 2; n -= 2, dst += 2, src += 2) {
        mrt_write_s16x2(dst, mrt_read_s16x2(src));
    }
#endif
    for (; n > 0; --n) {
        *dst++ = *src++;
    }
}

static __attribute__((noinline)) void zero_q15(int16_t *dst, int32_t n)
{
#if MRT_DSP
    for (; n >= 2; n -= 2, dst += 2) {
        mrt_write_s16x2(dst, 0);
    }
#endif
    for (; n > 0; --n) {
        *dst++ = 0;
    }
}

/* ================================================================== CONV_2D */

#define MRT_SIZES_CONV_S16        /* this file's part of mrt_buffer_sizes.h */
#include "mrt_buffer_sizes.h"

/* Two im2col columns (x0, x1 = x0 + k_len) against every output channel's weights: out0
 * gets pixel 0's channels, out0 + oc pixel 1's. Returns out0 + 2 * oc. An external function,
 * as CMSIS-NN's: inlined into arm_convolve_s16, GCC allocates registers worse on the M0+. */
int16_t *arm_nn_mat_mult_kernel_s16(const int8_t *w, const int16_t *x0, int32_t oc, const int32_t *shift,
                                    const int32_t *mult, int32_t lo, int32_t hi, int32_t k_len,
                                    const cmsis_nn_bias_data *bias_data, int16_t *out0)
{
    const int64_t *b64 = (const int64_t *)bias_data->data;
    const int32_t *b32 = (const int32_t *)bias_data->data;
    const bool is_int32 = bias_data->is_int32_bias;
    const int32_t fast = is_int32 ? k_len : MRT_MIN(k_len, MRT_S16_MAX_COL_COUNT);
    const int32_t slow = k_len - fast;
    int16_t *out1 = out0 + oc;
    const int8_t *w0 = w;

    for (int32_t pairs = oc / 2; pairs > 0; --pairs) {
        const int16_t *xa = x0, *xb = x0 + k_len;
        const int8_t *w1 = w0 + k_len;
        int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;     /* s<channel><pixel> */
#if MRT_DSP
        for (int32_t n = fast >> 2; n > 0; --n) {
            uint32_t a01, a02, a11, a12;
            uint32_t b0 = (uint32_t)mrt_read_s16x2(xa), b1 = (uint32_t)mrt_read_s16x2(xb);
            w0 = mrt_read_and_pad(w0, &a01, &a02);
            w1 = mrt_read_and_pad(w1, &a11, &a12);
            s00 = mrt_smlad_v(a01, b0, s00);
            s01 = mrt_smlad_v(a01, b1, s01);
            s10 = mrt_smlad_v(a11, b0, s10);
            s11 = mrt_smlad_v(a11, b1, s11);
            b0 = (uint32_t)mrt_read_s16x2(xa + 2);
            b1 = (uint32_t)mrt_read_s16x2(xb + 2);
            xa += 4;
            xb += 4;
            s00 = mrt_smlad_v(a02, b0, s00);
            s01 = mrt_smlad_v(a02, b1, s01);
            s10 = mrt_smlad_v(a12, b0, s10);
            s11 = mrt_smlad_v(a12, b1, s11);
        }
        int32_t n = fast & 3;
#else
        int32_t n = fast;
#endif
        for (; n > 0; --n) {
            const int32_t a0 = *w0++, a1 = *w1++, b0 = *xa++, b1 = *xb++;
            s00 += a0 * b0;
            s01 += a0 * b1;
            s10 += a1 * b0;
            s11 += a1 * b1;
        }
        if (is_int32) {
            out0[0] = out_s32(s00, b32, mult[0], shift[0], lo, hi);
            out1[0] = out_s32(s01, b32, mult[0], shift[0], lo, hi);
            out0[1] = out_s32(s10, b32 ? b32 + 1 : b32, mult[1], shift[1], lo, hi);
            out1[1] = out_s32(s11, b32 ? b32 + 1 : b32, mult[1], shift[1], lo, hi);
            if (b32) {
                b32 += 2;
            }
        } else {
            int64_t l00 = s00, l01 = s01, l10 = s10, l11 = s11;
            for (n = slow; n > 0; --n) {
                const int32_t a0 = *w0++, a1 = *w1++, b0 = *xa++, b1 = *xb++;
                l00 += a0 * b0;
                l01 += a0 * b1;
                l10 += a1 * b0;
                l11 += a1 * b1;
            }
            const int32_t r0 = reduce_multiplier(mult[0]), r1 = reduce_multiplier(mult[1]);
            out0[0] = out_s64(l00, b64, r0, shift[0], lo, hi);
            out1[0] = out_s64(l01, b64, r0, shift[0], lo, hi);
            out0[1] = out_s64(l10, b64 ? b64 + 1 : b64, r1, shift[1], lo, hi);
            out1[1] = out_s64(l11, b64 ? b64 + 1 : b64, r1, shift[1], lo, hi);
            if (b64) {
                b64 += 2;
            }
        }
        out0 += 2;
        out1 += 2;
        mult += 2;
        shift += 2;
        w0 += k_len;           /* past channel 1's weights */
    }

    if (oc & 1) {              /* the last, odd channel */
        const int16_t *xa = x0, *xb = x0 + k_len;
        int32_t s0 = 0, s1 = 0;
#if MRT_DSP
        for (int32_t n = fast >> 2; n > 0; --n) {
            uint32_t a01, a02;
            uint32_t b0 = (uint32_t)mrt_read_s16x2(xa), b1 = (uint32_t)mrt_read_s16x2(xb);
            w0 = mrt_read_and_pad(w0, &a01, &a02);
            s0 = mrt_smlad_v(a01, b0, s0);
            s1 = mrt_smlad_v(a01, b1, s1);
            b0 = (uint32_t)mrt_read_s16x2(xa + 2);
            b1 = (uint32_t)mrt_read_s16x2(xb + 2);
            xa += 4;
            xb += 4;
            s0 = mrt_smlad_v(a02, b0, s0);
            s1 = mrt_smlad_v(a02, b1, s1);
        }
        int32_t n = fast & 3;
#else
        int32_t n = fast;
#endif
        for (; n > 0; --n) {
            const int32_t a0 = *w0++;
            s0 += a0 * *xa++;
            s1 += a0 * *xb++;
        }
        if (is_int32) {
            out0[0] = out_s32(s0, b32, mult[0], shift[0], lo, hi);
            out1[0] = out_s32(s1, b32, mult[0], shift[0], lo, hi);
        } else {
            int64_t l0 = s0, l1 = s1;
            for (n = slow; n > 0; --n) {
                const int32_t a0 = *w0++;
                l0 += a0 * *xa++;
                l1 += a0 * *xb++;
            }
            const int32_t r0 = reduce_multiplier(mult[0]);
            out0[0] = out_s64(l0, b64, r0, shift[0], lo, hi);
            out1[0] = out_s64(l1, b64, r0, shift[0], lo, hi);
        }
        out0++;
    }
    return out0 + oc;
}

/* The last column when the pixel count is odd: one pixel against every channel. */
static void last_column_s16(const int8_t *w, const int16_t *x, int32_t oc, const int32_t *shift, const int32_t *mult,
                            int32_t lo, int32_t hi, int32_t k_len, const cmsis_nn_bias_data *bias_data,
                            int16_t *out)
{
    const int64_t *b64 = (const int64_t *)bias_data->data;
    const int32_t *b32 = (const int32_t *)bias_data->data;
    const bool is_int32 = bias_data->is_int32_bias;
    const int32_t fast = is_int32 ? k_len : MRT_MIN(k_len, MRT_S16_MAX_COL_COUNT);
    for (int32_t o = 0; o < oc; ++o) {
        const int16_t *xa = x;
        int32_t sum = 0;
#if MRT_DSP
        for (int32_t n = fast >> 2; n > 0; --n) {
            uint32_t a1, a2;
            w = mrt_read_and_pad(w, &a1, &a2);
            sum = mrt_smlad_v(a1, (uint32_t)mrt_read_s16x2(xa), sum);
            sum = mrt_smlad_v(a2, (uint32_t)mrt_read_s16x2(xa + 2), sum);
            xa += 4;
        }
        int32_t n = fast & 3;
#else
        int32_t n = fast;
#endif
        for (; n > 0; --n) {
            sum += *w++ * *xa++;
        }
        if (is_int32) {
            *out++ = out_s32(sum, b32 ? b32 + o : b32, mult[o], shift[o], lo, hi);
        } else {
            int64_t acc = sum;
            for (n = k_len - fast; n > 0; --n) {
                acc += *w++ * *xa++;
            }
            *out++ = out_s64(acc, b64 ? b64 + o : b64, reduce_multiplier(mult[o]), shift[o], lo, hi);
        }
    }
}

arm_cmsis_nn_status arm_convolve_s16(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int16_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const cmsis_nn_bias_data *bias_data, const cmsis_nn_dims *output_dims,
    int16_t *output_data)
{
    if (ctx->buf == NULL) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    int16_t *const cols = (int16_t *)ctx->buf;
    const int32_t ih = input_dims->h, iw = input_dims->w, ic = input_dims->c;
    const int32_t fh = filter_dims->h, fw = filter_dims->w;
    const int32_t oh = output_dims->h, ow = output_dims->w, oc = output_dims->c;
    const int32_t k_len = ic * fh * fw;
    const int32_t sx = conv_params->stride.w, sy = conv_params->stride.h;
    const int32_t px = conv_params->padding.w, py = conv_params->padding.h;
    const int32_t dx = conv_params->dilation.w, dy = conv_params->dilation.h;
    const int32_t lo = conv_params->activation.min, hi = conv_params->activation.max;
    const int32_t *mult = quant_params->multiplier, *shift = quant_params->shift;

    for (int32_t b = 0; b < input_dims->n; ++b) {
        int16_t *col = cols;
        int16_t *out = output_data;
        int32_t pending = 0;
        for (int32_t oy = 0; oy < oh; ++oy) {
            for (int32_t ox = 0; ox < ow; ++ox) {
                const int32_t y0 = sy * oy - py, x0 = sx * ox - px;
                for (int32_t ky = 0; ky < fh; ++ky) {
                    for (int32_t kx = 0; kx < fw; ++kx) {
                        const int32_t y = y0 + dy * ky, x = x0 + dx * kx;
                        if (y < 0 || y >= ih || x < 0 || x >= iw) {
                            zero_q15(col, ic);
                        } else {
                            copy_q15(col, input_data + (y * iw + x) * ic, ic);
                        }
                        col += ic;
                    }
                }
                if (++pending == 2) {
                    out = arm_nn_mat_mult_kernel_s16(filter_data, cols, oc, shift, mult, lo, hi, k_len, bias_data, out);
                    col = cols;
                    pending = 0;
                }
            }
        }
        if (pending) {
            last_column_s16(filter_data, cols, oc, shift, mult, lo, hi, k_len, bias_data, out);
        }
        input_data += ih * iw * ic;
        output_data += oh * ow * oc;
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_convolve_wrapper_s16(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int16_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const cmsis_nn_bias_data *bias_data, const cmsis_nn_dims *output_dims,
    int16_t *output_data)
{
    return arm_convolve_s16(ctx, conv_params, quant_params, input_dims, input_data, filter_dims, filter_data,
                            bias_dims, bias_data, output_dims, output_data);
}

/* ================================================================== DEPTHWISE_CONV_2D */

/* Per output value an int64 sum over the taps inside the image: the tap range per axis is
 * computed first (so no tap is tested), then one multiply-accumulate per tap. The geometry
 * travels in 16-bit parameters as in CMSIS-NN (TFLM's window fields are int16_t). */
static void depthwise_conv_s16_generic(const int16_t *input, uint16_t batches, uint16_t iw, uint16_t ih, uint16_t ic,
                                       const int8_t *kernel, uint16_t ch_mult, uint16_t fw, uint16_t fh, uint16_t px,
                                       uint16_t py, uint16_t sx, uint16_t sy, const int64_t *bias, int16_t *output,
                                       const int32_t *shift, const int32_t *mult, uint16_t ow, uint16_t oh,
                                       int32_t lo, int32_t hi, uint16_t dx, uint16_t dy)
{
    for (int b = 0; b < batches; b++) {
        for (int oy = 0; oy < oh; oy++) {
            const int16_t y0 = (int16_t)(oy * sy - py);
            for (int ox = 0; ox < ow; ox++) {
                const int16_t x0 = (int16_t)(ox * sx - px);
                for (int c = 0; c < ic; c++) {
                    for (int m = 0; m < ch_mult; m++) {
                        const int o = m + c * ch_mult;
                        const int32_t reduced = reduce_multiplier(mult[o]);
                        int kx_start, kx_end, ky_start, ky_end;
                        if (dx > 1) {
                            kx_start = MRT_MAX(0, (-x0 + dx - 1) / dx);
                            kx_end = MRT_MIN(fw, (iw - x0 + dx - 1) / dx);
                        } else {
                            kx_start = MRT_MAX(0, -x0);
                            kx_end = MRT_MIN(fw, iw - x0);
                        }
                        if (dy > 1) {
                            ky_start = MRT_MAX(0, (-y0 + dy - 1) / dy);
                            ky_end = MRT_MIN(fh, (ih - y0 + dy - 1) / dy);
                        } else {
                            ky_start = MRT_MAX(0, -y0);
                            ky_end = MRT_MIN(fh, ih - y0);
                        }
                        int64_t acc = 0;
                        if (bias) {
                            acc = bias[o];
                        }
                        for (int ky = ky_start; ky < ky_end; ky++) {
                            const int32_t y = y0 + dy * ky;
                            for (int kx = kx_start; kx < kx_end; kx++) {
                                const int32_t x = x0 + dx * kx;
                                const int32_t in_idx = (y * iw + x) * ic + c;
                                const int32_t w_idx = (ky * fw + kx) * (ic * ch_mult) + o;
                                acc += input[in_idx] * kernel[w_idx];
                            }
                        }
                        int32_t r = requantize_s64(acc, reduced, shift[o]);
                        r = MRT_MAX(r, lo);
                        r = MRT_MIN(r, hi);
                        *output++ = (int16_t)r;
                    }
                }
            }
        }
        input += iw * ih * ic;
    }
}

arm_cmsis_nn_status arm_depthwise_conv_s16(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int16_t *input, const cmsis_nn_dims *filter_dims, const int8_t *kernel, const cmsis_nn_dims *bias_dims,
    const int64_t *bias, const cmsis_nn_dims *output_dims, int16_t *output)
{
    depthwise_conv_s16_generic(input, (uint16_t)input_dims->n, (uint16_t)input_dims->w, (uint16_t)input_dims->h,
                               (uint16_t)input_dims->c, kernel, (uint16_t)dw_conv_params->ch_mult,
                               (uint16_t)filter_dims->w, (uint16_t)filter_dims->h,
                               (uint16_t)dw_conv_params->padding.w, (uint16_t)dw_conv_params->padding.h,
                               (uint16_t)dw_conv_params->stride.w, (uint16_t)dw_conv_params->stride.h, bias, output,
                               quant_params->shift, quant_params->multiplier, (uint16_t)output_dims->w,
                               (uint16_t)output_dims->h, dw_conv_params->activation.min,
                               dw_conv_params->activation.max, (uint16_t)dw_conv_params->dilation.w,
                               (uint16_t)dw_conv_params->dilation.h);
    return ARM_CMSIS_NN_SUCCESS;
}

/* ================================================================== FULLY_CONNECTED */

int32_t arm_fully_connected_s16_get_buffer_size(const cmsis_nn_dims *filter_dims)
{
    return 0;
}

/* One input vector (cols values) against rows weight rows of cols int8 values (external, as
 * CMSIS-NN's). */
arm_cmsis_nn_status arm_nn_vec_mat_mult_t_s16(const int16_t *lhs, const int8_t *rhs, const int64_t *bias,
                                              int16_t *dst, int32_t reduced, int32_t shift, int32_t cols,
                                              int32_t rows, int32_t lo, int32_t hi)
{
#if MRT_DSP
    const int32_t fast = MRT_MIN(cols, MRT_S16_MAX_COL_COUNT);
    for (int32_t r = rows / 2; r > 0; --r) {
        const int16_t *x = lhs;
        const int8_t *w0 = rhs, *w1 = rhs + cols;
        int32_t s0 = 0, s1 = 0;
        rhs += 2 * cols;
        for (int32_t n = fast / 4; n > 0; --n) {
            uint32_t k0, k1;
            const uint32_t v0 = (uint32_t)mrt_read_s16x2(x), v1 = (uint32_t)mrt_read_s16x2(x + 2);
            x += 4;
            w0 = mrt_read_and_pad(w0, &k0, &k1);
            s0 = mrt_smlad_v(k0, v0, s0);
            s0 = mrt_smlad_v(k1, v1, s0);
            w1 = mrt_read_and_pad(w1, &k0, &k1);
            s1 = mrt_smlad_v(k0, v0, s1);
            s1 = mrt_smlad_v(k1, v1, s1);
        }
        int64_t l0 = s0, l1 = s1;
        for (int32_t k = fast & ~3; k < cols; ++k) {
            const int32_t v = *x++;
            l0 += v * *w0++;
            l1 += v * *w1++;
        }
        dst[0] = out_s64(l0, bias, reduced, shift, lo, hi);
        dst[1] = out_s64(l1, bias ? bias + 1 : bias, reduced, shift, lo, hi);
        if (bias) {
            bias += 2;
        }
        dst += 2;
    }
    if (rows & 1) {
        const int16_t *x = lhs;
        const int8_t *w0 = rhs;
        int32_t s0 = 0;
        for (int32_t n = fast / 4; n > 0; --n) {
            uint32_t k0, k1;
            w0 = mrt_read_and_pad(w0, &k0, &k1);
            s0 = mrt_smlad_v(k0, (uint32_t)mrt_read_s16x2(x), s0);
            s0 = mrt_smlad_v(k1, (uint32_t)mrt_read_s16x2(x + 2), s0);
            x += 4;
        }
        int64_t l0 = s0;
        for (int32_t k = fast & ~3; k < cols; ++k) {
            l0 += *x++ * *w0++;
        }
        *dst = out_s64(l0, bias, reduced, shift, lo, hi);
    }
#else
    for (int32_t r = 0; r < rows; ++r) {
        int64_t acc = 0;
        for (int32_t k = 0; k < cols; ++k) {
            acc += (int64_t)lhs[k] * rhs[k];
        }
        *dst++ = out_s64(acc, bias ? bias + r : bias, reduced, shift, lo, hi);
        rhs += cols;
    }
#endif
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_fully_connected_s16(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *fc_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_dims, const int16_t *input,
    const cmsis_nn_dims *filter_dims, const int8_t *kernel, const cmsis_nn_dims *bias_dims, const int64_t *bias,
    const cmsis_nn_dims *output_dims, int16_t *output)
{
    const int32_t reduced = reduce_multiplier(quant_params->multiplier);
    for (int32_t b = input_dims->n; b > 0; --b) {
        arm_nn_vec_mat_mult_t_s16(input, kernel, bias, output, reduced, quant_params->shift, filter_dims->n,
                           output_dims->c, fc_params->activation.min, fc_params->activation.max);
        input += filter_dims->n;
        output += output_dims->c;
    }
    return ARM_CMSIS_NN_SUCCESS;
}
