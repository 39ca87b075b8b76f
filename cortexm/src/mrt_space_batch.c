/* micro_rt: SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REVERSE_V2 (issue 12's data movement): block
 * shapes, paddings / crops and axes read from their tensors at run time, as TFLM's Eval reads
 * them; one memcpy per pixel's depth (per inner block for REVERSE_V2), as TFLM's reference
 * loops copy. Any element size. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

/* TFLM's loop bounds: block height / width, top / left padding (or crops), the NH(W)C shapes
 * and the bytes of one pixel's depth. A 3-D (NHC) tensor has no width: block width 1, left 0. */
typedef struct {
    int32_t bh, bw, top, left;
    int32_t ib, ih, iw, ob, oh, ow;
    uint32_t pixel;
} space_batch_layout;

/* 0 when a block value is not positive (TFLM would divide by it). */
static int32_t read_layout(const mrt_space_batch_params *p, space_batch_layout *g)
{
    g->bh = p->block[0];
    g->bw = p->four_d ? p->block[1] : 1;
    g->top = p->pads[0];
    g->left = p->four_d ? p->pads[2] : 0;
    g->ib = p->in_shape[0], g->ih = p->in_shape[1], g->iw = p->in_shape[2];
    g->ob = p->out_shape[0], g->oh = p->out_shape[1], g->ow = p->out_shape[2];
    g->pixel = (uint32_t)(p->in_shape[3] * p->elem_size);
    return g->bh > 0 && g->bw > 0;
}

int32_t mrt_space_to_batch_nd(const mrt_space_batch_params *p)
{
    space_batch_layout g;
    if (!read_layout(p, &g)) {
        return -1;
    }
    uint8_t *out = p->out;
    for (int32_t b = 0; b < g.ob; ++b) {
        const int32_t in_b = b % g.ib, shift = b / g.ib;
        const int32_t shift_w = shift % g.bw, shift_h = shift / g.bw;
        for (int32_t y = 0; y < g.oh; ++y) {
            const int32_t in_y = y * g.bh + shift_h - g.top;
            for (int32_t x = 0; x < g.ow; ++x, out += g.pixel) {
                const int32_t in_x = x * g.bw + shift_w - g.left;
                if (in_y < 0 || in_y >= g.ih || in_x < 0 || in_x >= g.iw) {
                    __builtin_memset(out, (int)p->pad_value, g.pixel);
                } else {
                    __builtin_memcpy(out, p->in + ((in_b * g.ih + in_y) * g.iw + in_x) * (int32_t)g.pixel, g.pixel);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_batch_to_space_nd(const mrt_space_batch_params *p)
{
    space_batch_layout g;
    if (!read_layout(p, &g)) {
        return -1;
    }
    for (int32_t b = 0; b < g.ib; ++b) {
        const int32_t out_b = b % g.ob, shift = b / g.ob;
        for (int32_t y = 0; y < g.ih; ++y) {
            const int32_t out_y = y * g.bh + shift / g.bw - g.top;
            if (out_y < 0 || out_y >= g.oh) {
                continue;
            }
            for (int32_t x = 0; x < g.iw; ++x) {
                const int32_t out_x = x * g.bw + shift % g.bw - g.left;
                if (out_x < 0 || out_x >= g.ow) {
                    continue;
                }
                __builtin_memcpy(p->out + ((out_b * g.oh + out_y) * g.ow + out_x) * (int32_t)g.pixel,
                                 p->in + ((b * g.ih + y) * g.iw + x) * (int32_t)g.pixel, g.pixel);
            }
        }
    }
    return 0;
}

int32_t mrt_reverse(const mrt_reverse_params *p)
{
    /* ReverseV2Eval: negatives wrapped, checked, sorted, contiguous */
    int32_t axes[MRT_MAX_DIMS];
    const int32_t n = p->num_axes;
    if (n < 1 || n > p->rank) {
        return -1;
    }
    for (int32_t i = 0; i < n; ++i) {
        int32_t a = p->axes[i];
        a = a < 0 ? a + p->rank : a;
        if (a < 0 || a >= p->rank) {
            return -1;
        }
        int32_t j = i;                  /* insertion sort */
        for (; j > 0 && axes[j - 1] > a; --j) {
            axes[j] = axes[j - 1];
        }
        axes[j] = a;
    }
    for (int32_t i = 1; i < n; ++i) {
        if (axes[i] != axes[i - 1] + 1) {
            return -1;
        }
    }
    /* reversing contiguous axes together reverses their flattened index */
    int32_t outer = 1, middle = 1, inner = 1;
    for (int32_t k = 0; k < p->rank; ++k) {
        if (k < axes[0]) {
            outer *= p->shape[k];
        } else if (k <= axes[n - 1]) {
            middle *= p->shape[k];
        } else {
            inner *= p->shape[k];
        }
    }
    const uint32_t block = (uint32_t)(inner * p->elem_size);
    for (int32_t o = 0; o < outer; ++o) {
        const uint8_t *in = p->in + o * middle * (int32_t)block;
        uint8_t *out = p->out + o * middle * (int32_t)block;
        for (int32_t m = 0; m < middle; ++m) {
            __builtin_memcpy(out + m * (int32_t)block, in + (middle - 1 - m) * (int32_t)block, block);
        }
    }
    return 0;
}
