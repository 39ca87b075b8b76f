/* micro_rt reference flavour: ADD / MUL int8 and int16 of two tensors of the same shape as
 * TFLM's reference kernels (ElementWise / MulElementwise): one flat loop, each element through
 * the quantized output stage (mrt_ref_nnfunctions.h). */
#include "mrt_ref_nnfunctions.h"
#include "mrt_support.h"

int32_t mrt_ref_binary_s8(const mrt_ref_binary_params *p)
{
    const int8_t *a = (const int8_t *)p->in1, *b = (const int8_t *)p->in2;
    int8_t *out = (int8_t *)p->out;
    for (int32_t i = 0; i < p->size; ++i) {
        out[i] = (int8_t)mrt_binary_quant_one(p->op, &p->quant, a[i], b[i]);
    }
    return 0;
}

int32_t mrt_ref_binary_s16(const mrt_ref_binary_params *p)
{
    const int16_t *a = (const int16_t *)p->in1, *b = (const int16_t *)p->in2;
    int16_t *out = (int16_t *)p->out;
    for (int32_t i = 0; i < p->size; ++i) {
        out[i] = (int16_t)mrt_binary_quant_one(p->op, &p->quant, a[i], b[i]);
    }
    return 0;
}
