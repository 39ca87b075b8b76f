/* micro_rt: TFLM's Signal library, the operators that keep frames across invokes (SignalDelay,
 * SignalOverlapAdd, SignalFramer, SignalStacker), their state travelling through ARGS. Numpy
 * twin: kernels/signal_stream.py. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

int32_t mrt_signal_delay_s16(const mrt_signal_stream_params *p)
{
    const int32_t frame = p->frame_size, delay = p->state_size;
    const int16_t *in = (const int16_t *)p->input;
    int16_t *out = (int16_t *)p->output, *states = (int16_t *)p->state;
    for (int32_t i = 0; i < p->outer_dims; ++i, in += frame, out += frame) {
        int16_t *state = states + i * delay;
        /* out: the first `frame` of state ++ input; state: the last `delay` of them */
        if (frame <= delay) {
            __builtin_memcpy(out, state, (uint32_t)frame * 2);
            __builtin_memmove(state, state + frame, (uint32_t)(delay - frame) * 2);
            __builtin_memcpy(state + delay - frame, in, (uint32_t)frame * 2);
        } else {
            __builtin_memcpy(out, state, (uint32_t)delay * 2);
            __builtin_memcpy(out + delay, in, (uint32_t)(frame - delay) * 2);
            __builtin_memcpy(state, in + frame - delay, (uint32_t)delay * 2);
        }
    }
    return 0;
}

/* OverlapAdd's output step: the first `step` sums out, the rest moved down, zeros after. */
static void overlap_shift(uint8_t *buffer, uint8_t *out, int32_t size, int32_t step, int32_t es)
{
    __builtin_memcpy(out, buffer, (uint32_t)(step * es));
    __builtin_memmove(buffer, buffer + step * es, (uint32_t)((size - step) * es));
    __builtin_memset(buffer + (size - step) * es, 0, (uint32_t)(step * es));
}

int32_t mrt_signal_overlap_add_s16(const mrt_signal_stream_params *p)
{
    const int32_t size = p->frame_size, step = p->frame_step;
    const int16_t *in = (const int16_t *)p->input;
    int16_t *out = (int16_t *)p->output;
    for (int32_t i = 0; i < p->outer_dims; ++i) {
        int16_t *buffer = (int16_t *)p->state + i * size;
        for (int32_t f = 0; f < p->n_frames; ++f, in += size, out += step) {
            for (int32_t j = 0; j < size; ++j) {
                const int32_t v = in[j] + buffer[j];
                buffer[j] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
            }
            overlap_shift((uint8_t *)buffer, (uint8_t *)out, size, step, 2);
        }
    }
    return 0;
}

int32_t mrt_signal_overlap_add_f32(const mrt_signal_stream_params *p)
{
    const int32_t size = p->frame_size, step = p->frame_step;
    const float *in = (const float *)p->input;
    float *out = (float *)p->output;
    for (int32_t i = 0; i < p->outer_dims; ++i) {
        float *buffer = (float *)p->state + i * size;
        for (int32_t f = 0; f < p->n_frames; ++f, in += size, out += step) {
            for (int32_t j = 0; j < size; ++j) {
                buffer[j] += in[j];
            }
            overlap_shift((uint8_t *)buffer, (uint8_t *)out, size, step, 4);
        }
    }
    return 0;
}

int32_t mrt_signal_framer_s16(const mrt_signal_fifo_params *p)
{
    const int32_t size = p->frame_size, step = p->frame_step;
    const int16_t *in = p->input;
    int16_t *out = p->output;
    uint8_t valid = 1;
    for (int32_t i = 0; i < p->outer_dims; ++i) {
        int16_t *buf = p->samples + i * p->capacity;
        int32_t count = p->counts[i];
        for (int32_t f = 0; f < p->n_frames; ++f, in += step, out += size) {
            __builtin_memcpy(buf + count, in, (uint32_t)step * 2);
            count += step;
            if (count >= size) {
                __builtin_memcpy(out, buf, (uint32_t)size * 2);
                __builtin_memmove(buf, buf + step, (uint32_t)(count - step) * 2);
                count -= step;
            } else {
                valid = 0;           /* this frame's output is left as it was */
            }
        }
        p->counts[i] = count;
    }
    *p->valid = valid;
    return 0;
}

int32_t mrt_signal_stacker_s16(const mrt_signal_fifo_params *p)
{
    const int32_t channels = p->frame_step, size = p->frame_size, step = p->n_frames;
    int16_t *buf = p->samples;
    int32_t count = p->counts[0];
    __builtin_memcpy(buf + count, p->input, (uint32_t)channels * 2);
    count += channels;
    if (!p->counts[1]) {             /* the first frame stands in for the left context */
        for (int32_t k = 0; k < p->extend; ++k, count += channels) {
            __builtin_memcpy(buf + count, buf + count - channels, (uint32_t)channels * 2);
        }
        p->counts[1] = 1;
    }
    uint8_t valid = 0;
    if (count >= size) {
        __builtin_memcpy(p->output, buf, (uint32_t)size * 2);
        __builtin_memmove(buf, buf + step, (uint32_t)(count - step) * 2);
        count -= step;
        valid = 1;
    }
    p->counts[0] = count;
    *p->valid = valid;
    return 0;
}
