/* micro_rt: EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL (comparisons.cc),
 * LOGICAL_AND / LOGICAL_OR (logical.cc) and SELECT_V2 (select.cc), broadcasting, element by
 * element as TFLM's reference kernels. Numpy twins: kernels/comparisons.py. */
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* One broadcasting walk per comparison, on values mapped by MAP1 / MAP2 (identity, or the int8
 * rescaling). */
#define MRT_COMPARE_ALL(p, T, in1, in2, MAP1, MAP2)                                                          \
    switch ((p)->op) {                                                                                     \
    case MRT_CMP_EQ: MRT_BROADCAST_MIXED(&(p)->dims, T, T, uint8_t, in1, in2, (p)->out, x, y, MAP1(x) == MAP2(y)); break; \
    case MRT_CMP_NE: MRT_BROADCAST_MIXED(&(p)->dims, T, T, uint8_t, in1, in2, (p)->out, x, y, MAP1(x) != MAP2(y)); break; \
    case MRT_CMP_GT: MRT_BROADCAST_MIXED(&(p)->dims, T, T, uint8_t, in1, in2, (p)->out, x, y, MAP1(x) > MAP2(y)); break;  \
    case MRT_CMP_GE: MRT_BROADCAST_MIXED(&(p)->dims, T, T, uint8_t, in1, in2, (p)->out, x, y, MAP1(x) >= MAP2(y)); break; \
    case MRT_CMP_LT: MRT_BROADCAST_MIXED(&(p)->dims, T, T, uint8_t, in1, in2, (p)->out, x, y, MAP1(x) < MAP2(y)); break;  \
    default:         MRT_BROADCAST_MIXED(&(p)->dims, T, T, uint8_t, in1, in2, (p)->out, x, y, MAP1(x) <= MAP2(y)); break; \
    }

#define SAME(v) (v)
#define RESCALE1(v) mrt_requantize(mrt_shl_wrap((v) + p->in1_offset, p->left_shift), p->in1_mult, p->in1_shift)
#define RESCALE2(v) mrt_requantize(mrt_shl_wrap((v) + p->in2_offset, p->left_shift), p->in2_mult, p->in2_shift)

int32_t mrt_compare(const mrt_compare_params *p)
{
    switch (p->type) {
    case MRT_CMP_F32: {
        const float *a = (const float *)p->in1, *b = (const float *)p->in2;
        MRT_COMPARE_ALL(p, float, a, b, SAME, SAME);
        break;
    }
    case MRT_CMP_S32: {
        const int32_t *a = (const int32_t *)p->in1, *b = (const int32_t *)p->in2;
        MRT_COMPARE_ALL(p, int32_t, a, b, SAME, SAME);
        break;
    }
    case MRT_CMP_S64: {
        const int64_t *a = (const int64_t *)p->in1, *b = (const int64_t *)p->in2;
        MRT_COMPARE_ALL(p, int64_t, a, b, SAME, SAME);
        break;
    }
    case MRT_CMP_S8: {
        const int8_t *a = (const int8_t *)p->in1, *b = (const int8_t *)p->in2;
        MRT_COMPARE_ALL(p, int8_t, a, b, RESCALE1, RESCALE2);
        break;
    }
    default: {
        const uint8_t *a = (const uint8_t *)p->in1, *b = (const uint8_t *)p->in2;
        MRT_COMPARE_ALL(p, uint8_t, a, b, SAME, SAME);
        break;
    }
    }
    return 0;
}

int32_t mrt_logical_u8(const mrt_logical_params *p)
{
    if (p->op == 0) {
        MRT_BROADCAST_BINARY(&p->dims, uint8_t, p->in1, p->in2, p->out, x, y, x & y);
    } else {
        MRT_BROADCAST_BINARY(&p->dims, uint8_t, p->in1, p->in2, p->out, x, y, x | y);
    }
    return 0;
}

/* The 6-D walk of SELECT_V2 over the condition and both operands, elements of type T. */
#define MRT_SELECT_WALK(p, T)                                                                          \
    do {                                                                                              \
        const int32_t *n_ = (p)->count, *sc_ = (p)->stride_c, *sx_ = (p)->stride_x, *sy_ = (p)->stride_y; \
        const T *x_ = (const T *)(p)->x, *y_ = (const T *)(p)->y;                                       \
        T *out_ = (T *)(p)->out;                                                                      \
        for (int32_t i0 = 0; i0 < n_[0]; ++i0)                                                        \
        for (int32_t i1 = 0; i1 < n_[1]; ++i1)                                                        \
        for (int32_t i2 = 0; i2 < n_[2]; ++i2)                                                        \
        for (int32_t i3 = 0; i3 < n_[3]; ++i3)                                                        \
        for (int32_t i4 = 0; i4 < n_[4]; ++i4) {                                                      \
            const uint8_t *c = (p)->cond + i0 * sc_[0] + i1 * sc_[1] + i2 * sc_[2] + i3 * sc_[3] + i4 * sc_[4]; \
            const T *a = x_ + i0 * sx_[0] + i1 * sx_[1] + i2 * sx_[2] + i3 * sx_[3] + i4 * sx_[4];     \
            const T *b = y_ + i0 * sy_[0] + i1 * sy_[1] + i2 * sy_[2] + i3 * sy_[3] + i4 * sy_[4];     \
            for (int32_t i5 = 0; i5 < n_[5]; ++i5) {                                                  \
                *out_++ = c[i5 * sc_[5]] ? a[i5 * sx_[5]] : b[i5 * sy_[5]];                           \
            }                                                                                         \
        }                                                                                             \
    } while (0)

int32_t mrt_select(const mrt_select_params *p)
{
    switch (p->elem_size) {
    case 1: MRT_SELECT_WALK(p, uint8_t); break;
    case 2: MRT_SELECT_WALK(p, uint16_t); break;
    default: MRT_SELECT_WALK(p, uint32_t); break;
    }
    return 0;
}
