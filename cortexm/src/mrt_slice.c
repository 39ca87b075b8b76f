/* micro_rt: SLICE, DYNAMIC_UPDATE_SLICE, MIRROR_PAD (issue 12's data movement): begins, start
 * indices and paddings read from tensors at run time, as TFLM reads them; any element size.
 * The block copies go through mrt_strided_copy. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

/* Element k of an int32 (index_size 4) or int64 (8) vector, narrowed to int32 as TFLM stores it. */
static int32_t index_at(const void *v, int32_t k, int32_t index_size)
{
    return index_size == 8 ? (int32_t)((const int64_t *)v)[k] : ((const int32_t *)v)[k];
}

/* A strided copy of a block of `rank` (<= MRT_MAX_DIMS) axes: element strides per side. */
static void copy_block(const uint8_t *src, uint8_t *dst, int32_t es, int32_t rank, const int32_t *count,
                       const int32_t *src_stride, const int32_t *dst_stride)
{
    mrt_copy_params c;
    c.src = src;
    c.dst = dst;
    c.elem_size = es;
    const int32_t lead = MRT_MAX_DIMS - rank;
    for (int32_t k = 0; k < MRT_MAX_DIMS; ++k) {
        const int32_t a = k - lead;
        c.count[k] = a < 0 ? 1 : count[a];
        c.src_stride[k] = a < 0 ? 0 : src_stride[a] * es;
        c.dst_stride[k] = a < 0 ? 0 : dst_stride[a] * es;
    }
    (void)mrt_strided_copy(&c);
}

/* Row-major element strides of a shape. */
static void strides_of(const int32_t *shape, int32_t rank, int32_t *stride)
{
    int32_t acc = 1;
    for (int32_t k = rank - 1; k >= 0; --k) {
        stride[k] = acc;
        acc *= shape[k];
    }
}

int32_t mrt_slice(const mrt_slice_params *p)
{
    int32_t start[5], count[5], in_stride[5], out_stride[5];
    int32_t total = 1;
    const int32_t lead = 5 - p->rank;
    for (int32_t k = 0; k < 5; ++k) {
        int32_t first = 0, stop = p->shape[k];
        if (k >= lead) {
            first = index_at(p->begin, k - lead, p->index_size);
            const int32_t size = index_at(p->size, k - lead, p->index_size);
            stop = size == -1 ? p->shape[k] : first + size;
        }
        start[k] = first;
        count[k] = stop > first ? stop - first : 0;
        if (count[k] && (first < 0 || stop > p->shape[k])) {
            return -1;
        }
        total *= count[k];
    }
    if (total > p->out_count) {
        return -1;
    }
    if (total == 0) {
        return 0;
    }
    strides_of(p->shape, 5, in_stride);
    strides_of(count, 5, out_stride);
    int32_t offset = 0;
    for (int32_t k = 0; k < 5; ++k) {
        offset += start[k] * in_stride[k];
    }
    copy_block(p->in + offset * p->elem_size, p->out, p->elem_size, 5, count, in_stride, out_stride);
    return 0;
}

int32_t mrt_dynamic_update_slice(const mrt_dynamic_update_slice_params *p)
{
    const int32_t es = p->elem_size;
    int32_t operand_count = 1, update_count = 1;
    for (int32_t k = 0; k < p->rank; ++k) {
        operand_count *= p->operand_shape[k];
        update_count *= p->update_shape[k];
    }
    if (operand_count == update_count) {
        __builtin_memcpy(p->out, p->update, (uint32_t)(operand_count * es));
        return 0;
    }
    if (p->operand != p->out) {
        __builtin_memcpy(p->out, p->operand, (uint32_t)(operand_count * es));
    }
    if (update_count == 0) {
        return 0;
    }
    int32_t out_stride[MRT_MAX_DIMS], update_stride[MRT_MAX_DIMS];
    strides_of(p->operand_shape, p->rank, out_stride);
    strides_of(p->update_shape, p->rank, update_stride);
    int32_t offset = 0;
    for (int32_t k = 0; k < p->rank; ++k) {
        /* CalculateClampedStartIndices: in int64, min(max(0, index), operand - update) */
        const int64_t raw = p->index_size == 8 ? ((const int64_t *)p->start)[k] : ((const int32_t *)p->start)[k];
        const int64_t room = p->operand_shape[k] - p->update_shape[k];
        const int64_t first = raw < 0 ? 0 : (raw > room ? room : raw);
        offset += (int32_t)first * out_stride[k];
    }
    copy_block(p->update, p->out + offset * es, es, p->rank, p->update_shape, update_stride, out_stride);
    return 0;
}

/* GetInputDimension: where a padded coordinate reads in the input. */
static int32_t input_dimension(int32_t padded, int32_t left, int32_t size, int32_t offset)
{
    if (padded < left) {
        const int32_t original = left + offset - 1;
        const int32_t back = original - offset;
        return original - (padded < back ? padded : back);
    }
    padded -= left;
    if (padded >= size) {
        padded -= size;
        const int32_t original = size - (1 + offset);
        return original - (padded < original ? padded : original);
    }
    return padded;
}

int32_t mrt_mirror_pad(const mrt_mirror_pad_params *p)
{
    /* TFLM's Eval: elements per step of each axis, then GetFlatIndex per output element
     * (the pads read again for every element and axis, as TFLM's GetPadding does) */
    for (int32_t k = 0; k < p->rank; ++k) {
        p->in_stride[k] = 1;
        p->out_stride[k] = 1;
    }
    for (int32_t k = p->rank - 2; k >= 0; --k) {
        p->out_stride[k] = p->out_stride[k + 1] * p->out_shape[k + 1];
        p->in_stride[k] = p->in_stride[k + 1] * p->in_shape[k + 1];
    }
    const int32_t es = p->elem_size;
    for (int32_t i = 0; i < p->out_count; ++i) {
        int32_t index = i, flat = 0;
        for (int32_t k = 0; k < p->rank; ++k) {
            const int32_t left = p->padding_size ? index_at(p->padding, 2 * k, p->padding_size) : 0;
            const int32_t coordinate = index / p->out_stride[k];
            index %= p->out_stride[k];
            flat += input_dimension(coordinate, left, p->in_shape[k], p->offset) * p->in_stride[k];
        }
        if (flat < 0 || flat >= p->in_count) {
            return -1;
        }
        switch (es) {
        case 1: p->out[i] = p->in[flat]; break;
        case 4: ((uint32_t *)p->out)[i] = ((const uint32_t *)p->in)[flat]; break;
        default: __builtin_memcpy(p->out + i * es, p->in + flat * es, (uint32_t)es); break;
        }
    }
    return 0;
}
