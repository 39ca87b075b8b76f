/* micro_rt: broadcasting ADD / SUB / MUL / MAXIMUM / MINIMUM on int8 (mrt_binary_s8,
 * mrt_nnfunctions.h), TFLM-exact. The rest of the binary family is in mrt_binary.c (why this
 * one is apart: see there). */
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

int32_t mrt_binary_s8(const mrt_binary_s8_params *p)
{
    MRT_BROADCAST_BINARY(&p->dims, int8_t, p->in1, p->in2, p->out, x, y, mrt_binary_quant_one(p->op, &p->quant, x, y));
    return 0;
}
