/* micro_rt: UNIDIRECTIONAL_SEQUENCE_LSTM float32 (mrt_lstm_f32, mrt_nnfunctions.h), TFLM's float
 * LSTM (lstm_eval.h: CalculateLstmGateFloat, UpdateLstmCellFloat, UpdateLstmHiddenFloat) as the
 * numpy twin (kernels/lstm_float.py) computes it, bit for bit apart from the C library:
 *  - every gate: the input FC (0.0f, + input * weight in input order, then + bias) plus the
 *    recurrent FC (the same over the old hidden state, then + 0.0f, TFLM's absent bias), then
 *    sigmoid (reference_ops::Logistic: expf) for the input, forget and output gates, tanhf for
 *    the cell gate, into the gate's scratch buffer (TFLM's four);
 *  - cell = forget * cell, + input * cell gate, clipped to +-cell_clip when cell_clip > 0;
 *  - hidden = tanhf(cell) * output gate, written to the step's output row and the state.
 * expf / tanhf are newlib's (TFLM's std::exp / std::tanh on a device): within a few ulp of the
 * host's glibc. Every gate of a step reads the old hidden state; the step updates the state
 * once all its gates are computed. Batch-major sequences run batch after batch, as TFLM does. */
#include <math.h>

#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* 0.0f, then + x[k] * w[k] for k in order (TFLM's FullyConnected float inner loop). */
static float dot_f32(const float *x, const float *w, int32_t n)
{
    float total = 0.0f;
    for (int32_t k = 0; k < n; ++k) {
        total += x[k] * w[k];
    }
    return total;
}

/* One step of `rows` rows: x row r at x + r * x_stride, out row r at out + r * x_stride_out;
 * hidden and cell rows consecutive. */
static void lstm_step_f32(const mrt_lstm_f32_params *p, const float *x, int32_t x_stride, float *out,
                          int32_t out_stride, float *hidden, float *cell, int32_t rows)
{
    const int32_t n_in = p->n_input, s_n = p->n_state;
    for (int32_t g = 0; g < 4; ++g) {
        for (int32_t r = 0; r < rows; ++r) {
            const float *xr = x + r * x_stride, *hr = hidden + r * s_n;
            float *gate = p->gates[g] + r * s_n;
            for (int32_t s = 0; s < s_n; ++s) {
                const float in_fc = dot_f32(xr, p->w_in[g] + s * n_in, n_in) + p->bias[g][s];
                const float rec_fc = dot_f32(hr, p->w_rec[g] + s * s_n, s_n) + 0.0f;
                const float pre = in_fc + rec_fc;
                gate[s] = g == MRT_LSTM_CELL_GATE ? tanhf(pre) : mrt_logistic_f32(pre);
            }
        }
    }
    const float clip = mrt_fbits(p->cell_clip);
    for (int32_t r = 0; r < rows; ++r) {
        for (int32_t s = 0; s < s_n; ++s) {
            const int32_t i = r * s_n + s;
            float c = p->gates[1][i] * cell[i];
            c = c + p->gates[0][i] * p->gates[2][i];
            if (clip > 0.0f) {
                c = mrt_np_max(mrt_np_min(clip, c), -clip);
            }
            cell[i] = c;
            const float h = tanhf(c) * p->gates[3][i];
            hidden[i] = h;
            out[r * out_stride + s] = h;
        }
    }
}

int32_t mrt_lstm_f32(const mrt_lstm_f32_params *p)
{
    const int32_t b_n = p->batch, n_in = p->n_input, s_n = p->n_state;
    if (p->time_major) {
        for (int32_t t = 0; t < p->steps; ++t) {
            lstm_step_f32(p, p->input + t * b_n * n_in, n_in, p->output + t * b_n * s_n, s_n, p->hidden, p->cell,
                          b_n);
        }
        return 0;
    }
    for (int32_t b = 0; b < b_n; ++b) {
        for (int32_t t = 0; t < p->steps; ++t) {
            const int32_t row = b * p->steps + t;
            lstm_step_f32(p, p->input + row * n_in, n_in, p->output + row * s_n, s_n, p->hidden + b * s_n,
                          p->cell + b * s_n, 1);
        }
    }
    return 0;
}
