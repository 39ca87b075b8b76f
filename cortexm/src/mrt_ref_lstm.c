/* micro_rt reference flavour: UNIDIRECTIONAL_SEQUENCE_LSTM with an int16 cell state as TFLM's
 * reference kernel steps through it (lstm_eval.h; mrt_ref_nnfunctions.h): one gate at a time
 * over all cells through its gate buffer, then the cell and the hidden updates. The element-wise
 * arithmetic is shared with mrt_lstm.c (mrt_lstm_common.h); the 8x8 int32 sums wrap as the
 * reference's do. */
#include "mrt_ref_nnfunctions.h"
#include "mrt_lstm_common.h"

/* One gate of one batch row into `buf` (n_state values): input FC + bias, requantized and
 * saturated; the recurrent FC likewise, added with saturation; the non-linearity. ACC_T is the
 * sums' type (int32 for 8x8, int64 for 16x8), REQUANT its requantization. */
#define MRT_REF_LSTM_GATE(p, g, T, ACC_T, REQUANT, x, h, buf)                                       \
    do {                                                                                            \
        const int32_t n_in_ = (p)->n_input, s_ = (p)->n_state;                                      \
        const int8_t *const w_in_ = (p)->w_in[g], *const w_rec_ = (p)->w_rec[g];                    \
        const ACC_T *const bias_ = (const ACC_T *)(p)->bias[g];                                     \
        for (int32_t j_ = 0; j_ < s_; ++j_) {                                                       \
            ACC_T acc_ = bias_[j_];                                                                 \
            for (int32_t k_ = 0; k_ < n_in_; ++k_) {                                                \
                acc_ += (ACC_T)(((x)[k_] + (p)->input_offset) * w_in_[j_ * n_in_ + k_]);            \
            }                                                                                       \
            (buf)[j_] = (int16_t)sat16((int32_t)REQUANT(acc_, (p)->in_mult[g], (p)->in_shift[g]));  \
        }                                                                                           \
        for (int32_t j_ = 0; j_ < s_; ++j_) {                                                       \
            ACC_T acc_ = 0;                                                                         \
            for (int32_t k_ = 0; k_ < s_; ++k_) {                                                   \
                acc_ += (ACC_T)(((h)[k_] + (p)->hidden_offset) * w_rec_[j_ * s_ + k_]);             \
            }                                                                                       \
            const int32_t r_ = sat16((int32_t)REQUANT(acc_, (p)->rec_mult[g], (p)->rec_shift[g]));  \
            (buf)[j_] = (int16_t)sat16((buf)[j_] + r_);                                             \
        }                                                                                           \
        for (int32_t j_ = 0; j_ < s_; ++j_) {                                                       \
            (buf)[j_] = (int16_t)gate_activation((p), (g), (buf)[j_]);                              \
        }                                                                                           \
    } while (0)

#define MRT_REF_LSTM_RUN(r, T, ACC_T, REQUANT, LO, HI)                                              \
    do {                                                                                            \
        const mrt_lstm_params *const p_ = &(r)->lstm;                                               \
        const int32_t batches_ = p_->batch, s_ = p_->n_state, steps_ = p_->steps;                   \
        T *const hidden_ = (T *)p_->hidden;                                                         \
        for (int32_t t_ = 0; t_ < steps_; ++t_) {                                                   \
            for (int32_t b_ = 0; b_ < batches_; ++b_) {                                             \
                const int32_t row_ = p_->time_major ? t_ * batches_ + b_ : b_ * steps_ + t_;        \
                const T *const x_ = (const T *)p_->input + row_ * p_->n_input;                      \
                const T *const h_ = hidden_ + b_ * s_;                                              \
                int16_t *const ig_ = (r)->gates[0] + b_ * s_, *const fg_ = (r)->gates[1] + b_ * s_; \
                int16_t *const gg_ = (r)->gates[2] + b_ * s_, *const og_ = (r)->gates[3] + b_ * s_; \
                MRT_REF_LSTM_GATE(p_, 0, T, ACC_T, REQUANT, x_, h_, ig_);                           \
                MRT_REF_LSTM_GATE(p_, 1, T, ACC_T, REQUANT, x_, h_, fg_);                           \
                MRT_REF_LSTM_GATE(p_, 2, T, ACC_T, REQUANT, x_, h_, gg_);                           \
                MRT_REF_LSTM_GATE(p_, 3, T, ACC_T, REQUANT, x_, h_, og_);                           \
                int16_t *const c_ = p_->cell + b_ * s_;                                             \
                for (int32_t j_ = 0; j_ < s_; ++j_) {                                               \
                    lstm_cell_update(p_, ig_[j_], fg_[j_], gg_[j_], c_ + j_);                       \
                }                                                                                   \
                T *const out_ = (T *)p_->output + row_ * s_;                                        \
                for (int32_t j_ = 0; j_ < s_; ++j_) {                                               \
                    out_[j_] = (T)mrt_clamp(lstm_hidden(p_, og_[j_], c_[j_]), LO, HI);              \
                }                                                                                   \
            }                                                                                       \
            for (int32_t b_ = 0; b_ < batches_; ++b_) {    /* the new hidden state */               \
                const int32_t row_ = p_->time_major ? t_ * batches_ + b_ : b_ * steps_ + t_;        \
                const T *const src_ = (const T *)p_->output + row_ * s_;                            \
                for (int32_t j_ = 0; j_ < s_; ++j_) {                                               \
                    hidden_[b_ * s_ + j_] = src_[j_];                                               \
                }                                                                                   \
            }                                                                                       \
        }                                                                                           \
    } while (0)

int32_t mrt_ref_lstm_s8(const mrt_ref_lstm_params *p)
{
    MRT_REF_LSTM_RUN(p, int8_t, int32_t, mrt_requantize, -128, 127);
    return 0;
}

int32_t mrt_ref_lstm_s16(const mrt_ref_lstm_params *p)
{
    MRT_REF_LSTM_RUN(p, int16_t, int64_t, mrt_requantize_wide, -32768, 32767);
    return 0;
}
