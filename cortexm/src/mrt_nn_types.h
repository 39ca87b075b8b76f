/* micro_rt: parameter blocks of micro_rt's own kernels (declared in mrt_nnfunctions.h).
 *
 * The Python glue (micro_rt.cortexm.ops_*) packs a block little-endian into the emulator's
 * ARGS area and passes its address as the kernel's only argument. Every field is a 32-bit word
 * (a pointer, an int32_t, or a float32 carried as its IEEE bit pattern in a uint32_t) and a
 * nested struct is made of such words, so a block's layout is its words in declaration order
 * with no padding: the glue packs them in that order (_uwords for pointers and float bits,
 * _words for integers). Adding, removing or reordering a field means changing the glue's
 * packing in the same commit.
 */
#ifndef MRT_NN_TYPES_H
#define MRT_NN_TYPES_H
#include <stdint.h>

#define MRT_MAX_DIMS 6          /* the rank of the 6-D walks (copies, broadcasting) */

/* ---------------------------------------------------------------- data movement */

/* mrt_strided_copy: dst[i0..i5] = src[i0..i5] over a 6-D index space with byte strides
 * (transpose, slice, concatenation / pack parts, pad interior). Unused leading axes have
 * count 1. Packed by ops.data_movement.strided_copy. */
typedef struct {
    const uint8_t *src;
    uint8_t *dst;
    int32_t elem_size;                 /* bytes per element: 1, 2, 4 or 8 */
    int32_t count[MRT_MAX_DIMS];       /* elements per axis, outermost first */
    int32_t src_stride[MRT_MAX_DIMS];  /* bytes */
    int32_t dst_stride[MRT_MAX_DIMS];  /* bytes */
} mrt_copy_params;

/* ---------------------------------------------------------------- binary: ADD SUB MUL MAXIMUM MINIMUM */

enum { MRT_OP_ADD = 0, MRT_OP_SUB = 1, MRT_OP_MUL = 2, MRT_OP_MAX = 3, MRT_OP_MIN = 4 };

/* The 6-D broadcast of a binary op: the output's shape (leading 1s up to 6 axes) and, per
 * input, its element stride on each axis, 0 where that input is broadcast. */
typedef struct {
    int32_t count[MRT_MAX_DIMS];       /* output elements per axis, outermost first */
    int32_t stride1[MRT_MAX_DIMS];     /* in1 element stride per axis, 0 = broadcast */
    int32_t stride2[MRT_MAX_DIMS];     /* in2 element stride per axis, 0 = broadcast */
} mrt_broadcast_dims;

/* TFLM's output stage of a quantized (int8 / int16) binary op. ADD / SUB: each input
 * (value + inN_offset) << left_shift is requantized by inN_mult / inN_shift, their sum or
 * difference by out_mult / out_shift. MUL: (a + in1_offset) * (b + in2_offset) requantized by
 * out_mult / out_shift (the in*_mult / in*_shift and left_shift are not read). Then + out_offset,
 * clamped to [act_min, act_max]. MAXIMUM / MINIMUM compare the raw values (both inputs and the
 * output share scale and zero point) and read none of these fields. */
typedef struct {
    int32_t left_shift;                /* TFLM: 20 for int8, 15 for int16 */
    int32_t in1_offset, in1_mult, in1_shift;
    int32_t in2_offset, in2_mult, in2_shift;
    int32_t out_offset, out_mult, out_shift;
    int32_t act_min, act_max;
} mrt_binary_quant;

/* mrt_binary_s8. Packed by ops.elementwise._call_binary_int. */
typedef struct {
    const int8_t *in1;
    const int8_t *in2;
    int8_t *out;
    int32_t op;                        /* MRT_OP_* */
    mrt_broadcast_dims dims;
    mrt_binary_quant quant;
} mrt_binary_s8_params;

/* mrt_binary_s16. Packed by ops.elementwise._call_binary_int. */
typedef struct {
    const int16_t *in1;
    const int16_t *in2;
    int16_t *out;
    int32_t op;                        /* MRT_OP_* */
    mrt_broadcast_dims dims;
    mrt_binary_quant quant;
} mrt_binary_s16_params;

/* mrt_binary_f32. Packed by ops.elementwise._run_binary_f32. */
typedef struct {
    const float *in1;
    const float *in2;
    float *out;
    int32_t op;                        /* MRT_OP_* */
    mrt_broadcast_dims dims;
    uint32_t act_min, act_max;         /* float bits: the fused activation's clamp (ADD SUB MUL) */
} mrt_binary_f32_params;

/* ---------------------------------------------------------------- unary: activations, requantization */

/* Integer unary ops (mrt_unary_s8: all; mrt_unary_int: REQUANT, RELU6, LEAKY). MBQM is TFLM's
 * MultiplyByQuantizedMultiplier. */
enum {
    MRT_UNARY_REQUANT = 0,   /* QUANTIZE int->int, RELU: out_off + MBQM(x - in_off, m0, s0), clamped
                              * to [a0, a1] (mrt_unary_s8) or [lo, hi] (mrt_unary_int) */
    MRT_UNARY_RELU6 = 1,     /* clamp(x, a0, a1) on raw values: a0 = zero point, a1 = quantized 6 */
    MRT_UNARY_LEAKY = 2,     /* v = x - in_off; v >= 0 ? MBQM(v, m0, s0) : MBQM(v, m1, s1), + out_off */
    MRT_UNARY_LOGISTIC = 3,  /* gemmlowp logistic of MBQM(x - in_off, m0, s0) as F4; a0 = input radius */
    MRT_UNARY_TANH = 4,      /* gemmlowp tanh, as LOGISTIC */
    MRT_UNARY_HARD_SWISH = 5,/* TFLM's int16 fixed point: m0 / s0 output multiplier (int16) and
                              * exponent, m1 / s1 reluish multiplier and exponent */
};

