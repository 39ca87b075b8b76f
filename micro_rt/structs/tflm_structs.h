/* The C layouts behind micro_rt/targets.py's STRUCTS table: TFLM's own records, allocator
 * objects, kernel op data and builtin option structs, declared here member by member from
 * TFLM's definitions (tensorflow/tflite-micro: tensorflow/lite/core/c/common.h,
 * compiler/mlir/lite/core/c/builtin_op_data.h, kernels/internal/types.h, micro/*.h,
 * micro/kernels/*.h and kernels/cmsis_nn/*.cc; snapshot of 2026-08-20), written in our words.
 * It is long because it is a table: one declaration per TFLM record, grown with each operator.
 * Only member types and order matter for sizes; names follow TFLM's so they can be checked.
 *
 * tests/test_struct_layouts.py compiles this header twice and compares every number of the
 * table with sizeof/alignof:
 *   host64: the host gcc with -DUSE_TFLM_COMPRESSION (the tflite-micro pip package is built
 *           with compression; C enums are 4 bytes);
 *   arm32:  arm-none-eabi-gcc -mthumb -mcpu=cortex-m4 (a default Cortex-M build: no
 *           compression, and the bare-metal ABI's short enums: a C enum takes 1 byte).
 * C++ classes are written as structs: one `const void *` per virtual table pointer (a class
 * with two polymorphic bases has two), base-class members first.
 *
 * The table's alignment is the struct's alignof, except for what MRT_KERNEL_OP_DATA lists:
 * kernel op data comes from a kernel's AllocatePersistentBuffer, which TFLM aligns to
 * MicroArenaBufferAlignment() (MRT_KERNEL_ALLOC_ALIGN, 16) whatever the struct's own alignment.
 */
#ifndef MICRO_RT_TFLM_STRUCTS_H
#define MICRO_RT_TFLM_STRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MRT_KERNEL_ALLOC_ALIGN 16

/* ---- enums of the C API (their size is the ABI's enum size) ---------------------------- */
typedef enum { kTfLiteNoType = 0, kTfLiteFloat32 = 1, kTfLiteInt8 = 9 } TfLiteType;
typedef enum { kTfLiteNoQuantization = 0, kTfLiteAffineQuantization = 1 } TfLiteQuantizationType;
typedef enum { kTfLiteMemNone = 0, kTfLiteMmapRo, kTfLiteArenaRw } TfLiteAllocationType;
typedef enum { kTfLitePaddingUnknown = 0, kTfLitePaddingSame, kTfLitePaddingValid } TfLitePadding;
typedef enum { kTfLiteActNone = 0, kTfLiteActRelu, kTfLiteActRelu6 } TfLiteFusedActivation;
typedef enum { kTfLiteFullyConnectedWeightsFormatDefault = 0 } TfLiteFullyConnectedWeightsFormat;
typedef enum { kTfLiteMirrorPaddingUnknown = 0, kTfLiteMirrorPaddingReflect } TfLiteMirrorPaddingMode;
typedef enum { kTfLiteLshProjectionUnknown = 0, kTfLiteLshProjectionSparse } TfLiteLSHProjectionType;
typedef enum { kTfLiteLSTMFullKernel = 0, kTfLiteLSTMBasicKernel } TfLiteLSTMKernelType;
typedef enum { kTfLiteCombinerTypeSum = 0, kTfLiteCombinerTypeMean } TfLiteCombinerType;

/* ---- framework records (common.h, micro_allocator.h, micro_allocation_info.h) ------------- */
typedef union { int32_t *i32; float *f; char *raw; void *data; } TfLitePtrUnion;
typedef struct { int size; int data[]; } TfLiteIntArray;
typedef struct { int size; float data[]; } TfLiteFloatArray;
typedef struct { float scale; int32_t zero_point; } TfLiteQuantizationParams;
typedef struct { TfLiteQuantizationType type; void *params; } TfLiteQuantization;

typedef struct {
    TfLitePtrUnion data;
    TfLiteIntArray *dims;
    TfLiteType type;
} TfLiteEvalTensor;

/* The reduced tensor of TF_LITE_STATIC_MEMORY builds (all of TFLM's). */
typedef struct {
    TfLiteQuantization quantization;
    TfLiteQuantizationParams params;
    TfLitePtrUnion data;
    const TfLiteIntArray *dims;
    size_t bytes;
    TfLiteType type;
    TfLiteAllocationType allocation_type;
    bool is_variable;
} TfLiteTensor;

typedef struct {
    TfLiteIntArray *inputs;
    TfLiteIntArray *outputs;
    TfLiteIntArray *intermediates;
    void *user_data;
    void *builtin_data;
    const void *custom_initial_data;
    int custom_initial_data_size;
} TfLiteNode;

typedef struct {
    TfLiteNode node;
    const void *registration;                  /* const TFLMRegistration * */
} NodeAndRegistration;

typedef struct {
    TfLiteFloatArray *scale;
    TfLiteIntArray *zero_point;
    int32_t quantized_dimension;
} TfLiteAffineQuantization;

typedef struct {
    NodeAndRegistration *node_and_registrations;
    TfLiteEvalTensor *tensors;
#ifdef USE_TFLM_COMPRESSION
    const void **compressed;                   /* CompressedTensorList: one pointer */
#endif
} SubgraphAllocations;

typedef struct { uint8_t *data; } ScratchBufferHandle;

typedef struct {
    size_t bytes;
    int node_idx;
    int subgraph_idx;
} ScratchBufferRequest;

