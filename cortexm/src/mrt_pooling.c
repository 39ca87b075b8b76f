/* micro_rt: AVERAGE_POOL_2D and MAX_POOL_2D (the pooling family):
 *  - int8: CMSIS-NN's arm_avgpool_s8 / arm_max_pool_s8 (arm_nnfunctions.h), TFLM-exact;
 *  - float32: mrt_avgpool_f32 / mrt_maxpool_f32 and L2_POOL_2D's mrt_l2_pool_f32
 *    (mrt_nnfunctions.h), bit-exact with the twins.
 * int16 pooling is in mrt_pooling_s16.c. */
#include <math.h>
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

/* ================================================================ int8 (CMSIS-NN API) */

#define MRT_SIZES_AVGPOOL_S8        /* this file's part of mrt_buffer_sizes.h */
#include "mrt_buffer_sizes.h"

/* AVERAGE_POOL_2D and MAX_POOL_2D walk the output alike: per output pixel the window clipped
 * to the image, [y0, y1) x [x0, x1), then one value per channel. `is_max` is a constant in each
 * caller, so each gets its own loop. Average: TFLM rounding (half away from zero), and an empty
 * window is an argument error; max starts from -128. */
static inline __attribute__((always_inline)) arm_cmsis_nn_status pool_s8(const cmsis_nn_context *ctx,
    const cmsis_nn_pool_params *pool_params, const cmsis_nn_dims *input_dims, const int8_t *input_data,
    const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims, int8_t *output_data, int32_t is_max)
{
    const int32_t in_h = input_dims->h, in_w = input_dims->w, c_n = input_dims->c;
    const int32_t out_h = output_dims->h, out_w = output_dims->w;
    const int32_t batches = input_dims->n > 0 ? input_dims->n : 1;
    const int32_t act_min = pool_params->activation.min, act_max = pool_params->activation.max;
#if MRT_DSP
    int32_t *sum = 0;
    if (!is_max) {
        if (ctx == 0 || ctx->buf == 0) {
            return ARM_CMSIS_NN_ARG_ERROR;
        }
        sum = (int32_t *)ctx->buf;
    }
#else
    (void)ctx;
#endif
    for (int32_t b = 0; b < batches; ++b) {
        const int8_t *in_b = input_data + b * in_h * in_w * c_n;
        for (int32_t oy = 0; oy < out_h; ++oy) {
            const int32_t base_y = oy * pool_params->stride.h - pool_params->padding.h;
            const int32_t y0 = MRT_MAX(0, -base_y), y1 = MRT_MIN(filter_dims->h, in_h - base_y);
            for (int32_t ox = 0; ox < out_w; ++ox) {
                const int32_t base_x = ox * pool_params->stride.w - pool_params->padding.w;
                const int32_t x0 = MRT_MAX(0, -base_x), x1 = MRT_MIN(filter_dims->w, in_w - base_x);
                if (is_max) {
                    for (int32_t c = 0; c < c_n; ++c) {
                        int32_t m = -128;
                        for (int32_t ky = y0; ky < y1; ++ky) {
                            for (int32_t kx = x0; kx < x1; ++kx) {
                                const int32_t v = in_b[((base_y + ky) * in_w + base_x + kx) * c_n + c];
                                m = v > m ? v : m;
                            }
                        }
                        *output_data++ = (int8_t)mrt_clamp(m, act_min, act_max);
                    }
                    continue;
                }
                const int32_t count = (y1 - y0) * (x1 - x0);
                if (count <= 0) {
                    return ARM_CMSIS_NN_ARG_ERROR;
                }
#if MRT_DSP
                /* Window sums for all channels, row by row (the scratch holds one per channel). */
                for (int32_t c = 0; c < c_n; ++c) {
                    sum[c] = 0;
                }
                for (int32_t ky = y0; ky < y1; ++ky) {
                    for (int32_t kx = x0; kx < x1; ++kx) {
                        const int8_t *px = in_b + ((base_y + ky) * in_w + base_x + kx) * c_n;
                        for (int32_t c = 0; c < c_n; ++c) {
                            sum[c] += px[c];
                        }
                    }
                }
                for (int32_t c = 0; c < c_n; ++c) {
                    int32_t s = sum[c];
#else
                for (int32_t c = 0; c < c_n; ++c) {
                    int32_t s = 0;
                    for (int32_t ky = y0; ky < y1; ++ky) {
                        for (int32_t kx = x0; kx < x1; ++kx) {
                            s += in_b[((base_y + ky) * in_w + base_x + kx) * c_n + c];
                        }
                    }
#endif
                    s = s > 0 ? (s + count / 2) / count : (s - count / 2) / count;
                    *output_data++ = (int8_t)mrt_clamp(s, act_min, act_max);
                }
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

arm_cmsis_nn_status arm_avgpool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    return pool_s8(ctx, pool_params, input_dims, input_data, filter_dims, output_dims, output_data, 0);
}

arm_cmsis_nn_status arm_max_pool_s8(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int8_t *input_data, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int8_t *output_data)
{
    return pool_s8(ctx, pool_params, input_dims, input_data, filter_dims, output_dims, output_data, 1);
}

/* ================================================================ float32 */

/* TFLM's reference float pooling: each window clipped to the image (its cost follows the image,
 * not the filter size), the sum from 0.0f, the maximum from the lowest float with std::max
 * semantics (a NaN input is skipped: tflm_max keeps its first operand). The twin's padded taps
 * hold 0.0f / the lowest float, no-ops for both, so the results are bit-equal. */
static inline float tflm_max(float a, float b)
{
    return a < b ? b : a;
}

/* The walk of the float32 pools (p: const mrt_pool_f32_params *) over every output and channel,
 * each window clipped to the image: acc starts at INIT; each tap v, in (y, x) order, makes
 * acc = STEP; then the statement FINISH runs and RESULT (of acc and count, the taps inside the
 * image) is clamped and stored. A macro, so each pool's loop is compiled as written out. */
#define MRT_POOL_F32_WINDOWS(p, INIT, STEP, FINISH, RESULT)                                        \
    do {                                                                                          \
        const float lo = mrt_fbits((p)->act_min), hi = mrt_fbits((p)->act_max);                   \
        float *out = (p)->out;                                                                    \
        for (int32_t b = 0; b < (p)->n; ++b) {                                                    \
            const float *in_b = (p)->in + b * (p)->ih * (p)->iw * (p)->c;                         \
            for (int32_t oy = 0; oy < (p)->oh; ++oy) {                                            \
                const int32_t y0 = oy * (p)->sh - (p)->ph;                                        \
                const int32_t ky0 = y0 < 0 ? -y0 : 0;                                             \
                const int32_t ky1 = (p)->fh < (p)->ih - y0 ? (p)->fh : (p)->ih - y0;              \
                for (int32_t ox = 0; ox < (p)->ow; ++ox) {                                        \
                    const int32_t x0 = ox * (p)->sw - (p)->pw;                                    \
                    const int32_t kx0 = x0 < 0 ? -x0 : 0;                                         \
                    const int32_t kx1 = (p)->fw < (p)->iw - x0 ? (p)->fw : (p)->iw - x0;          \
                    const int32_t count = (ky1 - ky0) * (kx1 - kx0);                              \
                    for (int32_t ch = 0; ch < (p)->c; ++ch) {                                     \
                        float acc = (INIT);                                                       \
                        for (int32_t ky = ky0; ky < ky1; ++ky) {                                  \
                            for (int32_t kx = kx0; kx < kx1; ++kx) {                              \
                                const float v = in_b[((y0 + ky) * (p)->iw + x0 + kx) * (p)->c + ch]; \
                                acc = (STEP);                                                     \
                            }                                                                     \
                        }                                                                         \
                        FINISH;                                                                   \
                        *out++ = mrt_act_clamp_f32((RESULT), lo, hi);                             \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    } while (0)

static int32_t pool_f32(const mrt_pool_f32_params *p, int32_t is_max)
{
    MRT_POOL_F32_WINDOWS(p, is_max ? -3.40282347e+38f : 0.0f, is_max ? tflm_max(acc, v) : acc + v,
                         if (!is_max) { acc = acc / (float)count; }, acc);
    return 0;
}

int32_t mrt_avgpool_f32(const mrt_pool_f32_params *p)
{
    return pool_f32(p, 0);
}

int32_t mrt_maxpool_f32(const mrt_pool_f32_params *p)
{
    return pool_f32(p, 1);
}

/* ================================================================ float32 L2_POOL_2D */

/* TFLM's reference L2Pool: per output and channel the squares of the window's taps inside the
 * image summed from 0.0f in (y, x) order, sqrtf(sum / count), then the activation clamp. */
int32_t mrt_l2_pool_f32(const mrt_pool_f32_params *p)
{
    MRT_POOL_F32_WINDOWS(p, 0.0f, acc + v * v, (void)0, sqrtf(acc / (float)count));
    return 0;
}