/* The requantization of an integer unary op (meaning per op above; unused fields are 0). */
typedef struct {
    int32_t in_off, out_off;           /* input zero point (subtracted), output zero point (added) */
    int32_t m0, s0, m1, s1;            /* multipliers and shifts */
    int32_t a0, a1;                    /* op-specific: clamp bounds, input radius */
} mrt_unary_quant;

/* mrt_unary_s8. Packed by ops.elementwise._run_unary. */
typedef struct {
    const int8_t *in;
    int8_t *out;
    int32_t n;                         /* elements */
    int32_t op;                        /* MRT_UNARY_* */
    mrt_unary_quant quant;
} mrt_unary_s8_params;

/* mrt_unary_int: int8 / int16 / int32 in and out. Packed by ops.elementwise._run_unary_int. */
typedef struct {
    const void *in;
    void *out;
    int32_t n;                         /* elements */
    int32_t op;                        /* MRT_UNARY_REQUANT, _RELU6 or _LEAKY */
    int32_t in_size, out_size;         /* element bytes: 1, 2 or 4 */
    mrt_unary_quant quant;
    int32_t lo, hi;                    /* the result's clamp (the output type's range, or RELU's) */
} mrt_unary_int_params;

enum {
    MRT_UNARY_F32_RELU = 0, MRT_UNARY_F32_RELU6 = 1, MRT_UNARY_F32_LEAKY = 2,
    MRT_UNARY_F32_LOGISTIC = 3, MRT_UNARY_F32_TANH = 4, MRT_UNARY_F32_HARD_SWISH = 5,
};

/* mrt_unary_f32. Packed by ops.elementwise._run_unary_f32. */
typedef struct {
    const float *in;
    float *out;
    int32_t n;                         /* elements */
    int32_t op;                        /* MRT_UNARY_F32_* */
    uint32_t alpha;                    /* float bits: LEAKY_RELU's slope (else not read) */
} mrt_unary_f32_params;

/* ---------------------------------------------------------------- reduce: MEAN */

/* mrt_mean_s8: MEAN of an int8 input seen as 4-D (leading 1s). Packed by ops.elementwise._run_mean. */
typedef struct {
    const int8_t *in;
    int8_t *out;
    int32_t shape[4];                  /* input shape, outermost first */
    int32_t reduce[4];                 /* != 0: the axis is averaged over */
    int32_t in_zp, out_zp;             /* zero points */
    int32_t mult, shift;               /* requantization of the sum, the division by the count included */
    int32_t act_min, act_max;
} mrt_mean_s8_params;

/* mrt_mean_f32. Packed by ops.elementwise._run_mean_f32. */
typedef struct {
    const float *in;
    float *out;
    int32_t shape[4];                  /* input shape, outermost first */
    int32_t reduce[4];                 /* != 0: the axis is averaged over */
} mrt_mean_f32_params;

/* ---------------------------------------------------------------- reduce: SUM REDUCE_MAX / MIN / ALL, MEAN (int16, float32) */

enum { MRT_REDUCE_SUM = 0, MRT_REDUCE_MAX = 1, MRT_REDUCE_MIN = 2, MRT_REDUCE_ALL = 3, MRT_REDUCE_MEAN = 4 };

/* How a reduction walks its input: the kept axes (outer, outermost first) and the reduced axes
 * (inner, outermost first), up to three of each after merging neighbours (the glue refuses more),
 * each with its element count and element stride in the input; unused entries have count 1.
 * Outputs are written in kept order; each output's elements are taken in input order. */
typedef struct {
    int32_t outer_count[3], outer_stride[3];
    int32_t inner_count[3], inner_stride[3];
} mrt_reduce_walk;

/* mrt_reduce_int: int8 / int16 SUM (MEAN with 1/count folded into mult / shift), REDUCE_MAX /
 * MIN (int8), REDUCE_ALL (bool, elem_size 1). Packed by ops.reduce.run_reduce_int. */
typedef struct {
    const void *in;
    void *out;
    mrt_reduce_walk walk;
    int32_t op;                        /* MRT_REDUCE_SUM, _MAX, _MIN or _ALL */
    int32_t elem_size;                 /* 1 or 2 */
    int32_t zp_count;                  /* SUM: input zero point * elements per output, wrapped to int32 */
    int32_t mult, shift, out_zp;       /* SUM: the output stage */
    int32_t lo, hi;                    /* the element type's range (SUM's clamp, MAX / MIN's start values) */
} mrt_reduce_int_params;

/* mrt_reduce_f32: SUM, MEAN, REDUCE_MAX, REDUCE_MIN. Packed by ops.reduce.run_reduce_f32. */
typedef struct {
    const float *in;
    float *out;
    mrt_reduce_walk walk;
    int32_t op;                        /* MRT_REDUCE_SUM, _MEAN, _MAX or _MIN */
} mrt_reduce_f32_params;

/* mrt_arg_min_max_s8 / _f32: the input as [outer, axis_size, inner]. Packed by ops.reduce.run_arg_min_max. */
typedef struct {
    const void *in;
    int32_t *out;                      /* [outer, inner] */
    int32_t outer, axis_size, inner;
    int32_t is_max;
} mrt_arg_min_max_params;