typedef struct {
    size_t bytes;
    void **output_ptr;
    int first_created;
    int last_used;
    int32_t offline_offset;
    bool needs_allocating;
} AllocationInfo;

/* GreedyMemoryPlanner's scratch per planned buffer (its per_buffer_size()): one entry in each
 * of its five arrays. */
typedef struct { int size, offline_offset, first_time_used, last_time_used; } BufferRequirements;
typedef struct { int offset, requirements_index, next_entry_index; } ListEntry;
typedef struct {
    BufferRequirements requirement;
    int size_sorted;
    int id_sorted;
    ListEntry by_offset;
    int offset;
} GreedyPlannerPerBuffer;

/* ---- allocator objects TFLM places at the arena's tail at start-up ------------------------ */
typedef struct {
    const void *vptr_non_persistent;           /* INonPersistentBufferAllocator */
    const void *vptr_persistent;               /* IPersistentBufferAllocator */
    uint8_t *buffer_head_, *buffer_tail_, *head_, *tail_, *temp_;
    intptr_t temp_buffer_ptr_check_sum_;
    int temp_buffer_count_;
} SingleArenaBufferAllocator;

typedef struct {
    SingleArenaBufferAllocator base;
    size_t requested_head_bytes_, requested_tail_bytes_, used_bytes_, alloc_count_;
} RecordingSingleArenaBufferAllocator;

typedef struct {
    const void *vptr;                          /* MicroMemoryPlanner */
    int max_buffer_count_;
    int buffer_count_;
    BufferRequirements *requirements_;
    int *buffer_sizes_sorted_;
    int *buffer_ids_sorted_;
    ListEntry *buffers_sorted_by_offset_;
    int next_free_entry_;
    int first_entry_index_;
    int *buffer_offsets_;
    bool need_to_calculate_offsets_;
} GreedyMemoryPlanner;

typedef struct {
    const void *vptr;
    void *non_persistent_buffer_allocator_;
    void *persistent_buffer_allocator_;
    void *builtin_data_allocator_;
    void *memory_planner_;
    bool model_is_allocating_;
    size_t scratch_buffer_request_count_;
    uint8_t *scratch_buffer_head_;
    size_t max_head_buffer_usage_;
} MicroAllocator;

typedef struct { size_t requested_bytes, used_bytes, count; } RecordedAllocation;

typedef struct {
    MicroAllocator base;
    const RecordingSingleArenaBufferAllocator *recording_memory_allocator_;
    RecordedAllocation eval_tensor_data, persistent_tensor_data, persistent_quantization_data,
        persistent_buffer_data, variable_buffer_data, node_and_registration_data;
#ifdef USE_TFLM_COMPRESSION
    RecordedAllocation compression_data;
#endif
    RecordedAllocation op_data;
} RecordingMicroAllocator;

typedef struct {
    const void *vptr;                          /* BuiltinDataAllocator */
    void *persistent_allocator_;
} MicroBuiltinDataAllocator;

/* What MicroInterpreter's start-up leaves in the tail for a one-subgraph model: the recording
 * allocators the pip package's interpreter uses, and the plain ones of a device build. */
typedef struct {
    RecordingSingleArenaBufferAllocator memory_allocator;
    GreedyMemoryPlanner planner;
    RecordingMicroAllocator allocator;
    MicroBuiltinDataAllocator builtin_data_allocator;
    SubgraphAllocations subgraph;
} AllocatorFixed;

typedef struct {
    SingleArenaBufferAllocator memory_allocator;
    GreedyMemoryPlanner planner;
    MicroAllocator allocator;
    MicroBuiltinDataAllocator builtin_data_allocator;
    SubgraphAllocations subgraph;
} AllocatorFixedPlain;

/* ---- parameter records of the reference kernels (kernels/internal/types.h) ---------------- */
typedef struct { int width, height, width_offset, height_offset; } TfLitePaddingValues;
typedef struct { int32_t zero_point; double scale; } QuantizationParams;
typedef struct { double scale; int32_t zero_point; } DequantizationParams;
typedef struct {
    uint8_t activation_type;                   /* enum class FusedActivationFunctionType : uint8_t */
    int32_t quantized_activation_min, quantized_activation_max;
} ActivationParams;
typedef struct {
    ActivationParams base;
    int32_t input_offset, output_offset, output_multiplier;
    int output_shift;
} ReluParams;
typedef struct {
    int32_t axis;
    const int32_t *input_zeropoint;
    const float *input_scale;
    int32_t inputs_count, output_zeropoint;
    float output_scale;
} ConcatenationParams;
typedef struct {
    double beta;
    int32_t input_multiplier, input_left_shift, reverse_scaling_divisor,
        reverse_scaling_right_shift;
    int diff_min;
    int32_t zero_point;
    float scale;
    float *table;
    int16_t *exp_lut, *one_over_one_plus_x_lut;
    uint8_t *uint8_table1, *uint8_table2;
} SoftmaxParams;
typedef struct {
    int16_t input_zero_point, output_zero_point, reluish_multiplier_fixedpoint_int16;
    int reluish_multiplier_exponent;
    int16_t output_multiplier_fixedpoint_int16;
    int output_multiplier_exponent;
} HardSwishParams;
typedef struct {
    int8_t left_padding_count;
    int32_t left_padding[5];
    int8_t right_padding_count;
    int32_t right_padding[5];
    uint8_t resizing_category;                 /* enum class ResizingCategory : uint8_t */
} PadParams;
typedef struct {
    int8_t start_indices_count;
    int32_t start_indices[5];
    int8_t stop_indices_count;
    int32_t stop_indices[5];
    int8_t strides_count;
    int32_t strides[5];
    uint16_t begin_mask, ellipsis_mask, end_mask, new_axis_mask, shrink_axis_mask;
    bool offset;
} StridedSliceParams;
typedef struct {
    int32_t input_offset, weights_offset, output_offset, output_multiplier;
    int output_shift;
    int32_t quantized_activation_min, quantized_activation_max;
    float float_activation_min, float_activation_max;
    bool lhs_cacheable, rhs_cacheable;
    uint8_t weights_format;                    /* enum class FullyConnectedWeightsFormat : uint8_t */
} FullyConnectedParams;
typedef struct {
    uint8_t broadcast_category;                /* enum class BroadcastableOpCategory : uint8_t */
    int32_t input1_offset, input2_offset, output_offset, output_multiplier;
    int output_shift, left_shift;
    int32_t input1_multiplier;
    int input1_shift;
    int32_t input2_multiplier;
    int input2_shift;
    int32_t quantized_activation_min, quantized_activation_max;
    float float_activation_min, float_activation_max;
    int64_t int64_activation_min, int64_activation_max;
    int16_t int16_activation_min, int16_activation_max;
    int broadcast_shape[5];
} ArithmeticParams;

