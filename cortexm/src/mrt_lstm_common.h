/* micro_rt: the element-wise arithmetic of TFLM's integer LSTM (lstm_eval.h), shared by the
 * CMSIS-NN-style mrt_lstm_s8 / _s16 (mrt_lstm.c, one cell at a time) and the reference
 * flavour's mrt_ref_lstm_s8 / _s16 (mrt_ref_lstm.c, one gate at a time through TFLM's gate
 * buffers): int16 saturation, the sigmoid table's logistic and tanh, the cell and hidden
 * updates. Internal, inline. */
#ifndef MRT_LSTM_COMMON_H
#define MRT_LSTM_COMMON_H
#include "mrt_nn_types.h"
#include "mrt_math.h"

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

/* The non-linearity of gate g on its saturated FC sum s. */
MRT_INLINE int32_t gate_activation(const mrt_lstm_params *p, int32_t g, int32_t s)
{
    return g == MRT_LSTM_CELL_GATE ? tanh_s16(p->sigmoid_table, s, 0, 0) : logistic_s16(p->sigmoid_table, s);
}

/* The cell update of one cell from its gates: sat16(forget x cell) + sat16(input x cell gate),
 * clipped; stored in place and returned. */
MRT_INLINE int32_t lstm_cell_update(const mrt_lstm_params *p, int32_t ig, int32_t fg, int32_t gg, int16_t *c)
{
    const int32_t kept = sat16(mrt_requantize(fg * *c, p->forget_mult, p->forget_shift));
    const int32_t added = sat16(mrt_requantize(ig * gg, p->input_mult, p->input_shift));
    const int32_t cell = mrt_clamp(kept + added, p->cell_lo, p->cell_hi);
    *c = (int16_t)cell;
    return cell;
}

/* The new hidden value, unclamped to the hidden type: the requantized output gate x tanh(cell)
 * + hidden zero point. */
MRT_INLINE int32_t lstm_hidden(const mrt_lstm_params *p, int32_t og, int32_t cell)
{
    const int32_t th = tanh_s16(p->sigmoid_table, cell, p->cell_tanh_mult, p->cell_tanh_shift);
    return mrt_requantize(th * og, p->output_mult, p->output_shift) + p->hidden_zp;
}

/* The cell update of one cell from its gates (in place) and the new hidden value. */
MRT_INLINE int32_t cell_and_hidden(const mrt_lstm_params *p, int32_t ig, int32_t fg, int32_t gg, int32_t og,
                                   int16_t *c)
{
    return lstm_hidden(p, og, lstm_cell_update(p, ig, fg, gg, c));
}

#endif