/* mrt_cumsum_s8 / _f32: the input as [outer, depth, inner], summed along depth. The int8 fields
 * are TFLM's quantized CumSum (left shift 20); mrt_cumsum_f32 does not read them. Packed by
 * ops.reduce.run_cumsum. */
typedef struct {
    const void *in;
    void *out;
    int32_t outer, depth, inner;
    int32_t exclusive, reverse;
    int32_t in_off, in_mult, in_shift;     /* in_off: -input zero point */
    int32_t out_mult, out_shift, out_off;
} mrt_cumsum_params;

/* ---------------------------------------------------------------- LOG_SOFTMAX, L2_NORMALIZATION (last axis) */

/* mrt_log_softmax_s8: TFLM's LogSoftmaxOpData. Packed by ops.softmax.run_log_softmax. */
typedef struct {
    const int8_t *in;
    int8_t *out;
    int32_t rows, depth;
    int32_t in_mult, in_left_shift;    /* PreprocessSoftmaxScaling(1, input scale, 5) */
    int32_t reverse_divisor, reverse_right_shift;
    int32_t diff_min;
} mrt_log_softmax_s8_params;

/* ---------------------------------------------------------------- convolution, fully connected, pooling */

/* Convolution geometry (NHWC), shared by the float32 and int16 conv blocks. */
typedef struct {
    int32_t n, ih, iw, ic;             /* batches, input height, width, channels */
    int32_t oh, ow, oc;                /* output height, width, channels */
    int32_t fh, fw, fc;                /* filter height, width, depth (ic / groups; float depthwise:
                                        * the depth multiplier) */
    int32_t sh, sw, dh, dw, ph, pw;    /* strides, dilations, paddings (top / left) */
} mrt_conv_geometry;

/* mrt_conv_f32 / mrt_depthwise_conv_f32. Packed by ops.nn._run_conv_f32. */
typedef struct {
    const float *in;                   /* [n, ih, iw, ic] */
    const float *filter;               /* conv: [oc, fh, fw, fc]; depthwise: [1, fh, fw, oc] */
    const float *bias;                 /* [oc], NULL: none */
    float *out;                        /* [n, oh, ow, oc] */
    mrt_conv_geometry geom;
    uint32_t act_min, act_max;         /* float bits: the fused activation's clamp */
} mrt_conv_f32_params;

/* mrt_conv_s16: CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED with int16 activations and int8
 * weights (16x8). Packed by ops.nn._run_conv_s16 (field order: _CONV_S16_FIELDS). */
typedef struct {
    const int16_t *in;                 /* [n, ih, iw, ic] */
    const int8_t *filter;              /* conv / FC: [oc, fh, fw, fc]; depthwise: [1, fh, fw, oc] */
    const void *bias;                  /* int32 or int64 [oc] (see bias_size); NULL: none */
    int16_t *out;                      /* [n, oh, ow, oc] */
    const int32_t *mult;               /* [oc] when per_channel, else [1] for all */
    const int32_t *shift;
    mrt_conv_geometry geom;
    int32_t depth_multiplier;          /* > 0: depthwise; 0: conv / FC */
    int32_t in_off, filter_off, out_off;
    int32_t act_min, act_max;
    int32_t bias_size;                 /* 8: int64 bias, TFLM's int64 path; 4: int32 accumulator
                                        * variant (int32 bias, or none); 0: no bias, int64 path */
    int32_t per_channel;
} mrt_conv_s16_params;

/* mrt_transpose_conv_s16: TRANSPOSE_CONV 16x8, TFLM's reference kernel. geom: fc = ic, dh = dw = 1,
 * ph / pw the scatter padding (of the forward conv over the output). Packed by
 * ops.transpose_conv.run_transpose_conv_s16. */
typedef struct {
    const int16_t *in;                 /* [n, ih, iw, ic] */
    const int8_t *filter;              /* [oc, fh, fw, ic] */
    const void *bias;                  /* int64 [oc] (bias_size 8) or int16 [oc] (2); NULL: none */
    int16_t *out;                      /* [n, oh, ow, oc] */
    const int32_t *mult;               /* [oc] */
    const int32_t *shift;              /* [oc] */
    int64_t *acc;                      /* scratch: int64 [n * oh * ow * oc], 8-aligned */
    int64_t *bias_wide;                /* scratch: int64 [oc] when bias_size is 2, else unused */
    mrt_conv_geometry geom;
    int32_t act_min, act_max;
    int32_t bias_size;
} mrt_transpose_conv_s16_params;

/* mrt_transpose_conv_f32. Packed by ops.transpose_conv.run_transpose_conv_f32. */
typedef struct {
    const float *in;                   /* [n, ih, iw, ic] */
    const float *filter;               /* [oc, fh, fw, ic] */
    const float *bias;                 /* [oc], NULL: none */
    float *out;                        /* [n, oh, ow, oc] */
    mrt_conv_geometry geom;            /* as for mrt_transpose_conv_s16 */
    uint32_t act_min, act_max;         /* float bits */
} mrt_transpose_conv_f32_params;

/* mrt_fully_connected_f32. Packed by ops.nn._run_fc_f32. */
typedef struct {
    const float *in;                   /* [batches, accum] */
    const float *w;                    /* [out_depth, accum] */
    const float *bias;                 /* [out_depth], NULL: none */
    float *out;                        /* [batches, out_depth] */
    int32_t batches, accum, out_depth;
    uint32_t act_min, act_max;         /* float bits */
} mrt_fc_f32_params;

