/* micro_rt: UNIDIRECTIONAL_SEQUENCE_LSTM, 8x8->16 (int8 input, weights and hidden state, int16
 * cell state, int32 biases): mrt_lstm_s8 (mrt_nnfunctions.h), TFLM's integer LSTM
 * (lstm_eval.h) as the numpy twin (kernels/lstm_int8.py) computes it, bit for bit:
 *  - every gate: the input FC (+ bias) and the recurrent FC, each requantized to int16 with its
 *    own multiplier and saturated, then added with int16 saturation; sigmoid (input, forget,
 *    output gates) or tanh (cell gate) from TFLM's 256-entry sigmoid table with linear
 *    interpolation (reference_integer_ops::Logistic / Tanh on int16; CMSIS-NN's
 *    arm_nn_activation_s16 reads the same table the same way);
 *  - cell = sat16(forget x cell) + sat16(input x cell gate), saturated and clipped;
 *  - hidden = output gate x tanh(cell), requantized, + hidden zero point, clamped to int8.
 * The dot products run one weight row at a time with the activation offset added in the loop
 * (SXTAB16 and SMLAD on the DSP cores, as CMSIS-NN's s8 vector-matrix kernels do without
 * kernel sums). A step reads the previous hidden state for every row, so the new one goes to
 * the step's output row first and into the state when the step is done. int32 sums wrap. */
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

/* sum((x[k] + off) * w[k]) + acc over n values. */
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

MRT_INLINE int32_t sat16(int32_t v)
{
    return mrt_clamp(v, -32768, 32767);
}

/* The int16 activations' input rescale (3 << shift when no multiplier is given). */
MRT_INLINE int32_t scaled_input(int32_t x, int32_t mult, int32_t shift)
{
    if (mult == 0) {
        return x * (3 << shift);
    }
    return (x * mult + (shift > 0 ? 1 << (shift - 1) : 0)) >> shift;
}

/* The sigmoid table at |v|, interpolated on the low frac_bits bits; `saturated` past its end. */
MRT_INLINE int32_t sigmoid_table(const uint16_t *tab, int32_t mag, int32_t frac_bits, int32_t saturated)
{
    const int32_t upper = mag >> frac_bits;
    if (upper >= 255) {
        return saturated;
    }
    const int32_t ua = tab[upper], ub = tab[upper + 1];
    return (ua << frac_bits) + (mag & ((1 << frac_bits) - 1)) * (ub - ua);
}

MRT_INLINE int32_t logistic_s16(const uint16_t *tab, int32_t x)
{
    const int32_t v = scaled_input(x, 0, 0);
    const int32_t r = sigmoid_table(tab, v < 0 ? -v : v, 9, 0x7FFF << 10);
    return (v >= 0 ? r + (1 << 9) : (1 << 25) - r + (1 << 9) - 1) >> 10;
}

MRT_INLINE int32_t tanh_s16(const uint16_t *tab, int32_t x, int32_t mult, int32_t shift)
{
    const int32_t v = scaled_input(x, mult, shift);
    const int32_t r = sigmoid_table(tab, v < 0 ? -v : v, 8, 0xFFFF << 8);
    return (v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1) >> 8;
}

/* One gate of one cell: the two FCs, the saturated sum, the non-linearity. */
static int32_t gate_s16(const mrt_lstm_s8_params *p, int32_t g, int32_t j, const int8_t *x, const int8_t *h)
{
    const int32_t in_acc = dot_s8_offset(x, p->w_in[g] + j * p->n_input, p->n_input, p->input_offset,
                                         p->bias[g][j]);
    const int32_t a = sat16(mrt_requantize(in_acc, p->in_mult[g], p->in_shift[g]));
    const int32_t rec_acc = dot_s8_offset(h, p->w_rec[g] + j * p->n_state, p->n_state, p->hidden_offset, 0);
    const int32_t r = sat16(mrt_requantize(rec_acc, p->rec_mult[g], p->rec_shift[g]));
    const int32_t s = sat16(a + r);
    return g == MRT_LSTM_CELL_GATE ? tanh_s16(p->sigmoid_table, s, 0, 0) : logistic_s16(p->sigmoid_table, s);
}

int32_t mrt_lstm_s8(const mrt_lstm_s8_params *p)
{
    const int32_t b_count = p->batch, s = p->n_state;
    for (int32_t t = 0; t < p->steps; ++t) {
        for (int32_t b = 0; b < b_count; ++b) {
            const int32_t row = p->time_major ? t * b_count + b : b * p->steps + t;
            const int8_t *x = p->input + row * p->n_input;
            const int8_t *h = p->hidden + b * s;
            int16_t *c = p->cell + b * s;
            int8_t *out = p->output + row * s;
            for (int32_t j = 0; j < s; ++j) {
                const int32_t ig = gate_s16(p, 0, j, x, h), fg = gate_s16(p, 1, j, x, h);
                const int32_t gg = gate_s16(p, MRT_LSTM_CELL_GATE, j, x, h), og = gate_s16(p, 3, j, x, h);
                const int32_t kept = sat16(mrt_requantize(fg * c[j], p->forget_mult, p->forget_shift));
                const int32_t added = sat16(mrt_requantize(ig * gg, p->input_mult, p->input_shift));
                const int32_t cell = mrt_clamp(kept + added, p->cell_lo, p->cell_hi);
                c[j] = (int16_t)cell;
                const int32_t th = tanh_s16(p->sigmoid_table, cell, p->cell_tanh_mult, p->cell_tanh_shift);
                out[j] = (int8_t)mrt_clamp(mrt_requantize(th * og, p->output_mult, p->output_shift) + p->hidden_zp,
                                           -128, 127);
            }
        }
        for (int32_t b = 0; b < b_count; ++b) {      /* the new hidden state, for the next step */
            const int32_t row = p->time_major ? t * b_count + b : b * p->steps + t;
            __builtin_memcpy(p->hidden + b * s, p->output + row * s, (unsigned)s);
        }
    }
    return 0;
}
