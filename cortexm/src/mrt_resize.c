/* micro_rt: RESIZE_NEAREST_NEIGHBOR (any element size) and RESIZE_BILINEAR (float32, int8), TFLM's
 * reference kernels: the same index arithmetic (float32, or 10-bit fixed point for int8 bilinear),
 * the same loops (the column's source recomputed for every output row, as TFLM does), so the
 * cycles are what TFLM's reference kernel takes. The numpy twin is micro_rt.kernels.resize. */
#include <math.h>
#include "mrt_nnfunctions.h"

static int32_t nearest_source(int32_t v, int32_t in_size, int32_t out_size, int32_t align_corners,
                              int32_t half_pixel_centers)
{
    const float scale = (align_corners && out_size > 1) ? (float)(in_size - 1) / (float)(out_size - 1)
                                                        : (float)in_size / (float)out_size;
    const float offset = half_pixel_centers ? 0.5f : 0.0f;
    const float pos = ((float)v + offset) * scale;
    int32_t src = align_corners ? (int32_t)roundf(pos) : (int32_t)floorf(pos);
    if (src > in_size - 1) {
        src = in_size - 1;
    }
    if (half_pixel_centers && src < 0) {
        src = 0;
    }
    return src;
}

int32_t mrt_resize_nearest_neighbor(const mrt_resize_params *p)
{
    const int32_t out_h = p->size[0], out_w = p->size[1];
    const int32_t es = p->elem_size;
    const int32_t pixel = p->depth * es;
    const int32_t row = p->in_w * pixel;
    const uint8_t *in = (const uint8_t *)p->in;
    uint8_t *out = (uint8_t *)p->out;
    for (int32_t b = 0; b < p->batches; ++b) {
        for (int32_t y = 0; y < out_h; ++y) {
            const uint8_t *in_row = in + nearest_source(y, p->in_h, out_h, p->align_corners,
                                                        p->half_pixel_centers) * row;
            for (int32_t x = 0; x < out_w; ++x) {
                const int32_t sx = nearest_source(x, p->in_w, out_w, p->align_corners, p->half_pixel_centers);
                __builtin_memcpy(out, in_row + sx * pixel, (uint32_t)pixel);
                out += pixel;
            }
        }
        in += p->in_h * row;
    }
    return 0;
}

static void bilinear_source_f32(int32_t v, float scale, int32_t half_pixel_centers, int32_t in_size,
                                float *pos, int32_t *lower, int32_t *upper)
{
    *pos = half_pixel_centers ? ((float)v + 0.5f) * scale - 0.5f : (float)v * scale;
    const int32_t lo = (int32_t)floorf(*pos);
    const int32_t hi = (int32_t)ceilf(*pos);
    *lower = lo > 0 ? lo : 0;
    *upper = hi < in_size - 1 ? hi : in_size - 1;
}

int32_t mrt_resize_bilinear_f32(const mrt_resize_params *p)
{
    const int32_t out_h = p->size[0], out_w = p->size[1];
    const int32_t depth = p->depth;
    float height_scale = (float)p->in_h / (float)out_h;
    float width_scale = (float)p->in_w / (float)out_w;
    if (p->align_corners && out_h > 1) {
        height_scale = (float)(p->in_h - 1) / (float)(out_h - 1);
    }
    if (p->align_corners && out_w > 1) {
        width_scale = (float)(p->in_w - 1) / (float)(out_w - 1);
    }
    const float *in = (const float *)p->in;
    float *out = (float *)p->out;
    for (int32_t b = 0; b < p->batches; ++b) {
        const float *image = in + b * p->in_h * p->in_w * depth;
        for (int32_t y = 0; y < out_h; ++y) {
            float iy;
            int32_t y0, y1;
            bilinear_source_f32(y, height_scale, p->half_pixel_centers, p->in_h, &iy, &y0, &y1);
            for (int32_t x = 0; x < out_w; ++x) {
                float ix;
                int32_t x0, x1;
                bilinear_source_f32(x, width_scale, p->half_pixel_centers, p->in_w, &ix, &x0, &x1);
                const float *p00 = image + (y0 * p->in_w + x0) * depth;
                const float *p10 = image + (y1 * p->in_w + x0) * depth;
                const float *p01 = image + (y0 * p->in_w + x1) * depth;
                const float *p11 = image + (y1 * p->in_w + x1) * depth;
                const float dy = iy - (float)y0, dx = ix - (float)x0;
                for (int32_t c = 0; c < depth; ++c) {
                    /* The reference's expression, left to right, each product rounded (no FMA). */
                    *out++ = p00[c] * (1.0f - dy) * (1.0f - dx) + p10[c] * dy * (1.0f - dx)
                           + p01[c] * (1.0f - dy) * dx + p11[c] * dy * dx + 0.0f;
                }
            }
        }
    }
    return 0;
}

