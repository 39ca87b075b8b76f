/* micro_rt reference flavour: TRANSPOSE_CONV int8 as TFLM's reference kernel computes it
 * (mrt_ref_nnfunctions.h): scatter into int32 accumulators, then one requantization per output
 * element. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_support.h"

int32_t mrt_ref_transpose_conv_s8(const mrt_ref_transpose_conv_s8_params *p)
{
    const mrt_conv_geometry *g = &p->geom;
    const int32_t elements = g->n * g->oh * g->ow * g->oc, out_depth = g->oc;
    int32_t *const acc = p->acc;
    for (int32_t i = 0; i < elements; ++i) {
        acc[i] = 0;
    }
    MRT_TCONV_SCATTER(g, int8_t, int8_t, int32_t, int32_t, p->in, p->in_off, p->filter, acc);
    const int32_t *const bias = p->bias, *const mult = p->mult, *const shift = p->shift;
    const int32_t out_off = p->out_off, act_min = p->act_min, act_max = p->act_max;
    int8_t *const out = p->out;
    for (int32_t i = 0; i < elements; ++i) {
        const int32_t o = i % out_depth;
        const int32_t a = (int32_t)((uint32_t)acc[i] + (uint32_t)(bias ? bias[o] : 0));
        out[i] = mrt_out_stage(a, mult[o], shift[o], out_off, act_min, act_max);
    }
    return 0;
}
