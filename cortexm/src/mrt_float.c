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
#include "mrt_ops.h"
#include "mrt_math.h"

static inline float fbits(uint32_t b)
{
    float f;
    __builtin_memcpy(&f, &b, 4);
    return f;
}

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

/* ---------------------------------------------------------------- CONV_2D */

int32_t mrt_conv_f32(const mrt_conv_f32_params *p)
{
    const float lo = fbits(p->act_min), hi = fbits(p->act_max);
    const int32_t groups = p->ic / p->fc;
    const int32_t ocg = p->oc / groups;
    float *out = p->out;
    for (int32_t b = 0; b < p->n; ++b) {
        const float *in_b = p->in + b * p->ih * p->iw * p->ic;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t y0 = oy * p->sh - p->ph;
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t x0 = ox * p->sw - p->pw;
                for (int32_t o = 0; o < p->oc; ++o) {
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

/* ---------------------------------------------------------------- DEPTHWISE_CONV_2D */

int32_t mrt_depthwise_conv_f32(const mrt_conv_f32_params *p)
{
    const float lo = fbits(p->act_min), hi = fbits(p->act_max);
    const int32_t mult = p->fc;          /* depth multiplier */
    float *out = p->out;
    for (int32_t b = 0; b < p->n; ++b) {
        const float *in_b = p->in + b * p->ih * p->iw * p->ic;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t y0 = oy * p->sh - p->ph;
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t x0 = ox * p->sw - p->pw;
                for (int32_t o = 0; o < p->oc; ++o) {
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
                    if (p->bias) {
                        acc = acc + p->bias[o];
                    }
                    *out++ = act_clamp(acc, lo, hi);
                }
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- FULLY_CONNECTED */

int32_t mrt_fully_connected_f32(const mrt_fc_f32_params *p)
{
    const float lo = fbits(p->act_min), hi = fbits(p->act_max);
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

static int32_t pool_f32(const mrt_pool_f32_params *p, int32_t is_max)
{
    const float lo = fbits(p->act_min), hi = fbits(p->act_max);
    const float pad_value = is_max ? -3.40282347e+38f : 0.0f;   /* twin's padded buffer fill */
    float *out = p->out;
    for (int32_t b = 0; b < p->n; ++b) {
        const float *in_b = p->in + b * p->ih * p->iw * p->c;
        for (int32_t oy = 0; oy < p->oh; ++oy) {
            const int32_t y0 = oy * p->sh - p->ph;
            for (int32_t ox = 0; ox < p->ow; ++ox) {
                const int32_t x0 = ox * p->sw - p->pw;
                int32_t count = 0;
                for (int32_t ky = 0; ky < p->fh; ++ky) {
                    for (int32_t kx = 0; kx < p->fw; ++kx) {
                        const int32_t y = y0 + ky, x = x0 + kx;
                        count += (y >= 0 && y < p->ih && x >= 0 && x < p->iw);
                    }
                }
                for (int32_t ch = 0; ch < p->c; ++ch) {
                    float acc = 0.0f;
                    for (int32_t ky = 0; ky < p->fh; ++ky) {
                        const int32_t y = y0 + ky;
                        for (int32_t kx = 0; kx < p->fw; ++kx) {
                            const int32_t x = x0 + kx;
                            const float v = (y >= 0 && y < p->ih && x >= 0 && x < p->iw)
                                            ? in_b[(y * p->iw + x) * p->c + ch] : pad_value;
                            if (ky == 0 && kx == 0) {
                                acc = v;
                            } else {
                                acc = is_max ? np_max(acc, v) : acc + v;
                            }
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

int32_t mrt_binary_f32(const mrt_binary_f32_params *p)
{
    const int32_t *n = p->count;
    const float lo = fbits(p->act_min), hi = fbits(p->act_max);
    float *out = p->out;
    for (int32_t i0 = 0; i0 < n[0]; ++i0)
    for (int32_t i1 = 0; i1 < n[1]; ++i1)
    for (int32_t i2 = 0; i2 < n[2]; ++i2)
    for (int32_t i3 = 0; i3 < n[3]; ++i3)
    for (int32_t i4 = 0; i4 < n[4]; ++i4) {
        const float *a = p->in1 + i0 * p->stride1[0] + i1 * p->stride1[1] + i2 * p->stride1[2] +
                         i3 * p->stride1[3] + i4 * p->stride1[4];
        const float *b = p->in2 + i0 * p->stride2[0] + i1 * p->stride2[1] + i2 * p->stride2[2] +
                         i3 * p->stride2[3] + i4 * p->stride2[4];
        for (int32_t i5 = 0; i5 < n[5]; ++i5) {
            const float x = a[i5 * p->stride1[5]], y = b[i5 * p->stride2[5]];
            float r;
            switch (p->op) {
            case MRT_OP_ADD: r = act_clamp(x + y, lo, hi); break;
            case MRT_OP_SUB: r = act_clamp(x - y, lo, hi); break;
            case MRT_OP_MUL: r = act_clamp(x * y, lo, hi); break;
            case MRT_OP_MAX: r = x > y ? x : y; break;
            default: r = x < y ? x : y; break;
            }
            *out++ = r;
        }
    }
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
    const float alpha = fbits(p->alpha);
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
    const float beta = fbits(beta_bits);
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
    const int32_t *s = p->shape;
    int32_t stride[4];
    stride[3] = 1;
    for (int32_t d = 2; d >= 0; --d) {
        stride[d] = stride[d + 1] * s[d + 1];
    }
    int32_t ko[4], kr[4];
    int32_t count = 1;
    for (int32_t d = 0; d < 4; ++d) {
        ko[d] = p->reduce[d] ? 1 : s[d];
        kr[d] = p->reduce[d] ? s[d] : 1;
        count *= kr[d];
    }
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
