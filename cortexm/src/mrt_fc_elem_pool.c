/* micro_rt: s8 fully connected, elementwise add/mul, pooling, softmax, reshape
 * (CMSIS-NN compatible API, own implementation, TFLM-exact arithmetic). */
#include "arm_nnfunctions.h"
#include "mrt_math.h"

/* ---------------------------------------------------------------- fully connected */

int32_t arm_fully_connected_s8_get_buffer_size(const cmsis_nn_dims *filter_dims)
{
    (void)filter_dims;
    return 0;
}

static void fc_core(const cmsis_nn_fc_params *p, const int32_t *mult, const int32_t *shift, int32_t per_channel,
                    const cmsis_nn_dims *input_dims, const int8_t *in, const cmsis_nn_dims *filter_dims,
                    const int8_t *w, const int32_t *bias, const cmsis_nn_dims *output_dims, int8_t *out)
{
    const int32_t batches = input_dims->n;
    const int32_t k_len = filter_dims->n;
    const int32_t out_ch = output_dims->c;
    const int32_t woff = p->filter_offset;
    if (woff == 0) {
        mrt_gemm_s8(in, batches, k_len, k_len, p->input_offset, w, bias, out_ch, mult, shift, per_channel,
                    p->output_offset, p->activation.min, p->activation.max, out);
        return;
    }
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *x = in + b * k_len;
        for (int32_t c = 0; c < out_ch; ++c) {
            const int8_t *w0 = w + c * k_len;
            int32_t a0 = 0;
            for (int32_t k = 0; k < k_len; ++k) {
                a0 += (x[k] + p->input_offset) * (w0[k] + woff);
            }
            int32_t acc = a0 + (bias ? bias[c] : 0);
            const int32_t m = per_channel ? mult[c] : mult[0];
            const int32_t s = per_channel ? shift[c] : shift[0];
            out[c] = mrt_out_stage(acc, m, s, p->output_offset, p->activation.min, p->activation.max);
        }
        out += out_ch;
    }
}

arm_cmsis_nn_status arm_fully_connected_s8(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *fc_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data)
{
    (void)ctx;
    (void)bias_dims;
    fc_core(fc_params, &quant_params->multiplier, &quant_params->shift, 0, input_dims, input_data, filter_dims,
            filter_data, bias_data, output_dims, output_data);
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_fully_connected_per_channel_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_fc_params *fc_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    (void)ctx;
    (void)bias_dims;
    fc_core(fc_params, quant_params->multiplier, quant_params->shift, 1, input_dims, input_data, filter_dims,
            filter_data, bias_data, output_dims, output_data);
    return ARM_CMSIS_NN_SUCCESS;
}

/* ---------------------------------------------------------------- elementwise */