/* mrt_avgpool_f32 / mrt_maxpool_f32. Packed by ops.pooling.run_pool_f32. */
typedef struct {
    const float *in;                   /* [n, ih, iw, c] */
    float *out;                        /* [n, oh, ow, c] */
    int32_t n, ih, iw, c, oh, ow;
    int32_t fh, fw, sh, sw, ph, pw;    /* window, strides, paddings (top / left) */
    uint32_t act_min, act_max;         /* float bits */
} mrt_pool_f32_params;

/* mrt_svdf_s8 / mrt_svdf_state_s16_s8. Packed by ops.svdf.run_svdf_s8. */
typedef struct {
    const int8_t *input;               /* [batch, input_size] */
    void *state;                       /* int8 / int16 [batch, num_filters, memory_size], updated */
    const int8_t *weights_feature;     /* [num_filters, input_size] */
    const void *weights_time;          /* int8 / int16 (the state's type) [num_filters, memory_size] */
    const int32_t *bias;               /* [num_filters / rank], NULL: none */
    const int32_t *time_sums;          /* [num_filters]: -state_zp * sum(weights_time row), NULL: zp 0 */
    int32_t *buffer;                   /* scratch, int32 [num_filters / rank] */
    int8_t *output;                    /* [batch, num_filters / rank] */
    int32_t batch, input_size, num_filters, memory_size, rank;
    int32_t input_offset;              /* -input zero point */
    int32_t mult_1, shift_1;           /* feature products -> state */
    int32_t mult_2, shift_2;           /* unit sums -> output */
    int32_t state_zp, state_min, state_max, output_zp;
} mrt_svdf_params;

/* mrt_svdf_f32. Packed by ops.svdf.run_svdf_f32. Activations: TFLite's fused activation codes. */
#define MRT_SVDF_ACT_RELU 1
#define MRT_SVDF_ACT_RELU_N1_TO_1 2
#define MRT_SVDF_ACT_RELU6 3
#define MRT_SVDF_ACT_TANH 4
#define MRT_SVDF_ACT_SIGN_BIT 5
typedef struct {
    const float *input;                /* [batch, input_size] */
    float *state;                      /* [batch, num_filters, memory_size], updated */
    const float *weights_feature;      /* [num_filters, input_size] */
    const float *weights_time;         /* [num_filters, memory_size] */
    const float *bias;                 /* [num_filters / rank], NULL: none */
    float *scratch;                    /* [batch, num_filters] (TFLM's scratch buffer) */
    float *output;                     /* [batch, num_filters / rank] */
    int32_t batch, input_size, num_filters, memory_size, rank;
    int32_t activation;                /* 0 none, MRT_SVDF_ACT_* */
} mrt_svdf_f32_params;

/* mrt_lstm_s8 / mrt_lstm_s16. Packed by ops.lstm.run_lstm. Gates in the order input, forget,
 * cell, output. Activations (input, output, hidden) are int8 for mrt_lstm_s8, int16 for
 * mrt_lstm_s16; biases int32 / int64. */
#define MRT_LSTM_CELL_GATE 2
typedef struct {
    const void *input;                 /* [steps, batch, n_input] (time major) or [batch, steps, n_input] */
    void *output;                      /* the same layout with n_state */
    void *hidden;                      /* [batch, n_state], updated */
    int16_t *cell;                     /* [batch, n_state], updated */
    const int8_t *w_in[4];             /* [n_state, n_input] per gate, zero point 0 */
    const int8_t *w_rec[4];            /* [n_state, n_state] per gate, zero point 0 */
    const void *bias[4];               /* [n_state] per gate */
    const uint16_t *sigmoid_table;     /* TFLM's 256-entry sigmoid table */
    int32_t batch, steps, n_input, n_state, time_major;
    int32_t input_offset, hidden_offset;   /* -zero points */
    int32_t in_mult[4], in_shift[4], rec_mult[4], rec_shift[4];
    int32_t forget_mult, forget_shift; /* forget gate x cell -> cell */
    int32_t input_mult, input_shift;   /* input gate x cell gate -> cell */
    int32_t output_mult, output_shift; /* output gate x tanh(cell) -> hidden */
    int32_t hidden_zp;
    int32_t cell_lo, cell_hi;          /* int16 saturation and the cell clip */
    int32_t cell_tanh_mult, cell_tanh_shift;   /* tanh(cell)'s input rescale */
} mrt_lstm_params;

/* mrt_lstm_f32. Packed by ops.lstm.run_lstm_f32. Gates in the order input, forget, cell, output. */
typedef struct {
    const float *input;                /* [steps, batch, n_input] (time major) or [batch, steps, n_input] */
    float *output;                     /* the same layout with n_state */
    float *hidden;                     /* [batch, n_state], updated */
    float *cell;                       /* [batch, n_state], updated */
    const float *w_in[4];              /* [n_state, n_input] per gate */
    const float *w_rec[4];             /* [n_state, n_state] per gate */
    const float *bias[4];              /* [n_state] per gate */
    float *gates[4];                   /* scratch, [batch, n_state] per gate (TFLM's four buffers) */
    int32_t batch, steps, n_input, n_state, time_major;
    uint32_t cell_clip;                /* float bits; no clip unless > 0 */
} mrt_lstm_f32_params;

