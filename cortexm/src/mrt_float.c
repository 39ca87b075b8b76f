/* micro_rt: float32 kernels (soft-float calling convention: hardware VFP on the FPU cores through
 * -mfloat-abi=softfp, libgcc on the M0+), in the numpy twins' exact operation order.
 *
 * Every kernel mirrors micro_rt.kernels.* float32 arithmetic step by step in float32 (the
 * firmware is built with -ffp-contract=off, so no multiply-add is fused; -Wdouble-promotion
 * guards against double arithmetic): the same accumulation order (TFLM's loop order), the
 * same first term (0 + p0 or p0, as the twin does), padded taps as 0.0f products where the
 * twin multiplies a zero-padded buffer, bias added after the sum, then numpy's
 * maximum/minimum semantics for the activation clamp (NaN propagates, a tie returns the
 * second operand). Transcendentals use newlib's expf / tanhf (what TFLM calls on device):
 * those results are within a few ulp of the host's glibc, not bit-equal. */
#include <math.h>
#include "mrt_shared.h"

/* np.maximum / np.minimum on float32: NaN in either operand propagates, ties give b. */
static inline float np_max(float a, float b)
{
    return (a != a) ? a : (a > b ? a : b);
}

static inline float np_min(float a, float b)
{
    return (a != a) ? a : (a < b ? a : b);
}

/* np.minimum(np.maximum(x, lo), hi): the fused activation of the float kernels. */
static inline float act_clamp(float x, float lo, float hi)
{
    return np_min(np_max(x, lo), hi);
}

/* ---------------------------------------------------------------- CONV_2D, DEPTHWISE_CONV_2D */

/* CONV_2D sum for output channel o at window origin (y0, x0): taps in TFLM's loop order from
 * 0.0f, padded taps as 0.0f products (the twin multiplies a zero-padded buffer). */
static inline float conv_sum_f32(const mrt_conv_f32_params *p, const float *in_b, int32_t y0, int32_t x0,
                                 int32_t o, int32_t ocg)
{
    const int32_t c0 = (o / ocg) * p->fc;
    const float *w = p->filter + o * p->fh * p->fw * p->fc;
    float acc = 0.0f;
    for (int32_t ky = 0; ky < p->fh; ++ky) {
        const int32_t y = y0 + ky * p->dh;
        const int32_t yin = y >= 0 && y < p->ih;
        for (int32_t kx = 0; kx < p->fw; ++kx) {
            const int32_t x = x0 + kx * p->dw;
            const float *wk = w + (ky * p->fw + kx) * p->fc;
            if (yin && x >= 0 && x < p->iw) {
                const float *v = in_b + (y * p->iw + x) * p->ic + c0;
                for (int32_t c = 0; c < p->fc; ++c) {
                    acc += v[c] * wk[c];
                }
            } else {
                for (int32_t c = 0; c < p->fc; ++c) {
                    acc += 0.0f * wk[c];
                }
            }
        }
    }
    return acc;
}

/* DEPTHWISE_CONV_2D sum for output channel o (input channel o / depth multiplier). */
static inline float depthwise_sum_f32(const mrt_conv_f32_params *p, const float *in_b, int32_t y0, int32_t x0,
                                      int32_t o, int32_t mult)
{
    const int32_t c = o / mult;
    float acc = 0.0f;
    for (int32_t ky = 0; ky < p->fh; ++ky) {
        const int32_t y = y0 + ky * p->dh;
        for (int32_t kx = 0; kx < p->fw; ++kx) {
            const int32_t x = x0 + kx * p->dw;
            const float v = (y >= 0 && y < p->ih && x >= 0 && x < p->iw)
                            ? in_b[(y * p->iw + x) * p->ic + c] : 0.0f;
            const float prod = v * p->filter[(ky * p->fw + kx) * p->oc + o];
            acc = (ky == 0 && kx == 0) ? prod : acc + prod;   /* twin: first tap, no 0 + */
        }
    }
    return acc;
}

