/* micro_rt: int16 AVERAGE_POOL_2D and MAX_POOL_2D: CMSIS-NN's arm_avgpool_s16 / arm_max_pool_s16
 * (arm_nnfunctions.h), TFLM-exact. The rest of the pooling family is in mrt_pooling.c; compiled
 * there, GCC emits another arm_avgpool_s16 on the Cortex-M33 (and the cycle figures measured on
 * this code would move). */
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

/* ================================================================ int16 (CMSIS-NN API) */

#define MRT_SIZES_AVGPOOL_S16        /* this file's part of mrt_buffer_sizes.h */
#include "mrt_buffer_sizes.h"

/* The window of output (oy, ox) clipped to the image: taps [*y0, *y1) x [*x0, *x1) from the
 * window's origin (base_y, base_x), which may lie in the padding. */
static inline void clip_window(const cmsis_nn_pool_params *pp, const cmsis_nn_dims *in, const cmsis_nn_dims *f,
                               int32_t oy, int32_t ox, int32_t *base_y, int32_t *base_x, int32_t *y0, int32_t *y1,
                               int32_t *x0, int32_t *x1)
{
    *base_y = oy * pp->stride.h - pp->padding.h;
    *base_x = ox * pp->stride.w - pp->padding.w;
    *y0 = MRT_MAX(0, -*base_y);
    *y1 = MRT_MIN(f->h, in->h - *base_y);
    *x0 = MRT_MAX(0, -*base_x);
    *x1 = MRT_MIN(f->w, in->w - *base_x);
}

/* (sum +- count / 2) / count (C division truncates: TFLM's rounding half away from zero), clamped. */
static inline int16_t avg_round_clamp(int32_t sum, int32_t count, int32_t lo, int32_t hi)
{
    sum = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
    return (int16_t)mrt_clamp(sum, lo, hi);
}

arm_cmsis_nn_status arm_avgpool_s16(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int16_t *src, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int16_t *dst)
{
    const int32_t ch = input_dims->c;
    const int32_t lo = pool_params->activation.min, hi = pool_params->activation.max;
    if (input_dims->n < 1) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
#if MRT_DSP
    /* CMSIS-NN's DSP path: per window all channels at once in the int32 scratch, the first tap
     * copied, the others added with QADD. */
    int32_t *buffer = ctx != 0 ? (int32_t *)ctx->buf : 0;
    if (buffer == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
#else
    (void)ctx;
#endif
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int16_t *in_b = src + b * input_dims->h * input_dims->w * ch;
        for (int32_t oy = 0; oy < output_dims->h; ++oy) {
            for (int32_t ox = 0; ox < output_dims->w; ++ox) {
                int32_t by, bx, y0, y1, x0, x1;
                clip_window(pool_params, input_dims, filter_dims, oy, ox, &by, &bx, &y0, &y1, &x0, &x1);
                const int32_t count = MRT_MAX(0, y1 - y0) * MRT_MAX(0, x1 - x0);
                if (count == 0) {
                    return ARM_CMSIS_NN_ARG_ERROR;
                }
#if MRT_DSP
                int32_t first = 1;
                for (int32_t ky = y0; ky < y1; ++ky) {
                    for (int32_t kx = x0; kx < x1; ++kx) {
                        const int16_t *px = in_b + ((by + ky) * input_dims->w + bx + kx) * ch;
                        if (first) {
                            for (int32_t c = 0; c < ch; ++c) {
                                buffer[c] = px[c];
                            }
                            first = 0;
                        } else {
                            for (int32_t c = 0; c < ch; ++c) {
                                buffer[c] = __qadd(px[c], buffer[c]);
                            }
                        }
                    }
                }
                for (int32_t c = 0; c < ch; ++c) {
                    *dst++ = avg_round_clamp(buffer[c], count, lo, hi);
                }
#else
                /* CMSIS-NN's plain C path: channel by channel over the window. */
                for (int32_t c = 0; c < ch; ++c) {
                    int32_t sum = 0;
                    for (int32_t ky = y0; ky < y1; ++ky) {
                        for (int32_t kx = x0; kx < x1; ++kx) {
                            sum += in_b[((by + ky) * input_dims->w + bx + kx) * ch + c];
                        }
                    }
                    *dst++ = avg_round_clamp(sum, count, lo, hi);
                }
#endif
            }
        }
    }
    return ARM_CMSIS_NN_SUCCESS;
}

/* Two int16 halves packed back into a word (CMSIS-NN's union arm_nnword, in registers). */
static inline int32_t pack_s16x2(int32_t lo, int32_t hi)
{
    return (int32_t)(((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi << 16));
}

/* dst[c] = max(dst[c], src[c]), two channels per 32-bit word, then the odd one. */
static void max_into_s16(int16_t *dst, const int16_t *src, int32_t length)
{
    for (int32_t k = 0; k < length >> 1; ++k) {
        const int32_t ref = mrt_read_s16x2(dst);
        const int32_t cmp = mrt_read_s16x2(src);
        src += 2;
        const int32_t lo = MRT_MAX((int16_t)cmp, (int16_t)ref);
        const int32_t hi = MRT_MAX(cmp >> 16, ref >> 16);
        mrt_write_s16x2(dst, pack_s16x2(lo, hi));
        dst += 2;
    }
    if (length & 1) {
        *dst = *src > *dst ? *src : *dst;
    }
}

/* Every value clamped to [lo, hi], two per word. */
static void clamp_s16(int16_t *p, int32_t length, int32_t lo, int32_t hi)
{
    for (int32_t k = 0; k < length >> 1; ++k) {
        const int32_t w = mrt_read_s16x2(p);
        mrt_write_s16x2(p, pack_s16x2(mrt_clamp((int16_t)w, lo, hi), mrt_clamp(w >> 16, lo, hi)));
        p += 2;
    }
    if (length & 1) {
        *p = (int16_t)mrt_clamp(*p, lo, hi);
    }
}

arm_cmsis_nn_status arm_max_pool_s16(const cmsis_nn_context *ctx, const cmsis_nn_pool_params *pool_params,
    const cmsis_nn_dims *input_dims, const int16_t *src, const cmsis_nn_dims *filter_dims,
    const cmsis_nn_dims *output_dims, int16_t *dst)
{
    (void)ctx;
    const int32_t ch = input_dims->c;
    const int32_t lo = (int16_t)pool_params->activation.min, hi = (int16_t)pool_params->activation.max;
    for (int32_t b = 0; b < input_dims->n; ++b) {
        const int16_t *in_b = src + b * input_dims->h * input_dims->w * ch;
        int16_t *dst_b = dst;
        for (int32_t oy = 0; oy < output_dims->h; ++oy) {
            for (int32_t ox = 0; ox < output_dims->w; ++ox) {
                int32_t by, bx, y0, y1, x0, x1;
                clip_window(pool_params, input_dims, filter_dims, oy, ox, &by, &bx, &y0, &y1, &x0, &x1);
                int32_t first = 1;
                for (int32_t ky = y0; ky < y1; ++ky) {
                    for (int32_t kx = x0; kx < x1; ++kx) {
                        const int16_t *px = in_b + ((by + ky) * input_dims->w + bx + kx) * ch;
                        if (first) {
                            __builtin_memcpy(dst, px, (uint32_t)ch * sizeof(int16_t));
                            first = 0;
                        } else {
                            max_into_s16(dst, px, ch);
                        }
                    }
                }
                dst += ch;
            }
        }
        clamp_s16(dst_b, output_dims->h * output_dims->w * ch, lo, hi);
    }
    return ARM_CMSIS_NN_SUCCESS;
}
