/* micro_rt reference flavour: FULLY_CONNECTED int8 as TFLM's reference kernel loops
 * (mrt_ref_nnfunctions.h): batch, output channel, one dot product, one requantization. The
 * parameters are copied into locals first, as TFLM's kernel does. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

int32_t mrt_ref_fully_connected_s8(const mrt_ref_fully_connected_s8_params *p)
{
    const int8_t *const input = p->in, *const filter = p->filter;
    const int32_t *const bias = p->bias, *const mult = p->mult, *const shift = p->shift;
    int8_t *const output = p->out;
    const int32_t batches = p->batches, accum_depth = p->accum, out_depth = p->out_depth;
    const int32_t per_channel = p->per_channel, in_off = p->in_off, filter_off = p->filter_off;
    const int32_t out_off = p->out_off, act_min = p->act_min, act_max = p->act_max;
    for (int32_t b = 0; b < batches; ++b) {
        for (int32_t o = 0; o < out_depth; ++o) {
            int32_t acc = 0;
            for (int32_t d = 0; d < accum_depth; ++d) {
                acc += (filter[o * accum_depth + d] + filter_off) * (input[b * accum_depth + d] + in_off);
            }
            if (bias) {
                acc += bias[o];
            }
            const int32_t ch = per_channel ? o : 0;
            output[b * out_depth + o] = mrt_out_stage(acc, mult[ch], shift[ch], out_off, act_min, act_max);
        }
    }
    return 0;
}