/* ---------------------------------------------------------------- gather, slice, pad (issue 12's data movement) */

/* mrt_gather: TFLM's Gather loops. Packed by ops.data_movement.run_gather. */
typedef struct {
    const uint8_t *in;                 /* [batch, outer, axis_size, inner] elements */
    const int32_t *coords;             /* [batch, coords] positions along the axis */
    uint8_t *out;                      /* [batch, outer, coords, inner] */
    int32_t elem_size;                 /* bytes per element */
    int32_t batch, outer, axis_size, inner, coords_count;
} mrt_gather_params;

/* mrt_gather_nd: TFLM's GatherNd loops. Packed by ops.data_movement.run_gather_nd. */
typedef struct {
    const uint8_t *params;
    const int32_t *indices;            /* [slices, nd] */
    uint8_t *out;                      /* [slices, slice_size] */
    int32_t elem_size;
    int32_t slices, nd, slice_size, params_count;
    int32_t dims_to_count[5];          /* elements per step of each indexed axis */
} mrt_gather_nd_params;

/* mrt_embedding_lookup / mrt_embedding_lookup_hybrid_f32. Packed by ops.data_movement.run_embedding_lookup. */
typedef struct {
    const int32_t *ids;                /* [lookups] */
    const uint8_t *table;              /* [rows, columns] */
    uint8_t *out;                      /* [lookups, columns] */
    int32_t lookups, rows, columns;
    int32_t elem_size;                 /* the table's bytes per element (copy) */
    uint32_t scale;                    /* float32 bits (hybrid: the table's first scale) */
} mrt_embedding_params;

/* mrt_slice: SLICE with begin / size read at run time (int32 or int64), over the input's shape
 * extended to 5-D. Packed by ops.data_movement.run_slice. */
typedef struct {
    const uint8_t *in;
    uint8_t *out;
    const void *begin, *size;          /* [rank] each */
    int32_t index_size;                /* 4: int32 begin / size, 8: int64 */
    int32_t elem_size;
    int32_t rank;                      /* <= 5 */
    int32_t shape[5];                  /* input shape, front-padded with 1s to 5-D */
    int32_t out_count;                 /* elements the output holds */
} mrt_slice_params;

/* mrt_dynamic_update_slice. Packed by ops.data_movement.run_dynamic_update_slice. */
typedef struct {
    const uint8_t *operand, *update;
    uint8_t *out;
    const void *start;                 /* [rank] start indices */
    int32_t index_size;                /* 4: int32, 8: int64 */
    int32_t elem_size;
    int32_t rank;                      /* <= MRT_MAX_DIMS */
    int32_t operand_shape[MRT_MAX_DIMS];
    int32_t update_shape[MRT_MAX_DIMS];
} mrt_dynamic_update_slice_params;

/* mrt_mirror_pad: TFLM's GetFlatIndex per output element, any rank. Packed by
 * ops.data_movement.run_mirror_pad. */
typedef struct {
    const uint8_t *in;
    uint8_t *out;
    const void *padding;               /* [rank, 2] */
    int32_t padding_size;              /* 4: int32, 8: int64, 0: another type (pads read as 0) */
    int32_t elem_size;
    int32_t rank;
    int32_t offset;                    /* 1: REFLECT, 0: SYMMETRIC */
    const int32_t *in_shape;           /* [rank] */
    const int32_t *out_shape;          /* [rank] */
    int32_t *in_stride, *out_stride;   /* [rank] each, written by the kernel (TFLM's two scratch buffers) */
    int32_t out_count, in_count;
} mrt_mirror_pad_params;

/* mrt_broadcast_args. Packed by ops.data_movement.run_broadcast_args. */
typedef struct {
    const void *shape1, *shape2;
    void *out;
    int32_t count1, count2, out_count;
    int32_t elem_size;                 /* 4: int32, 8: int64 */
} mrt_broadcast_args_params;

/* mrt_space_to_batch_nd / mrt_batch_to_space_nd. Packed by ops.data_movement.run_space_to_batch /
 * run_batch_to_space. */
typedef struct {
    const uint8_t *in;
    uint8_t *out;
    const int32_t *block;              /* block_shape tensor: [height(, width)] */
    const int32_t *pads;               /* paddings / crops tensor: [[top, bottom](, [left, right])] */
    int32_t elem_size;
    int32_t four_d;                    /* 1: NHWC tensors; 0: NHC, read as NH1C */
    int32_t in_shape[4], out_shape[4]; /* NHWC (NHC extended to NH1C) */
    uint32_t pad_value;                /* the byte SPACE_TO_BATCH_ND's padding repeats */
} mrt_space_batch_params;

/* mrt_reverse: REVERSE_V2 with the axis tensor read at run time. Packed by ops.data_movement.run_reverse. */
typedef struct {
    const uint8_t *in;
    uint8_t *out;
    const int32_t *axes;               /* [num_axes] */
    int32_t num_axes;
    int32_t elem_size;
    int32_t rank;                      /* <= MRT_MAX_DIMS (TFLM's kMaxDimensions) */
    int32_t shape[MRT_MAX_DIMS];
} mrt_reverse_params;
/* mrt_resize_nearest_neighbor / mrt_resize_bilinear_f32 / _s8. Packed by ops.resize.run_resize. */
typedef struct {
    const void *in;                    /* [batches, in_h, in_w, depth] */
    void *out;                         /* [batches, size[0], size[1], depth] */
    const int32_t *size;               /* the size tensor: new height, new width */
    int32_t batches, in_h, in_w, depth;
    int32_t elem_size;                 /* bytes per element (nearest neighbor: 1, 2 or 4) */
    int32_t align_corners, half_pixel_centers;
} mrt_resize_params;

