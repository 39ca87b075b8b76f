/* micro_rt: int16 LOGISTIC and TANH (TFLM's reference_integer_ops::Logistic / Tanh on int16; TFLM's
 * CMSIS-NN glue has no kernel for them): the input rescaled by the op's multiplier and shift, then
 * TFLM's 256-entry sigmoid table, linearly interpolated on the low bits (tanh(x) = 2 sigmoid(2x) - 1).
 * The table is TFLM's sigmoid_table_uint16, which the glue places in flash from the twin's
 * kernels/fixedpoint.SIGMOID_TABLE_UINT16 (one copy of the numbers in the project).
 * Declared in mrt_nnfunctions.h; the numpy twins are kernels/fixedpoint.logistic_int16 / tanh_int16. */
#include "mrt_nnfunctions.h"

int32_t mrt_sigmoid_s16(const int16_t *in, int16_t *out, int32_t n, int32_t input_multiplier,
                        int32_t input_left_shift, int32_t is_tanh, const uint16_t *sigmoid_table_uint16)
{
    if (input_multiplier == 0) {      /* power-of-two input scale */
        input_multiplier = 3 << input_left_shift;
        input_left_shift = 0;
    }
    const int32_t round = input_left_shift > 0 ? 1 << (input_left_shift - 1) : 0;
    if (!is_tanh) {
        for (int32_t i = 0; i < n; ++i) {
            const int32_t x = (in[i] * input_multiplier + round) >> input_left_shift;
            const uint32_t a = (uint32_t)(x < 0 ? -x : x);
            const uint32_t uh = a >> 9;
            uint32_t r;
            if (uh >= 255u) {
                r = 0x7FFFu << 10;
            } else {
                const uint32_t ua = sigmoid_table_uint16[uh], ub = sigmoid_table_uint16[uh + 1];
                r = (ua << 9) + (a & 0x1FFu) * (ub - ua);
            }
            r = x >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
            out[i] = (int16_t)(r >> 10);
        }
    } else {
        for (int32_t i = 0; i < n; ++i) {
            const int32_t x = (in[i] * input_multiplier + round) >> input_left_shift;
            const uint32_t a = (uint32_t)(x < 0 ? -x : x);
            const uint32_t uh = a >> 8;
            int32_t r;
            if (uh >= 255u) {
                r = (int32_t)(0xFFFFu << 8);
            } else {
                const uint32_t ua = sigmoid_table_uint16[uh], ub = sigmoid_table_uint16[uh + 1];
                r = (int32_t)((ua << 8) + (a & 0xFFu) * (ub - ua));
            }
            r = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
            out[i] = (int16_t)(r >> 8);
        }
    }
    return 0;
}