static void bilinear_source_10(int32_t v, int32_t scale_10, int32_t half_pixel_centers, int32_t in_size,
                               int32_t *pos, int32_t *lower, int32_t *upper)
{
    *pos = half_pixel_centers ? v * scale_10 + scale_10 / 2 - (1 << 9) : v * scale_10;
    const int32_t lo = *pos / (1 << 10);
    const int32_t hi = (*pos + (1 << 10) - 1) / (1 << 10);
    *lower = lo > 0 ? lo : 0;
    *upper = hi < in_size - 1 ? hi : in_size - 1;
}

int32_t mrt_resize_bilinear_s8(const mrt_resize_params *p)
{
    const int32_t out_h = p->size[0], out_w = p->size[1];
    const int32_t depth = p->depth;
    int32_t height_scale_10 = ((1 << 10) * p->in_h + out_h / 2) / out_h;
    int32_t width_scale_10 = ((1 << 10) * p->in_w + out_w / 2) / out_w;
    if (p->align_corners && out_h > 1) {
        height_scale_10 = ((1 << 10) * (p->in_h - 1) + (out_h - 1) / 2) / (out_h - 1);
    }
    if (p->align_corners && out_w > 1) {
        width_scale_10 = ((1 << 10) * (p->in_w - 1) + (out_w - 1) / 2) / (out_w - 1);
    }
    const int8_t *in = (const int8_t *)p->in;
    int8_t *out = (int8_t *)p->out;
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *image = in + b * p->in_h * p->in_w * depth;
        for (int32_t y = 0; y < out_h; ++y) {
            int32_t iy, y0, y1;
            bilinear_source_10(y, height_scale_10, p->half_pixel_centers, p->in_h, &iy, &y0, &y1);
            for (int32_t x = 0; x < out_w; ++x) {
                int32_t ix, x0, x1;
                bilinear_source_10(x, width_scale_10, p->half_pixel_centers, p->in_w, &ix, &x0, &x1);
                const int8_t *p00 = image + (y0 * p->in_w + x0) * depth;
                const int8_t *p10 = image + (y1 * p->in_w + x0) * depth;
                const int8_t *p01 = image + (y0 * p->in_w + x1) * depth;
                const int8_t *p11 = image + (y1 * p->in_w + x1) * depth;
                const int32_t dy = iy - (1 << 10) * y0, dx = ix - (1 << 10) * x0;
                for (int32_t c = 0; c < depth; ++c) {
                    const int64_t sum = (int64_t)p00[c] * ((1 << 10) - dy) * ((1 << 10) - dx)
                                      + (int64_t)p10[c] * dy * ((1 << 10) - dx)
                                      + (int64_t)p01[c] * ((1 << 10) - dy) * dx
                                      + (int64_t)p11[c] * dy * dx;
                    const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
                    *out++ = (int8_t)((sum + round) / (1 << 20));
                }
            }
        }
    }
    return 0;
}