arm_cmsis_nn_status arm_elementwise_add_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_1_mult, const int32_t input_1_shift,
    const int32_t input_2_offset, const int32_t input_2_mult, const int32_t input_2_shift,
    const int32_t left_shift, int8_t *output, const int32_t out_offset, const int32_t out_mult,
    const int32_t out_shift, const int32_t out_activation_min, const int32_t out_activation_max,
    const int32_t block_size)
{
    for (int32_t i = 0; i < block_size; ++i) {
        const int32_t a = mrt_requantize((input_1_vect[i] + input_1_offset) << left_shift, input_1_mult, input_1_shift);
        const int32_t b = mrt_requantize((input_2_vect[i] + input_2_offset) << left_shift, input_2_mult, input_2_shift);
        int32_t s = mrt_requantize(a + b, out_mult, out_shift) + out_offset;
        output[i] = (int8_t)mrt_clamp(s, out_activation_min, out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_elementwise_mul_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_2_offset, int8_t *output, const int32_t out_offset,
    const int32_t out_mult, const int32_t out_shift, const int32_t out_activation_min,
    const int32_t out_activation_max, const int32_t block_size)
{
    for (int32_t i = 0; i < block_size; ++i) {
        const int32_t prod = (input_1_vect[i] + input_1_offset) * (input_2_vect[i] + input_2_offset);
        int32_t r = mrt_requantize(prod, out_mult, out_shift) + out_offset;
        output[i] = (int8_t)mrt_clamp(r, out_activation_min, out_activation_max);
    }
    return ARM_CMSIS_NN_SUCCESS;
}

/* ---------------------------------------------------------------- pooling */

int32_t arm_avgpool_s8_get_buffer_size(const int dim_dst_width, const int ch_src)
{
    (void)dim_dst_width;
#if MRT_DSP
    return ch_src * (int32_t)sizeof(int32_t);
#else
    (void)ch_src;
    return 0;
#endif
}

/* AVERAGE_POOL_2D and MAX_POOL_2D walk the output alike: per output pixel the window clipped
 * to the image, [y0, y1) x [x0, x1), then one value per channel. `is_max` is a constant in each
 * caller, so each gets its own loop. Average: TFLM rounding (half away from zero), and an empty
 * window is an argument error; max starts from -128. */
static inline __attribute__((always_inline)) arm_cmsis_nn_status pool_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_pool_params *pool_params, const cmsis_nn_dims *input_dims, const int8_t *input_data,
    const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims, int8_t *output_data, int32_t is_max)
{
    const int32_t in_h = input_dims->h, in_w = input_dims->w, c_n = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int32_t batches = input_dims->n > 0 ? input_dims->n : 1;
    const int32_t act_min = pool_params->activation.min, act_max = pool_params->activation.max;
#if MRT_DSP
    int32_t *sum = 0;
    if (!is_max) {
        if (ctx == 0 || ctx->buf == 0) {
            return ARM_CMSIS_NN_ARG_ERROR;
        }
        sum = (int32_t *)ctx->buf;
    }
#else
    (void)ctx;
#endif
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *in_b = input_data + b * in_h * in_w * c_n;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t base_y = oy * pool_params->stride.h - pool_params->padding.h;
            const int32_t y0 = MRT_MAX(0, -base_y), y1 = MRT_MIN(filter_dims->h, in_h - base_y);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t base_x = ox * pool_params->stride.w - pool_params->padding.w;
                const int32_t x0 = MRT_MAX(0, -base_x), x1 = MRT_MIN(filter_dims->w, in_w - base_x);
                if (is_max) {
                    for (int32_t c = 0; c < c_n; ++c) {
                        int32_t m = -128;
                        for (int32_t ky = y0; ky < y1; ++ky) {
                            for (int32_t kx = x0; kx < x1; ++kx) {
                                const int32_t v = in_b[((base_y + ky) * in_w + base_x + kx) * c_n + c];
                                m = v > m ? v : m;
                            }
                        }
                        *output_data++ = (int8_t)mrt_clamp(m, act_min, act_max);
                    }
                    continue;
                }
                const int32_t count = (y1 - y0) * (x1 - x0);
                if (count <= 0) {
                    return ARM_CMSIS_NN_ARG_ERROR;
                }
#if MRT_DSP
                /* Window sums for all channels, row by row (the scratch holds one per channel). */
                for (int32_t c = 0; c < c_n; ++c) {
                    sum[c] = 0;
                }
                for (int32_t ky = y0; ky < y1; ++ky) {
                    for (int32_t kx = x0; kx < x1; ++kx) {
                        const int8_t *px = in_b + ((base_y + ky) * in_w + base_x + kx) * c_n;
                        for (int32_t c = 0; c < c_n; ++c) {
                            sum[c] += px[c];
                        }
                    }
                }
                for (int32_t c = 0; c < c_n; ++c) {
                    int32_t s = sum[c];
#else
                for (int32_t c = 0; c < c_n; ++c) {
                    int32_t s = 0;
                    for (int32_t ky = y0; ky < y1; ++ky) {
                        for (int32_t kx = x0; kx < x1; ++kx) {
                            s += in_b[((base_y + ky) * in_w + base_x + kx) * c_n + c];
                        }
                    }
#endif
                    s = s > 0 ? (s + count / 2) / count : (s - count / 2) / count;
                    *output_data++ = (int8_t)mrt_clamp(s, act_min, act_max);
                }
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    return pool_s8(ctx, pool_params, input_dims, input_data, filter_dims, output_dims, output_data, 0);
}

arm_cmsis_nn_status arm_max_pool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    return pool_s8(ctx, pool_params, input_dims, input_data, filter_dims, output_dims, output_data, 1);
}

/* ---------------------------------------------------------------- softmax */

static inline __attribute__((always_inline)) void softmax_rows(const int8_t *input, int32_t num_rows, int32_t row_size, int32_t mult, int32_t shift,
                         int32_t diff_min, void *output, int32_t out_bits)
{
    const int32_t out_min = out_bits == 8 ? -128 : -32768;
    const int32_t out_max = out_bits == 8 ? 127 : 32767;
    for (int32_t r = 0; r < num_rows; ++r) {
        const int8_t *x = input + r * row_size;
        int32_t mx = -128;
        for (int32_t i = 0; i < row_size; ++i) {
            mx = x[i] > mx ? x[i] : mx;
        }
        int32_t sum = 0;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - mx;
            if (diff >= diff_min) {
                const int32_t scaled = mrt_srdhm(mrt_shl_wrap(diff, shift), mult);
                sum += mrt_rdbpot(mrt_exp_on_negative_values(scaled, 5), 12);
            }
        }
        /* GetReciprocal(sum, 12) */
        const int32_t headroom_plus_one = __builtin_clz((uint32_t)sum);
        const int32_t num_bits_over_unit = 12 - headroom_plus_one;
        const int32_t shifted_sum_minus_one = (int32_t)(((uint32_t)sum << headroom_plus_one) - (1u << 31));
        const int32_t shifted_scale = mrt_one_over_one_plus_x(shifted_sum_minus_one);
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - mx;
            int32_t v = out_min;
            if (diff >= diff_min) {
                const int32_t scaled = mrt_srdhm(mrt_shl_wrap(diff, shift), mult);
                const int32_t e = mrt_exp_on_negative_values(scaled, 5);
                const int32_t u = mrt_rdbpot(mrt_srdhm(shifted_scale, e), num_bits_over_unit + 31 - out_bits);
                v = mrt_clamp(u + out_min, out_min, out_max);
            }
            if (out_bits == 8) {
                ((int8_t *)output)[r * row_size + i] = (int8_t)v;
            } else {
                ((int16_t *)output)[r * row_size + i] = (int16_t)v;
            }
        }
    }
}

void arm_softmax_s8(const int8_t *input, const int32_t num_rows, const int32_t row_size, const int32_t mult,
                    const int32_t shift, const int32_t diff_min, int8_t *output)
{
    softmax_rows(input, num_rows, row_size, mult, shift, diff_min, output, 8);
}

void arm_softmax_s8_s16(const int8_t *input, const int32_t num_rows, const int32_t row_size, const int32_t mult,
                        const int32_t shift, const int32_t diff_min, int16_t *output)
{
    softmax_rows(input, num_rows, row_size, mult, shift, diff_min, output, 16);
}

void arm_reshape_s8(const int8_t *input, int8_t *output, const uint32_t total_size)
{
    __builtin_memcpy(output, input, total_size);
}
