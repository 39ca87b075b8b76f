/* micro_rt reference flavour: AVERAGE_POOL_2D / MAX_POOL_2D int8 and int16 as TFLM's reference
 * kernels loop (mrt_ref_nnfunctions.h): output element by output element, its window clipped
 * to the image. One loop serves both types (an inline function per type). */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

/* The loop of TFLM's reference pooling kernels for element type T; the parameters are copied
 * into locals first, as TFLM's kernels do. */
#define MRT_REF_POOL(T, IS_MAX, LOWEST)                                                              \
    do {                                                                                             \
        const T *const in = (const T *)p->in;                                                        \
        T *out = (T *)p->out;                                                                        \
        const int32_t batches = p->n, in_h = p->ih, in_w = p->iw, depth = p->ch;                     \
        const int32_t out_h = p->oh, out_w = p->ow, filter_h = p->fh, filter_w = p->fw;              \
        const int32_t stride_h = p->sh, stride_w = p->sw, pad_h = p->ph, pad_w = p->pw;              \
        const int32_t act_min = p->act_min, act_max = p->act_max;                                    \
        for (int32_t b = 0; b < batches; ++b) {                                                      \
            for (int32_t oy = 0; oy < out_h; ++oy) {                                                 \
                const int32_t in_y = oy * stride_h - pad_h;                                          \
                const int32_t y0 = MRT_MAX(0, -in_y), y1 = MRT_MIN(filter_h, in_h - in_y);           \
                for (int32_t ox = 0; ox < out_w; ++ox) {                                             \
                    const int32_t in_x = ox * stride_w - pad_w;                                      \
                    const int32_t x0 = MRT_MAX(0, -in_x), x1 = MRT_MIN(filter_w, in_w - in_x);       \
                    for (int32_t c = 0; c < depth; ++c) {                                            \
                        int32_t acc = (IS_MAX) ? (LOWEST) : 0, count = 0;                            \
                        for (int32_t ky = y0; ky < y1; ++ky) {                                       \
                            for (int32_t kx = x0; kx < x1; ++kx) {                                   \
                                const int32_t v = in[((b * in_h + in_y + ky) * in_w + in_x + kx)     \
                                                     * depth + c];                                   \
                                if (IS_MAX) {                                                        \
                                    acc = MRT_MAX(acc, v);                                           \
                                } else {                                                             \
                                    acc += v;                                                        \
                                    ++count;                                                         \
                                }                                                                    \
                            }                                                                        \
                        }                                                                            \
                        if (!(IS_MAX)) {                                                             \
                            if (count == 0) {                                                        \
                                return 1;                                                            \
                            }                                                                        \
                            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;   \
                        }                                                                            \
                        *out++ = (T)mrt_clamp(acc, act_min, act_max);                                \
                    }                                                                                \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
    } while (0)

int32_t mrt_ref_avgpool_s8(const mrt_ref_pool_params *p)
{
    MRT_REF_POOL(int8_t, 0, 0);
    return 0;
}

int32_t mrt_ref_avgpool_s16(const mrt_ref_pool_params *p)
{
    MRT_REF_POOL(int16_t, 0, 0);
    return 0;
}

int32_t mrt_ref_maxpool_s8(const mrt_ref_pool_params *p)
{
    MRT_REF_POOL(int8_t, 1, -128);
    return 0;
}

int32_t mrt_ref_maxpool_s16(const mrt_ref_pool_params *p)
{
    MRT_REF_POOL(int16_t, 1, -32768);
    return 0;
}
