/* micro_rt: the kernels of micro_rt's own API: operators and types CMSIS-NN does not cover
 * (float32, int16, broadcasting binary ops, activations, MEAN, data movement). The CMSIS-NN
 * compatible int8 kernels are declared in arm_nnfunctions.h.
 *
 * Conventions of every function below:
 *  - A kernel takes one parameter block (mrt_nn_types.h), or a few scalar arguments; returns 0.
 *  - Tensors are row-major and densely packed (NHWC for images).
 *  - Integer kernels are bit-exact with TFLM's reference kernels and micro_rt's numpy twins;
 *    requantization is TFLM's MultiplyByQuantizedMultiplier (mrt_math.h: mrt_requantize).
 *  - float32 kernels repeat their numpy twin's float32 operations in the same order (built with
 *    -ffp-contract=off: no fused multiply-add), so they are bit-exact with it on every core;
 *    only LOGISTIC, TANH and SOFTMAX call newlib's expf / tanhf (as TFLM does on a device),
 *    within a few ulp of the host's libm. Floats passed by value travel as their IEEE bit
 *    patterns in uint32_t (soft-float calling convention, also on the FPU cores: softfp).
 *  - M0+ is soft-float (libgcc); the M4 / M7 / M33 builds use the FPU. Results are identical.
 *  - None of these kernels needs scratch memory (no *_get_buffer_size).
 *  - LOG_SOFTMAX float32 calls newlib's expf / logf too; sqrtf (L2_NORMALIZATION, L2_POOL_2D)
 *    is correctly rounded everywhere, so those stay bit-exact.
 */
#ifndef MRT_NNFUNCTIONS_H
#define MRT_NNFUNCTIONS_H
#include "mrt_nn_types.h"

/* =================================================================== data movement (mrt_data.c) */

/**
 * Copies nbytes bytes from src to dst (SHAPE's constant result, any contiguous copy).
 * The buffers must not overlap.
 */
int32_t mrt_copy(const uint8_t *src, uint8_t *dst, int32_t nbytes);

/**
 * Fills count elements of elem_size bytes (1, 2; anything else: 4) at dst with the low
 * elem_size bytes of value (PAD / PADV2's padding value). dst must be elem_size-aligned.
 */
int32_t mrt_fill(uint8_t *dst, uint32_t value, int32_t count, int32_t elem_size);

/**
 * 6-D strided copy (TRANSPOSE, STRIDED_SLICE, CONCATENATION / PACK parts, the PAD interior):
 * for every index (i0..i5) < count, the element at src + sum(i * src_stride) goes to
 * dst + sum(i * dst_stride). Innermost runs contiguous on both sides are copied as one block.
 * Elements of 2 or 4 bytes must be aligned to their size.
 */
int32_t mrt_strided_copy(const mrt_copy_params *p);

/* ========================== binary: ADD SUB MUL MAXIMUM MINIMUM (mrt_binary.c, mrt_binary_s8.c) */

/**
 * Broadcasting ADD / SUB / MUL / MAXIMUM / MINIMUM on int8 (TFLM's quantized arithmetic,
 * mrt_binary_quant). The output is written in order over p->dims. (Same-shape ADD / MUL with
 * CMSIS-NN's signature: arm_elementwise_add_s8 / arm_elementwise_mul_s8.)
 */
int32_t mrt_binary_s8(const mrt_binary_s8_params *p);

/** The same on int16 (TFLM's int16 paths; MUL's product wraps in 32 bits as TFLM's does). */
int32_t mrt_binary_s16(const mrt_binary_s16_params *p);

/**
 * Broadcasting ADD / SUB / MUL / MAXIMUM / MINIMUM on float32. ADD / SUB / MUL are clamped to
 * [act_min, act_max] with numpy's maximum / minimum (NaN propagates); MAXIMUM / MINIMUM return
 * x > y ? x : y / x < y ? x : y unclamped.
 */
int32_t mrt_binary_f32(const mrt_binary_f32_params *p);

/* ============================================= unary: activations, requantization (mrt_unary.c) */

/** int8 RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH and QUANTIZE int8 -> int8 (MRT_UNARY_*). */
int32_t mrt_unary_s8(const mrt_unary_s8_params *p);

/**
 * Element-wise integer ops between int8 / int16 / int32 (element sizes 1, 2, 4):
 * MRT_UNARY_REQUANT (QUANTIZE between integer types, int16 RELU), MRT_UNARY_RELU6,
 * MRT_UNARY_LEAKY; the result is clamped to [lo, hi]. The input offset of REQUANT is subtracted
 * wrapping in 32 bits (int32 inputs).
 */
int32_t mrt_unary_int(const mrt_unary_int_params *p);

/**
 * float32 RELU, RELU6, LEAKY_RELU (alpha), LOGISTIC (TFLM's cutoffs, then newlib's expf),
 * TANH (newlib's tanhf), HARD_SWISH (x * min(6, max(0, x + 3)) / 6).
 */
int32_t mrt_unary_f32(const mrt_unary_f32_params *p);

