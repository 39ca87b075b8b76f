/* The builtin option structs TFLM's flatbuffer parser allocates for each operator
 * (MicroBuiltinDataAllocator, from the arena's tail, with the struct's alignof), written out
 * member by member so a C compiler gives their sizes on each target.
 *
 * Only the layout matters here: member types and order as TFLM declares them
 * (tensorflow/compiler/mlir/lite/core/c/builtin_op_data.h), members named in our words.
 * C enums stay enums, so a compiler using short enums (arm-none-eabi-gcc's bare-metal
 * default) gives them one byte, as it does TFLM's.
 *
 * The StableHLO structs are left out: micro_rt's schema names no StableHLO operator and TFLM
 * registers no kernel for one.
 *
 * tests/test_struct_sizes.py compiles this file for x86-64 (host64) and for Cortex-M
 * (arm32) and checks micro_rt/targets.py's table against it. Which operator allocates
 * which struct is micro_rt/builtin_params.py.
 */
#ifndef MICRO_RT_STRUCTS_BUILTIN_PARAMS_H_
#define MICRO_RT_STRUCTS_BUILTIN_PARAMS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Enums of TFLM's C API; their values all fit a byte. */
typedef enum { mr_type_none = 0, mr_type_last = 20 } mr_tensor_type;          /* TfLiteType */
typedef enum { mr_padding_unknown, mr_padding_same, mr_padding_valid } mr_padding;
typedef enum { mr_act_none, mr_act_relu, mr_act_relu_n1_to_1, mr_act_relu6, mr_act_tanh,
               mr_act_sign_bit, mr_act_sigmoid } mr_activation;
typedef enum { mr_mirror_unknown, mr_mirror_reflect, mr_mirror_symmetric } mr_mirror_mode;
typedef enum { mr_fc_weights_default, mr_fc_weights_shuffled } mr_fc_weights_format;
typedef enum { mr_lsh_unknown, mr_lsh_sparse, mr_lsh_dense } mr_lsh_type;
typedef enum { mr_lstm_full, mr_lstm_basic } mr_lstm_kernel;
typedef enum { mr_combiner_sum, mr_combiner_mean, mr_combiner_sqrtn } mr_combiner;

/* A struct TFLM keeps non-empty with one char. */
typedef struct { char unused; } mr_placeholder;

typedef struct { int32_t width, height, width_offset, height_offset; } mr_padding_values;

/* ---- convolutions and pooling ---------------------------------------------------------- */
typedef struct {
    mr_padding padding; int stride_w, stride_h; mr_activation activation;
    int dilation_w, dilation_h; mr_tensor_type bias_type;
} TfLiteConvParams;
typedef struct {
    mr_padding padding; int stride_w, stride_h, stride_d; int dilation_w, dilation_h, dilation_d;
    mr_activation activation;
} TfLiteConv3DParams;
typedef struct {
    mr_padding padding; int stride_w, stride_h, filter_w, filter_h; mr_activation activation;
    struct { mr_padding_values padding; } computed;
} TfLitePoolParams;
typedef struct {
    mr_padding padding; int stride_w, stride_h, depth_multiplier; mr_activation activation;
    int dilation_w, dilation_h;
} TfLiteDepthwiseConvParams;
typedef struct {
    mr_padding padding; int stride_w, stride_h; mr_activation activation;
    mr_tensor_type bias_type;
} TfLiteTransposeConvParams;

/* ---- fully connected, recurrent ---------------------------------------------------------- */
/* The tflite-micro pip package's build has two more members than the C API header of the
 * mirrored sources: a pointer and a count after the bias type (measured: 32 bytes, 8-aligned,
 * on x86-64). */
typedef struct {
    mr_activation activation; mr_fc_weights_format weights_format; bool keep_num_dims;
    bool asymmetric_inputs; mr_tensor_type bias_type;
    const void* quantization_spec; int quantization_spec_count;
} TfLiteFullyConnectedParams;
typedef struct { int rank; mr_activation activation; bool asymmetric_inputs; } TfLiteSVDFParams;
typedef struct { mr_activation activation; bool asymmetric_inputs; } TfLiteRNNParams;
typedef struct { bool time_major; mr_activation activation; bool asymmetric_inputs; }
    TfLiteSequenceRNNParams;
