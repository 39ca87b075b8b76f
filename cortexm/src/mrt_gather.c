/* micro_rt: GATHER, GATHER_ND, EMBEDDING_LOOKUP (issue 12's data movement), TFLM's loops with
 * the indices read at run time; any element size. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

int32_t mrt_gather(const mrt_gather_params *p)
{
    const int32_t es = p->elem_size;
    const uint32_t block = (uint32_t)(p->inner * es);
    for (int32_t b = 0; b < p->batch; ++b) {
        const int32_t *coords = p->coords + b * p->coords_count;
        for (int32_t o = 0; o < p->outer; ++o) {
            const int32_t row = b * p->outer + o;
            const uint8_t *in = p->in + row * p->axis_size * p->inner * es;
            uint8_t *out = p->out + row * p->coords_count * p->inner * es;
            for (int32_t c = 0; c < p->coords_count; ++c) {
                const int32_t pos = coords[c];
                if (pos < 0 || pos >= p->axis_size) {
                    return -1;
                }
                __builtin_memcpy(out + c * (int32_t)block, in + pos * (int32_t)block, block);
            }
        }
    }
    return 0;
}

int32_t mrt_gather_nd(const mrt_gather_nd_params *p)
{
    const int32_t es = p->elem_size;
    for (int32_t i = 0; i < p->slices; ++i) {
        uint32_t from = 0;                      /* TFLM's int from_pos, wrapping as it does */
        for (int32_t j = 0; j < p->nd; ++j) {
            from += (uint32_t)p->indices[i * p->nd + j] * (uint32_t)p->dims_to_count[j];
        }
        const int32_t pos = (int32_t)from;
        if (pos < 0 || pos + p->slice_size > p->params_count) {
            return -1;
        }
        __builtin_memcpy(p->out + i * p->slice_size * es, p->params + pos * es, (uint32_t)(p->slice_size * es));
    }
    return 0;
}

int32_t mrt_embedding_lookup(const mrt_embedding_params *p)
{
    const uint32_t row_bytes = (uint32_t)(p->columns * p->elem_size);
    for (int32_t i = 0; i < p->lookups; ++i) {
        const int32_t id = p->ids[i];
        if (id < 0 || id >= p->rows) {
            return -1;
        }
        __builtin_memcpy(p->out + i * (int32_t)row_bytes, p->table + id * (int32_t)row_bytes, row_bytes);
    }
    return 0;
}

int32_t mrt_embedding_lookup_hybrid_f32(const mrt_embedding_params *p)
{
    float scale;
    __builtin_memcpy(&scale, &p->scale, sizeof scale);
    const int8_t *table = (const int8_t *)p->table;
    float *out = (float *)p->out;
    for (int32_t i = 0; i < p->lookups; ++i) {
        const int32_t id = p->ids[i];
        if (id < 0 || id >= p->rows) {
            return -1;
        }
        const int8_t *row = table + id * p->columns;
        for (int32_t j = 0; j < p->columns; ++j) {
            *out++ = (float)row[j] * scale;
        }
    }
    return 0;
}