/* ---- kernel op data (what each kernel's init allocates) ----------------------------------- */
typedef struct {
    TfLitePaddingValues padding;
    int32_t input_zero_point, filter_zero_point, output_zero_point, output_multiplier;
    int output_shift;
    int32_t *per_channel_output_multiplier, *per_channel_output_shift;
    int32_t output_activation_min, output_activation_max;
    int filter_buffer_index;
#ifdef USE_TFLM_COMPRESSION
    int weights_scratch_index, bias_scratch_index;
#endif
} OpDataConv;

typedef struct {
    int32_t output_multiplier;
    int output_shift;
    int32_t output_activation_min, output_activation_max;
    int input_quantized_index;
    int32_t input_zero_point, filter_zero_point, output_zero_point;
    int filter_buffer_index;
    int32_t *per_channel_output_multiplier, *per_channel_output_shift;
    bool is_per_channel;
#ifdef USE_TFLM_COMPRESSION
    int weights_scratch_index, bias_scratch_index;
#endif
} OpDataFullyConnected;

/* ADD's and SUB's op data share these members; ADD adds the float activation range */
#define MRT_ADD_SUB_MEMBERS                                                                   \
    bool requires_broadcast;                                                                  \
    int input1_shift, input2_shift;                                                           \
    int32_t output_activation_min, output_activation_max;                                     \
    int32_t input1_multiplier, input2_multiplier, output_multiplier;                          \
    int output_shift, left_shift;                                                             \
    int32_t input1_offset, input2_offset, output_offset;
typedef struct {
    MRT_ADD_SUB_MEMBERS
    float output_activation_min_f32, output_activation_max_f32;
} OpDataAdd;
typedef struct { MRT_ADD_SUB_MEMBERS } OpDataSub;

typedef struct {
    int32_t input1_zero_point, input2_zero_point, output_activation_min, output_activation_max,
        output_zero_point, output_multiplier;
    int output_shift;
    float output_activation_min_f32, output_activation_max_f32;
} OpDataMul;

typedef struct {
    TfLitePaddingValues padding;
    int32_t activation_min, activation_max;
    float activation_min_f32, activation_max_f32;
} OpDataPooling;

/* LOGISTIC (logistic.h) and TANH (tanh.cc's OpData) keep the same four numbers */
typedef struct {
    int32_t input_zero_point, input_range_radius, input_multiplier;
    int input_left_shift;
} OpDataLogistic;
typedef OpDataLogistic OpDataTanh;

typedef struct { ReluParams params; } ReluOpData;
typedef struct { int32_t six, zero; } Relu6OpData;

typedef struct {                               /* elementwise.cc's OpDataAbsRsqrt (ABS, RSQRT) */
    int32_t multiplier;
    int shift, input_offset, output_offset;
    bool needs_rescale;
    TfLiteQuantizationType input_quantization_type;
    TfLiteType input_type;
} OpDataAbsRsqrt;
typedef struct { int8_t table[256]; } OpDataElu;   /* elu.cc's OpData */
typedef struct {
    int32_t output_multiplier_alpha, output_shift_alpha, output_multiplier_identity,
        output_shift_identity, input_zero_point, output_zero_point;
} LeakyReluOpData;

typedef struct {
    QuantizationParams quantization_params;
    int32_t requantize_output_multiplier;
    int requantize_output_shift;
    int32_t input_zero_point;
} OpDataQuantizeReference;

typedef struct {
    DequantizationParams quantization_params;
    int32_t output_multiplier;
    int output_shift;
    int32_t output_zero_point;
} DequantizeOpData;

typedef struct { PadParams params; int32_t output_zero_point; } OpDataPad;     /* pad.h's OpData */

typedef struct {
    int32_t multiplier;
    int shift, scratch_accumulator_idx, scratch_resolved_axis_idx, scratch_input_iter_idx;
    int input_zp;
    float input_scale;
    int output_zp;
    float output_scale;
    int num_output_elements, num_axis;
} OpDataReduce;

typedef struct { StridedSliceParams params; } StridedSliceOpData;

typedef struct {                               /* cumsum.cc's OpData (int8 only, from Prepare) */
    int32_t output_activation_min, output_activation_max, input_offset, output_offset,
        input_multiplier, output_multiplier;
    int input_shift, output_shift, left_shift;
} OpDataCumsum;
typedef struct {                               /* log_softmax.cc (int8 only, from Prepare) */
    int32_t input_multiplier, input_left_shift, reverse_scaling_divisor,
        reverse_scaling_right_shift;
    int diff_min;
    size_t outer_size, depth;
} LogSoftmaxOpData;
typedef struct { int32_t input_zero_point; } L2NormalizationParams;   /* types.h, l2norm.cc's */

