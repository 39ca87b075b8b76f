/* micro_rt: the CMSIS-NN compatible int8 kernels (own implementation, TFLM-exact arithmetic).
 *
 * Names, signatures and argument structs are CMSIS-NN's, so code written against CMSIS-NN
 * compiles and links against these kernels; the arithmetic is TFLM's reference arithmetic
 * (MultiplyByQuantizedMultiplier with double rounding), bit-exact with micro_rt's numpy twins.
 * micro_rt's own kernels (float32, int16, broadcasting, data movement, ...) are declared in
 * mrt_nnfunctions.h.
 *
 * Conventions of every function below:
 *  - Tensors are NHWC, row-major, densely packed; cmsis_nn_dims gives {n, h, w, c}.
 *  - Offsets are added to the raw int8 values: input_offset = -input zero point (so in
 *    [-127, 128]), output_offset = output zero point (in [-128, 127]); filters are symmetric
 *    (zero point 0) unless a filter_offset is documented.
 *  - Requantization is TFLM's MultiplyByQuantizedMultiplier: `multiplier` is a Q31 mantissa
 *    (TFLM's QuantizeMultiplier: in [2^30, 2^31) or 0), `shift` its power-of-two exponent in
 *    [-31, 30] (> 0 shifts left before the multiply, < 0 divides after it, rounding).
 *  - activation.min <= activation.max, both in [-128, 127]: the fused activation's clamp.
 *  - ctx is a cmsis_nn_context {buf, size}: the scratch buffer the matching *_get_buffer_size
 *    asked for (buf may be NULL when that size is 0).
 *  - "DSP cores" are the Cortex-M4 / M7 / M33 builds (__ARM_FEATURE_DSP: SXTB16 / SMLAD
 *    paths); the Cortex-M0+ build runs plain C. Results are identical on all cores.
 *  - Returns ARM_CMSIS_NN_SUCCESS unless an ARG_ERROR condition is listed.
 */
#ifndef MRT_ARM_NNFUNCTIONS_H
#define MRT_ARM_NNFUNCTIONS_H

#include "arm_nn_types.h"

/* ================================================================== convolution (mrt_conv_s8.c) */

/**
 * CONV_2D, int8: picks the fastest kernel for the geometry, as CMSIS-NN's wrapper does:
 *  - 1x1 filter, no padding, dilation 1, not grouped: arm_convolve_1x1_s8_fast when both
 *    strides are 1, else arm_convolve_1x1_s8;
 *  - batch 1, input height 1, filter height 1, output width a multiple of 4, dilation 1, not
 *    grouped: arm_convolve_1_x_n_s8;
 *  - anything else: arm_convolve_s8.
 * @param[in,out] ctx          scratch of arm_convolve_wrapper_s8_get_buffer_size() bytes
 * @param[in]     conv_params  input_offset, output_offset, stride (>= 1), padding (>= 0),
 *                             dilation (>= 1), activation
 * @param[in]     quant_params per output channel: multiplier[c_out], shift[c_out]
 * @param[in]     input_dims   {N, H, W, C_IN}
 * @param[in]     input_data   int8 [N, H, W, C_IN]
 * @param[in]     filter_dims  {C_OUT, HK, WK, C_IN / groups}; groups = C_IN / filter_dims->c
 * @param[in]     filter_data  int8 [C_OUT, HK, WK, C_IN / groups]; channel group g owns output
 *                             channels [g * C_OUT / groups, (g + 1) * C_OUT / groups)
 * @param[in]     bias_dims    {1, 1, 1, C_OUT} (not read)
 * @param[in]     bias_data    int32 [C_OUT], or NULL for no bias
 * @param[in]     output_dims  {N, H_OUT, W_OUT, C_OUT}
 * @param[out]    output_data  int8 [N, H_OUT, W_OUT, C_OUT]
 * @return the chosen kernel's status (ARG_ERROR: see arm_convolve_s8)
 */
arm_cmsis_nn_status arm_convolve_wrapper_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/**
 * Scratch bytes arm_convolve_wrapper_s8 needs for this geometry: 0 for the 1x1 kernels, else
 * arm_convolve_1_x_n_s8_get_buffer_size() or arm_convolve_s8_get_buffer_size(). Same on all cores.
 * (Arguments as for arm_convolve_wrapper_s8.)
 */
int32_t arm_convolve_wrapper_s8_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);