/* mrt_batch_matmul_s8 / _s16 / _f32. lhs'(a, k) is lhs[a * lhs_row_stride + k * lhs_depth_stride],
 * rhs'(k, c) is rhs[k * rhs_depth_stride + c * rhs_col_stride] (elements), within a batch whose
 * start is the sum of index * batch stride (0 where that operand broadcasts). Packed by
 * ops.batch_matmul.run_batch_matmul. */
typedef struct {
    const void *lhs;
    const void *rhs;
    void *out;                         /* [batch..., rows, cols] */
    int32_t batch[3];                  /* the output's batch axes, leading 1s */
    int32_t lhs_batch_stride[3], rhs_batch_stride[3];
    int32_t rows, cols, depth;
    int32_t lhs_row_stride, lhs_depth_stride, rhs_depth_stride, rhs_col_stride;
    int32_t lhs_offset, rhs_offset, out_offset;    /* -zero points, + output zero point */
    int32_t multiplier, shift, act_min, act_max;   /* integer types */
} mrt_batch_matmul_params;

/* ---------------------------------------------------------------- DIV FLOOR_DIV FLOOR_MOD SQUARED_DIFFERENCE
 * PRELU ADD_N (mrt_binary_ops.c), comparisons, LOGICAL_AND / OR, SELECT_V2 (mrt_compare.c) */

enum { MRT_OP_DIV = 0, MRT_OP_FLOOR_DIV = 1, MRT_OP_FLOOR_MOD = 2, MRT_OP_SQUARED_DIFF = 3, MRT_OP_PRELU = 4 };

/* mrt_binary_ops_f32 / mrt_binary_ops_s32 (broadcasting). Packed by ops.binary.run_binary_ops_*. */
typedef struct {
    const void *in1;                   /* float32 / int32 (PRELU: the input) */
    const void *in2;                   /* float32 / int32 (PRELU: alpha) */
    void *out;
    int32_t op;                        /* MRT_OP_DIV .. MRT_OP_PRELU */
    mrt_broadcast_dims dims;
    uint32_t act_min, act_max;         /* DIV's fused activation: float bits (f32), int32 (s32) */
} mrt_binary_ops_params;

/* mrt_binary_ops_s8 / mrt_binary_ops_s16 (broadcasting, TFLM's quantized kernels). Fields by op:
 * DIV (int8):  in1/in2/out_offset, out_mult / out_shift (input1 / (input2 * output) scales),
 *              act_min / act_max.
 * SQUARED_DIFF (int8: left_shift 7, int16: 0): each input (x + inN_offset) << left_shift
 *              requantized by inN_mult / inN_shift, the squared difference by out_mult / out_shift,
 *              + out_offset, clamped to [act_min, act_max].
 * PRELU (int8 / int16 input, int8 alpha): v = x + in1_offset; v >= 0: MBQM(v, in1_mult, in1_shift);
 *              else MBQM(v * (alpha + in2_offset), in2_mult, in2_shift); + out_offset, clamped. */
typedef struct {
    const void *in1;
    const void *in2;                   /* PRELU: int8 alpha */
    void *out;
    int32_t op;
    mrt_broadcast_dims dims;
    int32_t left_shift;
    int32_t in1_offset, in1_mult, in1_shift;
    int32_t in2_offset, in2_mult, in2_shift;
    int32_t out_offset, out_mult, out_shift;
    int32_t act_min, act_max;
} mrt_binary_ops_q_params;

/* mrt_add_n_f32 / mrt_add_n_s8: the sum of n equally shaped tensors. int8: every input
 * (x + in_offset) << 20 requantized by in_mult / in_shift (the sum starting from the requantized
 * offset, as TFLM's AddN), the sum by out_mult / out_shift, + out_offset, clamped. */
typedef struct {
    const void *const *in;             /* n input addresses */
    void *out;
    int32_t n, size;                   /* inputs, elements per tensor */
    int32_t in_offset, in_mult, in_shift, out_offset, out_mult, out_shift, act_min, act_max;
} mrt_add_n_params;

enum { MRT_CMP_EQ = 0, MRT_CMP_NE = 1, MRT_CMP_GT = 2, MRT_CMP_GE = 3, MRT_CMP_LT = 4, MRT_CMP_LE = 5 };
/* Element types of mrt_compare: int8 compares rescaled values (quant), bool / uint8 the bytes. */
enum { MRT_CMP_F32 = 0, MRT_CMP_S32 = 1, MRT_CMP_S64 = 2, MRT_CMP_S8 = 3, MRT_CMP_BOOL = 4 };

/* mrt_compare (broadcasting, bool out). int8: each input (x + inN_offset) << left_shift (8)
 * requantized by inN_mult / inN_shift, then compared. Packed by ops.binary.run_compare. */
typedef struct {
    const void *in1;
    const void *in2;
    uint8_t *out;                      /* bool bytes, 0 / 1 */
    int32_t op;                        /* MRT_CMP_EQ .. MRT_CMP_LE */
    int32_t type;                      /* MRT_CMP_F32 .. MRT_CMP_BOOL */
    mrt_broadcast_dims dims;
    int32_t left_shift;
    int32_t in1_offset, in1_mult, in1_shift;
    int32_t in2_offset, in2_mult, in2_shift;
} mrt_compare_params;

