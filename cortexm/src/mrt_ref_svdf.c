/* micro_rt reference flavour: SVDF with an int8 input and an int8 or int16 state as TFLM's
 * reference kernel computes it (EvalIntegerSvdfReference; mrt_ref_nnfunctions.h): one plain
 * loop per step (shift the state, feature products, time products, unit sums). The int32 sums
 * wrap as the reference's do (uint32_t arithmetic), as the numpy twin models. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_math.h"

#define MRT_REF_SVDF(T)                                                                           \
    do {                                                                                          \
        T *const state = (T *)p->state;                                                           \
        const T *const weights_time = (const T *)p->weights_time;                                 \
        const int8_t *const input = p->input, *const weights_feature = p->weights_feature;       \
        const int32_t *const bias = p->bias;                                                      \
        int32_t *const scratch = p->scratch, *const scratch_output = p->scratch_output;           \
        const int32_t batches = p->batch, n_input = p->input_size, n_filter = p->num_filters;     \
        const int32_t n_memory = p->memory_size, rank = p->rank, n_unit = n_filter / rank;        \
        const int32_t input_offset = p->input_offset, state_zp = p->state_zp;                     \
        /* The state moves one element left (its first value drops out). */                       \
        const int32_t state_len = batches * n_filter * n_memory;                                  \
        for (int32_t i = 0; i + 1 < state_len; ++i) {                                             \
            state[i] = state[i + 1];                                                              \
        }                                                                                         \
        /* Feature products into each filter's last memory slot. */                               \
        for (int32_t b = 0; b < batches; ++b) {                                                   \
            for (int32_t f = 0; f < n_filter; ++f) {                                              \
                uint32_t dot = 0;                                                                 \
                for (int32_t c = 0; c < n_input; ++c) {                                           \
                    dot += (uint32_t)(weights_feature[f * n_input + c] * (input[b * n_input + c] + input_offset)); \
                }                                                                                 \
                const int32_t r = mrt_clamp(mrt_requantize((int32_t)dot, p->mult_1, p->shift_1),  \
                                            p->state_min, p->state_max);                          \
                state[(b * n_filter + f) * n_memory + n_memory - 1] = (T)(r + state_zp);          \
            }                                                                                     \
        }                                                                                         \
        /* Time products. */                                                                      \
        for (int32_t b = 0; b < batches; ++b) {                                                   \
            for (int32_t f = 0; f < n_filter; ++f) {                                              \
                const T *s = state + (b * n_filter + f) * n_memory;                               \
                const T *w = weights_time + f * n_memory;                                         \
                uint32_t dot = 0;                                                                 \
                for (int32_t j = 0; j < n_memory; ++j) {                                          \
                    dot += (uint32_t)w[j] * (uint32_t)(s[j] - state_zp);                          \
                }                                                                                 \
                scratch[b * n_filter + f] = (int32_t)dot;                                         \
            }                                                                                     \
        }                                                                                         \
        /* Unit sums (+ bias), requantized into the output. */                                    \
        for (int32_t b = 0; b < batches; ++b) {                                                   \
            for (int32_t u = 0; u < n_unit; ++u) {                                                \
                uint32_t sum = bias ? (uint32_t)bias[u] : 0u;                                     \
                for (int32_t r = 0; r < rank; ++r) {                                              \
                    sum += (uint32_t)scratch[b * n_filter + u * rank + r];                        \
                }                                                                                 \
                scratch_output[b * n_unit + u] = (int32_t)sum;                                    \
            }                                                                                     \
            for (int32_t u = 0; u < n_unit; ++u) {                                                \
                const int32_t x = mrt_requantize(scratch_output[b * n_unit + u], p->mult_2, p->shift_2) \
                                  + p->output_zp;                                                 \
                p->output[b * n_unit + u] = (int8_t)mrt_clamp(x, -128, 127);                      \
            }                                                                                     \
        }                                                                                         \
    } while (0)

int32_t mrt_ref_svdf_s8(const mrt_ref_svdf_params *p)
{
    MRT_REF_SVDF(int8_t);
    return 0;
}

int32_t mrt_ref_svdf_state_s16_s8(const mrt_ref_svdf_params *p)
{
    MRT_REF_SVDF(int16_t);
    return 0;
}
