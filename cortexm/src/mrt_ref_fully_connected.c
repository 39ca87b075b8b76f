/* micro_rt reference flavour: FULLY_CONNECTED int8 as TFLM's reference kernel loops
 * (mrt_ref_nnfunctions.h): batch, output channel, one dot product, one requantization. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

int32_t mrt_ref_fully_connected_s8(const mrt_ref_fully_connected_s8_params *p)
{
    for (int32_t b = 0; b < p->batches; ++b) {
        const int8_t *x = p->in + b * p->accum;
        int8_t *out = p->out + b * p->out_depth;
        for (int32_t o = 0; o < p->out_depth; ++o) {
            const int8_t *w = p->filter + o * p->accum;
            int32_t acc = 0;
            for (int32_t d = 0; d < p->accum; ++d) {
                acc += (w[d] + p->filter_off) * (x[d] + p->in_off);
            }
            if (p->bias) {
                acc += p->bias[o];
            }
            const int32_t ch = p->per_channel ? o : 0;
            out[o] = mrt_out_stage(acc, p->mult[ch], p->shift[ch], p->out_off, p->act_min, p->act_max);
        }
    }
    return 0;
}
