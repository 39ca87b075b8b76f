/* micro_rt: int8 x int8 matrix product with per-channel requantization, the core of the
 * 1x1 convolutions and the fully connected layers (own implementation).
 *
 * Loop order: output channels outer (two at a time, their weights, bias and quantization
 * parameters stay in registers), rows (pixels / batches) inner.
 * When there are at least two rows, the input offset is folded into the bias once per
 * channel: sum_k (x + o) * w = sum_k x * w + o * sum_k w (exact in wrapping int32 arithmetic,
 * which is what the accumulation is), so the inner loop multiplies raw int8 values.
 * - DSP (M4/M7/M33): 2 rows x 2 channels per step of 4 k: 4 word loads, SXTB16 (+ROR 8) to
 *   halfword pairs, 8 SMLAD = 16 MACs; unrolled twice.
 * - no DSP (M0+): 1 row x 2 channels, unrolled by 4, plain MULs.
 */
#include "mrt_support.h"

#if MRT_DSP
static int32_t sum_s8(const int8_t *w, int32_t n)
{
    int32_t s = 0;
    int32_t k = 0;
    for (; k + 4 <= n; k += 4) {
        const uint32_t v = (uint32_t)mrt_read_s8x4(w + k);
        s = __smlad(__sxtb16(v), 0x00010001u, s);
        s = __smlad(mrt_sxtb16_r8(v), 0x00010001u, s);
    }
    for (; k < n; ++k) {
        s += w[k];
    }
    return s;
}

/* 2 rows x 2 channels, raw int8 (offset already folded into the accumulators). Row 1 is at
 * x0 + d and channel 1's weights at w0 + d (d = k_len for contiguous rows), so one index
 * register serves both and the loop needs only 4 pointer registers: no spill. The step of 4
 * is written in assembly so that the register-offset loads and the loop shape are fixed. */
/* One step of 4 k for 2 rows x 2 channels: 3 loads + 1, 8 SXTB16, 8 SMLAD (16 MACs), six
 * temporaries. x0/w0 are post-incremented; row 1 / channel 1 are read at [x0/w0, dm4]
 * (dm4 = row distance - 4 after the increment). */
#define MRT_GEMM_STEP                                                                           \
    "ldr    %[t0], [%[w0]], #4\n\t"                                                             \
    "ldr    %[t1], [%[w0], %[dm4]]\n\t"                                                         \
    "ldr    %[t2], [%[x0]], #4\n\t"                                                             \
    "sxtb16 %[t3], %[t0]\n\t"                                                                   \
    "sxtb16 %[t0], %[t0], ror #8\n\t"                                                           \
    "sxtb16 %[t4], %[t2]\n\t"                                                                   \
    "sxtb16 %[t2], %[t2], ror #8\n\t"                                                           \
    "smlad  %[s00], %[t3], %[t4], %[s00]\n\t"                                                   \
    "smlad  %[s00], %[t0], %[t2], %[s00]\n\t"                                                   \
    "sxtb16 %[t5], %[t1]\n\t"                                                                   \
    "sxtb16 %[t1], %[t1], ror #8\n\t"                                                           \
    "smlad  %[s10], %[t5], %[t4], %[s10]\n\t"                                                   \
    "smlad  %[s10], %[t1], %[t2], %[s10]\n\t"                                                   \
    "ldr    %[t2], [%[x0], %[dm4]]\n\t"                                                         \
    "sxtb16 %[t4], %[t2]\n\t"                                                                   \
    "sxtb16 %[t2], %[t2], ror #8\n\t"                                                           \
    "smlad  %[s01], %[t3], %[t4], %[s01]\n\t"                                                   \
    "smlad  %[s01], %[t0], %[t2], %[s01]\n\t"                                                   \
    "smlad  %[s11], %[t5], %[t4], %[s11]\n\t"                                                   \
    "smlad  %[s11], %[t1], %[t2], %[s11]\n\t"

/* 2 rows x 2 channels, raw int8 (offset already folded into the accumulators). Row 1 is at
 * x0 + d and channel 1's weights at w0 + d (d = k_len for contiguous rows), so one index
 * register serves both. The loop is written in assembly: GCC's allocation of the 4
 * accumulators + 6 temporaries + 4 pointers spilled inside the loop. */