typedef struct {                               /* concatenation.cc's OpData */
    ConcatenationParams params;
#ifdef USE_TFLM_COMPRESSION
    int scratch_indices[10];                   /* kMaxInputNum */
#endif
} OpDataConcatenation;

typedef struct {
    int32_t effective_scale_1_a, effective_scale_2_a;
    int effective_scale_1_b, effective_scale_2_b;
    int scratch_tensor_index, scratch_output_tensor_index;
    int input_zero_point, output_zero_point, activation_state_zero_point;
} OpDataSvdf;

typedef struct { FullyConnectedParams input_fc_params, recurrent_fc_params; } GateParameters;
typedef struct {
    ArithmeticParams forget_cell_mul_params, input_mul_params, output_mul_params;
} InterGateParameters;
typedef struct {
    bool time_major;
    int batch_size, time_steps, input_dimension, state_dimension;
} LstmSizeInfo;
typedef struct {
    float cell_clip;
    int16_t quantized_cell_clip;
    int32_t cell_state_scale_power;
} CellStateInfo;
typedef struct {
    LstmSizeInfo size_info;
    CellStateInfo cell_state_info;
    TfLiteFusedActivation cell_gate_nonlinear_type;
    GateParameters forget_gate_parameters, input_gate_parameters, cell_gate_parameters,
        output_gate_parameters;
    InterGateParameters inter_gate_parameters;
    int buffer_indices[4];
} OpDataLSTM;
typedef struct { int32_t output_offset; } SpaceToBatchParams;  /* types.h; space_to_batch_nd.cc init */
typedef struct {                               /* mirror_pad.cc's OpDataMirrorPad */
    int input_dims, output_size, offset;
    int output_dims_num_elements_buffer_index, input_dims_num_elements_buffer_index;
} OpDataMirrorPad;
typedef struct { float scale; size_t num_columns; } OpDataEmbeddingLookup;  /* embedding_lookup.cc's OpData */

/* DIV, SQUARED_DIFFERENCE, ADD_N (int8), PRELU, the comparisons, SELECT_V2 (div.cc,
 * squared_difference.cc, add_n.cc, prelu_common.cc, comparisons.cc, select.cc) */
typedef struct {
    int32_t input1_zero_point, input2_zero_point, output_zero_point, output_activation_min,
        output_activation_max, output_multiplier;
    int output_shift;
} OpDataDiv;
typedef struct { bool requires_broadcast; ArithmeticParams arithmetic_params; } OpDataSquaredDifference;
typedef struct {
    int32_t output_activation_min, output_activation_max, input_offset, output_offset,
        input_multiplier, output_multiplier;
    int input_shift, output_shift, left_shift, scratch_index;
} OpDataAddN;
typedef struct {
    int32_t input_offset, alpha_offset, output_offset, output_multiplier_1;
    int output_shift_1;
    int32_t output_multiplier_2;
    int output_shift_2;
} PreluParams;
typedef struct {
    int left_shift;
    int32_t input1_offset, input1_multiplier;
    int input1_shift;
    int32_t input2_offset, input2_multiplier;
    int input2_shift;
    bool is_broadcast;
} ComparisonParams;
typedef struct { ComparisonParams params; } OpDataComparison;
typedef struct { bool requires_broadcast; } OpDataSelect;

/* CMSIS-NN wrappers (kernels/cmsis_nn/*.cc) around the reference op data */
typedef struct { OpDataConv reference_op_data; int buffer_idx; } OpDataConvCmsis;
typedef struct { OpDataConv reference_op_data; int buffer_idx; } OpDataDepthwiseCmsis;
typedef struct {
    OpDataFullyConnected reference_op_data;
    int buffer_conv_1x1_idx, buffer_idx;
    int32_t *kernel_sums;
    int32_t batches, accum_depth, output_depth;
} OpDataFullyConnectedCmsis;
typedef struct { OpDataPooling reference_op_data; int buffer_idx; } OpDataPoolingCmsis;
typedef struct { SoftmaxParams softmax_params; int32_t num_rows, row_size; } OpDataSoftmaxCmsis;
typedef struct {
    MRT_ADD_SUB_MEMBERS
    float output_activation_min_f32, output_activation_max_f32;
} OpDataAddCmsis;                              /* cmsis_nn/add.cc's own OpData, same members */
typedef OpDataMul OpDataMulCmsis;              /* cmsis_nn/mul.cc allocates sizeof(OpDataMul) */
typedef struct {                               /* cmsis_nn/svdf.cc (KERNELS_OPTIMIZED_FOR_SPEED) */
    int32_t effective_scale_1_a, effective_scale_2_a;
    int effective_scale_1_b, effective_scale_2_b;
    int scratch_tensor_index, scratch_output_tensor_index;
    int input_zero_point, output_zero_point, activation_state_zero_point;
    int32_t *kernel_sums;
} CmsisNnOpDataSvdf;
typedef enum { ARM_SIGMOID = 0, ARM_TANH = 1 } arm_nn_activation_type;
typedef struct {                               /* CMSIS-NN arm_nn_types.h */
    int32_t input_multiplier, input_shift;
    const void *input_weights, *input_effective_bias;
    int32_t hidden_multiplier, hidden_shift;
    const void *hidden_weights, *hidden_effective_bias;
    const void *bias;
    arm_nn_activation_type activation_type;
} cmsis_nn_lstm_gate;
typedef struct {
    int32_t time_major, batch_size, time_steps, input_size, hidden_size, input_offset;
    int32_t forget_to_cell_multiplier, forget_to_cell_shift, input_to_cell_multiplier, input_to_cell_shift;
    int32_t cell_clip, cell_scale_power, output_multiplier, output_shift, output_offset;
    cmsis_nn_lstm_gate forget_gate, input_gate, cell_gate, output_gate;
} cmsis_nn_lstm_params;
typedef struct {                               /* cmsis_nn/unidirectional_sequence_lstm.cc's OpData */
    OpDataLSTM params_ref;
    cmsis_nn_lstm_params params_cmsis_nn;
} OpDataLSTMCmsis;

