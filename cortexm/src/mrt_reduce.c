/* micro_rt: the reduce family, declared in mrt_nnfunctions.h:
 *  - MEAN: mrt_mean_f32 (bit-exact with the numpy twin) and mrt_mean_s8 (TFLM-exact);
 *  - SUM, MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL over any axes, ARG_MAX / ARG_MIN and CUMSUM
 *    (below). */
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

/* The reduce family beyond MEAN's kernels above:
 *  - mrt_reduce_int: SUM / MEAN int8 and int16, REDUCE_MAX / REDUCE_MIN int8, REDUCE_ALL bool (TFLM-exact);
 *  - mrt_reduce_f32: SUM, MEAN, REDUCE_MAX, REDUCE_MIN float32 (bit-exact with the twins);
 *  - mrt_arg_min_max_s8 / _f32: ARG_MAX, ARG_MIN;
 *  - mrt_cumsum_s8 / _f32: CUMSUM. */

/* ================================================================ reductions over axes */

/* Per output (the kept positions, in order) the reduced elements in input order: BODY runs for
 * each element as `v` (loaded by LOAD(ptr)) between INIT and STORE. A macro because the
 * element type and the accumulator vary. */
#define MRT_REDUCE_WALK(w, T, in, LOAD, INIT, BODY, STORE)                                      \
    do {                                                                                        \
        const int32_t *oc_ = (w)->outer_count, *os_ = (w)->outer_stride;                        \
        const int32_t *ic_ = (w)->inner_count, *is_ = (w)->inner_stride;                        \
        for (int32_t o0 = 0; o0 < oc_[0]; ++o0)                                                 \
        for (int32_t o1 = 0; o1 < oc_[1]; ++o1)                                                 \
        for (int32_t o2 = 0; o2 < oc_[2]; ++o2) {                                               \
            const T *base_ = (in) + o0 * os_[0] + o1 * os_[1] + o2 * os_[2];                    \
            INIT;                                                                               \
            for (int32_t i0 = 0; i0 < ic_[0]; ++i0)                                             \
            for (int32_t i1 = 0; i1 < ic_[1]; ++i1) {                                           \
                const T *q_ = base_ + i0 * is_[0] + i1 * is_[1];                                \
                for (int32_t i2 = 0; i2 < ic_[2]; ++i2) {                                       \
                    const int32_t v = LOAD(q_ + i2 * is_[2]);                                   \
                    BODY;                                                                       \
                }                                                                               \
            }                                                                                   \
            STORE;                                                                              \
        }                                                                                       \
    } while (0)

#define MRT_LOAD(ptr) (*(ptr))

static inline int32_t walk_count(const mrt_reduce_walk *w)
{
    return w->inner_count[0] * w->inner_count[1] * w->inner_count[2];
}

/* SUM, MAX and MIN of one element type (int8 or int16) of mrt_reduce_int: each op gets its own
 * loops. */
#define MRT_REDUCE_INT_OPS(T, p)                                                                \
    do {                                                                                        \
        const T *in_ = (const T *)(p)->in;                                                      \
        T *out_ = (T *)(p)->out;                                                                \
        const int32_t count_ = walk_count(&(p)->walk);                                          \
        switch ((p)->op) {                                                                      \
        case MRT_REDUCE_SUM:                                                                    \
            MRT_REDUCE_WALK(&(p)->walk, T, in_, MRT_LOAD, uint32_t acc = 0, acc += (uint32_t)v,  \
                *out_++ = (T)(count_ == 0 ? 0 : mrt_clamp(mrt_requantize((int32_t)(acc -        \
                    (uint32_t)(p)->zp_count), (p)->mult, (p)->shift) + (p)->out_zp, (p)->lo,    \
                    (p)->hi)));                                                                 \
            break;                                                                              \
        case MRT_REDUCE_MAX:                                                                    \
            MRT_REDUCE_WALK(&(p)->walk, T, in_, MRT_LOAD, int32_t acc = (p)->lo,                \
                acc = v > acc ? v : acc, *out_++ = (T)acc);                                     \
            break;                                                                              \
        default: /* MRT_REDUCE_MIN */                                                           \
            MRT_REDUCE_WALK(&(p)->walk, T, in_, MRT_LOAD, int32_t acc = (p)->hi,                \
                acc = v < acc ? v : acc, *out_++ = (T)acc);                                     \
            break;                                                                              \
        }                                                                                       \
    } while (0)

int32_t mrt_reduce_int(const mrt_reduce_int_params *p)
{
    if (p->elem_size == 2) {
        MRT_REDUCE_INT_OPS(int16_t, p);
    } else if (p->op == MRT_REDUCE_ALL) {
        const uint8_t *in = (const uint8_t *)p->in;
        uint8_t *out = (uint8_t *)p->out;
        MRT_REDUCE_WALK(&p->walk, uint8_t, in, MRT_LOAD, int32_t acc = 1, acc &= (v != 0), *out++ = (uint8_t)acc);
    } else {
        MRT_REDUCE_INT_OPS(int8_t, p);
    }
    return 0;
}