/**
 * CONV_2D, int8, any geometry (padding, stride, dilation, groups, batches). Per output pixel a
 * partial im2col builds int16 columns (input + input_offset; 0 for a padded tap, i.e. padded
 * taps contribute nothing, as in TFLM), then a matrix product over the group's output channels
 * and the per-channel output stage. DSP cores: two columns at a time, 4 taps per SMLAD pair;
 * M0+: one column, plain C.
 * @param[in,out] ctx  ctx->buf: arm_convolve_s8_get_buffer_size() bytes, 4-byte aligned (all cores)
 * Other arguments as for arm_convolve_wrapper_s8.
 * @return ARM_CMSIS_NN_ARG_ERROR when ctx or ctx->buf is NULL, or filter_dims->c is not a
 *         positive divisor of input_dims->c
 */
arm_cmsis_nn_status arm_convolve_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/**
 * Scratch bytes of arm_convolve_s8: two int16 columns of the kernel volume
 * HK * WK * filter_dims->c rounded up to a multiple of 4 (CMSIS-NN's non-MVE value), on all
 * cores. input_dims is not read.
 */
int32_t arm_convolve_s8_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims);

/**
 * CONV_2D, int8, 1x1 filter with stride 1 and no padding: one matrix product over all
 * N * H * W pixels (mrt_gemm_s8), no scratch.
 * @param[in] ctx  not read
 * Other arguments as for arm_convolve_wrapper_s8 (filter_dims = {C_OUT, 1, 1, C_IN}, not read).
 * @return ARM_CMSIS_NN_ARG_ERROR when a padding is not 0 or a stride is not 1
 */
