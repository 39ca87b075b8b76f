/* micro_rt: BATCH_MATMUL (int8, int16, float32), TFLM's reference kernel: for every batch (up to
 * three broadcast batch axes), out[a][c] = sum over k of lhs'[a][k] * rhs'[k][c], output row by
 * output row, the sum in k order. lhs' and rhs' are read through strides, so adj_x / adj_y need
 * no copy here (TFLM copies a transposed operand into a persistent buffer; its constant rhs
 * once, the runner places that copy in flash). The numpy twin is micro_rt.kernels.batch_matmul. */
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
