/* micro_rt: SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, REVERSE_V2 (issue 12's data movement): block
 * shapes, paddings / crops and axes read from their tensors at run time, as TFLM's Eval reads
 * them; one memcpy per pixel's depth (per inner block for REVERSE_V2), as TFLM's reference
 * loops copy. Any element size. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

/* Block height / width and top / left padding (or crops); a 3-D (NHC) tensor has no width:
 * block width 1, left 0. 0 when a block value is not positive (TFLM would divide by it). */
static int32_t read_block(const mrt_space_batch_params *p, int32_t *bh, int32_t *bw, int32_t *top,
                          int32_t *left)
{
    *bh = p->block[0];
    *bw = p->four_d ? p->block[1] : 1;
    *top = p->pads[0];
    *left = p->four_d ? p->pads[2] : 0;
    return *bh > 0 && *bw > 0;
}

int32_t mrt_space_to_batch_nd(const mrt_space_batch_params *p)
{
    int32_t bh, bw, top, left;
    if (!read_block(p, &bh, &bw, &top, &left)) {
        return -1;
    }
    const int32_t ib = p->in_shape[0], ih = p->in_shape[1], iw = p->in_shape[2], depth = p->in_shape[3];
    const int32_t ob = p->out_shape[0], oh = p->out_shape[1], ow = p->out_shape[2];
    const uint32_t pixel = (uint32_t)(depth * p->elem_size);
    uint8_t *out = p->out;
    for (int32_t b = 0; b < ob; ++b) {
        const int32_t in_b = b % ib, shift = b / ib;
        const int32_t shift_w = shift % bw, shift_h = shift / bw;
        for (int32_t y = 0; y < oh; ++y) {
            const int32_t in_y = y * bh + shift_h - top;
            for (int32_t x = 0; x < ow; ++x, out += pixel) {
                const int32_t in_x = x * bw + shift_w - left;
                if (in_y < 0 || in_y >= ih || in_x < 0 || in_x >= iw) {
                    __builtin_memset(out, (int)p->pad_value, pixel);
                } else {
                    __builtin_memcpy(out, p->in + ((in_b * ih + in_y) * iw + in_x) * (int32_t)pixel, pixel);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_batch_to_space_nd(const mrt_space_batch_params *p)
{
    int32_t bh, bw, top, left;
    if (!read_block(p, &bh, &bw, &top, &left)) {
        return -1;
    }
    const int32_t ib = p->in_shape[0], ih = p->in_shape[1], iw = p->in_shape[2], depth = p->in_shape[3];
    const int32_t ob = p->out_shape[0], oh = p->out_shape[1], ow = p->out_shape[2];
    const uint32_t pixel = (uint32_t)(depth * p->elem_size);
    for (int32_t b = 0; b < ib; ++b) {
        const int32_t out_b = b % ob, shift = b / ob;
        for (int32_t y = 0; y < ih; ++y) {
            const int32_t out_y = y * bh + shift / bw - top;
            if (out_y < 0 || out_y >= oh) {
                continue;
            }
            for (int32_t x = 0; x < iw; ++x) {
                const int32_t out_x = x * bw + shift % bw - left;
                if (out_x < 0 || out_x >= ow) {
                    continue;
                }
                __builtin_memcpy(p->out + ((out_b * oh + out_y) * ow + out_x) * (int32_t)pixel,
                                 p->in + ((b * ih + y) * iw + x) * (int32_t)pixel, pixel);
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
