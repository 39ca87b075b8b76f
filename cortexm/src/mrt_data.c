/* micro_rt: data movement for every element type: arm_reshape_s8 (CMSIS-NN's name,
 * arm_nnfunctions.h) and mrt_copy, mrt_fill, mrt_strided_copy (mrt_nnfunctions.h). */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"

void arm_reshape_s8(const int8_t *input, int8_t *output, const uint32_t total_size)
{
    __builtin_memcpy(output, input, total_size);
}

int32_t mrt_copy(const uint8_t *src, uint8_t *dst, int32_t nbytes)
{
    __builtin_memcpy(dst, src, (uint32_t)nbytes);
    return 0;
}

int32_t mrt_fill(uint8_t *dst, uint32_t value, int32_t count, int32_t elem_size)
{
    for (int32_t i = 0; i < count; ++i) {
        switch (elem_size) {
        case 1: dst[i] = (uint8_t)value; break;
        case 2: ((uint16_t *)dst)[i] = (uint16_t)value; break;
        default: ((uint32_t *)dst)[i] = value; break;
        }
    }
    return 0;
}

static inline void copy_elem(uint8_t *d, const uint8_t *s, int32_t size)
{
    switch (size) {
    case 1: *d = *s; break;
    case 2: *(uint16_t *)d = *(const uint16_t *)s; break;
    case 4: *(uint32_t *)d = *(const uint32_t *)s; break;
    default: __builtin_memcpy(d, s, (uint32_t)size); break;
    }
}

int32_t mrt_strided_copy(const mrt_copy_params *p)
{
    const int32_t *n = p->count;
    const int32_t *ss = p->src_stride;
    const int32_t *ds = p->dst_stride;
    const int32_t es = p->elem_size;
    for (int32_t i0 = 0; i0 < n[0]; ++i0)
    for (int32_t i1 = 0; i1 < n[1]; ++i1)
    for (int32_t i2 = 0; i2 < n[2]; ++i2)
    for (int32_t i3 = 0; i3 < n[3]; ++i3) {
        const uint8_t *s3 = p->src + i0 * ss[0] + i1 * ss[1] + i2 * ss[2] + i3 * ss[3];
        uint8_t *d3 = p->dst + i0 * ds[0] + i1 * ds[1] + i2 * ds[2] + i3 * ds[3];
        for (int32_t i4 = 0; i4 < n[4]; ++i4) {
            const uint8_t *s4 = s3 + i4 * ss[4];
            uint8_t *d4 = d3 + i4 * ds[4];
            if (ss[5] == es && ds[5] == es) {
                __builtin_memcpy(d4, s4, (uint32_t)(n[5] * es));
            } else {
                for (int32_t i5 = 0; i5 < n[5]; ++i5) {
                    copy_elem(d4 + i5 * ds[5], s4 + i5 * ss[5], es);
                }
            }
        }
    }
    return 0;
}