int32_t mrt_reduce_f32(const mrt_reduce_f32_params *p)
{
    const mrt_reduce_walk *w = &p->walk;
    const int32_t count = walk_count(w);
    float *out = p->out;
    for (int32_t o0 = 0; o0 < w->outer_count[0]; ++o0)
    for (int32_t o1 = 0; o1 < w->outer_count[1]; ++o1)
    for (int32_t o2 = 0; o2 < w->outer_count[2]; ++o2) {
        const float *base = p->in + o0 * w->outer_stride[0] + o1 * w->outer_stride[1] + o2 * w->outer_stride[2];
        float acc = p->op == MRT_REDUCE_MAX ? -3.40282347e+38f : (p->op == MRT_REDUCE_MIN ? 3.40282347e+38f : 0.0f);
        for (int32_t i0 = 0; i0 < w->inner_count[0]; ++i0)
        for (int32_t i1 = 0; i1 < w->inner_count[1]; ++i1) {
            const float *q = base + i0 * w->inner_stride[0] + i1 * w->inner_stride[1];
            const int32_t n = w->inner_count[2], s = w->inner_stride[2];
            if (p->op == MRT_REDUCE_MAX) {
                for (int32_t i2 = 0; i2 < n; ++i2) {
                    const float v = q[i2 * s];
                    acc = v > acc ? v : acc;
                }
            } else if (p->op == MRT_REDUCE_MIN) {
                for (int32_t i2 = 0; i2 < n; ++i2) {
                    const float v = q[i2 * s];
                    acc = v < acc ? v : acc;
                }
            } else {
                for (int32_t i2 = 0; i2 < n; ++i2) {
                    acc = acc + q[i2 * s];
                }
            }
        }
        if (p->op == MRT_REDUCE_MEAN) {
            acc = count ? acc / (float)count : 0.0f;
        }
        *out++ = acc;
    }
    return 0;
}

/* ================================================================ ARG_MAX, ARG_MIN */

#define MRT_ARG_MIN_MAX(T, p)                                                                   \
    do {                                                                                        \
        const T *in_ = (const T *)(p)->in;                                                      \
        int32_t *out_ = (p)->out;                                                               \
        for (int32_t o = 0; o < (p)->outer; ++o) {                                              \
            const T *row_ = in_ + o * (p)->axis_size * (p)->inner;                              \
            for (int32_t i = 0; i < (p)->inner; ++i) {                                          \
                const T *col_ = row_ + i;                                                       \
                T best = col_[0];                                                               \
                int32_t index = 0;                                                              \
                if ((p)->is_max) {                                                              \
                    for (int32_t a = 1; a < (p)->axis_size; ++a) {                              \
                        const T v = col_[a * (p)->inner];                                       \
                        if (v > best) {                                                         \
                            best = v;                                                           \
                            index = a;                                                          \
                        }                                                                       \
                    }                                                                           \
                } else {                                                                        \
                    for (int32_t a = 1; a < (p)->axis_size; ++a) {                              \
                        const T v = col_[a * (p)->inner];                                       \
                        if (v < best) {                                                         \
                            best = v;                                                           \
                            index = a;                                                          \
                        }                                                                       \
                    }                                                                           \
                }                                                                               \
                *out_++ = index;                                                                \
            }                                                                                   \
        }                                                                                       \
    } while (0)

int32_t mrt_arg_min_max_s8(const mrt_arg_min_max_params *p)
{
    MRT_ARG_MIN_MAX(int8_t, p);
    return 0;
}

int32_t mrt_arg_min_max_f32(const mrt_arg_min_max_params *p)
{
    MRT_ARG_MIN_MAX(float, p);
    return 0;
}

/* ================================================================ CUMSUM */

/* Element (o, d, i) of [outer, depth, inner], d counted from the end when reversed. */
static inline int32_t cumsum_index(const mrt_cumsum_params *p, int32_t o, int32_t d, int32_t i)
{
    const int32_t dd = p->reverse ? p->depth - 1 - d : d;
    return (o * p->depth + dd) * p->inner + i;
}

int32_t mrt_cumsum_f32(const mrt_cumsum_params *p)
{
    const float *in = (const float *)p->in;
    float *out = (float *)p->out;
    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->inner; ++i) {
            float acc = 0.0f;
            for (int32_t d = 0; d < p->depth; ++d) {
                const int32_t k = cumsum_index(p, o, d, i);
                if (p->exclusive) {
                    out[k] = acc;
                    acc = acc + in[k];
                } else {
                    acc = acc + in[k];
                    out[k] = acc;
                }
            }
        }
    }
    return 0;
}

/* MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0). */
static inline int32_t mbqm_smaller_than_one(int32_t x, int32_t mult, int32_t shift)
{
    return mrt_rdbpot(mrt_srdhm(x, mult), -shift);
}

int32_t mrt_cumsum_s8(const mrt_cumsum_params *p)
{
    const int8_t *in = (const int8_t *)p->in;
    int8_t *out = (int8_t *)p->out;
    const int32_t start = mbqm_smaller_than_one(mrt_shl_wrap(p->in_off, 20), p->in_mult, p->in_shift);
    for (int32_t o = 0; o < p->outer; ++o) {
        for (int32_t i = 0; i < p->inner; ++i) {
            uint32_t acc = (uint32_t)start;
            for (int32_t d = 0; d < p->depth; ++d) {
                const int32_t k = cumsum_index(p, o, d, i);
                const int32_t scaled = mbqm_smaller_than_one(mrt_shl_wrap(in[k] + p->in_off, 20), p->in_mult,
                                                             p->in_shift);
                uint32_t sum;
                if (p->exclusive) {
                    sum = acc;
                    acc += (uint32_t)scaled;
                } else {
                    acc += (uint32_t)scaled;
                    sum = acc;
                }
                const int32_t v = mbqm_smaller_than_one((int32_t)sum, p->out_mult, p->out_shift) + p->out_off;
                out[k] = (int8_t)mrt_clamp(v, -128, 127);
            }
        }
    }
    return 0;
}
