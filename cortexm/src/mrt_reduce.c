/* micro_rt: MEAN (the reduce family): mrt_mean_f32 (bit-exact with the numpy twin) and
 * mrt_mean_s8 (TFLM-exact), declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* ================================================================ float32 */

int32_t mrt_mean_f32(const mrt_mean_f32_params *p)
{
    int32_t stride[4], ko[4], kr[4];
    const int32_t count = mrt_mean_axes(p->shape, p->reduce, stride, ko, kr);
    float *out = p->out;
    for (int32_t a0 = 0; a0 < ko[0]; ++a0)
    for (int32_t a1 = 0; a1 < ko[1]; ++a1)
    for (int32_t a2 = 0; a2 < ko[2]; ++a2)
    for (int32_t a3 = 0; a3 < ko[3]; ++a3) {
        const float *base = p->in + a0 * stride[0] + a1 * stride[1] + a2 * stride[2] + a3 * stride[3];
        float acc = 0.0f;
        int32_t first = 1;
        for (int32_t r0 = 0; r0 < kr[0]; ++r0)
        for (int32_t r1 = 0; r1 < kr[1]; ++r1)
        for (int32_t r2 = 0; r2 < kr[2]; ++r2) {
            const float *q = base + r0 * stride[0] + r1 * stride[1] + r2 * stride[2];
            for (int32_t r3 = 0; r3 < kr[3]; ++r3) {
                acc = first ? q[r3] : acc + q[r3];      /* twin: sequential from the first element */
                first = 0;
            }
        }
        *out++ = count ? acc / (float)count : 0.0f;
    }
    return 0;
}

/* ================================================================ int8 */

int32_t mrt_mean_s8(const mrt_mean_s8_params *p)
{
    int32_t stride[4], ko[4], kr[4];
    (void)mrt_mean_axes(p->shape, p->reduce, stride, ko, kr);
    int8_t *out = p->out;
    for (int32_t a0 = 0; a0 < ko[0]; ++a0)
    for (int32_t a1 = 0; a1 < ko[1]; ++a1)
    for (int32_t a2 = 0; a2 < ko[2]; ++a2)
    for (int32_t a3 = 0; a3 < ko[3]; ++a3) {
        const int8_t *base = p->in + a0 * stride[0] + a1 * stride[1] + a2 * stride[2] + a3 * stride[3];
        int32_t acc = 0;
        for (int32_t r0 = 0; r0 < kr[0]; ++r0)
        for (int32_t r1 = 0; r1 < kr[1]; ++r1)
        for (int32_t r2 = 0; r2 < kr[2]; ++r2) {
            const int8_t *q = base + r0 * stride[0] + r1 * stride[1] + r2 * stride[2];
            for (int32_t r3 = 0; r3 < kr[3]; ++r3) {
                acc += q[r3] - p->in_zp;
            }
        }
        *out++ = (int8_t)mrt_clamp(mrt_requantize(acc, p->mult, p->shift) + p->out_zp, p->act_min, p->act_max);
    }
    return 0;
}
