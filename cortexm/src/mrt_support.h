/* micro_rt: pieces that several kernels share and that are more than scalar arithmetic
 * (mrt_math.h): the matrix product of the 1x1 convolutions and fully connected layers, gemmlowp's
 * fixed-point exp and reciprocal, and the loops the int8 / int16 / float32 variants of an
 * operator have in common, so that each runs one copy of the same logic. Internal: the glue
 * calls only what arm_nnfunctions.h and mrt_nnfunctions.h declare (mrt_gemm_s8 is exported
 * too, for tests and experiments). */
#ifndef MRT_SUPPORT_H
#define MRT_SUPPORT_H
#include <math.h>

#include "mrt_nn_types.h"
#include "mrt_math.h"

/* ---- int8 matrix product (mrt_gemm_s8.c) ---- */

/* int8 matrix times int8 weights (1x1 convolution, fully connected): for `rows` rows of x
 * (row r at x + r * x_stride, k_len values, + x_off each) and out_ch weight rows of k_len,
 * out[r * out_ch + c] = mrt_out_stage(bias[c] + sum_k (x[r][k] + x_off) * w[c][k]).
 * mult/shift are per channel when per_channel, else mult[0]/shift[0]; bias may be NULL. */
void mrt_gemm_s8(const int8_t *x, int32_t rows, int32_t x_stride, int32_t k_len, int32_t x_off,
                 const int8_t *w, const int32_t *bias, int32_t out_ch, const int32_t *mult,
                 const int32_t *shift, int32_t per_channel, int32_t out_off, int32_t lo, int32_t hi,
                 int8_t *out);

/* ---- gemmlowp fixed point on raw int32 values (mrt_fixedpoint.c): softmax, logistic, tanh ---- */

/* SaturatingRoundingMultiplyByPOT<exponent>. */
int32_t mrt_sat_mul_pot(int32_t x, int32_t exponent);
/* exp(a) for a <= 0 with `integer_bits` integer bits, result in Q0.31. */
int32_t mrt_exp_on_negative_values(int32_t a, int32_t integer_bits);
/* 1 / (1 + a) for a in Q0.31 [0, 1), result in Q0.31 (as F0). */
int32_t mrt_one_over_one_plus_x(int32_t a);
/* (1 - a) / (1 + a) for a in Q0.31 [0, 1), result in Q0.31. */
int32_t mrt_one_minus_x_over_one_plus_x(int32_t a);

/* ---- loops shared across element types ---- */

/* The 6-D broadcasting walk of mrt_binary_s8 / _s16 / _f32 over `dims` (a mrt_broadcast_dims *):
 * out (T *) is written in order; x and y name the in1 and in2 elements (const T *in1, *in2)
 * inside EXPR, whose value is stored as T. A macro because the element type T varies. */
#define MRT_BROADCAST_BINARY(dims, T, in1, in2, out, x, y, EXPR)                                \
    MRT_BROADCAST_MIXED(dims, T, T, T, in1, in2, out, x, y, EXPR)

/* The same walk with an element type per operand: in1 (const T1 *), in2 (const T2 *) and out
 * (TO *), e.g. the comparisons (bool out) and PRELU (int16 input, int8 alpha). */
#define MRT_BROADCAST_MIXED(dims, T1, T2, TO, in1, in2, out, x, y, EXPR)                         \
    do {                                                                                        \
        const int32_t *n_ = (dims)->count, *s1_ = (dims)->stride1, *s2_ = (dims)->stride2;     \
        TO *out_ = (out);                                                                       \
        for (int32_t i0 = 0; i0 < n_[0]; ++i0)                                                  \
        for (int32_t i1 = 0; i1 < n_[1]; ++i1)                                                  \
        for (int32_t i2 = 0; i2 < n_[2]; ++i2)                                                  \
        for (int32_t i3 = 0; i3 < n_[3]; ++i3)                                                  \
        for (int32_t i4 = 0; i4 < n_[4]; ++i4) {                                                \
            const T1 *a_ = (in1) + i0 * s1_[0] + i1 * s1_[1] + i2 * s1_[2] + i3 * s1_[3] +      \
                           i4 * s1_[4];                                                         \
            const T2 *b_ = (in2) + i0 * s2_[0] + i1 * s2_[1] + i2 * s2_[2] + i3 * s2_[3] +      \
                           i4 * s2_[4];                                                         \
            for (int32_t i5 = 0; i5 < n_[5]; ++i5) {                                            \
                const T1 x = a_[i5 * s1_[5]];                                                   \
                const T2 y = b_[i5 * s2_[5]];                                                   \
                *out_++ = (TO)(EXPR);                                                           \
            }                                                                                   \
        }                                                                                       \
    } while (0)

/* Quantized ADD / SUB / MUL / MAXIMUM / MINIMUM (op: MRT_OP_*) of one element pair, TFLM-exact;
 * mrt_binary_s8 and mrt_binary_s16 share it. MUL wraps in uint32 as TFLM's int16 path may
 * overflow; for int8 the product always fits. Plain `static inline`, and its two callers in
 * different files (mrt_binary_s8.c, mrt_binary.c): with both in one translation unit GCC
 * outlines part of it (mrt_binary_quant_one.part.0) and both kernels get slower. */