arm_cmsis_nn_status arm_convolve_1x1_s8_fast(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/** Scratch bytes of arm_convolve_1x1_s8_fast: 0. */
int32_t arm_convolve_1x1_s8_fast_get_buffer_size(const cmsis_nn_dims *input_dims);

/**
 * CONV_2D, int8, 1x1 filter with no padding and any stride: one matrix product (mrt_gemm_s8)
 * per output row over the strided input pixels. No scratch (no *_get_buffer_size).
 * @param[in] ctx  not read
 * Other arguments as for arm_convolve_wrapper_s8 (filter_dims not read).
 * @return ARM_CMSIS_NN_ARG_ERROR when a padding is not 0
 */
arm_cmsis_nn_status arm_convolve_1x1_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/**
 * CONV_2D, int8, 1xN filter on a 1-row input. Without MVE this is arm_convolve_s8 (same
 * arguments, scratch and errors).
 */
arm_cmsis_nn_status arm_convolve_1_x_n_s8(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/** Scratch bytes of arm_convolve_1_x_n_s8: arm_convolve_s8_get_buffer_size(input_dims, filter_dims). */
int32_t arm_convolve_1_x_n_s8_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);

/* ============================================== depthwise convolution (mrt_depthwise_conv_s8.c) */

/**
 * DEPTHWISE_CONV_2D, int8: with ch_mult 1, batch 1 and dilation 1, arm_depthwise_conv_3x3_s8
 * for a 3x3 filter with padding <= 1, else arm_depthwise_conv_s8_opt; anything else
 * arm_depthwise_conv_s8.
 * @param[in,out] ctx            scratch of arm_depthwise_conv_wrapper_s8_get_buffer_size() bytes
 * @param[in]     dw_conv_params input_offset, output_offset, ch_mult (C_OUT / C_IN, >= 1),
 *                               stride (>= 1), padding (>= 0), dilation (>= 1), activation
 * @param[in]     quant_params   per output channel: multiplier[C_OUT], shift[C_OUT]
 * @param[in]     input_dims     {N, H, W, C_IN}
 * @param[in]     input_data     int8 [N, H, W, C_IN]
 * @param[in]     filter_dims    {1, HK, WK, C_OUT}
 * @param[in]     filter_data    int8 [1, HK, WK, C_OUT]; output channel ic * ch_mult + m reads
 *                               input channel ic
 * @param[in]     bias_dims      {1, 1, 1, C_OUT} (not read)
 * @param[in]     bias_data      int32 [C_OUT], or NULL for no bias
 * @param[in]     output_dims    {N, H_OUT, W_OUT, C_OUT}
 * @param[out]    output_data    int8 [N, H_OUT, W_OUT, C_OUT]
 * @return the chosen kernel's status
 */
arm_cmsis_nn_status arm_depthwise_conv_wrapper_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_dw_conv_params *dw_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/**
 * Scratch bytes arm_depthwise_conv_wrapper_s8 needs: arm_depthwise_conv_s8_opt_get_buffer_size()
 * when it picks the opt kernel (C_IN == C_OUT, batch 1, dilation 1, not the 3x3 case), else 0.
 */
int32_t arm_depthwise_conv_wrapper_s8_get_buffer_size(const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);

/**
 * DEPTHWISE_CONV_2D, int8, any ch_mult, dilation and batch count; taps outside the image are
 * skipped. When ch_mult is a multiple of 4, four output channels sharing an input channel are
 * computed together (DSP cores: SXTB16 + SMLABB / SMLATB). No scratch (ctx not read).
 * Arguments as for arm_depthwise_conv_wrapper_s8.
 */
arm_cmsis_nn_status arm_depthwise_conv_s8(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/**
 * DEPTHWISE_CONV_2D, int8, ch_mult 1, batch 1, dilation 1 (only the first batch is computed and
 * the dilation is not read): four channels per step (DSP cores: one word load gives 4 inputs,
 * SXTAB16 adds the offset, SMLABB / SMLATT accumulate).
 * @param[in,out] ctx  DSP cores: ctx->buf must be non-NULL (CMSIS-NN's contract; the buffer of
 *                     arm_depthwise_conv_s8_opt_get_buffer_size() is not written); M0+: not read
 * Other arguments as for arm_depthwise_conv_wrapper_s8.
 * @return ARM_CMSIS_NN_ARG_ERROR when C_IN != C_OUT or ch_mult != 1, or (DSP cores) ctx or
 *         ctx->buf is NULL
 */
arm_cmsis_nn_status arm_depthwise_conv_s8_opt(const cmsis_nn_context *ctx,
    const cmsis_nn_dw_conv_params *dw_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/** Scratch bytes of arm_depthwise_conv_s8_opt: DSP cores C_IN * HK * WK * 2 (CMSIS-NN's value), M0+ 0. */
int32_t arm_depthwise_conv_s8_opt_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims);

/**
 * DEPTHWISE_CONV_2D, int8, 3x3 filter, padding <= 1, ch_mult 1, batch 1, dilation 1: the opt
 * kernel's 4-channel steps with interior windows fully unrolled. No scratch (ctx not read).
 * Arguments as for arm_depthwise_conv_wrapper_s8.
 * @return ARM_CMSIS_NN_ARG_ERROR when C_IN != C_OUT, the filter is not 3x3 or a padding exceeds 1
 */
arm_cmsis_nn_status arm_depthwise_conv_3x3_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_dw_conv_params *dw_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/* ====================================================== fully connected (mrt_fully_connected.c) */

/**
 * FULLY_CONNECTED, int8, per-tensor quantization: out[b][c] = out_stage(bias[c] +
 * sum_k (in[b][k] + input_offset) * (w[c][k] + filter_offset)). With filter_offset 0 (symmetric
 * weights) the product is mrt_gemm_s8; otherwise a plain loop. No scratch (ctx not read).
 * @param[in]  fc_params    input_offset, filter_offset (-filter zero point), output_offset,
 *                          activation
 * @param[in]  quant_params one multiplier and shift for all output channels
 * @param[in]  input_dims   n = batches (other fields not read)
 * @param[in]  input_data   int8 [batches, K]
 * @param[in]  filter_dims  n = K, the accumulation depth (other fields not read)
 * @param[in]  filter_data  int8 [C_OUT, K]
 * @param[in]  bias_dims    not read
 * @param[in]  bias_data    int32 [C_OUT], or NULL
 * @param[in]  output_dims  c = C_OUT (other fields not read)
 * @param[out] output_data  int8 [batches, C_OUT]
 */
arm_cmsis_nn_status arm_fully_connected_s8(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *fc_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);

/**
 * FULLY_CONNECTED, int8, per-channel quantization: as arm_fully_connected_s8 with
 * multiplier[C_OUT] / shift[C_OUT] per output channel.
 */
arm_cmsis_nn_status arm_fully_connected_per_channel_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_fc_params *fc_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/** Scratch bytes of both fully connected kernels: 0. */
int32_t arm_fully_connected_s8_get_buffer_size(const cmsis_nn_dims *filter_dims);

/* ========================================================= transpose conv (mrt_transpose_conv.c) */

/**
 * TRANSPOSE_CONV, int8 (TFLM's CMSIS-NN glue calls this): with stride <= 2 on both axes and more
 * than 16 input channels the "reverse conv" (the filter reversed in y and x into
 * reverse_conv_ctx, then a stride-1 convolution of the input upscaled by the stride, zeros between
 * its pixels, with padding filter - 1 - padding: q15 im2col, two columns x two channels by SMLAD
 * on the DSP cores, one column in plain C on the M0+); otherwise arm_transpose_conv_s8.
 * @param[in,out] ctx                   arm_transpose_conv_s8_get_buffer_size() bytes
 * @param[in,out] reverse_conv_ctx      arm_transpose_conv_s8_get_reverse_conv_buffer_size() bytes
 *                                      (the reversed filter; not read otherwise)
 * @param[in]     transpose_conv_params input_offset, output_offset, stride (>= 1), padding (>= 0:
 *                                      of the forward conv over the output, TFLM's), activation;
 *                                      padding_offsets and dilation are not read
 * @param[in]     quant_params          multiplier[C_OUT], shift[C_OUT]
 * @param[in]     input_dims            {N, H, W, C_IN}
 * @param[in]     input_data            int8 [N, H, W, C_IN]
 * @param[in]     filter_dims           {C_OUT, HK, WK, C_IN}
 * @param[in]     filter_data           int8 [C_OUT, HK, WK, C_IN]
 * @param[in]     bias_dims             not read
 * @param[in]     bias_data             int32 [C_OUT], or NULL
 * @param[in]     output_dims           {N, H_OUT, W_OUT, C_OUT}: any size (TFLM takes the output tensor's)
 * @param[out]    output_data           int8 [N, H_OUT, W_OUT, C_OUT]
 * @return ARG_ERROR when a buffer the chosen path needs is NULL
 */
arm_cmsis_nn_status arm_transpose_conv_wrapper_s8(const cmsis_nn_context *ctx, const cmsis_nn_context *reverse_conv_ctx,
    const cmsis_nn_transpose_conv_params *transpose_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/**
 * TRANSPOSE_CONV, int8, CMSIS-NN's rolling-buffer algorithm: each input row's contributions are
 * added into max(HK, stride_h) int32 rows of ((W - 1) * stride_w + max(WK, stride_w)) * C_OUT
 * elements (started from the bias), 4 input pixels at a time (SXTAB16 / SMLAD on the DSP cores,
 * raw products plus offset * sum(w) on the M0+); an output row is requantized when no later
 * input row reaches it. Rows / columns the input does not reach get the bias alone. Arguments as
 * arm_transpose_conv_wrapper_s8 (output_ctx not read). ARG_ERROR when ctx->buf is NULL.
 */
arm_cmsis_nn_status arm_transpose_conv_s8(const cmsis_nn_context *ctx, const cmsis_nn_context *output_ctx,
    const cmsis_nn_transpose_conv_params *transpose_conv_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/**
 * Scratch bytes of ctx for arm_transpose_conv_wrapper_s8: the reverse conv's two q15 im2col
 * columns (2 * align4(WK * HK * C_IN) * 2), or the rolling buffer
 * ((W - 1) * stride_w + max(WK, stride_h)) * C_OUT * max(HK, stride_h) * 4 (CMSIS-NN's formula,
 * stride_h in the width term included).
 */
int32_t arm_transpose_conv_s8_get_buffer_size(const cmsis_nn_transpose_conv_params *transpose_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *out_dims);

/** Scratch bytes of reverse_conv_ctx: C_IN * WK * HK * C_OUT on the reverse-conv path, else 0. */
int32_t arm_transpose_conv_s8_get_reverse_conv_buffer_size(const cmsis_nn_transpose_conv_params *transpose_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims);

/* =================================================================== elementwise (mrt_binary.c) */

/**
 * ADD of two int8 vectors of the same shape, TFLM's quantized add: each input is shifted left by
 * left_shift after its offset and requantized with its own multiplier / shift, the sum is
 * requantized with out_mult / out_shift, + out_offset, clamped to
 * [out_activation_min, out_activation_max]. (Broadcasting and SUB / MAXIMUM / MINIMUM:
 * mrt_binary_s8.) No scratch.
 * @param[in]  input_1_vect, input_2_vect  int8 [block_size]
 * @param[in]  input_1_offset, input_2_offset  -zero points, in [-127, 128]
 * @param[in]  input_1_mult, input_1_shift, input_2_mult, input_2_shift  per-input requantization
 * @param[in]  left_shift  TFLM's input left shift (20 for int8)
 * @param[out] output      int8 [block_size]
 * @param[in]  out_offset, out_mult, out_shift  output requantization and zero point
 * @param[in]  out_activation_min, out_activation_max  clamp, in [-128, 127]
 * @param[in]  block_size  number of elements
 */
arm_cmsis_nn_status arm_elementwise_add_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_1_mult, const int32_t input_1_shift,
    const int32_t input_2_offset, const int32_t input_2_mult, const int32_t input_2_shift,
    const int32_t left_shift, int8_t *output, const int32_t out_offset, const int32_t out_mult,
    const int32_t out_shift, const int32_t out_activation_min, const int32_t out_activation_max,
    const int32_t block_size);

/**
 * MUL of two int8 vectors of the same shape: (a + input_1_offset) * (b + input_2_offset)
 * requantized with out_mult / out_shift, + out_offset, clamped. Arguments as for
 * arm_elementwise_add_s8. No scratch.
 */
arm_cmsis_nn_status arm_elementwise_mul_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_2_offset, int8_t *output, const int32_t out_offset,
    const int32_t out_mult, const int32_t out_shift, const int32_t out_activation_min,
    const int32_t out_activation_max, const int32_t block_size);

/* ====================================================================== pooling (mrt_pooling.c) */

/**
 * AVERAGE_POOL_2D, int8: per output pixel and channel the mean of the window's taps inside the
 * image (padded taps are not counted), rounded half away from zero, clamped to the activation.
 * DSP cores sum all channels of a window row by row into the scratch (one int32 per channel).
 * @param[in,out] ctx          DSP cores: ctx->buf of arm_avgpool_s8_get_buffer_size() bytes,
 *                             4-byte aligned; M0+: not read
 * @param[in]     pool_params  stride (>= 1), padding (>= 0), activation
 * @param[in]     input_dims   {N, H, W, C} (N <= 0 is taken as 1)
 * @param[in]     input_data   int8 [N, H, W, C]
 * @param[in]     filter_dims  {-, HK, WK, -}: the window
 * @param[in]     output_dims  {-, H_OUT, W_OUT, -} (channels: input_dims->c)
 * @param[out]    output_data  int8 [N, H_OUT, W_OUT, C]
 * @return ARM_CMSIS_NN_ARG_ERROR when a window has no tap inside the image, or (DSP cores) ctx or
 *         ctx->buf is NULL
 */
arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/** Scratch bytes of arm_avgpool_s8: DSP cores ch_src * 4, M0+ 0 (dim_dst_width is not read). */
int32_t arm_avgpool_s8_get_buffer_size(const int dim_dst_width, const int ch_src);

/**
 * MAX_POOL_2D, int8: per output pixel and channel the maximum of the window's taps inside the
 * image (starting from -128), clamped to the activation. No scratch (ctx not read). Other
 * arguments as for arm_avgpool_s8.
 */
arm_cmsis_nn_status arm_max_pool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

/* ====================================================================== softmax (mrt_softmax.c) */

/**
 * SOFTMAX, int8 in and out, TFLM's fixed-point softmax (gemmlowp exp on negative values with 5
 * integer bits, reciprocal of the row sum). Output scale 1/256, zero point -128.
 * @param[in]  input     int8 [num_rows, row_size]
 * @param[in]  num_rows  rows (product of all but the last dimension)
 * @param[in]  row_size  elements per row (last dimension)
 * @param[in]  mult, shift  input scaling from TFLM's PreprocessSoftmaxScaling(beta, input scale,
 *                       5 integer bits)
 * @param[in]  diff_min  -CalculateInputRadius(5, shift): differences to the row maximum below it
 *                       give the minimum output
 * @param[out] output    int8 [num_rows, row_size]
 */
void arm_softmax_s8(const int8_t *input, const int32_t num_rows, const int32_t row_size,
    const int32_t mult, const int32_t shift, const int32_t diff_min, int8_t *output);

/** SOFTMAX, int8 in, int16 out (scale 1/65536, zero point -32768); otherwise as arm_softmax_s8. */
void arm_softmax_s8_s16(const int8_t *input, const int32_t num_rows, const int32_t row_size,
    const int32_t mult, const int32_t shift, const int32_t diff_min, int16_t *output);

/* =================================================== int16 pooling and softmax (mrt_pooling_s16.c, mrt_softmax.c) */

/**
 * AVERAGE_POOL_2D, int16: per output pixel and channel the mean of the window's taps inside the
 * image, (sum +- count / 2) / count, clamped to the activation (TFLM's reference, bit-exact).
 * DSP cores (CMSIS-NN's DSP path): per window the first tap copied and the others added with
 * QADD into the scratch (one int32 per channel), then scaled and clamped; M0+: the reference
 * loop per channel.
 * @param[in,out] ctx          DSP cores: ctx->buf of arm_avgpool_s16_get_buffer_size() bytes,
 *                             4-byte aligned; M0+: not read
 * @param[in]     pool_params  stride (>= 1), padding (>= 0), activation (int16 range)
 * @param[in]     input_dims   {N, H, W, C}, N >= 1
 * @param[in]     src          int16 [N, H, W, C]
 * @param[in]     filter_dims  {-, HK, WK, -}: the window
 * @param[in]     output_dims  {-, H_OUT, W_OUT, -} (channels: input_dims->c)
 * @param[out]    dst          int16 [N, H_OUT, W_OUT, C]
 * @return ARM_CMSIS_NN_ARG_ERROR when N < 1, a window has no tap inside the image, or (DSP
 *         cores) ctx->buf is NULL
 */
arm_cmsis_nn_status arm_avgpool_s16(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int16_t *src, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int16_t *dst);

/** Scratch bytes of arm_avgpool_s16: DSP cores ch_src * 4, M0+ 0 (output_x is not read). */
int32_t arm_avgpool_s16_get_buffer_size(const int output_x, const int ch_src);

/**
 * MAX_POOL_2D, int16 (CMSIS-NN's algorithm): per output pixel the window's first tap inside the
 * image copied for all channels, each further tap compared two channels per word, then the
 * whole batch clamped to the activation. No scratch (ctx not read). Arguments as for
 * arm_avgpool_s16; every window must hold a tap inside the image.
 */
arm_cmsis_nn_status arm_max_pool_s16(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int16_t *src, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int16_t *dst);

/**
 * SOFTMAX, int16 in and out (output scale 1/32768, zero point 0), CMSIS-NN's algorithm, equal to
 * TFLM's reference: per row, each x - max requantized by mult / shift, + 32767, saturated,
 * looked up in the exp table (513 entries, linear interpolation on the low 7 bits) and cached
 * in the output; the sum's reciprocal from the 1/(1+x) table; each cached exp times it, shifted
 * by 30 - clz(sum), then rounded by one more bit. Where CMSIS-NN's int16 casts would wrap (a sum
 * whose top bits leave the recentred mantissa at 32768; an output of 32768) TFLM's reference
 * saturates, and so does this kernel (two compares; results otherwise identical).
 * @param[in]  input           int16 [num_rows, row_size]
 * @param[in]  num_rows        rows (product of all but the last dimension)
 * @param[in]  row_size        elements per row (last dimension)
 * @param[in]  mult, shift     QuantizeMultiplier(input scale * beta / (10 / 65535))
 * @param[in]  softmax_params  the exp and 1/(1+x) tables (TFLM's gen_lut, 513 int16 each)
 * @param[out] output          int16 [num_rows, row_size]
 * @return ARM_CMSIS_NN_ARG_ERROR when a table pointer is NULL
 */
arm_cmsis_nn_status arm_softmax_s16(const int16_t *input, const int32_t num_rows, const int32_t row_size,
    const int32_t mult, const int32_t shift, const cmsis_nn_softmax_lut_s16 *softmax_params, int16_t *output);

/* ========================================================================= reshape (mrt_data.c) */

/**
 * RESHAPE / SQUEEZE / EXPAND_DIMS: copies total_size bytes from input to output (the glue uses
 * it for every element type, with total_size in bytes). The buffers must not overlap.
 */
void arm_reshape_s8(const int8_t *input, int8_t *output, const uint32_t total_size);

/* ============================================== 16x8 convolutions (mrt_conv_s16_dsp.c) */
/* int16 activations, int8 weights (zero point 0), int64 bias (or int32: cmsis_nn_bias_data).
 * Input and output offsets are not read: int16 zero points are 0 (TFLM's CMSIS-NN glue checks).
 * activation.min / max are int16 values. Requantization: with an int64 bias the 16-bit reduced
 * multiplier and one rounding (TFLM's int64 MultiplyByQuantizedMultiplier), with an int32 bias
 * TFLM's int32 MultiplyByQuantizedMultiplier. Sums of the first 512 taps are int32 (exact while
 * |sum| < 2^31: any int8 weights but all -128 over 512 taps), the rest int64. */

/**
 * CONV_2D 16x8: arm_convolve_s16 (the only 16x8 kernel; CMSIS-NN's wrapper picks it always).
 * Arguments as for arm_convolve_wrapper_s8, with int16 input / output, filter_dims->c == C_IN
 * (no groups), bias_data {int32 or int64 [C_OUT] or NULL, is_int32_bias}.
 */
arm_cmsis_nn_status arm_convolve_wrapper_s16(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int16_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const cmsis_nn_bias_data *bias_data, const cmsis_nn_dims *output_dims,
    int16_t *output_data);

/** Scratch of arm_convolve_wrapper_s16: arm_convolve_s16_get_buffer_size() (all cores). */
int32_t arm_convolve_wrapper_s16_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);

/**
 * CONV_2D 16x8, any padding, stride, dilation and batch count. Per two output pixels an
 * im2col fills two int16 columns (0 for a padded tap), then every pair of output channels is
 * multiplied with both columns: DSP cores 4 taps per step (read_and_pad, 8 SMLAD), M0+ one
 * tap per step; an odd last channel and an odd last pixel are handled alone.
 * @param[in,out] ctx  ctx->buf: arm_convolve_s16_get_buffer_size() bytes, 2-byte aligned
 * @return ARM_CMSIS_NN_ARG_ERROR when ctx->buf is NULL
 */
arm_cmsis_nn_status arm_convolve_s16(const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int16_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const cmsis_nn_bias_data *bias_data, const cmsis_nn_dims *output_dims,
    int16_t *output_data);

/** Two im2col columns: 2 * C_IN * HK * WK * 2 bytes (the non-MVE value; all cores). */
int32_t arm_convolve_s16_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims);

