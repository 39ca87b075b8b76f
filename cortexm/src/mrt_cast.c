/* micro_rt: CAST (TFLM's cast.cc) between int8, int16, int32, uint32, float32 and bool, one loop
 * per (input, output) type pair as TFLM's copyCast templates: integers convert as C's casts
 * (wrapping), bool is x != 0, and float32 -> integer truncates and saturates to the output type
 * with NaN -> 0 (what the oracle computes; an Arm VCVT saturates to 32 bits the same way).
 * Declared in mrt_nnfunctions.h; the numpy twin is kernels/shape_ops.cast_values. */
#include "mrt_nnfunctions.h"

/* float -> integer as the oracle: NaN 0, truncation toward zero, clamped to [lo, hi]. */
static inline int32_t sat_f2i(float x, int32_t lo, int32_t hi)
{
    if (x != x) {
        return 0;
    }
    if (x <= (float)lo) {
        return lo;
    }
    if (x >= (float)hi + 1.0f) {       /* int32: (float)INT32_MAX is already 2^31 */
        return hi;
    }
    return (int32_t)x;
}

static inline uint32_t sat_f2u(float x)
{
    if (x != x || x <= 0.0f) {
        return 0u;
    }
    if (x >= 4294967296.0f) {
        return 0xFFFFFFFFu;
    }
    return (uint32_t)x;
}

/* One source type: the loop for each output type. */
#define MRT_CAST_FROM(NAME, TI, TO_S8, TO_S16, TO_S32, TO_U32)                                   \
    static void NAME(const TI *in, void *out, int32_t n, int32_t out_type)                      \
    {                                                                                           \
        switch (out_type) {                                                                     \
        case MRT_TYPE_INT8:                                                                     \
            for (int32_t i = 0; i < n; ++i) ((int8_t *)out)[i] = TO_S8(in[i]);                  \
            break;                                                                              \
        case MRT_TYPE_INT16:                                                                    \
            for (int32_t i = 0; i < n; ++i) ((int16_t *)out)[i] = TO_S16(in[i]);                \
            break;                                                                              \
        case MRT_TYPE_INT32:                                                                    \
            for (int32_t i = 0; i < n; ++i) ((int32_t *)out)[i] = TO_S32(in[i]);                \
            break;                                                                              \
        case MRT_TYPE_UINT32:                                                                   \
            for (int32_t i = 0; i < n; ++i) ((uint32_t *)out)[i] = TO_U32(in[i]);               \
            break;                                                                              \
        case MRT_TYPE_FLOAT32:                                                                  \
            for (int32_t i = 0; i < n; ++i) ((float *)out)[i] = (float)in[i];                   \
            break;                                                                              \
        default: /* MRT_TYPE_BOOL */                                                            \
            for (int32_t i = 0; i < n; ++i) ((uint8_t *)out)[i] = (uint8_t)(in[i] != 0);        \
            break;                                                                              \
        }                                                                                       \
    }

#define MRT_C_S8(x) ((int8_t)(x))
#define MRT_C_S16(x) ((int16_t)(x))
#define MRT_C_S32(x) ((int32_t)(x))
#define MRT_C_U32(x) ((uint32_t)(x))
#define MRT_F_S8(x) ((int8_t)sat_f2i((x), -128, 127))
#define MRT_F_S16(x) ((int16_t)sat_f2i((x), -32768, 32767))
#define MRT_F_S32(x) sat_f2i((x), INT32_MIN, INT32_MAX)
#define MRT_F_U32(x) sat_f2u(x)

MRT_CAST_FROM(cast_from_s8, int8_t, MRT_C_S8, MRT_C_S16, MRT_C_S32, MRT_C_U32)
MRT_CAST_FROM(cast_from_s16, int16_t, MRT_C_S8, MRT_C_S16, MRT_C_S32, MRT_C_U32)
MRT_CAST_FROM(cast_from_s32, int32_t, MRT_C_S8, MRT_C_S16, MRT_C_S32, MRT_C_U32)
MRT_CAST_FROM(cast_from_u32, uint32_t, MRT_C_S8, MRT_C_S16, MRT_C_S32, MRT_C_U32)
MRT_CAST_FROM(cast_from_bool, uint8_t, MRT_C_S8, MRT_C_S16, MRT_C_S32, MRT_C_U32)
MRT_CAST_FROM(cast_from_f32, float, MRT_F_S8, MRT_F_S16, MRT_F_S32, MRT_F_U32)

int32_t mrt_cast(const void *in, void *out, int32_t n, int32_t in_type, int32_t out_type)
{
    switch (in_type) {
    case MRT_TYPE_INT8: cast_from_s8((const int8_t *)in, out, n, out_type); break;
    case MRT_TYPE_INT16: cast_from_s16((const int16_t *)in, out, n, out_type); break;
    case MRT_TYPE_INT32: cast_from_s32((const int32_t *)in, out, n, out_type); break;
    case MRT_TYPE_UINT32: cast_from_u32((const uint32_t *)in, out, n, out_type); break;
    case MRT_TYPE_FLOAT32: cast_from_f32((const float *)in, out, n, out_type); break;
    default: cast_from_bool((const uint8_t *)in, out, n, out_type); break;
    }
    return 0;
}
