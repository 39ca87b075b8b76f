/* micro_rt: the reference flavour's kernels (`--kernels reference` on the virtual MCU).
 *
 * Written the way TFLM's reference kernels are (tensorflow/lite/kernels/internal/reference/
 * integer_ops): plain nested loops over the output positions, then over the filter taps with
 * a bounds check on every padded tap, and one requantization per output element. No DSP
 * instructions (SXTB16 / SMLAD), no im2col, no scratch memory beyond what TFLM's reference
 * kernel itself requests (TRANSPOSE_CONV's accumulators, SVDF's sums, LSTM's gate buffers): a user compares these cycles,
 * stack and code bytes with the CMSIS-NN-style kernels' (arm_nnfunctions.h) to see what the
 * optimized kernels buy on a core. Results are bit-exact with the numpy twins (micro_rt.kernels)
 * and so with the CMSIS-NN-style kernels: the two flavours differ in cost, never in output.
 *
 * Which operators have a kernel here, and which ones both flavours share (micro_rt's one C
 * kernel is already a plain loop like TFLM's reference), is tabulated in README.md. 16x8
 * CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED use mrt_conv_s16 (mrt_nnfunctions.h), which is
 * such a reference loop already.
 *
 * Conventions as mrt_nnfunctions.h: one parameter block of 32-bit words, packed by
 * micro_rt.cortexm.ops_reference; every kernel returns 0.
 */
#ifndef MRT_REF_NNFUNCTIONS_H
#define MRT_REF_NNFUNCTIONS_H
#include "mrt_nn_types.h"

/* mrt_ref_conv_s8 / mrt_ref_depthwise_conv_s8. Packed by ops.reference.run_ref_conv_s8. */
typedef struct {
    const int8_t *in;                  /* [n, ih, iw, ic] */
    const int8_t *filter;              /* conv: [oc, fh, fw, fc]; depthwise: [1, fh, fw, oc] */
    const int32_t *bias;               /* [oc], NULL: none */
    int8_t *out;                       /* [n, oh, ow, oc] */
    const int32_t *mult;               /* [oc]: per output channel */
    const int32_t *shift;              /* [oc] */
    mrt_conv_geometry geom;            /* conv: fc = ic / groups; depthwise: fc = oc / ic (the
                                        * depth multiplier) */
    int32_t in_off, out_off;           /* -input zero point, output zero point */
    int32_t act_min, act_max;
} mrt_ref_conv_s8_params;

/* mrt_ref_fully_connected_s8. Packed by ops.reference.run_ref_fully_connected_s8. */
typedef struct {
    const int8_t *in;                  /* [batches, accum] */
    const int8_t *filter;              /* [out_depth, accum] */
    const int32_t *bias;               /* [out_depth], NULL: none */
    int8_t *out;                       /* [batches, out_depth] */
    const int32_t *mult;               /* [out_depth] when per_channel, else [1] */
    const int32_t *shift;
    int32_t batches, accum, out_depth;
    int32_t per_channel;               /* 1: mult / shift per output channel */
    int32_t in_off, filter_off, out_off;
    int32_t act_min, act_max;
} mrt_ref_fully_connected_s8_params;

/* mrt_ref_avgpool_s8 / _s16, mrt_ref_maxpool_s8 / _s16. Packed by ops.reference.run_ref_pool_int. */
typedef struct {
    const void *in;                    /* [n, ih, iw, ch], int8 or int16 */
    void *out;                         /* [n, oh, ow, ch] */
    int32_t n, ih, iw, ch, oh, ow;
    int32_t fh, fw, sh, sw, ph, pw;    /* window, strides, paddings (top / left) */
    int32_t act_min, act_max;
} mrt_ref_pool_params;

/* mrt_ref_binary_s8 / _s16: ADD / MUL of two tensors of the same shape. Packed by
 * ops.reference.run_ref_binary_int. */
typedef struct {
    const void *in1;
    const void *in2;
    void *out;
    int32_t op;                        /* MRT_OP_ADD or MRT_OP_MUL */
    int32_t size;                      /* elements */
    mrt_binary_quant quant;
} mrt_ref_binary_params;

/* mrt_ref_transpose_conv_s8. Packed by ops.reference.run_ref_transpose_conv_s8. */
typedef struct {
    const int8_t *in;                  /* [n, ih, iw, ic] */
    const int8_t *filter;              /* [oc, fh, fw, ic] */
    const int32_t *bias;               /* [oc], NULL: none */
    int8_t *out;                       /* [n, oh, ow, oc] */
    const int32_t *mult;               /* [oc] */
    const int32_t *shift;
    int32_t *acc;                      /* [n, oh, ow, oc] int32: the scratch TFLM's reference requests */
    mrt_conv_geometry geom;            /* fc = ic, dilation 1, the scatter padding (as mrt_transpose_conv_s16) */
    int32_t in_off, out_off;
    int32_t act_min, act_max;
} mrt_ref_transpose_conv_s8_params;

/* mrt_ref_svdf_s8 / mrt_ref_svdf_state_s16_s8. Packed by ops.reference.run_ref_svdf_s8. */
typedef struct {
    const int8_t *input;               /* [batch, input_size] */
    void *state;                       /* int8 / int16 [batch, num_filters, memory_size], updated */
    const int8_t *weights_feature;     /* [num_filters, input_size] */
    const void *weights_time;          /* int8 / int16 (the state's type) [num_filters, memory_size] */
    const int32_t *bias;               /* [num_filters / rank], NULL: none */
    int32_t *scratch;                  /* int32 [batch, num_filters]: TFLM's scratch_tensor */
    int32_t *scratch_output;           /* int32 [batch, num_filters / rank]: its scratch_output_tensor */
    int8_t *output;                    /* [batch, num_filters / rank] */
    int32_t batch, input_size, num_filters, memory_size, rank;
    int32_t input_offset;              /* -input zero point */
    int32_t mult_1, shift_1;           /* feature products -> state */
    int32_t mult_2, shift_2;           /* unit sums -> output */
    int32_t state_zp, state_min, state_max, output_zp;
} mrt_ref_svdf_params;

