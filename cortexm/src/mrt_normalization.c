/* micro_rt: LOG_SOFTMAX and L2_NORMALIZATION over the last axis (mrt_nnfunctions.h):
 *  - int8: TFLM's reference kernels (gemmlowp log / inverse square root), TFLM-exact;
 *  - float32: LOG_SOFTMAX with newlib's expf / logf, L2_NORMALIZATION with sqrtf (bit-exact). */
#include <math.h>
#include "mrt_nnfunctions.h"
#include "mrt_support.h"

/* ================================================================ gemmlowp pieces */

/* gemmlowp RoundingHalfSum: (a + b + sign) / 2, truncating. */
static inline int32_t rounding_half_sum(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a + (int64_t)b;
    return (int32_t)((s + (s >= 0 ? 1 : -1)) / 2);
}

static inline int32_t saturate64(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
}

static inline int32_t add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t sub_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/* TFLM's log_x_for_x_greater_than_or_equal_to_1_impl<output_bits, input_bits> on raw values. */
static int32_t log_x_ge_1(int32_t z_a, int32_t input_bits, int32_t output_bits)
{
    const int32_t accum_bits = output_bits + 1;
    const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301, sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769, alpha_f = 638450708;
    const int32_t shifted_quarter = mrt_sat_mul_pot(536870912, -accum_bits);

    const int32_t z_a_headroom_plus_1 = __builtin_clz((uint32_t)z_a);
    const int32_t r_a_tmp = mrt_sat_mul_pot(z_a, z_a_headroom_plus_1 - 1);
    const int32_t r_a_raw = mrt_sat_mul_pot(mrt_srdhm(r_a_tmp, sqrt_half), 1);
    const int32_t z_a_pow_2_adj = saturate64(
        (int64_t)mrt_sat_mul_pot(input_bits - z_a_headroom_plus_1, 31 - accum_bits) + shifted_quarter);
    const int32_t z_b = mrt_srdhm(z_a, sqrt_half);
    const int32_t z_b_headroom = __builtin_clz((uint32_t)z_b) - 1;
    const int32_t r_b_raw = mrt_sat_mul_pot(z_a, z_b_headroom);
    const int32_t z_b_pow_2_adj = saturate64(
        (int64_t)mrt_sat_mul_pot(input_bits - z_b_headroom, 31 - accum_bits) - shifted_quarter);

    const int32_t r = MRT_MIN(r_a_raw, r_b_raw);
    const int32_t z_pow_2_adj = MRT_MAX(z_a_pow_2_adj, z_b_pow_2_adj);
    const int32_t p = rounding_half_sum(r, sqrt_sqrt_half);
    int32_t q = sub_wrap(r, sqrt_sqrt_half);
    q = add_wrap(q, q);
    const int32_t common_sq = mrt_srdhm(q, q);
    const int32_t num = add_wrap(mrt_srdhm(q, r), mrt_srdhm(mrt_srdhm(q, common_sq), alpha_n));
    const int32_t denom_minus_one_0 = add_wrap(
        mrt_srdhm(p, add_wrap(add_wrap(alpha_i, q), mrt_srdhm(alpha_d, common_sq))), mrt_srdhm(alpha_f, q));
    const int32_t recip_denom = mrt_one_over_one_plus_x(denom_minus_one_0);
    const int32_t num_scaled = mrt_sat_mul_pot(num, -accum_bits);
    const int32_t total = add_wrap(mrt_srdhm(z_pow_2_adj, log_2), mrt_srdhm(num_scaled, recip_denom));
    return mrt_sat_mul_pot(total, accum_bits - output_bits);
}

/* ================================================================ LOG_SOFTMAX */

int32_t mrt_log_softmax_s8(const mrt_log_softmax_s8_params *p)
{
    for (int32_t r = 0; r < p->rows; ++r) {
        const int8_t *x = p->in + r * p->depth;
        int8_t *y = p->out + r * p->depth;
        int32_t mx = -128;
        for (int32_t c = 0; c < p->depth; ++c) {
            mx = x[c] > mx ? x[c] : mx;
        }
        uint32_t sum = 0;
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - mx;
            if (diff >= p->diff_min) {
                const int32_t q5 = mrt_requantize(diff, p->in_mult, p->in_left_shift);
                sum += (uint32_t)mrt_rdbpot(mrt_exp_on_negative_values(q5, 5), 12);
            }
        }
        const int32_t log_sum = log_x_ge_1((int32_t)sum, 12, 5);
        const int32_t adjusted = MRT_MAX(p->diff_min - 1,
                                         mrt_requantize(add_wrap(log_sum, INT32_MIN), p->reverse_divisor,
                                                        -p->reverse_right_shift));
        for (int32_t c = 0; c < p->depth; ++c) {
            const int32_t diff = x[c] - mx;
            int32_t v = -128;
            if (diff > adjusted) {
                const int32_t q5 = mrt_requantize(diff, p->in_mult, p->in_left_shift);
                v = mrt_clamp(mrt_rdbpot(sub_wrap(q5, log_sum), 31 - 5 - 4) + 127, -128, 127);
            }
            y[c] = (int8_t)v;
        }
    }
    return 0;
}

int32_t mrt_log_softmax_f32(const float *in, float *out, int32_t rows, int32_t depth)
{
    for (int32_t r = 0; r < rows; ++r) {
        const float *x = in + r * depth;
        float *y = out + r * depth;
        float mx = -3.40282347e+38f;
        for (int32_t c = 0; c < depth; ++c) {
            mx = mx < x[c] ? x[c] : mx;
        }
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            sum = sum + expf(x[c] - mx);
        }
        const float log_sum = logf(sum);
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = (x[c] - mx) - log_sum;
        }
    }
    return 0;
}

/* ================================================================ L2_NORMALIZATION */

int32_t mrt_l2norm_s8(const int8_t *in, int8_t *out, int32_t rows, int32_t depth, int32_t in_zp)
{
    for (int32_t r = 0; r < rows; ++r) {
        const int8_t *x = in + r * depth;
        int8_t *y = out + r * depth;
        uint32_t acc = 0;
        for (int32_t c = 0; c < depth; ++c) {
            const int32_t d = x[c] - in_zp;
            acc += (uint32_t)(d * d);
        }
        int32_t mult, shift;
        mrt_inv_sqrt_multiplier_exp((int32_t)acc, -1, &mult, &shift);
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = (int8_t)mrt_clamp(mrt_requantize(x[c] - in_zp, mult, shift + 7), -128, 127);
        }
    }
    return 0;
}

int32_t mrt_l2norm_f32(const float *in, float *out, int32_t rows, int32_t depth)
{
    for (int32_t r = 0; r < rows; ++r) {
        const float *x = in + r * depth;
        float *y = out + r * depth;
        float sum = 0.0f;
        for (int32_t c = 0; c < depth; ++c) {
            sum = sum + x[c] * x[c];
        }
        float norm = sqrtf(sum);
        norm = norm < 1e-6f ? 1e-6f : norm;
        for (int32_t c = 0; c < depth; ++c) {
            y[c] = x[c] / norm;
        }
    }
    return 0;
}
