/* micro_rt: SVDF with an int8 input (mrt_svdf_s8: int8 state and time weights;
 * mrt_svdf_state_s16_s8: int16 state and time weights), mrt_nnfunctions.h; float32 SVDF
 * (mrt_svdf_f32) at the end.
 *
 * The structure and instruction use of CMSIS-NN's arm_svdf_s8 / arm_svdf_state_s16_s8 (what
 * TFLM's CMSIS-NN glue calls): the state moves one element left in one memmove, the feature
 * product takes two weight rows per pass with the input offset added to the input in the loop
 * (SXTAB16 on the DSP cores: arm_nn_vec_mat_mult_t_s8 without kernel sums, which TFLM's glue
 * makes only for MVE cores), the time products run four (int8) or two
 * (int16) taps per SMLAD pair on the DSP cores, the unit sums land in the scratch buffer and are
 * requantized in a last pass. The arithmetic is TFLM's reference kernel's, which the oracle
 * runs and the numpy twin (kernels/svdf.py) follows, where CMSIS-NN's differs: the new state
 * value saturates to the state type before the state zero point is added (CMSIS-NN clamps to
 * int16 after adding it), and the time sums subtract the state zero point (CMSIS-NN reads the
 * state as if its zero point were 0), folded here into per-filter sums made by the glue.
 * All int32 sums wrap as the reference's do; the twin models the wrap. */
#include <stddef.h>
#include <math.h>
#include "mrt_nnfunctions.h"
#include "mrt_math.h"

#if MRT_DSP
/* Four int8 values plus an offset as [x0 x2] and [x1 x3] (SXTAB16, SXTAB16 ROR 8). */
MRT_INLINE const int8_t *read_reordered_offset(const int8_t *src, uint32_t off, uint32_t *even, uint32_t *odd)
{
    const uint32_t v = (uint32_t)mrt_read_s8x4(src);
    *even = __sxtab16(off, v);
    *odd = mrt_sxtab16_r8(off, v);
    return src + 4;
}

/* Four int8 values as [x0 x2] and [x1 x3] (CMSIS-NN's read_and_pad_reordered). */
MRT_INLINE const int8_t *read_reordered(const int8_t *src, uint32_t *even, uint32_t *odd)
{
    const uint32_t v = (uint32_t)mrt_read_s8x4(src);
    *even = __sxtb16(v);
    *odd = mrt_sxtb16_r8(v);
    return src + 4;
}
#endif

/* The new state value of one filter: reference order (saturate, then the zero point, then the
 * narrowing store). */
MRT_INLINE int32_t feature_out(int32_t dot, const mrt_svdf_params *p)
{
    const int32_t r = mrt_clamp(mrt_requantize(dot, p->mult_1, p->shift_1), p->state_min, p->state_max);
    return r + p->state_zp;
}

/* Dot products of one input row with every feature weight row: sum((x + input_offset) * w),
 * written through `store(filter, value)`. Two rows per pass. */
#define MRT_SVDF_FEATURE(p, x, STORE)                                                           \
    do {                                                                                        \
        const int8_t *w_ = (p)->weights_feature;                                                \
        const int32_t n_ = (p)->input_size, off_ = (p)->input_offset;                           \
        const uint32_t off2_ = ((uint32_t)off_ & 0xFFFFu) | ((uint32_t)off_ << 16);            \
        (void)off2_;                                                                            \
        int32_t f_ = 0;                                                                         \
        for (; f_ + 2 <= (p)->num_filters; f_ += 2) {                                           \
            const int8_t *w0_ = w_ + f_ * n_, *w1_ = w0_ + n_, *x_ = (x);                      \
            int32_t s0_ = 0, s1_ = 0;                                                           \
            int32_t k_ = 0;                                                                     \
            MRT_SVDF_DOT2(x_, w0_, w1_, s0_, s1_, k_, n_, off2_);                               \
            for (; k_ < n_; ++k_) {                                                             \
                const int32_t v_ = *x_++ + off_;                                                \
                s0_ += v_ * *w0_++;                                                             \
                s1_ += v_ * *w1_++;                                                             \
            }                                                                                   \
            STORE(f_, s0_);                                                                     \
            STORE(f_ + 1, s1_);                                                                 \
        }                                                                                       \
        if (f_ < (p)->num_filters) {                                                            \
            const int8_t *w0_ = w_ + f_ * n_, *x_ = (x);                                        \
            int32_t s0_ = 0;                                                                    \
            for (int32_t k_ = 0; k_ < n_; ++k_) {                                               \
                s0_ += (*x_++ + off_) * *w0_++;                                                 \
            }                                                                                   \
            STORE(f_, s0_);                                                                     \
        }                                                                                       \
    } while (0)

#if MRT_DSP
/* Four taps of two rows: the input's halfword pairs shared, two SMLAD per row. */
#define MRT_SVDF_DOT2(x, w0, w1, s0, s1, k, n, off2)                                            \
    for (; (k) + 4 <= (n); (k) += 4) {                                                          \
        uint32_t xe_, xo_, we_, wo_;                                                            \
        (x) = read_reordered_offset((x), (off2), &xe_, &xo_);                                   \
        (w0) = read_reordered((w0), &we_, &wo_);                                                \
        (s0) = mrt_smlad_v(xe_, we_, (s0));                                                     \
        (s0) = mrt_smlad_v(xo_, wo_, (s0));                                                     \
        (w1) = read_reordered((w1), &we_, &wo_);                                                \
        (s1) = mrt_smlad_v(xe_, we_, (s1));                                                     \
        (s1) = mrt_smlad_v(xo_, wo_, (s1));                                                     \
    }
#else
#define MRT_SVDF_DOT2(x, w0, w1, s0, s1, k, n, off2) (void)0
#endif

