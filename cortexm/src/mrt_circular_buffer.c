/* micro_rt: TFLM's CIRCULAR_BUFFER custom operator (int8), written from its reference kernel's
 * behaviour: the buffer (the output) moves one slot towards the start, the input fills the last
 * slot, and the run ends here (kTfLiteAbort) until cycles_max invokes have passed. Numpy twin:
 * kernels/circular_buffer.py. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

int32_t mrt_circular_buffer_s8(const mrt_circular_buffer_params *p)
{
    const uint32_t depth = (uint32_t)p->depth, kept = (uint32_t)(p->slots - 1) * depth;
    __builtin_memmove(p->output, p->output + depth, kept);
    __builtin_memcpy(p->output + kept, p->input, depth);
    if (--p->state->cycles_until_run != 0) {
        return 1;                                   /* kTfLiteAbort: the later operators wait */
    }
    p->state->cycles_until_run = p->state->cycles_max;
    return 0;
}