/* mrt_logical_u8: LOGICAL_AND (op 0) / LOGICAL_OR (op 1) of bytes (broadcasting). */
typedef struct {
    const uint8_t *in1;
    const uint8_t *in2;
    uint8_t *out;
    int32_t op;
    mrt_broadcast_dims dims;
} mrt_logical_params;

/* mrt_select: SELECT_V2, out = cond ? x : y for elements of elem_size bytes (1, 2 or 4); the
 * strides are 0 on the axes where an operand is broadcast. */
typedef struct {
    const uint8_t *cond;
    const void *x;
    const void *y;
    void *out;
    int32_t elem_size;
    int32_t count[MRT_MAX_DIMS];       /* output elements per axis, outermost first */
    int32_t stride_c[MRT_MAX_DIMS];
    int32_t stride_x[MRT_MAX_DIMS];
    int32_t stride_y[MRT_MAX_DIMS];
} mrt_select_params;
/* ---------------------------------------------------------------- unary math (mrt_unary_math.c) */

/* The float32 functions of mrt_unary_math_f32 (TFLM's reference Eval of each op). */
enum {
    MRT_MATH_F32_ABS = 0, MRT_MATH_F32_CEIL = 1, MRT_MATH_F32_COS = 2, MRT_MATH_F32_ELU = 3,
    MRT_MATH_F32_EXP = 4, MRT_MATH_F32_FLOOR = 5, MRT_MATH_F32_LOG = 6, MRT_MATH_F32_NEG = 7,
    MRT_MATH_F32_ROUND = 8, MRT_MATH_F32_RSQRT = 9, MRT_MATH_F32_SIN = 10, MRT_MATH_F32_SQRT = 11,
    MRT_MATH_F32_SQUARE = 12,
};

/* mrt_unary_math_f32. Packed by ops.unary.run_unary_math_f32. */
typedef struct {
    const float *in;
    float *out;
    int32_t n;                         /* elements */
    int32_t op;                        /* MRT_MATH_F32_* */
} mrt_unary_math_f32_params;

/* The quantized ops of mrt_abs_rsqrt_int (elementwise.cc's AbsEvalQuantized, RsqrtEvalQuantized). */
enum {
    MRT_MATH_INT_ABS = 0,              /* out_off + |x - in_off|, MBQM(., mult, shift) when rescale */
    MRT_MATH_INT_ABS_PLAIN = 1,        /* int16 without quantization: (int16)|x| */
    MRT_MATH_INT_RSQRT = 2,            /* out_off + MBQM(MBQM(1, inv sqrt(x - in_off), s + 20), mult,
                                        * shift - 20); x == in_off gives the type's maximum */
};

/* mrt_abs_rsqrt_int: int8 or int16 in and out. Packed by ops.unary.run_abs_rsqrt_int. */
typedef struct {
    const void *in;
    void *out;
    int32_t n;                         /* elements */
    int32_t op;                        /* MRT_MATH_INT_* */
    int32_t elem_size;                 /* 1 (int8) or 2 (int16) */
    int32_t in_off, out_off;           /* zero points (0 for int16) */
    int32_t rescale;                   /* ABS: the scales differ (else mult / shift unused) */
    int32_t mult, shift;               /* OpDataAbsRsqrt's output multiplier */
} mrt_abs_rsqrt_int_params;

/* ---------------------------------------------------------------- CAST (mrt_cast.c) */

/* Element types of mrt_cast. */
enum {
    MRT_TYPE_INT8 = 0, MRT_TYPE_INT16 = 1, MRT_TYPE_INT32 = 2, MRT_TYPE_UINT32 = 3, MRT_TYPE_FLOAT32 = 4,
    MRT_TYPE_BOOL = 5,
};

/* mrt_requantize_u8: QUANTIZE int8 <-> uint8. Packed by ops.unary.run_quantize_u8. */
typedef struct {
    const void *in;
    void *out;
    int32_t n;                         /* elements */
    int32_t in_unsigned;               /* 1: uint8 -> int8, 0: int8 -> uint8 */
    int32_t xor_path;                  /* Requantize's fast path: out = in ^ 0x80 */
    int32_t in_off, out_off;           /* zero points */
    int32_t mult, shift;               /* input scale / output scale as MBQM multiplier and shift */
} mrt_requantize_u8_params;

/* TFLM's Signal operators (mrt_signal*.c). Packed by cortexm/ops/signal.py; every field a
 * 32-bit word. */
typedef struct {
    const int16_t *input;
    const int16_t *weights;
    int16_t *output;
    int32_t input_size, weight_size, shift;
} mrt_signal_window_params;

typedef struct {
    const int16_t *input;
    int16_t *output;                   /* complex int16 pairs, output_length per frame */
    int16_t *work;                     /* rfft: fft_length samples, one frame zero-padded */
    int16_t *tmp;                      /* fft_length / 2 complex: the half-length FFT */
    const int16_t *twiddles;           /* fft_length / 2 complex (KISS FFT's, of the plan's direction) */
    const int16_t *super_twiddles;     /* fft_length / 4 complex */
    const int32_t *factors;            /* (radix, remaining length) pairs, radices 2..5 */
    int32_t fft_length;
    int32_t input_length, output_length;  /* per frame: rfft samples in, complex out; irfft
                                           * complex in, samples out */
    int32_t frames;
} mrt_signal_fft_params;