/* Both convolutions walk the output alike (batch, row, column, channel), then add the bias
 * after the sum and clamp; `depthwise` is a constant in each caller, so each gets its own loop. */
static inline __attribute__((always_inline)) int32_t conv_walk_f32(const mrt_conv_f32_params *p, int32_t depthwise)
{
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    const int32_t mult = p->fc;                         /* depthwise: depth multiplier */
    const int32_t ocg = depthwise ? 0 : p->oc / (p->ic / p->fc);   /* conv: channels per group */
    float *out = p->out;
    for (int32_t b = 0; b < p->n; ++b) {
        const float *in_b = p->in + b * p->ih * p->iw * p->ic;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t y0 = oy * p->sh - p->ph;
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t x0 = ox * p->sw - p->pw;
                for (int32_t o = 0; o < p->oc; ++o) {
                    float acc = depthwise ? depthwise_sum_f32(p, in_b, y0, x0, o, mult)
                                          : conv_sum_f32(p, in_b, y0, x0, o, ocg);
                    if (p->bias) {
                        acc += p->bias[o];
                    }
                    *out++ = act_clamp(acc, lo, hi);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_conv_f32(const mrt_conv_f32_params *p)
{
    return conv_walk_f32(p, 0);
}

int32_t mrt_depthwise_conv_f32(const mrt_conv_f32_params *p)
{
    return conv_walk_f32(p, 1);
}

/* ---------------------------------------------------------------- FULLY_CONNECTED */

int32_t mrt_fully_connected_f32(const mrt_fc_f32_params *p)
{
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    for (int32_t b = 0; b < p->batches; ++b) {
        const float *x = p->in + b * p->accum;
        float *out = p->out + b * p->out_depth;
        for (int32_t o = 0; o < p->out_depth; ++o) {
            const float *w = p->w + o * p->accum;
            float acc = 0.0f;
            for (int32_t d = 0; d < p->accum; ++d) {
                acc += x[d] * w[d];
            }
            if (p->bias) {
                acc += p->bias[o];
            }
            out[o] = act_clamp(acc, lo, hi);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- pooling */

/* TFLM's reference float pooling: each window clipped to the image (its cost follows the image,
 * not the filter size), the sum from 0.0f, the maximum from the lowest float with std::max
 * semantics (a NaN input is skipped: tflm_max keeps its first operand). The twin's padded taps
 * hold 0.0f / the lowest float, no-ops for both, so the results are bit-equal. */
static inline float tflm_max(float a, float b)
{
    return a < b ? b : a;
}

static int32_t pool_f32(const mrt_pool_f32_params *p, int32_t is_max)
{
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    float *out = p->out;
    for (int32_t b = 0; b < p->n; ++b) {
        const float *in_b = p->in + b * p->ih * p->iw * p->c;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t y0 = oy * p->sh - p->ph;
            const int32_t ky0 = y0 < 0 ? -y0 : 0;
            const int32_t ky1 = p->fh < p->ih - y0 ? p->fh : p->ih - y0;
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t x0 = ox * p->sw - p->pw;
                const int32_t kx0 = x0 < 0 ? -x0 : 0;
                const int32_t kx1 = p->fw < p->iw - x0 ? p->fw : p->iw - x0;
                const int32_t count = (ky1 - ky0) * (kx1 - kx0);
                for (int32_t ch = 0; ch < p->c; ++ch) {
                    float acc = is_max ? -3.40282347e+38f : 0.0f;
                    for (int32_t ky = ky0; ky < ky1; ++ky) {
                        for (int32_t kx = kx0; kx < kx1; ++kx) {
                            const float v = in_b[((y0 + ky) * p->iw + x0 + kx) * p->c + ch];
                            acc = is_max ? tflm_max(acc, v) : acc + v;
                        }
                    }
                    if (!is_max) {
                        acc = acc / (float)count;
                    }
                    *out++ = act_clamp(acc, lo, hi);
                }
            }
        }
    }
    return 0;
}

int32_t mrt_avgpool_f32(const mrt_pool_f32_params *p)
{
    return pool_f32(p, 0);
}

int32_t mrt_maxpool_f32(const mrt_pool_f32_params *p)
{
    return pool_f32(p, 1);
}

/* ---------------------------------------------------------------- ADD SUB MUL MAXIMUM MINIMUM */

static inline float binary_one_f32(int32_t op, float x, float y, float lo, float hi)
{
    switch (op) {
    case MRT_OP_ADD: return act_clamp(x + y, lo, hi);
    case MRT_OP_SUB: return act_clamp(x - y, lo, hi);
    case MRT_OP_MUL: return act_clamp(x * y, lo, hi);
    case MRT_OP_MAX: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

int32_t mrt_binary_f32(const mrt_binary_f32_params *p)
{
    const float lo = mrt_fbits(p->act_min), hi = mrt_fbits(p->act_max);
    MRT_BROADCAST_BINARY(p, float, x, y, binary_one_f32(p->op, x, y, lo, hi));
    return 0;
}

/* ---------------------------------------------------------------- unary */

/* reference_ops::Logistic (float): cutoffs, then std::exp. */
static float logistic_f32(float x)
{
    if (x > 16.619047164916992188f) {
        return 1.0f;
    }
    if (x < -9.0f) {
        return expf(x);
    }
    return 1.0f / (1.0f + expf(-x));
}

int32_t mrt_unary_f32(const mrt_unary_f32_params *p)
{
    const float alpha = mrt_fbits(p->alpha);
    for (int32_t i = 0; i < p->n; ++i) {
        const float x = p->in[i];
        float r;
        switch (p->op) {
        case MRT_UNARY_F32_RELU:
            r = np_max(x, 0.0f);
            break;
        case MRT_UNARY_F32_RELU6:
            r = x > 6.0f ? 6.0f : (x < 0.0f ? 0.0f : x);
            break;
        case MRT_UNARY_F32_LEAKY:
            r = x > 0.0f ? x : x * alpha;
            break;
        case MRT_UNARY_F32_LOGISTIC:
            r = logistic_f32(x);
            break;
        case MRT_UNARY_F32_TANH:
            r = tanhf(x);
            break;
        default: {                  /* HARD_SWISH: x * min(6, max(0, x + 3)) / 6 */
            const float m = np_min(6.0f, np_max(0.0f, x + 3.0f));
            r = (x * m) / 6.0f;
            break;
        }
        }
        p->out[i] = r;
    }
    return 0;
}

/* ---------------------------------------------------------------- SOFTMAX */

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

/* ---------------------------------------------------------------- MEAN */

int32_t mrt_mean_f32(const mrt_mean_f32_params *p)
{
    int32_t stride[4], ko[4], kr[4];
    const int32_t count = mrt_mean_axes(p->shape, p->reduce, stride, ko, kr);
    float *out = p->out;
    for (int32_t a0 = 0; a0 < ko[0]; ++a0)
    for (int32_t a1 = 0; a1 < ko[1]; ++a1)
    for (int32_t a2 = 0; a2 < ko[2]; ++a2)
    for (int32_t a3 = 0; a3 < ko[3]; ++a3) {
        const float *base = p->in + a0 * stride[0] + a1 * stride[1] + a2 * stride[2] + a3 * stride[3];
        float acc = 0.0f;
        int32_t first = 1;
        for (int32_t r0 = 0; r0 < kr[0]; ++r0)
        for (int32_t r1 = 0; r1 < kr[1]; ++r1)
        for (int32_t r2 = 0; r2 < kr[2]; ++r2) {
            const float *q = base + r0 * stride[0] + r1 * stride[1] + r2 * stride[2];
            for (int32_t r3 = 0; r3 < kr[3]; ++r3) {
                acc = first ? q[r3] : acc + q[r3];      /* twin: sequential from the first element */
                first = 0;
            }
        }
        *out++ = count ? acc / (float)count : 0.0f;
    }
    return 0;
}
