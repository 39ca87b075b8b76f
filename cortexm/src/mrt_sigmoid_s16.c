/* micro_rt: int16 LOGISTIC and TANH (TFLM's reference_integer_ops::Logistic / Tanh on int16; TFLM's
 * CMSIS-NN glue has no kernel for them): the input rescaled by the op's multiplier and shift, then
 * TFLM's 256-entry sigmoid table, linearly interpolated on the low bits (tanh(x) = 2 sigmoid(2x) - 1).
 * Declared in mrt_nnfunctions.h; the numpy twins are kernels/fixedpoint.logistic_int16 / tanh_int16. */
#include "mrt_nnfunctions.h"

/* TFLM's sigmoid_table_uint16 (the same numbers as kernels/fixedpoint.SIGMOID_TABLE_UINT16). */
static const uint16_t sigmoid_table_uint16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
};

int32_t mrt_sigmoid_s16(const int16_t *in, int16_t *out, int32_t n, int32_t input_multiplier,
                        int32_t input_left_shift, int32_t is_tanh)
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
