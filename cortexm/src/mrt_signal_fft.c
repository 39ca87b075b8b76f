/* micro_rt: TFLM's SignalRfft / SignalIrfft for int32 (KISS FFT FIXED_POINT=32) and float32, the
 * types whose C kernels mrt_signal.c (int16) does not have. One copy of the algorithm
 * (mrt_kissfft_impl.h) instantiated per type. Numpy twins: kernels/signal_kissfft.py,
 * signal_spectrum.py. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

/* ---- int32: products rounded (sround: + 2^30, >> 31) in int64, sums wrap to int32 ---- */
typedef struct { int32_t r, i; } cpx32;

static inline int32_t wrap_add32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t wrap_sub32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static inline int32_t sround32(int64_t x)
{
    return (int32_t)((x + (1 << 30)) >> 31);
}

#define KF_T int32_t
#define KF_CPX cpx32
#define KF_NAME(x) x##_s32
#define KF_ADD(a, b) wrap_add32((a), (b))
#define KF_SUB(a, b) wrap_sub32((a), (b))
#define KF_NEG(a) wrap_sub32(0, (a))
#define KF_MUL(a, b) sround32((int64_t)(a) * (b))
#define KF_CMUL_R(a, b) sround32((int64_t)(a).r * (b).r - (int64_t)(a).i * (b).i)
#define KF_CMUL_I(a, b) sround32((int64_t)(a).r * (b).i + (int64_t)(a).i * (b).r)
#define KF_FIXDIV(x, div) sround32((int64_t)(x) * (INT32_MAX / (div)))
#define KF_HALF(x) ((x) >> 1)
#include "mrt_kissfft_impl.h"
#undef KF_T
#undef KF_CPX
#undef KF_NAME
#undef KF_ADD
#undef KF_SUB
#undef KF_NEG
#undef KF_MUL
#undef KF_CMUL_R
#undef KF_CMUL_I
#undef KF_FIXDIV
#undef KF_HALF

/* ---- float32: every operation rounded to float; C_FIXDIV is nothing, HALF_OF is * 0.5f ---- */
typedef struct { float r, i; } cpxf;

#define KF_T float
#define KF_CPX cpxf
#define KF_NAME(x) x##_f32
#define KF_ADD(a, b) ((a) + (b))
#define KF_SUB(a, b) ((a) - (b))
#define KF_NEG(a) (-(a))
#define KF_MUL(a, b) ((a) * (b))
#define KF_CMUL_R(a, b) ((a).r * (b).r - (a).i * (b).i)
#define KF_CMUL_I(a, b) ((a).r * (b).i + (a).i * (b).r)
#define KF_FIXDIV(x, div) (x)
#define KF_HALF(x) ((x) * 0.5f)
#include "mrt_kissfft_impl.h"

int32_t mrt_signal_rfft_s32(const mrt_signal_fft_params *p)
{
    rfft_s32(p);
    return 0;
}

int32_t mrt_signal_irfft_s32(const mrt_signal_fft_params *p)
{
    irfft_s32(p);
    return 0;
}

int32_t mrt_signal_rfft_f32(const mrt_signal_fft_params *p)
{
    rfft_f32(p);
    return 0;
}

/* IrfftFloatApply divides KISS FFT's unscaled inverse by fft_length. */
int32_t mrt_signal_irfft_f32(const mrt_signal_fft_params *p)
{
    irfft_f32(p);
    const float length = (float)p->fft_length;
    float *out = (float *)p->output;
    for (int32_t i = 0; i < p->frames * p->output_length; ++i) {
        out[i] = out[i] / length;
    }
    return 0;
}
