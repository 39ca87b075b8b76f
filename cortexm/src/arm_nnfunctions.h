/* micro_rt: CMSIS-NN compatible s8 function declarations (own implementation). */
#ifndef MRT_ARM_NNFUNCTIONS_H
#define MRT_ARM_NNFUNCTIONS_H

#include "arm_nn_types.h"

#define MRT_CONV_ARGS const cmsis_nn_context *ctx, const cmsis_nn_conv_params *conv_params, \
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims, \
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data, \
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims, \
    int8_t *output_data
#define MRT_DW_ARGS const cmsis_nn_context *ctx, const cmsis_nn_dw_conv_params *dw_conv_params, \
    const cmsis_nn_per_channel_quant_params *quant_params, const cmsis_nn_dims *input_dims, \
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data, \
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims, \
    int8_t *output_data

arm_cmsis_nn_status arm_convolve_wrapper_s8(MRT_CONV_ARGS);
int32_t arm_convolve_wrapper_s8_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);
arm_cmsis_nn_status arm_convolve_s8(MRT_CONV_ARGS);
int32_t arm_convolve_s8_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims);
arm_cmsis_nn_status arm_convolve_1x1_s8_fast(MRT_CONV_ARGS);
int32_t arm_convolve_1x1_s8_fast_get_buffer_size(const cmsis_nn_dims *input_dims);
arm_cmsis_nn_status arm_convolve_1x1_s8(MRT_CONV_ARGS);
arm_cmsis_nn_status arm_convolve_1_x_n_s8(MRT_CONV_ARGS);
int32_t arm_convolve_1_x_n_s8_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);

arm_cmsis_nn_status arm_depthwise_conv_wrapper_s8(MRT_DW_ARGS);
int32_t arm_depthwise_conv_wrapper_s8_get_buffer_size(const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims);
arm_cmsis_nn_status arm_depthwise_conv_s8(MRT_DW_ARGS);
arm_cmsis_nn_status arm_depthwise_conv_s8_opt(MRT_DW_ARGS);
int32_t arm_depthwise_conv_s8_opt_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims);
arm_cmsis_nn_status arm_depthwise_conv_3x3_s8(MRT_DW_ARGS);

arm_cmsis_nn_status arm_fully_connected_s8(const cmsis_nn_context *ctx, const cmsis_nn_fc_params *fc_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_dims,
    const int8_t *input_data, const cmsis_nn_dims *filter_dims, const int8_t *filter_data,
    const cmsis_nn_dims *bias_dims, const int32_t *bias_data, const cmsis_nn_dims *output_dims,
    int8_t *output_data);
arm_cmsis_nn_status arm_fully_connected_per_channel_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_fc_params *fc_params, const cmsis_nn_per_channel_quant_params *quant_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const int8_t *filter_data, const cmsis_nn_dims *bias_dims, const int32_t *bias_data,
    const cmsis_nn_dims *output_dims, int8_t *output_data);
int32_t arm_fully_connected_s8_get_buffer_size(const cmsis_nn_dims *filter_dims);

arm_cmsis_nn_status arm_elementwise_add_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_1_mult, const int32_t input_1_shift,
    const int32_t input_2_offset, const int32_t input_2_mult, const int32_t input_2_shift,
    const int32_t left_shift, int8_t *output, const int32_t out_offset, const int32_t out_mult,
    const int32_t out_shift, const int32_t out_activation_min, const int32_t out_activation_max,
    const int32_t block_size);
arm_cmsis_nn_status arm_elementwise_mul_s8(const int8_t *input_1_vect, const int8_t *input_2_vect,
    const int32_t input_1_offset, const int32_t input_2_offset, int8_t *output, const int32_t out_offset,
    const int32_t out_mult, const int32_t out_shift, const int32_t out_activation_min,
    const int32_t out_activation_max, const int32_t block_size);

arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data);
int32_t arm_avgpool_s8_get_buffer_size(const int dim_dst_width, const int ch_src);
arm_cmsis_nn_status arm_max_pool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data);

void arm_softmax_s8(const int8_t *input, const int32_t num_rows, const int32_t row_size,
    const int32_t mult, const int32_t shift, const int32_t diff_min, int8_t *output);
void arm_softmax_s8_s16(const int8_t *input, const int32_t num_rows, const int32_t row_size,
    const int32_t mult, const int32_t shift, const int32_t diff_min, int16_t *output);

void arm_reshape_s8(const int8_t *input, int8_t *output, const uint32_t total_size);

#endif
