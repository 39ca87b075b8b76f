/* micro_rt: BROADCAST_ARGS (issue 12's data movement), TFLM's reference loop over int32 or
 * int64 shape vectors read at run time. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

/* Dimension `back` from the end of a shape vector, narrowed to int as TFLM's `int shape_i`
 * is; 1 beyond its start. */
static int32_t dim_from_end(const void *shape, int32_t count, int32_t back, int32_t elem_size)
{
    const int32_t k = count - 1 - back;
    if (k < 0) {
        return 1;
    }
    return elem_size == 8 ? (int32_t)((const int64_t *)shape)[k] : ((const int32_t *)shape)[k];
}

int32_t mrt_broadcast_args(const mrt_broadcast_args_params *p)
{
    for (int32_t back = 0; back < p->out_count; ++back) {
        const int32_t a = dim_from_end(p->shape1, p->count1, back, p->elem_size);
        const int32_t b = dim_from_end(p->shape2, p->count2, back, p->elem_size);
        int32_t d;
        if (a == 1) {
            d = b;
        } else if (b == 1 || a == b) {
            d = a;
        } else {
            return -1;
        }
        const int32_t k = p->out_count - 1 - back;
        if (p->elem_size == 8) {
            ((int64_t *)p->out)[k] = d;
        } else {
            ((int32_t *)p->out)[k] = d;
        }
    }
    return 0;
}