static inline int32_t mrt_binary_quant_one(int32_t op, const mrt_binary_quant *q, int32_t a, int32_t b)
{
    switch (op) {
    case MRT_OP_ADD:
    case MRT_OP_SUB: {
        const int32_t x1 = mrt_requantize(mrt_shl_wrap(a + q->in1_offset, q->left_shift), q->in1_mult,
                                          q->in1_shift);
        const int32_t x2 = mrt_requantize(mrt_shl_wrap(b + q->in2_offset, q->left_shift), q->in2_mult,
                                          q->in2_shift);
        const int32_t raw = (int32_t)(op == MRT_OP_ADD ? (uint32_t)x1 + (uint32_t)x2 : (uint32_t)x1 - (uint32_t)x2);
        return mrt_clamp(mrt_requantize(raw, q->out_mult, q->out_shift) + q->out_offset, q->act_min, q->act_max);
    }
    case MRT_OP_MUL: {
        const int32_t prod = (int32_t)((uint32_t)(a + q->in1_offset) * (uint32_t)(b + q->in2_offset));
        return mrt_clamp(mrt_requantize(prod, q->out_mult, q->out_shift) + q->out_offset, q->act_min, q->act_max);
    }
    case MRT_OP_MAX:
        return a > b ? a : b;
    default:
        return a < b ? a : b;
    }
}

/* MEAN over a 4-D row-major input (mrt_mean_s8 / mrt_mean_f32): element strides, and per axis
 * the loop count over kept (ko) and reduced (kr) positions. Returns the number of elements
 * averaged into each output. */
MRT_INLINE int32_t mrt_mean_axes(const int32_t shape[4], const int32_t reduce[4], int32_t stride[4],
                                 int32_t ko[4], int32_t kr[4])
{
    stride[3] = 1;
    for (int32_t d = 2; d >= 0; --d) {
        stride[d] = stride[d + 1] * shape[d + 1];
    }
    int32_t count = 1;
    for (int32_t d = 0; d < 4; ++d) {
        ko[d] = reduce[d] ? 1 : shape[d];
        kr[d] = reduce[d] ? shape[d] : 1;
        count *= kr[d];
    }
    return count;
}

/* ---- im2col into q15 (mrt_conv_s8.c's im2col_q15, mrt_transpose_conv.c's im2col_upscaled) ---- */

/* `n` int8 values at src (const int8_t *) plus `offset` as int16 at dst (int16_t *, advanced past
 * them). With DSP and n a multiple of 4, each group of 4 is stored [x0 x2 x1 x3], the order the q15
 * matrix product reads. A macro, not a function: expanded in place, each kernel's code is what
 * it was when the loop was written out in both (an inline function moved GCC's register choices). */
#if MRT_DSP
#define MRT_Q15_FROM_S8(dst, src, n, offset)                                                      \
    do {                                                                                          \
        int32_t c_ = 0;                                                                           \
        if (((n) & 3) == 0) {                                                                     \
            const uint32_t off2_ = mrt_dup16(offset);                                             \
            for (; c_ < (n); c_ += 4) {                                                           \
                const uint32_t xv_ = (uint32_t)mrt_read_s8x4((src) + c_);                         \
                mrt_write_s16x2(dst, (int32_t)__sxtab16(off2_, xv_));                             \
                mrt_write_s16x2((dst) + 2, (int32_t)mrt_sxtab16_r8(off2_, xv_));                  \
                (dst) += 4;                                                                       \
            }                                                                                     \
        }                                                                                         \
        for (; c_ < (n); ++c_) {                                                                  \
            *(dst)++ = (int16_t)((src)[c_] + (offset));                                           \
        }                                                                                         \
    } while (0)
#else
#define MRT_Q15_FROM_S8(dst, src, n, offset)                                                      \
    do {                                                                                          \
        for (int32_t c_ = 0; c_ < (n); ++c_) {                                                    \
            *(dst)++ = (int16_t)((src)[c_] + (offset));                                           \
        }                                                                                         \
    } while (0)
#endif

/* With DSP, a column of `k_len` q15 values whose taps hold `channels` values each, built in
 * order, put into [x0 x2 x1 x3] groups; nothing to do when channels is a multiple of 4
 * (MRT_Q15_FROM_S8 stored them so) or without DSP. */
#if MRT_DSP
#define MRT_Q15_REORDER_COLUMN(col, channels, k_len)                                              \
    do {                                                                                          \
        const int32_t n_ = ((channels) & 3) == 0 ? 0 : (k_len);                                   \
        for (int32_t k_ = 0; k_ + 4 <= n_; k_ += 4) {                                             \
            const int16_t t_ = (col)[k_ + 1];                                                     \
            (col)[k_ + 1] = (col)[k_ + 2];                                                        \
            (col)[k_ + 2] = t_;                                                                   \
        }                                                                                         \
    } while (0)