/* TRANSPOSE_CONV (transpose_conv.cc, cmsis_nn/transpose_conv.cc) and BATCH_MATMUL
 * (batch_matmul.h, cmsis_nn/batch_matmul.cc). ConvParams is types.h's (int16 strides and
 * padding; PaddingType is an enum class on uint8_t). */
typedef struct { int16_t width, height, width_offset, height_offset; } PaddingValues;
typedef struct {
    uint8_t padding_type;                      /* enum class PaddingType : uint8_t */
    PaddingValues padding_values;
    int16_t stride_width, stride_height, dilation_width_factor, dilation_height_factor;
    int32_t input_offset, weights_offset, output_offset, output_multiplier;
    int output_shift;
    int32_t quantized_activation_min, quantized_activation_max;
    float float_activation_min, float_activation_max;
} ConvParams;
typedef struct {
    ConvParams params;
    int scratch_buffer_index;
#ifdef USE_TFLM_COMPRESSION
    int filter_scratch_index, bias_scratch_index;
#endif
    int bias_converted_buffer_index;
    int32_t *per_channel_output_multiplier, *per_channel_output_shift;
} OpDataTransposeConv;
typedef struct {
    ConvParams params;
    int scratch_buffer_index, scratch_buffer_output_index, bias_converted_buffer_index;
    int32_t *per_channel_output_multiplier, *per_channel_output_shift;
} OpDataTransposeConvCmsis;
typedef struct {
    int32_t output_multiplier;
    int output_shift;
    int32_t output_activation_min, output_activation_max;
    int32_t lhs_zero_point, rhs_zero_point, output_zero_point;
} QuantizationOpDataBatchMatmul;
typedef struct {
    QuantizationOpDataBatchMatmul *quantization;
    TfLiteEvalTensor *lhs_transposed_tensor, *rhs_transposed_tensor;
    bool rhs_is_transposed, lhs_is_constant_tensor, rhs_is_constant_tensor;
} OpDataBatchMatmul;
typedef struct { int32_t n, h, w, c; } cmsis_nn_dims;
typedef struct {
    OpDataBatchMatmul reference_op_data;
    cmsis_nn_dims output_shape;
    int buffer_idx;
} OpDataBatchMatmulCmsis;

/* ---- builtin option structs (builtin_op_data.h), allocated with their own alignment ------ */
typedef struct {
    TfLitePadding padding;
    int stride_width, stride_height;
    TfLiteFusedActivation activation;
    int dilation_width_factor, dilation_height_factor;
    TfLiteType quantized_bias_type;
} TfLiteConvParams;
typedef struct {
    TfLitePadding padding;
    int stride_width, stride_height, depth_multiplier;
    TfLiteFusedActivation activation;
    int dilation_width_factor, dilation_height_factor;
} TfLiteDepthwiseConvParams;
typedef struct {
    TfLiteFusedActivation activation;
    TfLiteFullyConnectedWeightsFormat weights_format;
    bool keep_num_dims, asymmetric_quantize_inputs;
    TfLiteType quantized_bias_type;
#ifdef MRT_PIP_PACKAGE_BUILD
    /* Only in the pip package: it (built 2026-10-23) measures 32 bytes, 8-aligned, i.e. 16
     * more than the members above, as a pointer and a 32-bit count would make. A device build
     * of TFLM 90b983c2 (the sources' own declaration, compiled by arm-none-eabi-gcc 12.2) has
     * the five 1-byte members alone: sizeof 5, alignof 1, and TFLM's arena tail on the M4
     * grows by those 5 bytes per FULLY_CONNECTED (../shared/notes/measured-facts.md). */
    const void *unidentified_pointer;
    int32_t unidentified_count;
#endif
} TfLiteFullyConnectedParams;
typedef struct {
    TfLitePadding padding;
    int stride_width, stride_height, filter_width, filter_height;
    TfLiteFusedActivation activation;
    struct { TfLitePaddingValues padding; } computed;
} TfLitePoolParams;
typedef struct { int32_t shape[8]; int num_dimensions; } TfLiteReshapeParams;
typedef struct { int32_t squeeze_dims[8]; int num_squeeze_dims; } TfLiteSqueezeParams;
typedef struct {
    int begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
    bool offset;
} TfLiteStridedSliceParams;
typedef struct {
    TfLiteFusedActivation activation;
    float cell_clip, proj_clip;
    bool time_major, asymmetric_quantize_inputs, diagonal_recurrent_tensors;
} TfLiteUnidirectionalSequenceLSTMParams;
typedef struct {
    int rank;
    TfLiteFusedActivation activation;
    bool asymmetric_quantize_inputs;
} TfLiteSVDFParams;
typedef struct { TfLiteFusedActivation activation; bool pot_scale_int16; } TfLiteAddParams;
typedef struct { TfLiteFusedActivation activation; bool pot_scale_int16; } TfLiteSubParams;
typedef struct { int axis; TfLiteFusedActivation activation; } TfLiteConcatenationParams;
typedef struct { int values_count, axis; } TfLitePackParams;
typedef struct { int num, axis; } TfLiteUnpackParams;
typedef struct { TfLiteType in_data_type, out_data_type; } TfLiteCastParams;
typedef struct { int axis, batch_dims; } TfLiteGatherParams;
typedef struct { TfLiteFusedActivation activation; } TfLiteMulParams;
typedef struct { TfLiteFusedActivation activation; } TfLiteDivParams;
typedef struct { int num_splits; } TfLiteSplitParams;
typedef struct { float beta; } TfLiteSoftmaxParams;
typedef struct { float alpha; } TfLiteLeakyReluParams;
typedef struct { TfLiteType out_type; } TfLiteShapeParams;
typedef struct { bool keep_dims; } TfLiteReducerParams;
/* The rest of the structs flatbuffer_conversions.cc allocates (micro_rt/builtin_params.py maps
 * operators to them), including those of operators TFLM has no kernel for. The StableHLO ones
 * are left out: micro_rt's schema names no StableHLO operator. */