typedef struct {
    bool time_major; mr_activation activation; bool merge_outputs; bool asymmetric_inputs;
} TfLiteBidirectionalSequenceRNNParams;
typedef struct {
    mr_activation activation; float cell_clip, proj_clip; mr_lstm_kernel kernel_type;
    bool asymmetric_inputs;
} TfLiteLSTMParams;
typedef struct {
    mr_activation activation; float cell_clip, proj_clip; bool time_major;
    bool asymmetric_inputs; bool diagonal_recurrent;
} TfLiteUnidirectionalSequenceLSTMParams;
typedef struct {
    mr_activation activation; float cell_clip, proj_clip; bool merge_outputs; bool time_major;
    bool asymmetric_inputs;
} TfLiteBidirectionalSequenceLSTMParams;

/* ---- elementwise and activations --------------------------------------------------------- */
typedef struct { mr_activation activation; bool pot_scale_int16; } TfLiteAddParams;
typedef struct { mr_activation activation; bool pot_scale_int16; } TfLiteSubParams;
typedef struct { mr_activation activation; } TfLiteMulParams;
typedef struct { mr_activation activation; } TfLiteDivParams;
typedef struct { mr_activation activation; } TfLiteL2NormParams;
typedef struct { float beta; } TfLiteSoftmaxParams;
typedef struct { float alpha; } TfLiteLeakyReluParams;
typedef struct { bool approximate; } TfLiteGeluParams;
typedef struct { int radius; float bias, alpha, beta; } TfLiteLocalResponseNormParams;
typedef struct { bool adj_x, adj_y, asymmetric_inputs; } TfLiteBatchMatMulParams;
typedef struct { mr_tensor_type from, to; } TfLiteCastParams;
typedef struct { float min, max; int num_bits; bool narrow_range; } TfLiteFakeQuantParams;

/* ---- shapes, slicing, gathering ---------------------------------------------------------- */
typedef struct { int axis; mr_activation activation; } TfLiteConcatenationParams;
typedef struct { int32_t shape[8]; int num_dimensions; } TfLiteReshapeParams;
typedef struct { int32_t squeeze_dims[8]; int num_squeeze_dims; } TfLiteSqueezeParams;
typedef struct {
    int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask; bool offset;
} TfLiteStridedSliceParams;
typedef struct { int values_count, axis; } TfLitePackParams;
typedef struct { int num, axis; } TfLiteUnpackParams;
typedef struct { int num_splits; } TfLiteSplitParams;
typedef struct { int num_splits; } TfLiteSplitVParams;
typedef struct { int axis, batch_dims; } TfLiteGatherParams;
typedef struct { bool keep_dims; } TfLiteReducerParams;
typedef struct { mr_tensor_type out_type; } TfLiteShapeParams;
typedef struct { mr_tensor_type output_type; } TfLiteArgMaxParams;
typedef struct { mr_tensor_type output_type; } TfLiteArgMinParams;
typedef struct { mr_mirror_mode mode; } TfLiteMirrorPaddingParams;
typedef struct { int block_size; } TfLiteSpaceToDepthParams;
typedef struct { int block_size; } TfLiteDepthToSpaceParams;
typedef struct { bool align_corners, half_pixel_centers; } TfLiteResizeBilinearParams;
typedef struct { bool align_corners, half_pixel_centers; } TfLiteResizeNearestNeighborParams;
typedef struct { bool exclusive, reverse; } TfLiteCumsumParams;
typedef struct { int axis; } TfLiteOneHotParams;
typedef struct { int seq_dim, batch_dim; } TfLiteReverseSequenceParams;
typedef struct { mr_tensor_type index_out_type; } TfLiteUniqueParams;
typedef struct { bool validate_indices; } TfLiteSparseToDenseParams;
typedef struct { mr_lsh_type type; } TfLiteLSHProjectionParams;
typedef struct { int ngram_size, max_skip_size; bool include_all_ngrams; } TfLiteSkipGramParams;
typedef struct { mr_combiner combiner; } TfLiteEmbeddingLookupSparseParams;
typedef struct { int num_boundaries; const float* boundaries; } TfLiteBucketizeParams;
typedef struct { int seed, seed2; } TfLiteRandomParams;

/* ---- control flow and resources ---------------------------------------------------------- */
typedef struct { int then_subgraph, else_subgraph; } TfLiteIfParams;
typedef struct { int cond_subgraph, body_subgraph; } TfLiteWhileParams;
typedef struct { int init_subgraph; } TfLiteCallOnceParams;
typedef struct { const char* container; const char* shared_name; } TfLiteVarHandleParams;
typedef struct { int table_id; mr_tensor_type key_type, value_type; } TfLiteHashtableParams;

#endif  /* MICRO_RT_STRUCTS_BUILTIN_PARAMS_H_ */