typedef struct {
    const uint32_t *input;
    const int16_t *weights, *unweights;
    const int16_t *channel_frequency_starts, *channel_weight_starts, *channel_widths;
    uint64_t *output;
    uint64_t *work;                    /* num_channels + 1 accumulators */
    int32_t num_channels, output_count;
} mrt_signal_filter_bank_params;

typedef struct {
    const uint32_t *input;
    uint32_t *output, *noise_output;
    uint32_t *noise_estimate;          /* the state, num_channels values, updated in place */
    int32_t num_channels, noise_output_count;
    uint32_t smoothing, one_minus_smoothing, alternate_smoothing, alternate_one_minus_smoothing;
    uint32_t min_signal_remaining, smoothing_bits, spectral_subtraction_bits, clamping;
} mrt_signal_spectral_subtraction_params;

typedef struct {
    const uint32_t *input, *noise_estimate;
    const int16_t *gain_lut;
    uint32_t *output;
    int32_t num_channels, snr_shift;
} mrt_signal_pcan_params;

typedef struct {
    const uint32_t *input;
    int16_t *output;
    const uint16_t *log_lut;           /* TFLM's kLogLut: 130 segment corrections */
    int32_t num_channels, output_scale, input_correction_bits;
} mrt_signal_log_params;

/* mrt_signal_delay_s16 / mrt_signal_overlap_add_s16 / _f32: the kernel's state, kept by the
 * host between invokes, travels in the ARGS area (written before, read back after the call). */
typedef struct {
    const void *input;
    void *output;
    void *state;                       /* delay: outer_dims x delay samples (the delay line);
                                        * overlap-add: outer_dims x frame_size partial sums */
    int32_t outer_dims, n_frames, frame_size, frame_step;
    int32_t state_size;                /* delay: the delay length */
} mrt_signal_stream_params;

/* mrt_signal_framer_s16 / mrt_signal_stacker_s16: TFLM's circular buffers as FIFOs whose
 * samples and counts the host keeps between invokes (ARGS, read back after the call). */
typedef struct {
    const int16_t *input;
    int16_t *output;
    uint8_t *valid;                    /* the bool output */
    int16_t *samples;                  /* outer_dims x capacity, oldest first */
    int32_t *counts;                   /* framer: per row; stacker: {count, has first frame} */
    int32_t outer_dims, capacity;
    int32_t n_frames;                  /* framer: frames per row; stacker: samples discarded per output */
    int32_t frame_size;                /* framer: frame; stacker: stacked output size */
    int32_t frame_step;                /* framer: step; stacker: channels */
    int32_t extend;                    /* stacker: left context */
} mrt_signal_fifo_params;

/* TFLM's custom operators (mrt_circular_buffer.c, mrt_detection_postprocess.c). Packed by
 * cortexm/ops/custom.py. */
typedef struct {
    int32_t cycles_until_run, cycles_max;   /* OpDataCircularBuffer: invokes left in the period */
} mrt_circular_buffer_state;

typedef struct {
    const int8_t *input;                    /* [1, 1, h, w]: depth values */
    int8_t *output;                         /* [1, slots, h, w]: the buffer */
    mrt_circular_buffer_state *state;       /* kept by the host between invokes (ARGS, read back) */
    int32_t slots, depth;
} mrt_circular_buffer_params;

/* mrt_detection_postprocess_f32's refusals (TFLM: a failed TF_LITE_ENSURE; past the outputs: TFLM
 * writes out of bounds). */
#define MRT_DETECTION_BAD_BOX 1                /* a decoded box with ymin >= ymax or xmin >= xmax */
#define MRT_DETECTION_PAST_OUTPUTS 2           /* the fast path's next row is past the outputs' rows */

typedef struct {
    const float *boxes;                        /* [num_boxes, box_stride]: y, x, h, w first */
    const float *scores;                       /* [num_boxes, num_classes_with_background] */
    const float *anchors;                      /* anchor_stride apart: y, x, h, w first (TFLM: 4 apart) */
    float *detection_boxes;                    /* [rows, 4]: ymin, xmin, ymax, xmax */
    float *detection_classes, *detection_scores, *num_detections;
    /* TFLM's scratch buffers, in its request order (the class-score copy, its 3rd, unused for
     * float32, is not passed): */
    uint8_t *active;                           /* num_boxes */
    float *decoded;                            /* num_boxes x 4 */
    float *score_buffer;                       /* num_boxes: one class's scores / the max scores */
    float *keep_scores;                        /* num_boxes */
    float *scores_after_nms;                   /* max_detections x num_boxes */
    float *sorted_values;                      /* max_detections x num_boxes */
    int32_t *keep_indices;                     /* num_boxes (also the merge sort's scratch) */
    int32_t *sorted_indices;                   /* max_detections x num_boxes */
    int32_t *buffer;                           /* max(num_classes, max_detections) x num_boxes */
    int32_t *selected;                         /* min(num_boxes, max_detections) x num_boxes */
    int32_t num_boxes, box_stride, anchor_stride, num_classes, num_classes_with_background;
    int32_t max_detections, max_classes_per_detection, detections_per_class, use_regular_nms;
    int32_t output_rows;                       /* rows of the shortest of the first three outputs */
    uint32_t score_threshold, iou_threshold;   /* float32 bits */
    uint32_t y_scale, x_scale, h_scale, w_scale;
} mrt_detection_postprocess_params;

#endif