/**
 * DEPTHWISE_CONV_2D 16x8, the generic kernel TFLM's CMSIS-NN glue calls: any ch_mult, stride,
 * dilation, padding and batch count; per output value an int64 sum over the taps inside the
 * image (one tap per step on every core). No scratch (ctx not read).
 * @param[in] filter_dims {1, HK, WK, C_OUT}; bias int64 [C_OUT] or NULL; other arguments as for
 *            arm_depthwise_conv_s8 with int16 input / output
 */
arm_cmsis_nn_status arm_depthwise_conv_s16(const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int16_t *input, const cmsis_nn_dims *filter_dims, const int8_t *kernel, const cmsis_nn_dims *bias_dims,
    const int64_t *bias, const cmsis_nn_dims *output_dims, int16_t *output);

/**
 * FULLY_CONNECTED 16x8, per-tensor quantization (filter_offset, input / output offsets not read).
 * DSP cores: two weight rows per step, 4 inputs per SMLAD pair, inputs past 512 in int64;
 * M0+: one row at a time in int64. No scratch.
 * @param[in] input_dims {N, 1, 1, ACC}; filter_dims {ACC, 1, 1, C_OUT}; kernel int8 [C_OUT, ACC];
 *            bias int64 [C_OUT] or NULL; output_dims {N, 1, 1, C_OUT}
 */
