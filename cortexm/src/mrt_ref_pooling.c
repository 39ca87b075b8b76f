/* micro_rt reference flavour: AVERAGE_POOL_2D / MAX_POOL_2D int8 and int16 as TFLM's reference
 * kernels loop (mrt_ref_nnfunctions.h): output element by output element, its window clipped
 * to the image. One loop serves both types (an inline function per type). */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

/* The window of output (oy, ox) clipped to the image: first and end filter rows / columns. */
typedef struct {
    int32_t y0, y1, x0, x1, in_y, in_x;
} ref_window;

static inline __attribute__((always_inline)) ref_window clip_window(const mrt_ref_pool_params *p, int32_t oy,
                                                                    int32_t ox)
{
    ref_window w;
    w.in_y = oy * p->sh - p->ph;
    w.in_x = ox * p->sw - p->pw;
    w.y0 = MRT_MAX(0, -w.in_y);
    w.y1 = MRT_MIN(p->fh, p->ih - w.in_y);
    w.x0 = MRT_MAX(0, -w.in_x);
    w.x1 = MRT_MIN(p->fw, p->iw - w.in_x);
    return w;
}

#define MRT_REF_POOL(T, IS_MAX, LOWEST)                                                              \
    do {                                                                                             \
        const T *in = (const T *)p->in;                                                              \
        T *out = (T *)p->out;                                                                        \
        for (int32_t b = 0; b < p->n; ++b) {                                                         \
            for (int32_t oy = 0; oy < p->oh; ++oy) {                                                 \
                for (int32_t ox = 0; ox < p->ow; ++ox) {                                             \
                    const ref_window w = clip_window(p, oy, ox);                                     \
                    for (int32_t c = 0; c < p->ch; ++c) {                                            \
                        int32_t acc = (IS_MAX) ? (LOWEST) : 0, count = 0;                            \
                        for (int32_t ky = w.y0; ky < w.y1; ++ky) {                                   \
                            for (int32_t kx = w.x0; kx < w.x1; ++kx) {                               \
                                const int32_t v = in[((b * p->ih + w.in_y + ky) * p->iw + w.in_x + kx) \
                                                     * p->ch + c];                                   \
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
                        *out++ = (T)mrt_clamp(acc, p->act_min, p->act_max);                          \
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