typedef struct {
    TfLitePadding padding;
    int stride_width, stride_height, stride_depth;
    int dilation_width_factor, dilation_height_factor, dilation_depth_factor;
    TfLiteFusedActivation activation;
} TfLiteConv3DParams;
typedef struct {
    TfLitePadding padding;
    int stride_width, stride_height;
    TfLiteFusedActivation activation;
    TfLiteType quantized_bias_type;
} TfLiteTransposeConvParams;
typedef struct { TfLiteFusedActivation activation; bool asymmetric_quantize_inputs; } TfLiteRNNParams;
typedef struct {
    bool time_major;
    TfLiteFusedActivation activation;
    bool asymmetric_quantize_inputs;
} TfLiteSequenceRNNParams;
typedef struct {
    bool time_major;
    TfLiteFusedActivation activation;
    bool merge_outputs, asymmetric_quantize_inputs;
} TfLiteBidirectionalSequenceRNNParams;
typedef struct {
    TfLiteFusedActivation activation;
    float cell_clip, proj_clip;
    TfLiteLSTMKernelType kernel_type;
    bool asymmetric_quantize_inputs;
} TfLiteLSTMParams;
typedef struct {
    TfLiteFusedActivation activation;
    float cell_clip, proj_clip;
    bool merge_outputs, time_major, asymmetric_quantize_inputs;
} TfLiteBidirectionalSequenceLSTMParams;
typedef struct { TfLiteFusedActivation activation; } TfLiteL2NormParams;
typedef struct { bool approximate; } TfLiteGeluParams;
typedef struct { int radius; float bias, alpha, beta; } TfLiteLocalResponseNormParams;
typedef struct { bool adj_x, adj_y, asymmetric_quantize_inputs; } TfLiteBatchMatMulParams;
typedef struct { float min, max; int num_bits; bool narrow_range; } TfLiteFakeQuantParams;
typedef struct { int num_splits; } TfLiteSplitVParams;
typedef struct { TfLiteType output_type; } TfLiteArgMaxParams;
typedef struct { TfLiteType output_type; } TfLiteArgMinParams;
typedef struct { TfLiteMirrorPaddingMode mode; } TfLiteMirrorPaddingParams;
typedef struct { int block_size; } TfLiteSpaceToDepthParams;
typedef struct { int block_size; } TfLiteDepthToSpaceParams;
typedef struct { bool align_corners, half_pixel_centers; } TfLiteResizeBilinearParams;
typedef struct { bool align_corners, half_pixel_centers; } TfLiteResizeNearestNeighborParams;
typedef struct { bool exclusive, reverse; } TfLiteCumsumParams;
typedef struct { int axis; } TfLiteOneHotParams;
typedef struct { int seq_dim, batch_dim; } TfLiteReverseSequenceParams;
typedef struct { TfLiteType index_out_type; } TfLiteUniqueParams;
typedef struct { bool validate_indices; } TfLiteSparseToDenseParams;
typedef struct { TfLiteLSHProjectionType type; } TfLiteLSHProjectionParams;
typedef struct { int ngram_size, max_skip_size; bool include_all_ngrams; } TfLiteSkipGramParams;
typedef struct { TfLiteCombinerType combiner; } TfLiteEmbeddingLookupSparseParams;
typedef struct { int num_boundaries; const float *boundaries; } TfLiteBucketizeParams;
typedef struct { int seed, seed2; } TfLiteRandomParams;
typedef struct { int then_subgraph_index, else_subgraph_index; } TfLiteIfParams;
typedef struct { int cond_subgraph_index, body_subgraph_index; } TfLiteWhileParams;
typedef struct { int init_subgraph_index; } TfLiteCallOnceParams;
typedef struct { const char *container, *shared_name; } TfLiteVarHandleParams;
typedef struct { int table_id; TfLiteType key_dtype, value_dtype; } TfLiteHashtableParams;

/* ---- Vela's ethos-u custom operator (kernels/ethos_u/ethosu.cc) ----------------------------- */
typedef struct { int cms_data_size, base_addr_idx, base_addr_size_idx; } OpDataEthosU;

/* ---- CIRCULAR_BUFFER (kernels/circular_buffer.h) ---------------------------------------------- */
typedef struct { int cycles_until_run, cycles_max; } OpDataCircularBuffer;