/* mrt_ref_lstm_s8 / _s16. Packed by ops.reference.run_ref_lstm. */
typedef struct {
    mrt_lstm_params lstm;              /* as mrt_lstm_s8 / _s16 (mrt_nn_types.h) */
    int16_t *gates[4];                 /* int16 [batch, n_state] each: TFLM's four gate buffers */
} mrt_ref_lstm_params;

/**
 * CONV_2D int8 (reference_integer_ops::ConvPerChannel): for every batch, output row, output
 * column and output channel, the sum over filter rows and columns inside the image (dilated,
 * padded taps skipped) and the channels of the channel's group of (in + in_off) * filter, + bias,
 * requantized by the channel's multiplier and shift, + out_off, clamped.
 */
int32_t mrt_ref_conv_s8(const mrt_ref_conv_s8_params *p);

/**
 * DEPTHWISE_CONV_2D int8 (reference_integer_ops::DepthwiseConvPerChannel): output channel
 * ic * depth_multiplier + m of every position sums (in[ic] + in_off) * filter over the taps
 * inside the image, then as mrt_ref_conv_s8.
 */
int32_t mrt_ref_depthwise_conv_s8(const mrt_ref_conv_s8_params *p);

/**
 * FULLY_CONNECTED int8 (reference_integer_ops::FullyConnected, per tensor or per channel):
 * out[b][o] = clamp(MBQM(bias[o] + sum_k (filter[o][k] + filter_off) * (in[b][k] + in_off))
 * + out_off).
 */
int32_t mrt_ref_fully_connected_s8(const mrt_ref_fully_connected_s8_params *p);

/**
 * AVERAGE_POOL_2D / MAX_POOL_2D, int8 and int16 (reference_integer_ops::AveragePool /
 * MaxPool): per output element the window clipped to the image; average: the int32 sum divided
 * by the taps counted, rounded half away from zero (a window with no tap returns 1: TFLM refuses
 * it); max: the largest tap (the type's lowest for none); then clamped.
 */
int32_t mrt_ref_avgpool_s8(const mrt_ref_pool_params *p);
int32_t mrt_ref_avgpool_s16(const mrt_ref_pool_params *p);
int32_t mrt_ref_maxpool_s8(const mrt_ref_pool_params *p);
int32_t mrt_ref_maxpool_s16(const mrt_ref_pool_params *p);

/**
 * ADD / MUL of two int8 (int16) tensors of the same shape (reference_integer_ops::Add /
 * MulElementwise): one flat loop, each element through TFLM's quantized output stage
 * (mrt_binary_quant). Broadcasting shapes run mrt_binary_s8 / _s16, shared by both flavours.
 */
int32_t mrt_ref_binary_s8(const mrt_ref_binary_params *p);
int32_t mrt_ref_binary_s16(const mrt_ref_binary_params *p);

/**
 * TRANSPOSE_CONV int8 (reference_integer_ops::TransposeConv): the int32 accumulators zeroed,
 * every (input + in_off) times every filter tap added into the output element it reaches (the
 * scatter mrt_transpose_conv_s16 uses), then per element + bias, requantized by its channel's
 * multiplier and shift, + out_off, clamped. Needs the accumulators' scratch, which TFLM's
 * reference kernel requests (the CMSIS-NN glue requests arm_transpose_conv_s8's instead).
 */
int32_t mrt_ref_transpose_conv_s8(const mrt_ref_transpose_conv_s8_params *p);

/**
 * SVDF, int8 input, int8 (mrt_ref_svdf_s8) or int16 (mrt_ref_svdf_state_s16_s8) state and time
 * weights (TFLM's EvalIntegerSvdfReference): the state moves one element left; each filter's
 * feature dot product (input + input_offset) * weights_feature, requantized, saturated to the
 * state type, + state_zp, goes into its last memory slot; each filter's time dot product
 * weights_time * (state - state_zp) into `scratch`; per unit, bias + its rank filters' sums into
 * `scratch_output`, requantized + output_zp, clamped to int8. int32 sums wrap as TFLM's do.
 */
int32_t mrt_ref_svdf_s8(const mrt_ref_svdf_params *p);
int32_t mrt_ref_svdf_state_s16_s8(const mrt_ref_svdf_params *p);

/**
 * UNIDIRECTIONAL_SEQUENCE_LSTM 8x8->16 (mrt_ref_lstm_s8) and 16x8->16 (mrt_ref_lstm_s16), TFLM's
 * integer LstmStep one gate at a time: per step and batch row, each gate's input FC (+ bias)
 * into its gate buffer, the recurrent FC added with int16 saturation, the sigmoid / tanh over
 * the buffer; then the cell update over all cells and the hidden values into the output row;
 * the hidden state takes the step's rows when the step is done. The arithmetic per element is
 * mrt_lstm_s8 / _s16's (mrt_lstm_common.h); the dot products are plain loops.
 */
int32_t mrt_ref_lstm_s8(const mrt_ref_lstm_params *p);
int32_t mrt_ref_lstm_s16(const mrt_ref_lstm_params *p);

#endif
