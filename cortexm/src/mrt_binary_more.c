/* micro_rt: ADD / SUB / MUL / MAXIMUM / MINIMUM on int32 and MAXIMUM / MINIMUM on int64
 * (broadcasting), TFLM's reference kernels (add.cc / sub.cc / mul.cc with
 * reference_ops::BroadcastAdd / Sub / Mul on int32, maximum_minimum.cc) element by element over
 * the 6-D walk the other binary kernels share (MRT_BROADCAST_BINARY). Numpy twin:
 * kernels/elementwise.py (kind "int32" and the plain MAXIMUM / MINIMUM). */
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* int32 ADD / SUB / MUL wrap (TFLM's x86 build computes in int32 without a saturation), then
 * clamp to the fused activation's range: [INT32_MIN, INT32_MAX] for ADD, whose int32 path
 * ignores the activation. One loop per op, as TFLM's kernels are one per op (no switch per
 * element). */
#define WRAP32(a, OP, b) ((int32_t)((uint32_t)(a) OP (uint32_t)(b)))

int32_t mrt_binary_s32(const mrt_binary_ops_params *p)
{
    const int32_t *in1 = (const int32_t *)p->in1, *in2 = (const int32_t *)p->in2;
    int32_t *out = (int32_t *)p->out;
    const int32_t lo = (int32_t)p->act_min, hi = (int32_t)p->act_max;
    switch (p->op) {
    case MRT_OP_ADD:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(WRAP32(x, +, y), lo, hi));
        break;
    case MRT_OP_SUB:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(WRAP32(x, -, y), lo, hi));
        break;
    case MRT_OP_MUL:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, mrt_clamp(WRAP32(x, *, y), lo, hi));
        break;
    case MRT_OP_MAX:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, x > y ? x : y);
        break;
    default:
        MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, x < y ? x : y);
        break;
    }
    return 0;
}

int32_t mrt_binary_s64(const mrt_binary_ops_params *p)
{
    const int64_t *in1 = (const int64_t *)p->in1, *in2 = (const int64_t *)p->in2;
    int64_t *out = (int64_t *)p->out;
    if (p->op == MRT_OP_MAX) {
        MRT_BROADCAST_BINARY(&p->dims, int64_t, in1, in2, out, x, y, x > y ? x : y);
    } else if (p->op == MRT_OP_MIN) {
        MRT_BROADCAST_BINARY(&p->dims, int64_t, in1, in2, out, x, y, x < y ? x : y);
    } else {
        return -1;
    }
    return 0;
}