/* ---- TFLite_Detection_PostProcess (kernels/detection_postprocess.cc's OpData) ------------- */
typedef struct {
    int max_detections, max_classes_per_detection, detections_per_class;
    float non_max_suppression_score_threshold, intersection_over_union_threshold;
    int num_classes;
    bool use_regular_non_max_suppression;
    struct { float y, x, h, w; } scale_values;          /* CenterSizeEncoding */
    int scratch_index[11];
    TfLiteQuantizationParams input_box_encodings, input_class_predictions, input_anchors;
} OpDataDetectionPostProcess;

/* ---- Signal library op data (signal/micro/kernels/*.cc, signal/src/*.h) ------------------- */
typedef struct { int32_t shift; int32_t input_size; } TFLMSignalWindowParams;
typedef struct { int32_t end_index; int32_t start_index; } TFLMSignalEnergyParams;
typedef struct {                         /* TfLiteAudioFrontendRfftParams<T> (T* is a pointer) */
    int32_t fft_length, input_size, input_length, output_length;
    TfLiteType fft_type;
    void *work_area;
    int scratch_buffer_index;
    int8_t *state;
} TfLiteAudioFrontendRfftParams;
typedef struct {
    int32_t num_channels;
    const int16_t *channel_frequency_starts, *channel_weight_starts, *channel_widths;
    const int16_t *weights, *unweights;
    int32_t output_scale, input_correction_bits;
} FilterbankConfig;
typedef struct { FilterbankConfig config; uint64_t *work_area; } TFLMSignalFilterBankParams;
typedef struct {
    int32_t num_channels;
    uint32_t smoothing, one_minus_smoothing, min_signal_remaining, alternate_smoothing,
        alternate_one_minus_smoothing, smoothing_bits, spectral_subtraction_bits;
    bool clamping;
} SpectralSubtractionConfig;
typedef struct {
    SpectralSubtractionConfig config;
    uint32_t *noise_estimate;
    size_t noise_estimate_size;
} TFLMSignalSpectralSubtractionParams;
typedef struct { int snr_shift; } TfLitePcanParams;
typedef struct { int input_correction_bits; int output_scale; } TFLMSignalLogParams;
typedef struct {
    int32_t fft_length, input_size, input_length, output_length;
    TfLiteType fft_type;
    int8_t *state;
} TfLiteAudioFrontendIrfftParams;
typedef struct {                                    /* signal/src/circular_buffer.h */
    size_t capacity, read, write;
    int32_t empty, buffer_size;
    int16_t *buffer;
} CircularBuffer;
typedef struct {
    int32_t frame_size, frame_step, outer_dims, n_frames;
    bool prefill;
    int8_t **state_buffers;
    CircularBuffer **circular_buffers;
} TFLMSignalFramerParams;
typedef struct {
    int32_t num_channels, stacker_left_context, stacker_right_context, stacker_step;
    size_t buffer_size, step_size;
    bool stacker_has_first_frame;
    int8_t *state;
    CircularBuffer *circular_buffer;
} TFLMSignalStackerParams;
typedef struct {
    int32_t frame_size, delay_length, outer_dims;
    int8_t **state_buffers;
    CircularBuffer **circular_buffers;
} TFLMSignalFrontendDelayParams;
typedef struct {                                    /* TFLMSignalOverlapAddParams<T> */
    int32_t frame_size, frame_step, outer_dims, n_frames;
    TfLiteType type;
    void **state_buffers;
} TFLMSignalOverlapAddParams;
/* ---- control flow and resource variables (kernels/if.cc, while.cc, call_once.cc,
 * var_handle.cc, assign_variable.cc; micro_resource_variable.h) ----------------------------- */
typedef struct { int then_subgraph_index, else_subgraph_index; } OpDataIf;
typedef struct { int cond_subgraph_index, body_subgraph_index; } OpDataWhile;
typedef struct { int init_subgraph_index; bool has_run; } OpDataCallOnce;
typedef struct { int32_t resource_id; } OpDataVarHandle;
typedef struct {                               /* assign_variable.cc has an Init only with */
#ifdef USE_TFLM_COMPRESSION                    /* compression: 0 bytes means no allocation */
    int scratch_index;
#endif
} OpDataAssignVariable;
typedef struct {
    const char *container, *shared_name;
    void *resource_buffer;
    size_t bytes;
    int8_t default_value;
} MicroResourceVariable;
typedef struct {
    MicroResourceVariable *resource_variables_;
    int max_variable_count_, num_resource_variables_;
} MicroResourceVariables;

/* ---- the table (micro_rt/struct_layouts.py, written from this header by `make structs`) ----
 * Its rows: the records below, allocated with their own alignment, then MRT_KERNEL_OP_DATA's. */
