/* micro_rt: BATCH_MATMUL (int8, int16, float32), TFLM's reference kernel: for every batch (up to
 * three broadcast batch axes), out[a][c] = sum over k of lhs'[a][k] * rhs'[k][c], output row by
 * output row, the sum in k order. lhs' and rhs' are read through strides, so adj_x / adj_y need
 * no copy here (TFLM copies a transposed operand into a persistent buffer; its constant rhs
 * once, the runner places that copy in flash). The numpy twin is micro_rt.kernels.batch_matmul.
 * arm_batch_matmul_s8 is CMSIS-NN's kernel for operands whose rows are contiguous (what TFLM's
 * CMSIS-NN glue passes it): one vector-by-transposed-matrix product per lhs row, two rhs rows
 * at a time with SXTAB16 / SMLAD on the DSP cores, three at a time in plain C on the M0+. */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

#define MRT_BMM_LOOP(p, T_IN, T_OUT, BODY)                                                     \
    do {                                                                                    \
        const T_IN *lhs0 = (const T_IN *)(p)->lhs, *rhs0 = (const T_IN *)(p)->rhs;          \
        T_OUT *out = (T_OUT *)(p)->out;                                                     \
        for (int32_t b0 = 0; b0 < (p)->batch[0]; ++b0)                                      \
        for (int32_t b1 = 0; b1 < (p)->batch[1]; ++b1)                                      \
        for (int32_t b2 = 0; b2 < (p)->batch[2]; ++b2) {                                    \
            const T_IN *lb = lhs0 + b0 * (p)->lhs_batch_stride[0] + b1 * (p)->lhs_batch_stride[1] \
                             + b2 * (p)->lhs_batch_stride[2];                               \
            const T_IN *rb = rhs0 + b0 * (p)->rhs_batch_stride[0] + b1 * (p)->rhs_batch_stride[1] \
                             + b2 * (p)->rhs_batch_stride[2];                               \
            for (int32_t a = 0; a < (p)->rows; ++a) {                                       \
                const T_IN *lrow = lb + a * (p)->lhs_row_stride;                            \
                for (int32_t c = 0; c < (p)->cols; ++c) {                                   \
                    const T_IN *rcol = rb + c * (p)->rhs_col_stride;                        \
                    BODY                                                                    \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
    } while (0)

int32_t mrt_batch_matmul_s8(const mrt_batch_matmul_params *p)
{
    const int32_t ls = p->lhs_depth_stride, rs = p->rhs_depth_stride;
    MRT_BMM_LOOP(p, int8_t, int8_t, {
        int32_t total = 0;
        for (int32_t k = 0; k < p->depth; ++k) {
            total += (rcol[k * rs] + p->rhs_offset) * (lrow[k * ls] + p->lhs_offset);
        }
        *out++ = mrt_out_stage(total, p->multiplier, p->shift, p->out_offset, p->act_min, p->act_max);
    });
    return 0;
}

int32_t mrt_batch_matmul_s16(const mrt_batch_matmul_params *p)
{
    const int32_t ls = p->lhs_depth_stride, rs = p->rhs_depth_stride;
    MRT_BMM_LOOP(p, int16_t, int16_t, {
        int64_t total = 0;
        for (int32_t k = 0; k < p->depth; ++k) {
            total += (int64_t)(rcol[k * rs] + p->rhs_offset) * (lrow[k * ls] + p->lhs_offset);
        }
        const int64_t scaled = mrt_requantize_wide(total, p->multiplier, p->shift) + p->out_offset;
        *out++ = (int16_t)mrt_clamp64(scaled, p->act_min, p->act_max);
    });
    return 0;
}

int32_t mrt_batch_matmul_f32(const mrt_batch_matmul_params *p)
{
    const int32_t ls = p->lhs_depth_stride, rs = p->rhs_depth_stride;
    MRT_BMM_LOOP(p, float, float, {
        float total = 0.0f;
        for (int32_t k = 0; k < p->depth; ++k) {
            total += rcol[k * rs] * lrow[k * ls];
        }
        *out++ = total;
    });
    return 0;
}

/* ================================================================ CMSIS-NN: arm_batch_matmul_s8 */

static inline int8_t bmm_out(int32_t acc, const cmsis_nn_fc_params *fc, const cmsis_nn_per_tensor_quant_params *q)
{
    return mrt_out_stage(acc, q->multiplier, q->shift, fc->output_offset, fc->activation.min, fc->activation.max);
}

/* arm_nn_vec_mat_mult_t_s8 without bias: dst[r] = out stage of sum_k (lhs[k] + lhs offset) *
 * (rhs[r][k] + rhs offset) for the rhs_rows rows of rhs. */
static void bmm_vec_mat_mult_t_s8(const int8_t *lhs, const int8_t *rhs, int8_t *dst, int32_t rhs_cols,
                                  int32_t rhs_rows, const cmsis_nn_fc_params *fc,
                                  const cmsis_nn_per_tensor_quant_params *q)
{
    const int32_t lhs_off = fc->input_offset, rhs_off = fc->filter_offset;
#if MRT_DSP
    /* Two rhs rows per pass share each extended lhs word: offsets added in 16-bit lanes by
     * SXTAB16, products summed by SMLAD, four k per step, then the remaining k one by one. */
    const uint32_t lhs_off2 = mrt_dup16(lhs_off), rhs_off2 = mrt_dup16(rhs_off);
    const int32_t steps = rhs_cols / 4;
    int32_t r = 0;
    for (; r + 2 <= rhs_rows; r += 2) {
        const int8_t *x = lhs, *w0 = rhs + r * rhs_cols, *w1 = w0 + rhs_cols;
        int32_t acc0 = 0, acc1 = 0;
        for (int32_t j = steps; j != 0; --j) {
            const uint32_t v = (uint32_t)mrt_read_s8x4(x);
            const uint32_t v_odd = mrt_sxtab16_r8(lhs_off2, v), v_even = __sxtab16(lhs_off2, v);
            x += 4;
            uint32_t k = (uint32_t)mrt_read_s8x4(w0);
            w0 += 4;
            acc0 = (int32_t)__smlad(mrt_sxtab16_r8(rhs_off2, k), v_odd, (uint32_t)acc0);
            acc0 = (int32_t)__smlad(__sxtab16(rhs_off2, k), v_even, (uint32_t)acc0);
            k = (uint32_t)mrt_read_s8x4(w1);
            w1 += 4;
            acc1 = (int32_t)__smlad(mrt_sxtab16_r8(rhs_off2, k), v_odd, (uint32_t)acc1);
            acc1 = (int32_t)__smlad(__sxtab16(rhs_off2, k), v_even, (uint32_t)acc1);
        }
        for (int32_t k = steps * 4; k < rhs_cols; ++k) {
            const int32_t xv = *x++ + lhs_off;
            acc0 += xv * (*w0++ + rhs_off);
            acc1 += xv * (*w1++ + rhs_off);
        }
        dst[r] = bmm_out(acc0, fc, q);
        dst[r + 1] = bmm_out(acc1, fc, q);
    }
    if (r < rhs_rows) {
        const int8_t *x = lhs, *w0 = rhs + r * rhs_cols;
        int32_t acc0 = 0;
        for (int32_t j = steps; j != 0; --j) {
            const uint32_t v = (uint32_t)mrt_read_s8x4(x);
            const uint32_t k = (uint32_t)mrt_read_s8x4(w0);
            x += 4;
            w0 += 4;
            acc0 = (int32_t)__smlad(mrt_sxtab16_r8(rhs_off2, k), mrt_sxtab16_r8(lhs_off2, v), (uint32_t)acc0);
            acc0 = (int32_t)__smlad(__sxtab16(rhs_off2, k), __sxtab16(lhs_off2, v), (uint32_t)acc0);
        }
        for (int32_t k = steps * 4; k < rhs_cols; ++k) {
            acc0 += (*x++ + lhs_off) * (*w0++ + rhs_off);
        }
        dst[r] = bmm_out(acc0, fc, q);
    }
#else
    int32_t r = 0;
    for (; r + 3 <= rhs_rows; r += 3) {
        const int8_t *r0 = rhs + r * rhs_cols, *r1 = r0 + rhs_cols, *r2 = r1 + rhs_cols;
        int32_t a0 = 0, a1 = 0, a2 = 0;
        for (int32_t k = 0; k < rhs_cols; ++k) {
            const int32_t x = lhs[k] + lhs_off;
            a0 += x * (r0[k] + rhs_off);
            a1 += x * (r1[k] + rhs_off);
            a2 += x * (r2[k] + rhs_off);
        }
        dst[r] = bmm_out(a0, fc, q);
        dst[r + 1] = bmm_out(a1, fc, q);
        dst[r + 2] = bmm_out(a2, fc, q);
    }
    for (; r < rhs_rows; ++r) {
        const int8_t *r0 = rhs + r * rhs_cols;
        int32_t a0 = 0;
        for (int32_t k = 0; k < rhs_cols; ++k) {
            a0 += (lhs[k] + lhs_off) * (r0[k] + rhs_off);
        }
        dst[r] = bmm_out(a0, fc, q);
    }
#endif
}

arm_cmsis_nn_status arm_batch_matmul_s8(const cmsis_nn_context *ctx, const cmsis_nn_bmm_params *bmm_params,
    const cmsis_nn_per_tensor_quant_params *quant_params, const cmsis_nn_dims *input_lhs_dims,
    const int8_t *input_lhs, const cmsis_nn_dims *input_rhs_dims, const int8_t *input_rhs,
    const cmsis_nn_dims *output_dims, int8_t *output)
{
    (void)ctx;
    const int32_t lhs_rows = input_lhs_dims->w;
    const int32_t rhs_rows = input_rhs_dims->w;
    const int32_t cols = input_rhs_dims->c;
    const int32_t lhs_matrix = lhs_rows * cols, rhs_matrix = rhs_rows * cols;
    /* Batch axes n and h: an operand with 1 there is reused (broadcast). */
    const int32_t lhs_h_step = input_lhs_dims->h == 1 ? 0 : lhs_matrix;
    const int32_t rhs_h_step = input_rhs_dims->h == 1 ? 0 : rhs_matrix;
    const int32_t lhs_n_step = input_lhs_dims->n == 1 ? 0 : lhs_matrix * input_lhs_dims->h;
    const int32_t rhs_n_step = input_rhs_dims->n == 1 ? 0 : rhs_matrix * input_rhs_dims->h;
    for (int32_t n = 0; n < output_dims->n; ++n) {
        for (int32_t h = 0; h < output_dims->h; ++h) {
            const int8_t *lhs = input_lhs + n * lhs_n_step + h * lhs_h_step;
            const int8_t *rhs = input_rhs + n * rhs_n_step + h * rhs_h_step;
            for (int32_t r = 0; r < lhs_rows; ++r) {
                bmm_vec_mat_mult_t_s8(lhs, rhs, output, cols, rhs_rows, &bmm_params->fc_params, quant_params);
                lhs += cols;
                output += rhs_rows;
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}