/* Unit sums of one batch (+ bias) from the per-filter time sums `t` (int32 [num_filters]),
 * then requantized into the output: the last passes of arm_svdf_s8. */
static void svdf_units(const mrt_svdf_params *p, int32_t *units, int8_t *out)
{
    const int32_t unit_count = p->num_filters / p->rank;
    for (int32_t u = 0; u < unit_count; ++u) {
        int32_t r = mrt_requantize(units[u], p->mult_2, p->shift_2) + p->output_zp;
        out[u] = (int8_t)mrt_clamp(r, -128, 127);
    }
}

/* One batch's time sums folded into unit sums: units[u] = bias[u] + sum over the unit's rank
 * filters of (sum_j wt[f][j] * state[f][j] + time_sums[f]). */
#define MRT_SVDF_TIME(p, T, state_b, units, DOT)                                                \
    do {                                                                                        \
        const T *v1_ = (const T *)(p)->weights_time;                                            \
        const T *v2_ = (state_b);                                                               \
        const int32_t m_ = (p)->memory_size;                                                    \
        int32_t f_ = 0;                                                                         \
        for (int32_t u_ = 0; u_ < (p)->num_filters / (p)->rank; ++u_) {                        \
            int32_t acc_ = (p)->bias ? (p)->bias[u_] : 0;                                       \
            for (int32_t r_ = 0; r_ < (p)->rank; ++r_, ++f_) {                                  \
                int32_t sum_ = (p)->time_sums ? (p)->time_sums[f_] : 0;                         \
                int32_t j_ = 0;                                                                 \
                DOT(v1_, v2_, sum_, j_, m_);                                                    \
                for (; j_ < m_; ++j_) {                                                         \
                    sum_ += *v1_++ * *v2_++;                                                    \
                }                                                                               \
                acc_ += sum_;                                                                   \
            }                                                                                   \
            (units)[u_] = acc_;                                                                 \
        }                                                                                       \
    } while (0)

#if MRT_DSP
#define MRT_SVDF_DOT_S8(v1, v2, sum, j, m)                                                      \
    for (; (j) + 4 <= (m); (j) += 4) {                                                          \
        uint32_t a0_, a1_, b0_, b1_;                                                            \
        (v1) = read_reordered((v1), &a0_, &a1_);                                                \
        (v2) = read_reordered((v2), &b0_, &b1_);                                                \
        (sum) = mrt_smlad_v(a0_, b0_, (sum));                                                   \
        (sum) = mrt_smlad_v(a1_, b1_, (sum));                                                   \
    }
#define MRT_SVDF_DOT_S16(v1, v2, sum, j, m)                                                     \
    for (; (j) + 2 <= (m); (j) += 2) {                                                          \
        (sum) = mrt_smlad_v((uint32_t)mrt_read_s16x2(v1), (uint32_t)mrt_read_s16x2(v2), (sum)); \
        (v1) += 2;                                                                              \
        (v2) += 2;                                                                              \
    }
#else
#define MRT_SVDF_DOT_S8(v1, v2, sum, j, m) (void)0
#define MRT_SVDF_DOT_S16(v1, v2, sum, j, m) (void)0
#endif

/* One invoke with a state of element type T: the shift, the feature products into the
 * memories' last slots, then per batch the unit sums and the outputs. */
#define MRT_SVDF_INVOKE(p, T, DOT)                                                              \
    do {                                                                                        \
        const int32_t filters_ = (p)->num_filters, mem_ = (p)->memory_size;                    \
        T *state_ = (T *)(p)->state;                                                            \
        __builtin_memmove(state_, state_ + 1, (size_t)((p)->batch * filters_ * mem_ - 1) * sizeof(T)); \
        for (int32_t b_ = 0; b_ < (p)->batch; ++b_) {                                           \
            T *last_ = state_ + b_ * filters_ * mem_ + (mem_ - 1);                              \
            MRT_SVDF_FEATURE(p, (p)->input + b_ * (p)->input_size, MRT_SVDF_STORE);            \
        }                                                                                       \
        for (int32_t b_ = 0; b_ < (p)->batch; ++b_) {                                           \
            MRT_SVDF_TIME(p, T, state_ + b_ * filters_ * mem_, (p)->buffer, DOT);               \
            svdf_units(p, (p)->buffer, (p)->output + b_ * (filters_ / (p)->rank));              \
        }                                                                                       \
    } while (0)
/* The new state value of filter f, stored in its memory's last slot (last_, mem_ of the
 * invoke above). */
#define MRT_SVDF_STORE(f, dot) last_[(f) * mem_] = (__typeof__(*last_))feature_out((dot), p)

int32_t mrt_svdf_s8(const mrt_svdf_params *p)
{
    MRT_SVDF_INVOKE(p, int8_t, MRT_SVDF_DOT_S8);
    return 0;
}

int32_t mrt_svdf_state_s16_s8(const mrt_svdf_params *p)
{
    MRT_SVDF_INVOKE(p, int16_t, MRT_SVDF_DOT_S16);
    return 0;
}

/* ================================================================ float32 */
/* SVDF float32 (mrt_svdf_f32, mrt_nnfunctions.h), TFLM's EvalFloatSvdfReference as
 * the numpy twin (kernels/svdf.py) computes it, bit for bit: the state moves one element left,
 * each filter's feature dot product (0.0f, then + weight * input in input order) goes into its
 * memory's last slot, each filter's time sum (0.0f, then + time weight * state in memory order)
 * into the scratch buffer (TFLM's scratch), the output starts as the bias (or 0.0f) and adds its
 * rank filters' sums in order, then ActivationValFloat (TfLiteMax / TfLiteMin comparisons,
 * newlib's tanhf for TANH: within a few ulp of the host's glibc, not bit-equal). */

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
