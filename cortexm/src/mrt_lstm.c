/* micro_rt: UNIDIRECTIONAL_SEQUENCE_LSTM with an int16 cell state (mrt_nnfunctions.h), TFLM's
 * integer LSTM (lstm_eval.h) as the numpy twin (kernels/lstm_int8.py) computes it, bit for bit:
 *  - mrt_lstm_s8, 8x8->16: int8 input and hidden state, int32 biases, int32 gate sums;
 *  - mrt_lstm_s16, 16x8->16: int16 input and hidden state, int64 biases and gate sums,
 *    TFLM's int64 MultiplyByQuantizedMultiplier;
 * both with int8 weights and:
 *  - every gate: the input FC (+ bias) and the recurrent FC, each requantized to int16 with its
 *    own multiplier and saturated, then added with int16 saturation; sigmoid (input, forget,
 *    output gates) or tanh (cell gate) from TFLM's 256-entry sigmoid table with linear
 *    interpolation (reference_integer_ops::Logistic / Tanh on int16; CMSIS-NN's
 *    arm_nn_activation_s16 reads the same table the same way);
 *  - cell = sat16(forget x cell) + sat16(input x cell gate), saturated and clipped;
 *  - hidden = output gate x tanh(cell), requantized, + hidden zero point, saturated to the
 *    hidden state's type.
 * The dot products run one weight row at a time with the activation offset added in the loop
 * (SXTAB16 / SMLAD for int8, SMLALD for int16 with a zero offset, on the DSP cores, as
 * CMSIS-NN's vector-matrix kernels do without kernel sums). A step reads the previous hidden
 * state for every row, so the new one goes to the step's output row first and into the state
 * when the step is done. The 8x8 int32 sums wrap as the reference's do. The float32 LSTM,
 * mrt_lstm_f32, is at the end. */
#include <math.h>
#include "mrt_nnfunctions.h"
#include "mrt_math.h"
#include "mrt_lstm_common.h"
#include "mrt_support.h"

/* sum((x[k] + off) * w[k]) + acc over n int8 values. */
MRT_INLINE int32_t dot_s8_offset(const int8_t *x, const int8_t *w, int32_t n, int32_t off, int32_t acc)
{
    int32_t k = 0;
#if MRT_DSP
    const uint32_t off2 = ((uint32_t)off & 0xFFFFu) | ((uint32_t)off << 16);
    for (; k + 4 <= n; k += 4) {
        const uint32_t xv = (uint32_t)mrt_read_s8x4(x + k), wv = (uint32_t)mrt_read_s8x4(w + k);
        acc = mrt_smlad_v(__sxtab16(off2, xv), __sxtb16(wv), acc);
        acc = mrt_smlad_v(mrt_sxtab16_r8(off2, xv), mrt_sxtb16_r8(wv), acc);
    }
#endif
    for (; k < n; ++k) {
        acc += (x[k] + off) * w[k];
    }
    return acc;
}

/* sum((x[k] + off) * w[k]) + acc over n int16 values, in int64. */
MRT_INLINE int64_t dot_s16_offset(const int16_t *x, const int8_t *w, int32_t n, int32_t off, int64_t acc)
{
    int32_t k = 0;
#if MRT_DSP
    if (off == 0) {                   /* int16 pairs as they are: two taps per SMLALD */
        for (; k + 4 <= n; k += 4) {
            uint32_t w01, w23;
            mrt_read_and_pad(w + k, &w01, &w23);
            acc = (int64_t)__smlald((int16x2_t)mrt_read_s16x2(x + k), (int16x2_t)w01, acc);
            acc = (int64_t)__smlald((int16x2_t)mrt_read_s16x2(x + k + 2), (int16x2_t)w23, acc);
        }
    }
#endif
    for (; k < n; ++k) {
        acc += (int32_t)((x[k] + off) * w[k]);
    }
    return acc;
}