#define MRT_TABLE_RECORDS(X)                                                                  \
    /* framework records; TfLiteQuantizationType is a C enum (4 bytes, 1 with short enums);   \
     * TfLiteIntArray gets 4 more per dim (a kernel's copy of its output dims);               \
     * SubgraphAllocations has the compression fields in the pip build (host64) */            \
    X(TfLiteEvalTensor) X(NodeAndRegistration) X(TfLiteTensor) X(TfLiteAffineQuantization)    \
    X(TfLiteQuantizationType) X(SubgraphAllocations) X(ScratchBufferHandle)                   \
    X(ScratchBufferRequest) X(AllocationInfo) X(GreedyPlannerPerBuffer) X(TfLiteIntArray)     \
    /* the allocator objects placed at start-up: the pip package's recording allocators and   \
     * a device build's plain ones, of which the builtin data allocator comes last */         \
    X(AllocatorFixed) X(AllocatorFixedPlain) X(MicroBuiltinDataAllocator)                     \
    /* at the start of each circular buffer's state; the kernels' parameter records */        \
    X(CircularBuffer) X(ConvParams) X(PaddingValues) X(cmsis_nn_dims)                         \
    /* builtin option structs (MicroBuiltinDataAllocator; micro_rt/builtin_params.py says     \
     * which operator has which), those of operators without a kernel included */             \
    X(TfLiteConvParams) X(TfLiteDepthwiseConvParams) X(TfLiteFullyConnectedParams)            \
    X(TfLitePoolParams) X(TfLiteReshapeParams) X(TfLiteSqueezeParams)                         \
    X(TfLiteStridedSliceParams) X(TfLiteUnidirectionalSequenceLSTMParams) X(TfLiteSVDFParams) \
    X(TfLiteAddParams) X(TfLiteSubParams) X(TfLiteConcatenationParams) X(TfLitePackParams)    \
    X(TfLiteUnpackParams) X(TfLiteCastParams) X(TfLiteGatherParams) X(TfLiteMulParams)        \
    X(TfLiteDivParams) X(TfLiteSplitParams) X(TfLiteSoftmaxParams) X(TfLiteLeakyReluParams)   \
    X(TfLiteShapeParams) X(TfLiteReducerParams) X(TfLiteConv3DParams)                         \
    X(TfLiteTransposeConvParams) X(TfLiteRNNParams) X(TfLiteSequenceRNNParams)                \
    X(TfLiteBidirectionalSequenceRNNParams) X(TfLiteLSTMParams)                               \
    X(TfLiteBidirectionalSequenceLSTMParams) X(TfLiteL2NormParams) X(TfLiteGeluParams)        \
    X(TfLiteLocalResponseNormParams) X(TfLiteBatchMatMulParams) X(TfLiteFakeQuantParams)      \
    X(TfLiteSplitVParams) X(TfLiteArgMaxParams) X(TfLiteArgMinParams)                         \
    X(TfLiteMirrorPaddingParams) X(TfLiteSpaceToDepthParams) X(TfLiteDepthToSpaceParams)      \
    X(TfLiteResizeBilinearParams) X(TfLiteResizeNearestNeighborParams) X(TfLiteCumsumParams)  \
    X(TfLiteOneHotParams) X(TfLiteReverseSequenceParams) X(TfLiteUniqueParams)                \
    X(TfLiteSparseToDenseParams) X(TfLiteLSHProjectionParams) X(TfLiteSkipGramParams)         \
    X(TfLiteEmbeddingLookupSparseParams) X(TfLiteBucketizeParams) X(TfLiteRandomParams)       \
    X(TfLiteIfParams) X(TfLiteWhileParams) X(TfLiteCallOnceParams) X(TfLiteVarHandleParams)   \
    X(TfLiteHashtableParams)

/* ---- the structs TFLM allocates 16-aligned (a kernel's AllocatePersistentBuffer) --------- */
#define MRT_KERNEL_OP_DATA(X)                                                                 \
    X(OpDataConv) X(OpDataFullyConnected) X(OpDataAdd) X(OpDataSub) X(OpDataMul)              \
    X(OpDataPooling) X(SoftmaxParams) X(OpDataLogistic) X(OpDataTanh) X(ReluOpData)           \
    X(Relu6OpData) X(LeakyReluOpData) X(HardSwishParams) X(OpDataQuantizeReference)           \
    X(DequantizeOpData) X(OpDataPad) X(OpDataReduce) X(StridedSliceOpData)                    \
    X(OpDataConcatenation) X(OpDataSvdf) X(OpDataLSTM) X(OpDataConvCmsis)                     \
    X(OpDataDepthwiseCmsis) X(OpDataFullyConnectedCmsis) X(OpDataPoolingCmsis)                \
    X(OpDataSoftmaxCmsis) X(OpDataAddCmsis) X(OpDataMulCmsis)                                 \
    X(CmsisNnOpDataSvdf) X(OpDataLSTMCmsis)                                                   \
    X(SpaceToBatchParams) X(OpDataMirrorPad) X(OpDataEmbeddingLookup)                         \
    X(OpDataDiv) X(OpDataSquaredDifference) X(OpDataAddN) X(PreluParams) X(OpDataComparison)  \
    X(OpDataSelect) X(OpDataAbsRsqrt) X(OpDataElu)                                            \
    X(OpDataCumsum) X(LogSoftmaxOpData) X(L2NormalizationParams) X(TFLMSignalWindowParams)    \
    X(TFLMSignalEnergyParams) X(TfLiteAudioFrontendRfftParams) X(TFLMSignalFilterBankParams)  \
    X(TFLMSignalSpectralSubtractionParams) X(TfLitePcanParams) X(TFLMSignalLogParams)         \
    X(TfLiteAudioFrontendIrfftParams) X(TFLMSignalFramerParams) X(TFLMSignalStackerParams)    \
    X(TFLMSignalFrontendDelayParams) X(TFLMSignalOverlapAddParams)                            \
    X(OpDataTransposeConv) X(OpDataTransposeConvCmsis) X(QuantizationOpDataBatchMatmul)       \
    X(OpDataBatchMatmul) X(OpDataBatchMatmulCmsis)                                      \
    X(OpDataIf) X(OpDataWhile) X(OpDataCallOnce) X(OpDataVarHandle) X(OpDataAssignVariable)   \
    X(MicroResourceVariables) X(MicroResourceVariable)    \
    X(OpDataEthosU) X(OpDataDetectionPostProcess) X(OpDataCircularBuffer)

#endif /* MICRO_RT_TFLM_STRUCTS_H */
