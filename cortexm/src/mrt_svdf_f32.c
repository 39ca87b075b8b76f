/* micro_rt: SVDF float32 (mrt_svdf_f32, mrt_nnfunctions.h), TFLM's EvalFloatSvdfReference as
 * the numpy twin (kernels/svdf.py) computes it, bit for bit: the state moves one element left,
 * each filter's feature dot product (0.0f, then + weight * input in input order) goes into its
 * memory's last slot, each filter's time sum (0.0f, then + time weight * state in memory order)
 * into the scratch buffer (TFLM's scratch), the output starts as the bias (or 0.0f) and adds its
 * rank filters' sums in order, then ActivationValFloat (TfLiteMax / TfLiteMin comparisons,
 * newlib's tanhf for TANH: within a few ulp of the host's glibc, not bit-equal). */
#include <math.h>

#include "mrt_nnfunctions.h"
#include "mrt_math.h"

/* tflite::ops::micro::ActivationValFloat (TfLiteMax(a, b) = a < b ? b : a, TfLiteMin(a, b) =
 * b < a ? b : a). */
static float svdf_activation(int32_t act, float a)
{
    switch (act) {
    case MRT_SVDF_ACT_RELU:
        return 0.0f < a ? a : 0.0f;
    case MRT_SVDF_ACT_RELU_N1_TO_1: {
        const float m = 1.0f < a ? 1.0f : a;
        return -1.0f < m ? m : -1.0f;
    }
    case MRT_SVDF_ACT_RELU6: {
        const float m = 6.0f < a ? 6.0f : a;
        return 0.0f < m ? m : 0.0f;
    }
    case MRT_SVDF_ACT_TANH:
        return tanhf(a);
    case MRT_SVDF_ACT_SIGN_BIT:
        return signbit(a) ? 1.0f : 0.0f;
    default:
        return a;
    }
}

int32_t mrt_svdf_f32(const mrt_svdf_f32_params *p)
{
    const int32_t filters = p->num_filters, mem = p->memory_size, n = p->input_size;
    const int32_t units = filters / p->rank;
    float *state = p->state;
    __builtin_memmove(state, state + 1, (size_t)(p->batch * filters * mem - 1) * sizeof(float));
    for (int32_t b = 0; b < p->batch; ++b) {
        const float *w = p->weights_feature;
        float *last = state + b * filters * mem + (mem - 1);
        for (int32_t f = 0; f < filters; ++f) {
            const float *x = p->input + b * n;
            float dot = 0.0f;
            for (int32_t k = 0; k < n; ++k) {
                dot += *w++ * *x++;
            }
            last[f * mem] = dot;
        }
    }
    for (int32_t b = 0; b < p->batch; ++b) {
        const float *wt = p->weights_time;
        const float *s = state + b * filters * mem;
        float *scratch = p->scratch + b * filters;
        for (int32_t f = 0; f < filters; ++f) {
            float sum = 0.0f;
            for (int32_t j = 0; j < mem; ++j) {
                sum += *wt++ * *s++;
            }
            scratch[f] = sum;
        }
    }
    for (int32_t b = 0; b < p->batch; ++b) {
        const float *scratch = p->scratch + b * filters;
        float *out = p->output + b * units;
        for (int32_t u = 0; u < units; ++u) {
            float y = p->bias ? p->bias[u] : 0.0f;
            for (int32_t r = 0; r < p->rank; ++r) {
                y += *scratch++;
            }
            out[u] = svdf_activation(p->activation, y);
        }
    }
    return 0;
}
