/* micro_rt reference flavour: ADD / MUL int8 and int16 of two tensors of the same shape as
 * TFLM's reference kernels (ElementWise with AddFunc / MulElementwise): one flat loop per op,
 * each element through the quantized output stage (mrt_ref_nnfunctions.h), the parameters
 * copied into locals first. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_support.h"

#define MRT_REF_BINARY(T)                                                                   \
    do {                                                                                    \
        const T *const a = (const T *)p->in1, *const b = (const T *)p->in2;                \
        T *const out = (T *)p->out;                                                         \
        const mrt_binary_quant q = p->quant;                                                \
        const int32_t size = p->size;                                                       \
        if (p->op == MRT_OP_ADD) {                                                          \
            for (int32_t i = 0; i < size; ++i) {                                            \
                out[i] = (T)mrt_binary_quant_one(MRT_OP_ADD, &q, a[i], b[i]);               \
            }                                                                               \
        } else {                                                                            \
            for (int32_t i = 0; i < size; ++i) {                                            \
                out[i] = (T)mrt_binary_quant_one(MRT_OP_MUL, &q, a[i], b[i]);               \
            }                                                                               \
        }                                                                                   \
    } while (0)

int32_t mrt_ref_binary_s8(const mrt_ref_binary_params *p)
{
    MRT_REF_BINARY(int8_t);
    return 0;
}

int32_t mrt_ref_binary_s16(const mrt_ref_binary_params *p)
{
    MRT_REF_BINARY(int16_t);
    return 0;
}