static inline __attribute__((always_inline)) void dot_2x2(const int8_t *x0, const int8_t *w0, int32_t d,
                                                          int32_t k_len, int32_t *acc)
{
    int32_t s00 = acc[0], s01 = acc[1], s10 = acc[2], s11 = acc[3];
    const int8_t *end = x0 + (k_len & ~7);
    const int32_t dm4 = d - 4;
    uint32_t t0, t1, t2, t3, t4, t5;
    if (x0 != end) {
        __asm__ volatile("1:\n\t" MRT_GEMM_STEP MRT_GEMM_STEP
                         "cmp    %[x0], %[end]\n\t"
                         "bne    1b\n\t"
                         : [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11), [x0] "+r"(x0),
                           [w0] "+r"(w0), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3),
                           [t4] "=&r"(t4), [t5] "=&r"(t5)
                         : [dm4] "r"(dm4), [end] "r"(end)
                         : "cc", "memory");
    }
    if (k_len & 4) {
        __asm__ volatile(MRT_GEMM_STEP
                         : [s00] "+r"(s00), [s01] "+r"(s01), [s10] "+r"(s10), [s11] "+r"(s11), [x0] "+r"(x0),
                           [w0] "+r"(w0), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3),
                           [t4] "=&r"(t4), [t5] "=&r"(t5)
                         : [dm4] "r"(dm4)
                         : "memory");
    }
    for (int32_t k = 0; k < (k_len & 3); ++k) {
        const int32_t a = x0[k], b = x0[d + k];
        s00 += a * w0[k];
        s01 += b * w0[k];
        s10 += a * w0[d + k];
        s11 += b * w0[d + k];
    }
    acc[0] = s00;
    acc[1] = s01;
    acc[2] = s10;
    acc[3] = s11;
}

/* The same with independent strides (strided 1x1 rows). */
static inline __attribute__((always_inline)) void dot_2x2_s(const int8_t *x0, const int8_t *x1, const int8_t *w0,
                                                            const int8_t *w1, int32_t k_len, int32_t *acc)
{
    int32_t s00 = acc[0], s01 = acc[1], s10 = acc[2], s11 = acc[3];
    int32_t k = 0;
    for (; k + 4 <= k_len; k += 4) {
        const uint32_t xv0 = (uint32_t)mrt_read_s8x4(x0 + k);
        const uint32_t xv1 = (uint32_t)mrt_read_s8x4(x1 + k);
        const uint32_t wv0 = (uint32_t)mrt_read_s8x4(w0 + k);
        const uint32_t wv1 = (uint32_t)mrt_read_s8x4(w1 + k);
        const uint32_t x0a = __sxtb16(xv0), x0b = mrt_sxtb16_r8(xv0);
        const uint32_t x1a = __sxtb16(xv1), x1b = mrt_sxtb16_r8(xv1);
        uint32_t wa = __sxtb16(wv0), wb = mrt_sxtb16_r8(wv0);
        s00 = __smlad(wa, x0a, s00);
        s00 = __smlad(wb, x0b, s00);
        s01 = __smlad(wa, x1a, s01);
        s01 = __smlad(wb, x1b, s01);
        wa = __sxtb16(wv1);
        wb = mrt_sxtb16_r8(wv1);
        s10 = __smlad(wa, x0a, s10);
        s10 = __smlad(wb, x0b, s10);
        s11 = __smlad(wa, x1a, s11);
        s11 = __smlad(wb, x1b, s11);
    }
    for (; k < k_len; ++k) {
        const int32_t a = x0[k], b = x1[k];
        s00 += a * w0[k];
        s01 += b * w0[k];
        s10 += a * w1[k];
        s11 += b * w1[k];
    }
    acc[0] = s00;
    acc[1] = s01;
    acc[2] = s10;
    acc[3] = s11;
}
#endif

/* 1 row x 2 channels with the input offset added in the loop. */
static inline __attribute__((always_inline)) void dot_1x2(const int8_t *x, const int8_t *w0, const int8_t *w1,
                                                          int32_t k_len, int32_t x_off, int32_t *acc)
{
    int32_t s0 = acc[0], s1 = acc[1];
    int32_t k = 0;
#if MRT_DSP
    const uint32_t off2 = mrt_dup16(x_off);
    for (; k + 4 <= k_len; k += 4) {
        const uint32_t xv = (uint32_t)mrt_read_s8x4(x + k);
        const uint32_t wv0 = (uint32_t)mrt_read_s8x4(w0 + k);
        const uint32_t wv1 = (uint32_t)mrt_read_s8x4(w1 + k);
        const uint32_t xa = __sxtab16(off2, xv), xb = mrt_sxtab16_r8(off2, xv);
        s0 = __smlad(__sxtb16(wv0), xa, s0);
        s0 = __smlad(mrt_sxtb16_r8(wv0), xb, s0);
        s1 = __smlad(__sxtb16(wv1), xa, s1);
        s1 = __smlad(mrt_sxtb16_r8(wv1), xb, s1);
    }
#else
    for (; k + 4 <= k_len; k += 4) {
        int32_t v = x[k] + x_off;
        s0 += v * w0[k];
        s1 += v * w1[k];
        v = x[k + 1] + x_off;
        s0 += v * w0[k + 1];
        s1 += v * w1[k + 1];
        v = x[k + 2] + x_off;
        s0 += v * w0[k + 2];
        s1 += v * w1[k + 2];
        v = x[k + 3] + x_off;
        s0 += v * w0[k + 3];
        s1 += v * w1[k + 3];
    }
#endif
    for (; k < k_len; ++k) {
        const int32_t v = x[k] + x_off;
        s0 += v * w0[k];
        s1 += v * w1[k];
    }
    acc[0] = s0;
    acc[1] = s1;
}

