/* micro_rt: FULLY_CONNECTED (the fully connected family; int16 activations: mrt_conv_s16.c):
 *  - int8: CMSIS-NN's arm_fully_connected_s8 / arm_fully_connected_per_channel_s8
 *    (arm_nnfunctions.h): symmetric weights through mrt_gemm_s8 (the 1x1 convolutions' matrix
 *    product), a filter zero point through a plain loop; TFLM-exact;
 *  - float32: mrt_fully_connected_f32 (mrt_nnfunctions.h), bit-exact with the numpy twin. */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* ================================================================ int8 (CMSIS-NN API) */

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

/* ================================================================ float32 */

int32_t mrt_fully_connected_f32(const mrt_fc_f32_params *p)
{
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    for (int32_t b = 0; b < p->batches; ++b) {
        const float *x = p->in + b * p->accum;
        float *out = p->out + b * p->out_depth;
        for (int32_t o = 0; o < p->out_depth; ++o) {
            const float *w = p->w + o * p->accum;
            float acc = 0.0f;
            for (int32_t d = 0; d < p->accum; ++d) {
                acc += x[d] * w[d];
            }
            if (p->bias) {
                acc += p->bias[o];
            }
            out[o] = mrt_act_clamp_f32(acc, lo, hi);
        }
    }
    return 0;
}