arm_cmsis_nn_status arm_fully_connected_s16(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *fc_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_dims, const int16_t *input,
    const cmsis_nn_dims *filter_dims, const int8_t *kernel, const cmsis_nn_dims *bias_dims, const int64_t *bias,
    const cmsis_nn_dims *output_dims, int16_t *output);

/** 0: arm_fully_connected_s16 needs no scratch. */
int32_t arm_fully_connected_s16_get_buffer_size(const cmsis_nn_dims *filter_dims);

/* Support functions of the kernels above (CMSIS-NN's names; external, as in CMSIS-NN, which
 * keeps them out of their callers' register allocation). */

/**
 * arm_convolve_s16's matrix product: weights int8 [num_ch, k_len] (row c at w + c * k_len)
 * times two im2col columns int16 [2, k_len] at cols; writes out[0 .. num_ch) (column 0) and
 * out[num_ch .. 2 num_ch) (column 1) through the output stage (per-channel multiplier / shift,
 * clamp to [act_min, act_max]). Returns out + 2 * num_ch.
 */
int16_t *arm_nn_mat_mult_kernel_s16(const int8_t *w, const int16_t *cols, int32_t num_ch, const int32_t *shift,
    const int32_t *mult, int32_t act_min, int32_t act_max, int32_t k_len, const cmsis_nn_bias_data *bias_data,
    int16_t *out);

