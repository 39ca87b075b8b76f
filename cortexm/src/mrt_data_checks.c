/* micro_rt: the checks TFLM makes on run-time values before (or while) it computes an operator,
 * as calls of their own that return nonzero when TFLM would fail the invoke (the glue's
 * KernelCall.refusal says why), so a plan holds them like any kernel call. Numpy twins:
 * kernels/binary_ops.check_int_division, kernels/unary_math.check_rsqrt_input and the FLOOR_DIV
 * divisor check of cortexm/ops/binary.py.
 *
 * Placed after every other function (firmware.ld, section .mrt_late.*): adding them moved no
 * kernel (cycle figures depend on code addresses). */
#include "mrt_nnfunctions.h"

#define MRT_LATE(name) __attribute__((section(".mrt_late." #name)))

/* FLOOR_DIV float32: 0 when no divisor is zero (-0.0 included), else the first one's index + 1. */
MRT_LATE(mrt_check_nonzero_f32) int32_t mrt_check_nonzero_f32(const float *divisor, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        if (divisor[i] == 0.0f) {
            return i + 1;
        }
    }
    return 0;
}

/* int32 DIV: 0 when no divisor is zero, else the first one's index + 1. */
MRT_LATE(mrt_check_nonzero_s32) int32_t mrt_check_nonzero_s32(const int32_t *divisor, int32_t n)
{
    for (int32_t i = 0; i < n; ++i) {
        if (divisor[i] == 0) {
            return i + 1;
        }
    }
    return 0;
}

/* int32 DIV: 1 when some output element would be INT32_MIN / -1 (the inputs' broadcast as
 * mrt_binary_ops_s32 walks it), else 0. */
MRT_LATE(mrt_check_div_overflow_s32) int32_t mrt_check_div_overflow_s32(const mrt_binary_ops_params *p)
{
    const int32_t *n = p->dims.count, *s1 = p->dims.stride1, *s2 = p->dims.stride2;
    const int32_t *in1 = (const int32_t *)p->in1, *in2 = (const int32_t *)p->in2;
    for (int32_t i0 = 0; i0 < n[0]; ++i0)
    for (int32_t i1 = 0; i1 < n[1]; ++i1)
    for (int32_t i2 = 0; i2 < n[2]; ++i2)
    for (int32_t i3 = 0; i3 < n[3]; ++i3)
    for (int32_t i4 = 0; i4 < n[4]; ++i4) {
        const int32_t *a = in1 + i0 * s1[0] + i1 * s1[1] + i2 * s1[2] + i3 * s1[3] + i4 * s1[4];
        const int32_t *b = in2 + i0 * s2[0] + i1 * s2[1] + i2 * s2[2] + i3 * s2[3] + i4 * s2[4];
        for (int32_t i5 = 0; i5 < n[5]; ++i5) {
            if (a[i5 * s1[5]] == INT32_MIN && b[i5 * s2[5]] == -1) {
                return 1;
            }
        }
    }
    return 0;
}

/* Quantized RSQRT: 0 when every input is at or above the zero point, else the first one's
 * index + 1. */
MRT_LATE(mrt_check_rsqrt_int) int32_t mrt_check_rsqrt_int(const mrt_abs_rsqrt_int_params *p)
{
    for (int32_t i = 0; i < p->n; ++i) {
        const int32_t x = p->elem_size == 1 ? ((const int8_t *)p->in)[i] : ((const int16_t *)p->in)[i];
        if (x < p->in_off) {
            return i + 1;
        }
    }
    return 0;
}