/* One gate of one cell, 8x8: the two int32 FCs, the saturated sum, the non-linearity. */
static int32_t gate_s8(const mrt_lstm_params *p, int32_t g, int32_t j, const int8_t *x, const int8_t *h)
{
    const int32_t in_acc = dot_s8_offset(x, p->w_in[g] + j * p->n_input, p->n_input, p->input_offset,
                                         ((const int32_t *)p->bias[g])[j]);
    const int32_t a = sat16(mrt_requantize(in_acc, p->in_mult[g], p->in_shift[g]));
    const int32_t rec_acc = dot_s8_offset(h, p->w_rec[g] + j * p->n_state, p->n_state, p->hidden_offset, 0);
    const int32_t r = sat16(mrt_requantize(rec_acc, p->rec_mult[g], p->rec_shift[g]));
    return gate_activation(p, g, sat16(a + r));
}

/* One gate of one cell, 16x8: the two int64 FCs. */
static int32_t gate_s16(const mrt_lstm_params *p, int32_t g, int32_t j, const int16_t *x, const int16_t *h)
{
    const int64_t in_acc = dot_s16_offset(x, p->w_in[g] + j * p->n_input, p->n_input, p->input_offset,
                                          ((const int64_t *)p->bias[g])[j]);
    const int32_t a = sat16((int32_t)mrt_requantize_wide(in_acc, p->in_mult[g], p->in_shift[g]));
    const int64_t rec_acc = dot_s16_offset(h, p->w_rec[g] + j * p->n_state, p->n_state, p->hidden_offset, 0);
    const int32_t r = sat16((int32_t)mrt_requantize_wide(rec_acc, p->rec_mult[g], p->rec_shift[g]));
    return gate_activation(p, g, sat16(a + r));
}

/* The whole sequence for activation type T (int8_t / int16_t) with gate function GATE and the
 * hidden state's range [LO, HI]. */
#define MRT_LSTM_RUN(p, T, GATE, LO, HI)                                                        \
    do {                                                                                        \
        const int32_t bn_ = (p)->batch, s_ = (p)->n_state;                                      \
        T *hidden_ = (T *)(p)->hidden;                                                          \
        for (int32_t t_ = 0; t_ < (p)->steps; ++t_) {                                          \
            for (int32_t b_ = 0; b_ < bn_; ++b_) {                                              \
                const int32_t row_ = (p)->time_major ? t_ * bn_ + b_ : b_ * (p)->steps + t_;    \
                const T *x_ = (const T *)(p)->input + row_ * (p)->n_input;                      \
                const T *h_ = hidden_ + b_ * s_;                                                \
                int16_t *c_ = (p)->cell + b_ * s_;                                              \
                T *out_ = (T *)(p)->output + row_ * s_;                                         \
                for (int32_t j_ = 0; j_ < s_; ++j_) {                                           \
                    const int32_t ig_ = GATE(p, 0, j_, x_, h_), fg_ = GATE(p, 1, j_, x_, h_);   \
                    const int32_t gg_ = GATE(p, 2, j_, x_, h_), og_ = GATE(p, 3, j_, x_, h_);   \
                    out_[j_] = (T)mrt_clamp(cell_and_hidden(p, ig_, fg_, gg_, og_, c_ + j_), LO, HI); \
                }                                                                               \
            }                                                                                   \
            for (int32_t b_ = 0; b_ < bn_; ++b_) {    /* the new hidden state, for the next step */ \
                const int32_t row_ = (p)->time_major ? t_ * bn_ + b_ : b_ * (p)->steps + t_;    \
                __builtin_memcpy(hidden_ + b_ * s_, (T *)(p)->output + row_ * s_, (unsigned)s_ * sizeof(T)); \
            }                                                                                   \
        }                                                                                       \
    } while (0)

int32_t mrt_lstm_s8(const mrt_lstm_params *p)
{
    MRT_LSTM_RUN(p, int8_t, gate_s8, -128, 127);
    return 0;
}

int32_t mrt_lstm_s16(const mrt_lstm_params *p)
{
    MRT_LSTM_RUN(p, int16_t, gate_s16, -32768, 32767);
    return 0;
}

/* ================================================================ float32 */
/* UNIDIRECTIONAL_SEQUENCE_LSTM float32 (mrt_lstm_f32, mrt_nnfunctions.h), TFLM's float
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