#else
#define MRT_Q15_REORDER_COLUMN(col, channels, k_len) ((void)(col), (void)(channels))
#endif

/* ---- TFLM's GetInvSqrtQuantizedMultiplierExp (L2_NORMALIZATION, RSQRT) ---- */

/* 1/sqrt(input) for input >= 0 as a multiplier and a shift (times reverse_shift: -1 gives the left
 * shift RSQRT and L2_NORMALIZATION apply): gemmlowp's Newton-Raphson in Q3.28, five iterations. */
static inline void mrt_inv_sqrt_multiplier_exp(int32_t input, int32_t reverse_shift, int32_t *multiplier,
                                               int32_t *shift)
{
    if (input <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int32_t s = 11;
    while (input >= (1 << 29)) {
        input /= 4;
        ++s;
    }
    const uint32_t left_shift_bit_pairs = ((uint32_t)__builtin_clz((uint32_t)input) - 1u) / 2u - 1u;
    s -= (int32_t)left_shift_bit_pairs;
    input <<= 2u * left_shift_bit_pairs;
    const int32_t half_input = mrt_rdbpot(input >> 1, 1);           /* F3 */
    const int32_t half_three = (1 << 28) + (1 << 27);               /* 1.5 in F3 */
    int32_t x = 1 << 28;                                            /* 1 in F3 */
    for (int32_t i = 0; i < 5; ++i) {
        const int32_t x3 = mrt_sat_mul_pot(mrt_srdhm(mrt_srdhm(x, x), x), 6);
        x = mrt_sat_mul_pot((int32_t)((uint32_t)mrt_srdhm(half_three, x) - (uint32_t)mrt_srdhm(half_input, x3)),
                            3);
    }
    x = mrt_srdhm(x, 1518500250);                                   /* * sqrt(2) / 2 */
    if (s < 0) {
        x = mrt_shl_wrap(x, -s);
        s = 0;
    }
    *multiplier = x;
    *shift = s * reverse_shift;
}

/* ---- float32 activations that call the C library (newlib on the device, as TFLM's std::) ---- */

/* reference_ops::Logistic (float): 1 above 16.619..., expf(x) below -9, else 1 / (1 + expf(-x)). */
static inline float mrt_logistic_f32(float x)
{
    if (x > 16.619047164916992188f) {
        return 1.0f;
    }
    if (x < -9.0f) {
        return expf(x);
    }
    return 1.0f / (1.0f + expf(-x));
}

/* ---- TRANSPOSE_CONV (mrt_transpose_conv.c, mrt_ref_transpose_conv.c) ---- */

/* TFLM's reference scatter: every input value x (input y, x, channel order) times every filter
 * tap, added into the output element it reaches, (iy * sh - ph + fy, ix * sw - pw + fx) when
 * inside the output. A macro because the input, filter and accumulator types vary (int16 /
 * int8 / int64, float / float / float, int8 / int8 / int32); X_T is the type x is read as, x_off
 * is added to it (TFLM's int8 input offset; 0 for int16, -0.0f for float32: an exact identity
 * the compiler folds away). mrt_transpose_conv_s16 / _f32 and the reference flavour's
 * mrt_ref_transpose_conv_s8 share it. */
#define MRT_TCONV_SCATTER(g, IN_T, W_T, ACC_T, X_T, in_data, x_off, filter, acc)                        \
    do {                                                                                          \
        const IN_T *in_ = (in_data);                                                              \
        for (int32_t b = 0; b < (g)->n; ++b) {                                                    \
            ACC_T *acc_b = (acc) + b * (g)->oh * (g)->ow * (g)->oc;                               \
            for (int32_t iy = 0; iy < (g)->ih; ++iy) {                                            \
                for (int32_t ix = 0; ix < (g)->iw; ++ix) {                                        \
                    for (int32_t c = 0; c < (g)->ic; ++c) {                                       \
                        const X_T x = *in_++ + (x_off);                                           \
                        const int32_t ox0 = ix * (g)->sw - (g)->pw, oy0 = iy * (g)->sh - (g)->ph; \
                        for (int32_t fy = 0; fy < (g)->fh; ++fy) {                                \
                            const int32_t oy = oy0 + fy;                                          \
                            for (int32_t fx = 0; fx < (g)->fw; ++fx) {                            \
                                const int32_t ox = ox0 + fx;                                      \
                                if (oy < 0 || oy >= (g)->oh || ox < 0 || ox >= (g)->ow) {         \
                                    continue;                                                     \
                                }                                                                 \
                                ACC_T *dst = acc_b + (oy * (g)->ow + ox) * (g)->oc;               \
                                const W_T *w = (filter) + (fy * (g)->fw + fx) * (g)->ic + c;      \
                                for (int32_t o = 0; o < (g)->oc; ++o) {                           \
                                    dst[o] += x * w[o * (g)->fh * (g)->fw * (g)->ic];             \
                                }                                                                 \
                            }                                                                     \
                        }                                                                         \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    } while (0)

#endif
