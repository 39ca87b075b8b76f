/* micro_rt: gemmlowp fixed-point functions (exp, reciprocal) used by softmax, logistic, tanh.
 * Own implementation of the published gemmlowp algorithms, bit-exact with TFLM. */
#include "mrt_support.h"

/* SaturatingRoundingMultiplyByPOT<exponent>. */
int32_t mrt_sat_mul_pot(int32_t x, int32_t exponent)
{
    if (exponent == 0) {
        return x;
    }
    if (exponent < 0) {
        return mrt_rdbpot(x, -exponent);
    }
    const int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return mrt_shl_wrap(x, exponent);
}

static int32_t exp_quarter(int32_t a)
{
    const int32_t constant_term = 1895147668;
    const int32_t constant_1_over_3 = 715827883;
    const int32_t x = (int32_t)((uint32_t)a + (1u << 28));
    const int32_t x2 = mrt_srdhm(x, x);
    const int32_t x3 = mrt_srdhm(x2, x);
    const int32_t x4 = mrt_srdhm(x2, x2);
    const int32_t x4_over_4 = mrt_rdbpot(x4, 2);
    const int32_t t = mrt_srdhm((int32_t)((uint32_t)x4_over_4 + (uint32_t)x3), constant_1_over_3);
    const int32_t poly = mrt_rdbpot((int32_t)((uint32_t)t + (uint32_t)x2), 1);
    return (int32_t)((uint32_t)constant_term +
                     (uint32_t)mrt_srdhm(constant_term, (int32_t)((uint32_t)x + (uint32_t)poly)));
}

static const int32_t exp_barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};

int32_t mrt_exp_on_negative_values(int32_t a, int32_t integer_bits)
{
    const int32_t frac_bits = 31 - integer_bits;
    const int32_t one_quarter = 1 << (frac_bits - 2);
    const int32_t mask = one_quarter - 1;
    const int32_t a_mod = (int32_t)((uint32_t)(a & mask) - (uint32_t)one_quarter);
    int32_t result = exp_quarter(mrt_sat_mul_pot(a_mod, integer_bits));
    const int32_t remainder = (int32_t)((uint32_t)a_mod - (uint32_t)a);
    for (int32_t e = -2; e <= 4; ++e) {
        if (integer_bits > e) {
            const int32_t pos = frac_bits + e;
            if (pos >= 0 && pos < 32 && ((uint32_t)remainder & (1u << pos))) {
                result = mrt_srdhm(result, exp_barrel[e + 2]);
            }
        }
    }
    if (integer_bits > 5) {
        const int32_t clamp = -(1 << (36 - integer_bits));
        if (a < clamp) {
            result = 0;
        }
    }
    return a == 0 ? INT32_MAX : result;
}

static int32_t newton_reciprocal_f2(int32_t a)
{
    /* RoundingHalfSum(a, INT32_MAX) */
    const int64_t s = (int64_t)a + (int64_t)INT32_MAX;
    const int64_t q = s + (s >= 0 ? 1 : -1);
    const int32_t half_denominator = (int32_t)(q / 2);
    int32_t x = (int32_t)((uint32_t)1515870810 + (uint32_t)mrt_srdhm(half_denominator, -1010580540));
    for (int i = 0; i < 3; ++i) {
        const int32_t hdx = mrt_srdhm(half_denominator, x);
        const int32_t one_minus = (int32_t)((uint32_t)(1 << 29) - (uint32_t)hdx);
        x = (int32_t)((uint32_t)x + (uint32_t)mrt_sat_mul_pot(mrt_srdhm(x, one_minus), 2));
    }
    return x;
}

int32_t mrt_one_over_one_plus_x(int32_t a)
{
    return mrt_sat_mul_pot(newton_reciprocal_f2(a), 1);
}

int32_t mrt_one_minus_x_over_one_plus_x(int32_t a)
{
    return mrt_sat_mul_pot((int32_t)((uint32_t)newton_reciprocal_f2(a) - (1u << 29)), 2);
}
