/* micro_rt: ADD / SUB / MUL / MAXIMUM / MINIMUM on int32 and MAXIMUM / MINIMUM on int64
 * (broadcasting), TFLM's reference kernels (add.cc / sub.cc / mul.cc with
 * reference_ops::BroadcastAdd / Sub / Mul on int32, maximum_minimum.cc) element by element over
 * the 6-D walk the other binary kernels share (MRT_BROADCAST_BINARY). Numpy twin:
 * kernels/elementwise.py (kind "int32" and the plain MAXIMUM / MINIMUM). */
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* int32 ADD / SUB / MUL wrap (TFLM's x86 build computes in int32 without a saturation), then
 * clamp to the fused activation's range: [INT32_MIN, INT32_MAX] for ADD, whose int32 path
 * ignores the activation. */
MRT_INLINE int32_t binary_one_s32(int32_t op, int32_t x, int32_t y, int32_t lo, int32_t hi)
{
    switch (op) {
    case MRT_OP_ADD: return mrt_clamp((int32_t)((uint32_t)x + (uint32_t)y), lo, hi);
    case MRT_OP_SUB: return mrt_clamp((int32_t)((uint32_t)x - (uint32_t)y), lo, hi);
    case MRT_OP_MUL: return mrt_clamp((int32_t)((uint32_t)x * (uint32_t)y), lo, hi);
    case MRT_OP_MAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

int32_t mrt_binary_s32(const mrt_binary_ops_params *p)
{
    const int32_t *in1 = (const int32_t *)p->in1, *in2 = (const int32_t *)p->in2;
    int32_t *out = (int32_t *)p->out;
    const int32_t lo = (int32_t)p->act_min, hi = (int32_t)p->act_max;
    const int32_t op = p->op;
    MRT_BROADCAST_BINARY(&p->dims, int32_t, in1, in2, out, x, y, binary_one_s32(op, x, y, lo, hi));
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
