/* micro_rt: SOFTMAX (the softmax family):
 *  - int8 in, int8 / int16 out: CMSIS-NN's arm_softmax_s8 / arm_softmax_s8_s16
 *    (arm_nnfunctions.h): TFLM's fixed-point softmax on gemmlowp's exp and reciprocal
 *    (mrt_fixedpoint.c);
 *  - float32: mrt_softmax_f32 (mrt_nnfunctions.h): TFLM's float softmax with newlib's expf;
 *  - int16: CMSIS-NN's arm_softmax_s16 (arm_nnfunctions.h) on TFLM's two tables. */
#include <math.h>
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_support.h"
#include "mrt_math.h"

/* ================================================================ int8 (CMSIS-NN API) */

static inline __attribute__((always_inline)) void softmax_rows(const int8_t *input, int32_t num_rows, int32_t row_size, int32_t mult, int32_t shift,
                         int32_t diff_min, void *output, int32_t out_bits)
{
    const int32_t out_min = out_bits == 8 ? -128 : -32768;
    const int32_t out_max = out_bits == 8 ? 127 : 32767;
    for (int32_t r = 0; r < num_rows; ++r) {
        const int8_t *x = input + r * row_size;
        int32_t mx = -128;
        for (int32_t i = 0; i < row_size; ++i) {
            mx = x[i] > mx ? x[i] : mx;
        }
        int32_t sum = 0;
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - mx;
            if (diff >= diff_min) {
                const int32_t scaled = mrt_srdhm(mrt_shl_wrap(diff, shift), mult);
                sum += mrt_rdbpot(mrt_exp_on_negative_values(scaled, 5), 12);
            }
        }
        /* GetReciprocal(sum, 12) */
        const int32_t headroom_plus_one = __builtin_clz((uint32_t)sum);
        const int32_t num_bits_over_unit = 12 - headroom_plus_one;
        const int32_t shifted_sum_minus_one = (int32_t)(((uint32_t)sum << headroom_plus_one) - (1u << 31));
        const int32_t shifted_scale = mrt_one_over_one_plus_x(shifted_sum_minus_one);
        for (int32_t i = 0; i < row_size; ++i) {
            const int32_t diff = x[i] - mx;
            int32_t v = out_min;
            if (diff >= diff_min) {
                const int32_t scaled = mrt_srdhm(mrt_shl_wrap(diff, shift), mult);
                const int32_t e = mrt_exp_on_negative_values(scaled, 5);
                const int32_t u = mrt_rdbpot(mrt_srdhm(shifted_scale, e), num_bits_over_unit + 31 - out_bits);
                v = mrt_clamp(u + out_min, out_min, out_max);
            }
            if (out_bits == 8) {
                ((int8_t *)output)[r * row_size + i] = (int8_t)v;
            } else {
                ((int16_t *)output)[r * row_size + i] = (int16_t)v;
            }
        }
    }
}

void arm_softmax_s8(const int8_t *input, const int32_t num_rows, const int32_t row_size, const int32_t mult,
                    const int32_t shift, const int32_t diff_min, int8_t *output)
{
    softmax_rows(input, num_rows, row_size, mult, shift, diff_min, output, 8);
}

void arm_softmax_s8_s16(const int8_t *input, const int32_t num_rows, const int32_t row_size, const int32_t mult,
                        const int32_t shift, const int32_t diff_min, int16_t *output)
{
    softmax_rows(input, num_rows, row_size, mult, shift, diff_min, output, 16);
}

/* ================================================================ float32 */

int32_t mrt_softmax_f32(const float *in, float *out, int32_t rows, int32_t depth, uint32_t beta_bits)
{
    const float beta = mrt_fbits(beta_bits);
    for (int32_t r = 0; r < rows; ++r) {
        const float *x = in + r * depth;
        float *y = out + r * depth;
        float mx = x[0];
        for (int32_t i = 1; i < depth; ++i) {
            mx = x[i] > mx ? x[i] : mx;
        }
        float total = 0.0f;
        for (int32_t i = 0; i < depth; ++i) {
            const float e = expf((x[i] - mx) * beta);
            y[i] = e;
            total = i == 0 ? e : total + e;
        }
        for (int32_t i = 0; i < depth; ++i) {
            y[i] = y[i] / total;
        }
    }
    return 0;
}

/* ================================================================ int16 (CMSIS-NN API) */
/* SOFTMAX int16 (CMSIS-NN's arm_softmax_s16, arm_nnfunctions.h), TFLM-exact. */

/* generic_int16_table_lookup: a 513-entry table, linear interpolation on the low 7 bits. */
static inline int16_t lut_lookup_s16(const int16_t *lut, int32_t value)
{
    const int32_t index = 256 + (value >> 7);
    const int32_t offset = value & 0x7f;
    const int32_t base = lut[index];
    const int16_t slope = (int16_t)(lut[index + 1] - base);
    const int16_t delta = (int16_t)((slope * offset + 64) >> 7);
    return (int16_t)(base + delta);
}

arm_cmsis_nn_status arm_softmax_s16(const int16_t *input, const int32_t num_rows, const int32_t row_size,
    const int32_t mult, const int32_t shift, const cmsis_nn_softmax_lut_s16 *softmax_params, int16_t *output)
{
    if (softmax_params->exp_lut == 0 || softmax_params->one_by_one_lut == 0) {
        return ARM_CMSIS_NN_ARG_ERROR;
    }
    for (int32_t r = 0; r < num_rows; ++r) {
        int32_t max = input[0];
        for (int32_t c = 1; c < row_size; ++c) {
            max = MRT_MAX(max, input[c]);
        }
        /* exp(x - max) per element, cached in the output, and their sum. */
        int32_t sum = 0;
        for (int32_t c = 0; c < row_size; ++c) {
            const int32_t scaled = mrt_requantize(input[c] - max, mult, shift) + 32767;
            const int16_t e = lut_lookup_s16(softmax_params->exp_lut, mrt_clamp(scaled, -32768, 32767));
            output[c] = e;
            sum += e;
        }
        /* 1 / sum from the 1/(1+x) table on the sum's mantissa. TFLM's reference saturates
         * the recentred mantissa to int16 where CMSIS-NN's cast would wrap (a mantissa within
         * 2^13 of 2^31): saturated here, as the oracle. */
        const int32_t headroom = __builtin_clz((uint32_t)sum);
        const int32_t shifted_sum = (int32_t)((((uint32_t)sum << (headroom - 1)) + (1u << 13)) >> 14);
        const int16_t one_by_one = lut_lookup_s16(softmax_params->one_by_one_lut,
                                                  MRT_MIN(shifted_sum - 98304, 32767));
        const int32_t right_shift = 30 - headroom;
        for (int32_t c = 0; c < row_size; ++c) {
            const int32_t v = ((output[c] * one_by_one) >> right_shift) + 1;
            output[c] = (int16_t)MRT_MIN(v >> 1, 32767);
        }
        output += row_size;
        input += row_size;
    }
    return ARM_CMSIS_NN_SUCCESS;
}
