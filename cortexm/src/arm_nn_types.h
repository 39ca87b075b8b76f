/* micro_rt: CMSIS-NN compatible public types (s8 subset).
 *
 * Written for micro_rt from the published CMSIS-NN API description: the struct names,
 * field order and field types are those of CMSIS-NN's arm_nn_types.h so that code written
 * against CMSIS-NN compiles and links against these kernels unchanged. All fields are
 * 32-bit (int32_t or pointers), so the AAPCS layout is simply consecutive 4-byte words.
 */
#ifndef MRT_ARM_NN_TYPES_H
#define MRT_ARM_NN_TYPES_H

#include <stdint.h>
#include <stdbool.h>

typedef enum { ARM_SIGMOID = 0, ARM_TANH = 1 } arm_nn_activation_type;

typedef enum {
    ARM_CMSIS_NN_SUCCESS = 0,
    ARM_CMSIS_NN_ARG_ERROR = -1,
    ARM_CMSIS_NN_NO_IMPL_ERROR = -2,
    ARM_CMSIS_NN_FAILURE = -3,
} arm_cmsis_nn_status;

typedef struct { int32_t w; int32_t h; } cmsis_nn_tile;                       /* 8 bytes  */
typedef struct { void *buf; int32_t size; } cmsis_nn_context;                 /* 8 bytes  */
typedef struct { int32_t n; int32_t h; int32_t w; int32_t c; } cmsis_nn_dims; /* 16 bytes */
typedef struct { int32_t *multiplier; int32_t *shift; } cmsis_nn_per_channel_quant_params;
typedef struct { int32_t multiplier; int32_t shift; } cmsis_nn_per_tensor_quant_params;
typedef struct { int32_t min; int32_t max; } cmsis_nn_activation;

typedef struct {                       /* 40 bytes */
    int32_t input_offset;
    int32_t output_offset;
    cmsis_nn_tile stride;
    cmsis_nn_tile padding;
    cmsis_nn_tile dilation;
    cmsis_nn_activation activation;
} cmsis_nn_conv_params;

typedef struct {                       /* 44 bytes */
    int32_t input_offset;
    int32_t output_offset;
    int32_t ch_mult;
    cmsis_nn_tile stride;
    cmsis_nn_tile padding;
    cmsis_nn_tile dilation;
    cmsis_nn_activation activation;
} cmsis_nn_dw_conv_params;

typedef struct {                       /* 24 bytes */
    cmsis_nn_tile stride;
    cmsis_nn_tile padding;
    cmsis_nn_activation activation;
} cmsis_nn_pool_params;

typedef struct {                       /* 20 bytes */
    int32_t input_offset;
    int32_t filter_offset;
    int32_t output_offset;
    cmsis_nn_activation activation;
} cmsis_nn_fc_params;

typedef struct { int32_t multiplier; int32_t shift; } cmsis_nn_scaling;

typedef struct {                       /* 8 bytes: the int16 softmax's tables (513 entries each) */
    const int16_t *exp_lut;
    const int16_t *one_by_one_lut;
} cmsis_nn_softmax_lut_s16;

#endif
