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
 * when the step is done. The 8x8 int32 sums wrap as the reference's do. */
#include "mrt_nnfunctions.h"
#include "mrt_math.h"
#include "mrt_lstm_common.h"

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