/**
 * arm_fully_connected_s16's product of one input vector int16 [cols] with rows weight rows
 * int8 [rows, cols]: dst[r] = clamp(requantize(sum + bias[r])), reduced = the Q15 multiplier
 * (REDUCE_MULTIPLIER), per-tensor shift; bias int64 [rows] or NULL.
 */
arm_cmsis_nn_status arm_nn_vec_mat_mult_t_s16(const int16_t *lhs, const int8_t *rhs, const int64_t *bias,
    int16_t *dst, int32_t reduced, int32_t shift, int32_t cols, int32_t rows, int32_t act_min, int32_t act_max);

/* ============================================ int16 elementwise (mrt_binary.c) */

/**
 * ADD of two int16 vectors of the same shape (TFLM's CMSIS-NN glue without broadcast): each
 * input shifted left by left_shift (15 for int16) and requantized with its own multiplier /
 * shift, the sum requantized with out_mult / out_shift and clamped. Two halfwords per load.
 * The offsets are not read (TFLM requires int16 zero points of 0). No scratch.
 * @param[in]  input_1_vect, input_2_vect  int16 [block_size]
 * @param[in]  input_1_offset, input_2_offset, out_offset  not read
 * @param[in]  input_1_mult, input_1_shift, input_2_mult, input_2_shift  per-input requantization
 * @param[in]  left_shift  TFLM's input left shift
 * @param[out] output      int16 [block_size]
 * @param[in]  out_mult, out_shift  output requantization
 * @param[in]  out_activation_min, out_activation_max  clamp, in [-32768, 32767]
 * @param[in]  block_size  number of elements
 */
