/* micro_rt: SOFTMAX int16 (CMSIS-NN's arm_softmax_s16, arm_nnfunctions.h), TFLM-exact. */
#include "arm_nnfunctions.h"
#include "mrt_math.h"

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