#if !MRT_DSP
/* 1 row x 2 channels, raw int8 (offset folded into the accumulators), unrolled by 4. */
static inline __attribute__((always_inline)) void dot_1x2_raw(const int8_t *x, const int8_t *w0, const int8_t *w1,
                                                              int32_t k_len, int32_t *acc)
{
    int32_t s0 = acc[0], s1 = acc[1];
    const int8_t *end4 = x + (k_len & ~3);
    while (x != end4) {
        int32_t v = x[0];
        s0 += v * w0[0];
        s1 += v * w1[0];
        v = x[1];
        s0 += v * w0[1];
        s1 += v * w1[1];
        v = x[2];
        s0 += v * w0[2];
        s1 += v * w1[2];
        v = x[3];
        s0 += v * w0[3];
        s1 += v * w1[3];
        x += 4;
        w0 += 4;
        w1 += 4;
    }
    for (int32_t k = 0; k < (k_len & 3); ++k) {
        s0 += x[k] * w0[k];
        s1 += x[k] * w1[k];
    }
    acc[0] = s0;
    acc[1] = s1;
}

static int32_t sum_s8(const int8_t *w, int32_t n)
{
    int32_t s = 0;
    for (int32_t k = 0; k < n; ++k) {
        s += w[k];
    }
    return s;
}
#endif

void mrt_gemm_s8(const int8_t *x, int32_t rows, int32_t x_stride, int32_t k_len, int32_t x_off,
                 const int8_t *w, const int32_t *bias, int32_t out_ch, const int32_t *mult,
                 const int32_t *shift, int32_t per_channel, int32_t out_off, int32_t lo, int32_t hi,
                 int8_t *out)
{
    const int32_t fold = rows >= 2;
    int32_t c = 0;
    for (; c < out_ch; c += 2) {
        const int32_t two = c + 1 < out_ch;
        const int32_t c1 = two ? c + 1 : c;
        const int8_t *w0 = w + c * k_len;
        const int8_t *w1 = w + c1 * k_len;
        const int32_t m0 = per_channel ? mult[c] : mult[0], sh0 = per_channel ? shift[c] : shift[0];
        const int32_t m1 = per_channel ? mult[c1] : mult[0], sh1 = per_channel ? shift[c1] : shift[0];
        int32_t b0 = bias ? bias[c] : 0;
        int32_t b1 = bias ? bias[c1] : 0;
        if (fold) {
            b0 += x_off * sum_s8(w0, k_len);
            b1 += x_off * sum_s8(w1, k_len);
        }
        const int8_t *xr = x;
        int8_t *o = out + c;
        int32_t r = 0;
#if MRT_DSP
        for (; r + 2 <= rows; r += 2) {
            int32_t acc[4] = {b0, b0, b1, b1};
            if (x_stride == k_len && two) {
                dot_2x2(xr, w0, k_len, k_len, acc);
            } else {
                dot_2x2_s(xr, xr + x_stride, w0, w1, k_len, acc);
            }
            o[0] = mrt_out_stage(acc[0], m0, sh0, out_off, lo, hi);
            o[out_ch] = mrt_out_stage(acc[1], m0, sh0, out_off, lo, hi);
            if (two) {
                o[1] = mrt_out_stage(acc[2], m1, sh1, out_off, lo, hi);
                o[out_ch + 1] = mrt_out_stage(acc[3], m1, sh1, out_off, lo, hi);
            }
            xr += 2 * x_stride;
            o += 2 * out_ch;
        }
#else
        if (fold) {
            for (; r < rows; ++r) {
                int32_t acc[2] = {b0, b1};
                dot_1x2_raw(xr, w0, w1, k_len, acc);
                o[0] = mrt_out_stage(acc[0], m0, sh0, out_off, lo, hi);
                if (two) {
                    o[1] = mrt_out_stage(acc[1], m1, sh1, out_off, lo, hi);
                }
                xr += x_stride;
                o += out_ch;
            }
        }
#endif
        for (; r < rows; ++r) {
            int32_t acc[2] = {b0, b1};
            dot_1x2(xr, w0, w1, k_len, fold ? 0 : x_off, acc);
            o[0] = mrt_out_stage(acc[0], m0, sh0, out_off, lo, hi);
            if (two) {
                o[1] = mrt_out_stage(acc[1], m1, sh1, out_off, lo, hi);
            }
            xr += x_stride;
            o += out_ch;
        }
    }
}