arm_cmsis_nn_status arm_elementwise_add_s16(const int16_t *input_1_vect, const int16_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_1_mult, const int32_t input_1_shift,
    const int32_t input_2_offset, const int32_t input_2_mult, const int32_t input_2_shift,
    const int32_t left_shift, int16_t *output, const int32_t out_offset, const int32_t out_mult,
    const int32_t out_shift, const int32_t out_activation_min, const int32_t out_activation_max,
    const int32_t block_size);

/**
 * MUL of two int16 vectors of the same shape: a * b (SMULBB / SMULTT on DSP cores) requantized
 * with out_mult / out_shift, clamped. Offsets not read. Arguments as for
 * arm_elementwise_add_s16. No scratch.
 */
arm_cmsis_nn_status arm_elementwise_mul_s16(const int16_t *input_1_vect, const int16_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_2_offset, int16_t *output, const int32_t out_offset,
    const int32_t out_mult, const int32_t out_shift, const int32_t out_activation_min,
    const int32_t out_activation_max, const int32_t block_size);
/* ============================================================ batch matmul (mrt_batch_matmul.c) */

/**
 * BATCH_MATMUL int8, CMSIS-NN's kernel (rows contiguous; TFLM's glue transposes rhs first):
 * output[n][h][r][c] = requantized sum_k (lhs[n][h][r][k] + input_offset) *
 * (rhs[n][h][c][k] + filter_offset), + output_offset, clamped to the activation range; an
 * operand with n or h of 1 is broadcast. On the DSP cores two rhs rows per pass with SXTAB16 /
 * SMLAD, four k at a time; on the M0+ three rows per pass in plain C.
 * @param[in]  input_lhs_dims  n, h batch axes, w = lhs rows, c = K
 * @param[in]  input_rhs_dims  n, h batch axes, w = rhs rows (output columns), c = K
 * @param[in]  output_dims     n, h batch axes of the output
 * No scratch (arm_fully_connected_s8_get_buffer_size: 0 on these cores).
 */
arm_cmsis_nn_status arm_batch_matmul_s8(const cmsis_nn_context *ctx, const cmsis_nn_bmm_params *bmm_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_lhs_dims,
    const int8_t *input_lhs, const cmsis_nn_dims *input_rhs_dims, const int8_t *input_rhs,
    const cmsis_nn_dims *output_dims, int8_t *output);

#endif