/* =============================================== QUANTIZE / DEQUANTIZE float32 (mrt_quantize.c) */

/**
 * QUANTIZE float32 -> int8: q = round_half_away(in / scale) converted to int32 as the host
 * twin's cast does (NaN and out-of-range give INT32_MIN), + zero_point (wrapping), clamped to
 * [-128, 127].
 * @param[in]  in          float32 [n]
 * @param[out] out         int8 [n]
 * @param[in]  n           elements
 * @param[in]  scale_bits  the output scale as float32 bits
 * @param[in]  zero_point  the output zero point
 */
int32_t mrt_quantize_f32_s8(const float *in, int8_t *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/** QUANTIZE float32 -> int16: as mrt_quantize_f32_s8, clamped to [-32768, 32767]. */
int32_t mrt_quantize_f32_s16(const float *in, int16_t *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/**
 * DEQUANTIZE int8 -> float32: out = (float)(scale * (in - zero_point)), computed in double as
 * the twin does. Arguments as for mrt_quantize_f32_s8, in and out swapped in type.
 */
int32_t mrt_dequantize_s8_f32(const int8_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/** DEQUANTIZE int16 -> float32: as mrt_dequantize_s8_f32. */
int32_t mrt_dequantize_s16_f32(const int16_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/** DEQUANTIZE uint8 -> float32 (TFLM's old uint8 quantization at a model's edge): as
 * mrt_dequantize_s8_f32 on the unsigned byte value. */
int32_t mrt_dequantize_u8_f32(const uint8_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/* ======================================================================== reduce (mrt_reduce.c) */

/**
 * MEAN int8 over the axes flagged in p->reduce: per output, the sum of (x - in_zp) over the
 * reduced positions, requantized by mult / shift (which include the division by the count),
 * + out_zp, clamped to [act_min, act_max].
 */
int32_t mrt_mean_s8(const mrt_mean_s8_params *p);

/** MEAN float32: a sequential float32 sum from the first element (as the twin), divided by the count. */
int32_t mrt_mean_f32(const mrt_mean_f32_params *p);

/* ============================== reduce: SUM, REDUCE_MAX / MIN / ALL, ARG_MAX / MIN, CUMSUM (mrt_reduce.c) */

/**
 * SUM / MEAN (int8, int16), REDUCE_MAX / REDUCE_MIN (int8), REDUCE_ALL (bool) over p->walk:
 * SUM: the elements summed in uint32 (wrapping as TFLM's int32 sum), less zp_count,
 * MultiplyByQuantizedMultiplier(mult, shift), + out_zp, clamped to [lo, hi]; no element: 0.
 * MAX / MIN: from lo / hi, an element replaces the value when strictly greater / smaller.
 * ALL: 1 unless an element is 0.
 */
int32_t mrt_reduce_int(const mrt_reduce_int_params *p);

/**
 * SUM / MEAN / REDUCE_MAX / REDUCE_MIN float32 over p->walk: SUM from 0.0f adding in input order
 * (MEAN then / (float)count; no element: 0.0f); MAX / MIN from -FLT_MAX / FLT_MAX, replaced by a
 * strictly greater / smaller element (NaN never wins). Bit-exact with the twin.
 */
int32_t mrt_reduce_f32(const mrt_reduce_f32_params *p);

/** ARG_MAX / ARG_MIN int8: per [outer, inner], the first index of the extreme along the axis. */
int32_t mrt_arg_min_max_s8(const mrt_arg_min_max_params *p);

/** ARG_MAX / ARG_MIN float32: as mrt_arg_min_max_s8 (strict comparisons: NaN never wins). */
int32_t mrt_arg_min_max_f32(const mrt_arg_min_max_params *p);

/**
 * CUMSUM float32 along depth: a running sum from 0.0f (reverse: from the last), exclusive:
 * written before adding. Bit-exact with the twin.
 */
int32_t mrt_cumsum_f32(const mrt_cumsum_params *p);

/**
 * CUMSUM int8, TFLM's quantized CumSum: each (x + in_off) << 20 scaled by in_mult / in_shift
 * (MultiplyByQuantizedMultiplierSmallerThanOneExp), summed in uint32 from the scaled in_off,
 * each running sum scaled by out_mult / out_shift, + out_off, clamped to int8.
 */
int32_t mrt_cumsum_s8(const mrt_cumsum_params *p);

/* ================================================ LOG_SOFTMAX, L2_NORMALIZATION (mrt_normalization.c) */

/**
 * LOG_SOFTMAX int8, TFLM's LogSoftmaxQuantized (output scale 16/256, zero point 127): gemmlowp
 * exp of the Q5.26 differences summed in Q12.19, log_x_for_x_greater_than_or_equal_to_1 into
 * Q5.26, (diff - log_sum) / 2^22 + 127; differences at or below the adjusted diff_min: -128.
 */
int32_t mrt_log_softmax_s8(const mrt_log_softmax_s8_params *p);

/**
 * LOG_SOFTMAX float32 per row of depth: max (from -FLT_MAX, NaN never wins), sum of
 * expf(x - max) from 0.0f, then (x - max) - logf(sum) (newlib's expf / logf).
 */
int32_t mrt_log_softmax_f32(const float *in, float *out, int32_t rows, int32_t depth);

/**
 * L2_NORMALIZATION int8, TFLM's reference_integer_ops::L2Normalization: per row the int32 sum of
 * (x - in_zp)^2, GetInvSqrtQuantizedMultiplierExp, each x - in_zp requantized with 7 more bits,
 * clamped to int8 (output scale 1/128, zero point 0).
 */
int32_t mrt_l2norm_s8(const int8_t *in, int8_t *out, int32_t rows, int32_t depth, int32_t in_zp);

/** L2_NORMALIZATION float32: x / max(sqrtf(sum of x * x from 0.0f), 1e-6f). Bit-exact with the twin. */
int32_t mrt_l2norm_f32(const float *in, float *out, int32_t rows, int32_t depth);

/* =================================================================== convolution (mrt_conv_*.c) */

/**
 * CONV_2D float32, grouped when geom.fc < geom.ic: per output, the taps in TFLM's loop order
 * summed from 0.0f (padded taps as 0.0f products, as the twin's zero-padded buffer gives), then
 * + bias, then the activation clamp.
 */
int32_t mrt_conv_f32(const mrt_conv_f32_params *p);

/**
 * DEPTHWISE_CONV_2D float32 (geom.fc = depth multiplier; output channel o reads input channel
 * o / geom.fc): the sum starts from the first tap's product, as the twin does.
 */
int32_t mrt_depthwise_conv_f32(const mrt_conv_f32_params *p);

/**
 * CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED with int16 activations and int8 weights (16x8):
 * taps outside the image skipped, int64 accumulator and bias, then TFLM's int64
 * MultiplyByQuantizedMultiplier (16-bit reduced multiplier, one rounding); with bias_size 4
 * TFLM's int32-accumulator variant (wrapping int32 sum, double-rounding requantization).
 * FULLY_CONNECTED is a 1x1 conv over [batches, 1, 1, accum].
 */
int32_t mrt_conv_s16(const mrt_conv_s16_params *p);

/* ============================================================ transpose conv (mrt_transpose_conv.c) */

/**
 * TRANSPOSE_CONV 16x8, TFLM's reference kernel (a CMSIS-NN build runs it too): p->acc zeroed,
 * then every input value times every filter tap added (int32 product, int64 sum) into the
 * output element it reaches, (iy * sh - ph + fy, ix * sw - pw + fx) when inside the output;
 * then + bias (int64, or an int16 bias widened into p->bias_wide first, as TFLM does), TFLM's
 * int64 MultiplyByQuantizedMultiplier per output channel, clamped to [act_min, act_max]. No
 * zero point is applied (TFLM's 16x8 kernel applies none). Scratch: p->acc, p->bias_wide.
 */
int32_t mrt_transpose_conv_s16(const mrt_transpose_conv_s16_params *p);

/**
 * TRANSPOSE_CONV float32, TFLM's reference kernel: the output zeroed, then each input value times
 * each filter tap added in the reference's loop order (input y, x, channel, filter y, x, output
 * channel), then + bias and the activation clamp. No scratch.
 */
int32_t mrt_transpose_conv_f32(const mrt_transpose_conv_f32_params *p);

/* ====================================================== fully connected (mrt_fully_connected.c) */

/** FULLY_CONNECTED float32: per output, sum_d x[d] * w[o][d] from 0.0f, + bias, activation clamp. */
int32_t mrt_fully_connected_f32(const mrt_fc_f32_params *p);

/* ====================================================================== pooling (mrt_pooling.c) */

/**
 * AVERAGE_POOL_2D float32: the window's taps summed in order (padded taps as 0.0f, as the
 * twin's padded buffer), divided by the number of taps inside the image, activation clamp.
 */
int32_t mrt_avgpool_f32(const mrt_pool_f32_params *p);

/** MAX_POOL_2D float32: numpy maximum over the window (padded taps as -FLT_MAX), activation clamp. */
int32_t mrt_maxpool_f32(const mrt_pool_f32_params *p);

/**
 * L2_POOL_2D float32 (mrt_pooling.c): per output, sqrtf(sum of the squares of the window's
 * taps inside the image, from 0.0f in (y, x) order, / (float)count), then the activation clamp.
 * Bit-exact with the twin.
 */
int32_t mrt_l2_pool_f32(const mrt_pool_f32_params *p);

/* ====================================================================== softmax (mrt_softmax.c) */

/**
 * SOFTMAX float32, TFLM's float softmax: per row, e = expf((x - max) * beta) (newlib), then
 * e / sum(e) with the sum accumulated in order.
 * @param[in]  in         float32 [rows, depth]
 * @param[out] out        float32 [rows, depth]
 * @param[in]  rows       product of all but the last dimension
 * @param[in]  depth      last dimension (>= 1)
 * @param[in]  beta_bits  beta as float32 bits
 */
int32_t mrt_softmax_f32(const float *in, float *out, int32_t rows, int32_t depth, uint32_t beta_bits);

/* ========================================================================== SVDF (mrt_svdf.c) */

/**
 * SVDF, int8 input, int8 state and time weights, one invoke: the state moves one step, each
 * filter's feature product (input + input_offset against its weights) is requantized with mult_1 / shift_1, saturated to
 * [state_min, state_max], + state_zp and stored in the state's last slot; each unit's output is
 * bias + its rank filters' time sums (state x weights_time + time_sums), requantized with
 * mult_2 / shift_2, + output_zp, clamped to int8. TFLM's reference arithmetic with CMSIS-NN's
 * arm_svdf_s8 structure (see mrt_svdf.c). int32 sums wrap.
 * @param[in,out] p  mrt_svdf_params; p->buffer: num_filters / rank int32 of scratch
 */
int32_t mrt_svdf_s8(const mrt_svdf_params *p);

/** The same with an int16 state and int16 time weights (arm_svdf_state_s16_s8's structure). */
int32_t mrt_svdf_state_s16_s8(const mrt_svdf_params *p);

/**
 * SVDF float32, one invoke (mrt_svdf.c): TFLM's EvalFloatSvdfReference, bit-exact with the
 * numpy twin except TANH (newlib's tanhf). The state moves one step; each filter's feature dot
 * product (float32, input order) goes into its memory's last slot; each filter's time sum
 * (float32, memory order) into p->scratch; each unit's output is its bias (0.0f without one)
 * plus its rank filters' sums in order, then the fused activation (ActivationValFloat).
 * @param[in,out] p  mrt_svdf_f32_params; p->scratch: batch * num_filters floats
 */
int32_t mrt_svdf_f32(const mrt_svdf_f32_params *p);

/* ====================================================== UNIDIRECTIONAL_SEQUENCE_LSTM (mrt_lstm.c) */

/**
 * UNIDIRECTIONAL_SEQUENCE_LSTM 8x8->16 over all steps: TFLM's integer LSTM (gates from the
 * input and recurrent FCs requantized to int16 and added with saturation, int16 sigmoid / tanh
 * from the interpolated sigmoid table, int16 cell, int8 hidden state). No peephole, projection
 * or layer norm. Updates the hidden and cell states; writes every step's hidden state to the
 * output. int32 sums wrap.
 * @param[in,out] p  mrt_lstm_params (int8 activations, int32 biases)
 */
int32_t mrt_lstm_s8(const mrt_lstm_params *p);

/** The same, 16x8->16: int16 activations, int64 biases and gate sums, TFLM's int64
 * requantization, int16 hidden state. */
int32_t mrt_lstm_s16(const mrt_lstm_params *p);

/**
 * UNIDIRECTIONAL_SEQUENCE_LSTM float32 over all steps (mrt_lstm.c): TFLM's float LSTM. Per
 * gate the input FC (+ bias) plus the recurrent FC over the old hidden state, float32 in input
 * order; sigmoid (reference_ops::Logistic, newlib's expf) or tanhf for the cell gate; cell =
 * forget * cell + input * cell gate, clipped by cell_clip > 0; hidden = tanhf(cell) * output gate.
 * No peephole, projection or layer norm. Updates the hidden and cell states; writes every step's
 * hidden state to the output. Bit-exact with the numpy twin given the same expf / tanhf.
 * @param[in,out] p  mrt_lstm_f32_params; p->gates: four scratch buffers of batch * n_state floats
 */
int32_t mrt_lstm_f32(const mrt_lstm_f32_params *p);

/* ============================= gather, slice, pad (mrt_gather.c, mrt_slice.c, mrt_broadcast_args.c) */
/* The rest of issue 12's data movement (DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND,
 * BATCH_TO_SPACE_ND, SPLIT, SPLIT_V, UNPACK, REVERSE_V2, BROADCAST_TO, FILL) is mrt_strided_copy
 * and mrt_fill calls. These kernels read indices, begins or shapes from tensors at run time;
 * where TFLM refuses such a value at invoke (or would read or write outside a tensor), they
 * write nothing more and return -1 (the glue raises micro_rt's KernelError); else 0. */

/**
 * GATHER (TFLM's loops): for each batch, outer index and coordinate, copies the inner block of
 * the position coords[batch][coord] along the axis.
 * @return 0; -1 at the first position outside [0, axis_size) (TFLM does not check).
 */
int32_t mrt_gather(const mrt_gather_params *p);

/**
 * GATHER_ND: slice i starts at sum_j indices[i][j] * dims_to_count[j] (int arithmetic) and
 * copies slice_size elements.
 * @return 0; -1 at the first slice reaching outside params ("gather_nd index out of bounds").
 */
int32_t mrt_gather_nd(const mrt_gather_nd_params *p);

/**
 * EMBEDDING_LOOKUP: row ids[i] of the table copied to output row i (columns * elem_size bytes).
 * @return 0; -1 at the first id outside [0, rows).
 */
int32_t mrt_embedding_lookup(const mrt_embedding_params *p);

/**
 * Hybrid EMBEDDING_LOOKUP: int8 table row ids[i] to float32 output row i, each value
 * (float)v * scale (zero point 0; TFLM's params.scale, the first scale, for every row).
 * @return 0; -1 at the first id outside [0, rows).
 */
int32_t mrt_embedding_lookup_hybrid_f32(const mrt_embedding_params *p);

/**
 * SLICE: begin / size (size -1: to the end) read as TFLM reads them (int64 narrowed to int32),
 * then one mrt_strided_copy of the 5-D block.
 * @return 0; -1 when the block reaches outside the input or holds more than out_count elements.
 */
int32_t mrt_slice(const mrt_slice_params *p);

/**
 * DYNAMIC_UPDATE_SLICE: an update as large as the operand replaces it; else the operand is
 * copied (unless in place) and the update written at start indices clamped to
 * [0, operand - update] per axis, with mrt_strided_copy.
 * @return 0.
 */
int32_t mrt_dynamic_update_slice(const mrt_dynamic_update_slice_params *p);

/**
 * MIRROR_PAD (TFLM's GetFlatIndex / GetInputDimension per output element, row-major), any
 * rank; first fills p->in_stride / p->out_stride with each axis' elements per step.
 * @return 0; -1 when an output element maps outside the input.
 */
int32_t mrt_mirror_pad(const mrt_mirror_pad_params *p);

/**
 * BROADCAST_ARGS: the broadcast of two shape vectors, last dimensions aligned, missing ones 1,
 * values narrowed to int as TFLM does.
 * @return 0; -1 when two dimensions differ and neither is 1 (TFLM aborts).
 */
int32_t mrt_broadcast_args(const mrt_broadcast_args_params *p);

/* ============================= space / batch, reverse (mrt_space_batch.c) */

/**
 * SPACE_TO_BATCH_ND (TFLM's reference loops): each output pixel's depth copied from its input
 * pixel, or set to pad_value bytes where it falls in the padding.
 * @return 0; -1 when a block value is not positive (TFLM would divide by it).
 */
int32_t mrt_space_to_batch_nd(const mrt_space_batch_params *p);

/**
 * BATCH_TO_SPACE_ND (TFLM's reference loops): each input pixel's depth copied to its output
 * pixel unless cropped away.
 * @return 0; -1 when a block value is not positive.
 */
int32_t mrt_batch_to_space_nd(const mrt_space_batch_params *p);

/**
 * REVERSE_V2: the axes (negatives from the end) sorted and checked contiguous as
 * ReverseV2Eval does, then one memcpy per inner block of the reversed span.
 * @return 0; -1 when the axes are empty, out of range or not contiguous.
 */
int32_t mrt_reverse(const mrt_reverse_params *p);
/* ========================================================================= resize (mrt_resize.c) */

/**
 * RESIZE_NEAREST_NEIGHBOR, TFLM's reference kernel for any element size: each output pixel copies
 * the input pixel at (GetNearestNeighbor(y), GetNearestNeighbor(x)), float32 index arithmetic
 * ((v + 0.5 if half_pixel_centers) * scale, floorf, or roundf with align_corners). No scratch.
 */
int32_t mrt_resize_nearest_neighbor(const mrt_resize_params *p);

/**
 * RESIZE_BILINEAR float32, reference_ops::ResizeBilinear: the four neighbours weighted in float32
 * in the reference's order, no fused multiply-add. No scratch.
 */
int32_t mrt_resize_bilinear_f32(const mrt_resize_params *p);

/**
 * RESIZE_BILINEAR int8, reference_ops::ResizeBilinearInteger: positions in 1/1024, the four
 * products summed in int64, rounded half away from zero and divided by 2^20. No scratch.
 */
int32_t mrt_resize_bilinear_s8(const mrt_resize_params *p);

/* ================================================================ batch matmul (mrt_batch_matmul.c) */

/**
 * BATCH_MATMUL int8, TFLM's reference kernel: per output, sum_k (rhs' + rhs_offset) * (lhs' +
 * lhs_offset) in int32, MultiplyByQuantizedMultiplier (double rounding), + out_offset, clamped
 * to [act_min, act_max]. Outputs in row order, the batch axes broadcast. No scratch.
 */
int32_t mrt_batch_matmul_s8(const mrt_batch_matmul_params *p);

/** BATCH_MATMUL int16: as the int8 kernel with int64 sums and the int64 MultiplyByQuantizedMultiplier. */
int32_t mrt_batch_matmul_s16(const mrt_batch_matmul_params *p);

/** BATCH_MATMUL float32: per output, 0.0f then + rhs' * lhs' in k order, no fused multiply-add. */
int32_t mrt_batch_matmul_f32(const mrt_batch_matmul_params *p);

/* ============================================ DIV FLOOR_DIV FLOOR_MOD SQUARED_DIFFERENCE PRELU ADD_N (mrt_binary_ops.c) */

/**
 * Broadcasting DIV / FLOOR_DIV / FLOOR_MOD / SQUARED_DIFFERENCE / PRELU on float32, TFLM's reference
 * kernels: DIV x / y clamped to [act_min, act_max] as std::min(std::max(v, lo), hi); FLOOR_DIV
 * floor of the double quotient; FLOOR_MOD fmodf moved into the divisor's sign; SQUARED_DIFFERENCE
 * (x - y)^2; PRELU x >= 0 ? x : x * alpha. FLOOR_DIV calls libm's floor on a double (soft double on
 * the M0+ / M4 / M33), FLOOR_MOD newlib's fmodf (exact).
 */
int32_t mrt_binary_ops_f32(const mrt_binary_ops_params *p);

/** DIV (truncating, clamped to act_min / act_max) and SQUARED_DIFFERENCE (wrapping) on int32. The glue
 * refuses zero divisors and INT32_MIN / -1 before calling. */
int32_t mrt_binary_ops_s32(const mrt_binary_ops_params *p);

/** DIV, SQUARED_DIFFERENCE, PRELU on int8 (TFLM-exact; DIV rounds as TFLM's x86 build, see
 * kernels/binary_ops.py). */
int32_t mrt_binary_ops_s8(const mrt_binary_ops_q_params *p);

/** SQUARED_DIFFERENCE on int16, PRELU on an int16 input with an int8 alpha. */
int32_t mrt_binary_ops_s16(const mrt_binary_ops_q_params *p);

/** ADD_N on float32: 0, then each input added in order. */
int32_t mrt_add_n_f32(const mrt_add_n_params *p);

/** ADD_N on int8 (TFLM's AddN with its int32 accumulator). */
int32_t mrt_add_n_s8(const mrt_add_n_params *p);

/* =================================================== comparisons, LOGICAL_AND / OR, SELECT_V2 (mrt_compare.c) */

/** EQUAL .. LESS_EQUAL (broadcasting) on float32, int32, int64, int8 (rescaled) and bool; writes bool. */
int32_t mrt_compare(const mrt_compare_params *p);

/** LOGICAL_AND / LOGICAL_OR on bytes (broadcasting): the bitwise AND / OR, as TFLM's x86 build
 * combines bool bytes. */
int32_t mrt_logical_u8(const mrt_logical_params *p);

/** SELECT_V2 (broadcasting condition, x, y) for 1-, 2- and 4-byte elements. */
int32_t mrt_select(const mrt_select_params *p);
/* ============================================================ unary math (mrt_unary_math.c) */

/**
 * ABS CEIL COS ELU EXP FLOOR LOG NEG ROUND RSQRT SIN SQRT SQUARE on float32, element by element as
 * TFLM's reference kernels: fabsf, ceilf, floorf, -x, x * x, sqrtf, 1 / sqrtf (exact), ROUND's
 * RoundToNearest (floorf, halves to even), and newlib's cosf, sinf, logf, expf, expm1f (ELU: expm1f
 * below 0) where TFLM calls std::cos, ... (within a few ulp of the host's glibc; the tests state
 * the bound). M0+: soft float; M4 / M7 / M33: the FPU.
 * @param[in] p  mrt_unary_math_f32_params: in / out float32 [n] (may be the same), op MRT_MATH_F32_*
 * @return 0
 */
int32_t mrt_unary_math_f32(const mrt_unary_math_f32_params *p);

/**
 * Quantized ABS (int8, int16; int16 also unquantized) and RSQRT (int8, int16) computed per element
 * as TFLM's elementwise.cc does (RSQRT: GetInvSqrtQuantizedMultiplierExp's Newton-Raphson, five
 * iterations in Q3.28). RSQRT inputs below the zero point are refused by the glue before the call
 * (TFLM fails the invoke); the kernel computes them as the zero point.
 * @param[in] p  mrt_abs_rsqrt_int_params
 * @return 0
 */
int32_t mrt_abs_rsqrt_int(const mrt_abs_rsqrt_int_params *p);

/**
 * An int8 lookup: out[i] = table[(uint8_t)in[i]] (ELU int8: elu.cc's EvalUsingLookupTable over the
 * 256-entry table its prepare fills).
 * @param[in]  in     int8 [n]
 * @param[out] out    int8 [n]
 * @param[in]  n      elements
 * @param[in]  table  int8 [256], indexed by the input's raw byte
 * @return 0
 */
int32_t mrt_lut_s8(const int8_t *in, int8_t *out, int32_t n, const int8_t *table);

/**
 * LOGICAL_NOT: out[i] = !in[i] on bool bytes (0 / 1).
 * @return 0
 */
int32_t mrt_logical_not(const uint8_t *in, uint8_t *out, int32_t n);

/* ========================================================================== CAST (mrt_cast.c) */

/**
 * CAST between int8, int16, int32, uint32, float32 and bool (MRT_TYPE_*), one loop per type pair:
 * integers convert as C casts (wrapping), bool is x != 0 (and 0 / 1 in), float32 -> integer
 * truncates, saturates to the output type, NaN -> 0 (as the oracle does).
 * @param[in]  in        n elements of in_type
 * @param[out] out       n elements of out_type
 * @param[in]  in_type   MRT_TYPE_*
 * @param[in]  out_type  MRT_TYPE_*
 * @return 0
 */
int32_t mrt_cast(const void *in, void *out, int32_t n, int32_t in_type, int32_t out_type);

/* ============================================= int16 LOGISTIC / TANH (mrt_unary.c) */

/**
 * int16 LOGISTIC (is_tanh 0) or TANH (is_tanh 1) as TFLM's reference integer kernels: x scaled by
 * input_multiplier >> input_left_shift (multiplier 0: a power-of-two scale, 3 << shift), then the
 * 256-entry sigmoid table interpolated on 9 (tanh: 8) low bits. Output scale 2^-15, zero points 0.
 * @param[in]  in                int16 [n]
 * @param[out] out               int16 [n]
 * @param[in]  input_multiplier  LogisticPrepare / TanhPrepare's multiplier (<= 32767; 0 = power of two)
 * @param[in]  input_left_shift  its shift
 * @param[in]  is_tanh           0: LOGISTIC, 1: TANH
 * @param[in]  sigmoid_table_uint16  TFLM's 256-entry table (in flash)
 * @return 0
 */
int32_t mrt_sigmoid_s16(const int16_t *in, int16_t *out, int32_t n, int32_t input_multiplier,
                        int32_t input_left_shift, int32_t is_tanh, const uint16_t *sigmoid_table_uint16);

/* ============================================== QUANTIZE int8 <-> uint8 (mrt_quantize.c) */

/**
 * QUANTIZE between int8 and uint8 as TFLM's reference Requantize: out_off + MBQM(x - in_off, mult,
 * shift), clamped to the output type; with xor_path (equal scales, zero points 128 apart) x ^ 0x80.
 * @param[in] p  mrt_requantize_u8_params
 * @return 0
 */
int32_t mrt_requantize_u8(const mrt_requantize_u8_params *p);

/* ============================= TFLM's Signal library (mrt_signal*.c) */

/**
 * SignalWindow: each window of weight_size samples times the weights, >> shift, saturated.
 * @return 0
 */
int32_t mrt_signal_window_s16(const mrt_signal_window_params *p);

/**
 * SignalFftAutoScale: shift the frame left so its largest magnitude fills int16 (MaxAbs16 in
 * int16, so a -32768 wraps as in TFLM); the shift to *scale_bits.
 * @return 0
 */
int32_t mrt_signal_fft_auto_scale_s16(const int16_t *input, int32_t size, int16_t *output,
                                      int32_t *scale_bits);

/**
 * SignalRfft int16: KISS FFT's fixed-point real FFT (kiss_fftr) of each zero-padded frame,
 * fft_length / 2 + 1 complex outputs; radices 2, 3, 4, 5 (TFLM's build crashes on others).
 * @return 0
 */
int32_t mrt_signal_rfft_s16(const mrt_signal_fft_params *p);

/**
 * SignalIrfft int16: KISS FFT's fixed-point inverse real FFT (kiss_fftri) of each frame's
 * fft_length / 2 + 1 complex values (input_length complex apart) into fft_length samples
 * (output_length apart); the twiddles are the inverse plan's. `work` is not used.
 * @return 0
 */
int32_t mrt_signal_irfft_s16(const mrt_signal_fft_params *p);

/**
 * SignalEnergy: re^2 + im^2 of complex bins start..end-1 (the rest of the output untouched).
 * @return 0
 */
int32_t mrt_signal_energy_s16(const int16_t *input, int32_t start, int32_t end, uint32_t *output);

/**
 * SignalFilterBank: per channel, weighted sum of its bins plus the previous channel's
 * unweighted sum (uint64); channel 0's sum is dropped, output_count follow.
 * @return 0
 */
int32_t mrt_signal_filter_bank(const mrt_signal_filter_bank_params *p);

/**
 * SignalFilterBankSquareRoot: TFLM's bitwise integer square root of each uint64, >> the shift
 * read from *scale_bits (the FFT auto-scale output).
 * @return 0; -1 when the shift is outside 0..31 (undefined in C).
 */
int32_t mrt_signal_filter_bank_sqrt(const uint64_t *input, int32_t count, const int32_t *scale_bits,
                                    uint32_t *output);

/**
 * SignalFilterBankSpectralSubtraction: update the noise estimate (the state, in place) and
 * subtract it, floored at min_signal_remaining; the estimate copied to noise_output.
 * @return 0
 */
int32_t mrt_signal_spectral_subtraction(const mrt_signal_spectral_subtraction_params *p);

/**
 * SignalPCAN: per-channel automatic gain from the noise estimate (WideDynamicFunction), then
 * PcanShrink of the SNR.
 * @return 0
 */
int32_t mrt_signal_pcan(const mrt_signal_pcan_params *p);

/**
 * SignalFilterBankLog: Log32 of each channel << input_correction_bits, scaled, saturated to
 * int16 (0 for values <= 1).
 * @return 0
 */
int32_t mrt_signal_filter_bank_log(const mrt_signal_log_params *p);

/**
 * SignalDelay int16: each row's output is its delay line followed by the row, cut to the row's
 * length; the line keeps the last delay_length samples (TFLM: a circular buffer).
 * @return 0
 */
int32_t mrt_signal_delay_s16(const mrt_signal_stream_params *p);

/**
 * SignalOverlapAdd: each frame added into the row's partial sums (int16 saturating / float32),
 * the first frame_step out, the rest shifted down and zero-filled.
 * @return 0
 */
int32_t mrt_signal_overlap_add_s16(const mrt_signal_stream_params *p);
int32_t mrt_signal_overlap_add_f32(const mrt_signal_stream_params *p);

/**
 * SignalFramer int16: per row, frame_step samples at a time into its FIFO; a full frame out
 * (and frame_step discarded) whenever frame_size are there, else *valid = 0.
 * @return 0
 */
int32_t mrt_signal_framer_s16(const mrt_signal_fifo_params *p);

/**
 * SignalStacker int16: a frame of channels into the FIFO (the first one repeated for the left
 * context); the stacked window out when complete (*valid = 1), then a step discarded.
 * @return 0
 */
int32_t mrt_signal_stacker_s16(const mrt_signal_fifo_params *p);

/* ============================== binary on int32 / int64: ADD SUB MUL MAXIMUM MINIMUM (mrt_binary.c) */

/**
 * Broadcasting ADD / SUB / MUL / MAXIMUM / MINIMUM on int32 (p->op: MRT_OP_ADD .. MRT_OP_MIN; in1,
 * in2, out int32), TFLM's reference int32 paths: the sum, difference or product wraps in 32 bits,
 * then is clamped to [act_min, act_max] (the glue passes the full int32 range for ADD);
 * MAXIMUM / MINIMUM unclamped.
 * @return 0
 */
int32_t mrt_binary_s32(const mrt_binary_ops_params *p);

/**
 * Broadcasting MAXIMUM / MINIMUM on int64 (p->op: MRT_OP_MAX / MRT_OP_MIN; act_min / act_max unread).
 * @return 0; -1 for another op
 */
int32_t mrt_binary_s64(const mrt_binary_ops_params *p);

/* ============================== TFLM's SignalRfft / SignalIrfft int32 and float32 (mrt_signal_fft.c) */

/**
 * SignalRfft / SignalIrfft on int32 (KISS FFT FIXED_POINT=32: products rounded from int64 (>> 31),
 * sums wrap) and float32 (every operation rounded to float, no scaling inside KISS FFT). The same
 * mrt_signal_fft_params as the int16 kernels, with every sample pointer (input, output, work, tmp,
 * twiddles, super_twiddles) to int32_t or float values: tmp holds fft_length / 2 complex of the
 * type (8 bytes each), work fft_length scalars (rfft only). irfft_f32 divides its output by
 * fft_length (IrfftFloatApply). Radices 2, 3, 4, 5 as for int16.
 * @return 0
 */
int32_t mrt_signal_rfft_s32(const mrt_signal_fft_params *p);
int32_t mrt_signal_irfft_s32(const mrt_signal_fft_params *p);
int32_t mrt_signal_rfft_f32(const mrt_signal_fft_params *p);
int32_t mrt_signal_irfft_f32(const mrt_signal_fft_params *p);

/* ============================== TFLM's custom operators: CIRCULAR_BUFFER (mrt_circular_buffer.c) */

/**
 * CIRCULAR_BUFFER int8: the buffer moves one slot (depth values) towards the start, the input
 * fills the last slot; then state->cycles_until_run counts down and, until it reaches 0, the
 * run ends at this operator (kTfLiteAbort); at 0 it restarts at cycles_max.
 * @return 1: kTfLiteAbort (the later operators do not run this invoke); 0: the run goes on
 */
int32_t mrt_circular_buffer_s8(const mrt_circular_buffer_params *p);

/* ============================== TFLM's custom operators: TFLite_Detection_PostProcess (mrt_detection_postprocess.c) */

/**
 * TFLite_Detection_PostProcess float32: decodes the centre-size box encodings against the
 * anchors (double arithmetic, newlib's exp; corners float) into p->decoded, then non-max
 * suppression: regular (use_regular_nms: per class, the best max_detections over all classes)
 * or fast (per anchor its top max_classes_per_detection classes, suppression on the best one),
 * writing the four outputs as TFLM does (the fast path leaves rows it does not write as they
 * were). Every working array is one of TFLM's scratch buffers (sizes in the struct); the glue
 * checks the options, shapes and that the buffers hold what the path writes.
 * @return 0; MRT_DETECTION_BAD_BOX or MRT_DETECTION_PAST_OUTPUTS (outputs partly written)
 */
int32_t mrt_detection_postprocess_f32(const mrt_detection_postprocess_params *p);

/* Run-time data checks (mrt_data_checks.c): nonzero when TFLM fails the invoke on the values. */
int32_t mrt_check_nonzero_f32(const float *divisor, int32_t n);
int32_t mrt_check_nonzero_s32(const int32_t *divisor, int32_t n);
int32_t mrt_check_div_overflow_s32(const mrt_binary_ops_params *p);
int32_t mrt_check_rsqrt_int(const mrt_abs_rsqrt_int_params *p);

#endif
