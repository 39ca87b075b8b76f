/* micro_rt: TFLM's Signal library, the spectrum of a frame (SignalWindow, SignalFftAutoScale,
 * SignalRfft, SignalIrfft, SignalEnergy), written from TFLM's signal/src algorithms and KISS
 * FFT's fixed-point (int16) real FFT (int32 and float32: mrt_signal_fft.c). Numpy twins:
 * kernels/signal_spectrum.py, signal_kissfft.py. Declared in mrt_nnfunctions.h. The filter bank
 * is in mrt_signal_filterbank.c, the streaming operators in mrt_signal_stream.c. */
#include "mrt_nnfunctions.h"
#include "mrt_signal_common.h"

int32_t mrt_signal_window_s16(const mrt_signal_window_params *p)
{
    for (int32_t start = 0; start < p->input_size; start += p->weight_size) {
        for (int32_t i = 0; i < p->weight_size; ++i) {
            const int32_t raw = ((int32_t)p->input[start + i] * p->weights[i]) >> p->shift;
            p->output[start + i] = (int16_t)(raw < -32768 ? -32768 : raw > 32767 ? 32767 : raw);
        }
    }
    return 0;
}

int32_t mrt_signal_fft_auto_scale_s16(const int16_t *input, int32_t size, int16_t *output,
                                      int32_t *scale_bits)
{
    int16_t max = 0;            /* int16, as MaxAbs16 keeps it: -(-32768) wraps */
    for (int32_t i = 0; i < size; ++i) {
        const int16_t v = input[i];
        if (v > max) {
            max = v;
        } else if (-v > max) {
            max = (int16_t)-v;
        }
    }
    int32_t bits = 16 - msb32((uint32_t)(int32_t)max) - 1;
    if (bits < 0) {
        bits = 0;
    }
    for (int32_t i = 0; i < size; ++i) {
        output[i] = (int16_t)(input[i] * (1 << bits));
    }
    *scale_bits = bits;
    return 0;
}

/* ---- KISS FFT, int16 (FIXED_POINT 16): every product rounds, every sum wraps to int16 ---- */
typedef struct { int16_t r, i; } cpx16;

static inline int16_t sround(int32_t x)
{
    return (int16_t)((x + (1 << 14)) >> 15);
}

static inline cpx16 fixdiv(cpx16 c, int32_t div)
{
    const int32_t k = 32767 / div;
    cpx16 o = {sround(c.r * k), sround(c.i * k)};
    return o;
}

static inline cpx16 cmul(cpx16 a, cpx16 b)
{
    cpx16 o = {sround(a.r * b.r - a.i * b.i), sround(a.r * b.i + a.i * b.r)};
    return o;
}

static inline cpx16 cadd(cpx16 a, cpx16 b)
{
    cpx16 o = {(int16_t)(a.r + b.r), (int16_t)(a.i + b.i)};
    return o;
}

static inline cpx16 csub(cpx16 a, cpx16 b)
{
    cpx16 o = {(int16_t)(a.r - b.r), (int16_t)(a.i - b.i)};
    return o;
}

static void bfly2(cpx16 *f, int32_t fstride, const cpx16 *tw, int32_t m)
{
    for (int32_t k = 0; k < m; ++k) {
        const cpx16 a = fixdiv(f[k], 2);
        const cpx16 t = cmul(fixdiv(f[k + m], 2), tw[k * fstride]);
        f[k + m] = csub(a, t);
        f[k] = cadd(a, t);
    }
}

static void bfly3(cpx16 *f, int32_t fstride, const cpx16 *tw, int32_t m)
{
    const int16_t epi3_i = tw[fstride * m].i;
    for (int32_t k = 0; k < m; ++k) {
        cpx16 f0 = fixdiv(f[k], 3);
        const cpx16 s1 = cmul(fixdiv(f[k + m], 3), tw[k * fstride]);
        const cpx16 s2 = cmul(fixdiv(f[k + 2 * m], 3), tw[2 * k * fstride]);
        const cpx16 s3 = cadd(s1, s2);
        cpx16 s0 = csub(s1, s2);
        cpx16 f1 = {(int16_t)(f0.r - (s3.r >> 1)), (int16_t)(f0.i - (s3.i >> 1))};
        s0.r = sround(s0.r * epi3_i);
        s0.i = sround(s0.i * epi3_i);
        f0 = cadd(f0, s3);
        f[k + 2 * m].r = (int16_t)(f1.r + s0.i);
        f[k + 2 * m].i = (int16_t)(f1.i - s0.r);
        f1.r = (int16_t)(f1.r - s0.i);
        f1.i = (int16_t)(f1.i + s0.r);
        f[k] = f0;
        f[k + m] = f1;
    }
}

static void bfly4(cpx16 *f, int32_t fstride, const cpx16 *tw, int32_t m, int32_t inverse)
{
    for (int32_t k = 0; k < m; ++k) {
        cpx16 f0 = fixdiv(f[k], 4);
        const cpx16 s0 = cmul(fixdiv(f[k + m], 4), tw[k * fstride]);
        const cpx16 s1 = cmul(fixdiv(f[k + 2 * m], 4), tw[2 * k * fstride]);
        const cpx16 s2 = cmul(fixdiv(f[k + 3 * m], 4), tw[3 * k * fstride]);
        const cpx16 s5 = csub(f0, s1);
        f0 = cadd(f0, s1);
        const cpx16 s3 = cadd(s0, s2), s4 = csub(s0, s2);
        f[k + 2 * m] = csub(f0, s3);
        f[k] = cadd(f0, s3);
        if (inverse) {
            f[k + m].r = (int16_t)(s5.r - s4.i);
            f[k + m].i = (int16_t)(s5.i + s4.r);
            f[k + 3 * m].r = (int16_t)(s5.r + s4.i);
            f[k + 3 * m].i = (int16_t)(s5.i - s4.r);
        } else {
            f[k + m].r = (int16_t)(s5.r + s4.i);
            f[k + m].i = (int16_t)(s5.i - s4.r);
            f[k + 3 * m].r = (int16_t)(s5.r - s4.i);
            f[k + 3 * m].i = (int16_t)(s5.i + s4.r);
        }
    }
}

static void bfly5(cpx16 *f, int32_t fstride, const cpx16 *tw, int32_t m)
{
    const cpx16 ya = tw[fstride * m], yb = tw[fstride * 2 * m];
    for (int32_t u = 0; u < m; ++u) {
        const cpx16 s0 = fixdiv(f[u], 5);
        const cpx16 s1 = cmul(fixdiv(f[u + m], 5), tw[u * fstride]);
        const cpx16 s2 = cmul(fixdiv(f[u + 2 * m], 5), tw[2 * u * fstride]);
        const cpx16 s3 = cmul(fixdiv(f[u + 3 * m], 5), tw[3 * u * fstride]);
        const cpx16 s4 = cmul(fixdiv(f[u + 4 * m], 5), tw[4 * u * fstride]);
        const cpx16 s7 = cadd(s1, s4), s10 = csub(s1, s4), s8 = cadd(s2, s3), s9 = csub(s2, s3);
        f[u].r = (int16_t)(s0.r + s7.r + s8.r);
        f[u].i = (int16_t)(s0.i + s7.i + s8.i);
        cpx16 s5, s6, s11, s12;
        s5.r = (int16_t)(s0.r + sround(s7.r * ya.r) + sround(s8.r * yb.r));
        s5.i = (int16_t)(s0.i + sround(s7.i * ya.r) + sround(s8.i * yb.r));
        s6.r = (int16_t)(sround(s10.i * ya.i) + sround(s9.i * yb.i));
        s6.i = (int16_t)(-sround(s10.r * ya.i) - sround(s9.r * yb.i));
        f[u + m] = csub(s5, s6);
        f[u + 4 * m] = cadd(s5, s6);
        s11.r = (int16_t)(s0.r + sround(s7.r * yb.r) + sround(s8.r * ya.r));
        s11.i = (int16_t)(s0.i + sround(s7.i * yb.r) + sround(s8.i * ya.r));
        s12.r = (int16_t)(-sround(s10.i * yb.i) + sround(s9.i * ya.i));
        s12.i = (int16_t)(sround(s10.r * yb.i) - sround(s9.r * ya.i));
        f[u + 2 * m] = cadd(s11, s12);
        f[u + 3 * m] = csub(s11, s12);
    }
}

/* kf_work: a mixed-radix decimation in time, each stage's p sub-transforms first. */
static void fft_work(cpx16 *out, const cpx16 *in, int32_t fstride, const int32_t *factors,
                     const cpx16 *tw, int32_t inverse)
{
    const int32_t p = factors[0], m = factors[1];
    if (m == 1) {
        for (int32_t k = 0; k < p; ++k) {
            out[k] = in[k * fstride];
        }
    } else {
        for (int32_t k = 0; k < p; ++k) {
            fft_work(out + k * m, in + k * fstride, fstride * p, factors + 2, tw, inverse);
        }
    }
    switch (p) {
    case 2: bfly2(out, fstride, tw, m); break;
    case 3: bfly3(out, fstride, tw, m); break;
    case 4: bfly4(out, fstride, tw, m, inverse); break;
    default: bfly5(out, fstride, tw, m); break;
    }
}

int32_t mrt_signal_rfft_s16(const mrt_signal_fft_params *p)
{
    const int32_t n = p->fft_length / 2;
    const cpx16 *tw = (const cpx16 *)p->twiddles, *super = (const cpx16 *)p->super_twiddles;
    cpx16 *tmp = (cpx16 *)p->tmp;
    for (int32_t frame = 0; frame < p->frames; ++frame) {
        const int16_t *x = p->input + frame * p->input_length;
        cpx16 *y = (cpx16 *)p->output + frame * p->output_length;
        for (int32_t i = 0; i < p->fft_length; ++i) {
            p->work[i] = i < p->input_length ? x[i] : 0;
        }
        fft_work(tmp, (const cpx16 *)p->work, 1, p->factors, tw, 0);
        const cpx16 dc = fixdiv(tmp[0], 2);
        y[0].r = (int16_t)(dc.r + dc.i);
        y[n].r = (int16_t)(dc.r - dc.i);
        y[0].i = y[n].i = 0;
        for (int32_t k = 1; k <= n / 2; ++k) {
            const cpx16 fpk = fixdiv(tmp[k], 2);
            cpx16 fpnk = {tmp[n - k].r, (int16_t)-tmp[n - k].i};
            fpnk = fixdiv(fpnk, 2);
            const cpx16 f1k = cadd(fpk, fpnk), f2k = csub(fpk, fpnk);
            const cpx16 t = cmul(f2k, super[k - 1]);
            y[k].r = (int16_t)((f1k.r + t.r) >> 1);
            y[k].i = (int16_t)((f1k.i + t.i) >> 1);
            y[n - k].r = (int16_t)((f1k.r - t.r) >> 1);
            y[n - k].i = (int16_t)((t.i - f1k.i) >> 1);
        }
    }
    return 0;
}

int32_t mrt_signal_irfft_s16(const mrt_signal_fft_params *p)
{
    const int32_t n = p->fft_length / 2;
    const cpx16 *tw = (const cpx16 *)p->twiddles, *super = (const cpx16 *)p->super_twiddles;
    cpx16 *tmp = (cpx16 *)p->tmp;
    for (int32_t frame = 0; frame < p->frames; ++frame) {
        const cpx16 *z = (const cpx16 *)p->input + frame * p->input_length;
        cpx16 first = {(int16_t)(z[0].r + z[n].r), (int16_t)(z[0].r - z[n].r)};
        tmp[0] = fixdiv(first, 2);
        for (int32_t k = 1; k <= n / 2; ++k) {
            const cpx16 fk = fixdiv(z[k], 2);
            cpx16 fnkc = {z[n - k].r, (int16_t)-z[n - k].i};
            fnkc = fixdiv(fnkc, 2);
            const cpx16 fek = cadd(fk, fnkc);
            const cpx16 fok = cmul(csub(fk, fnkc), super[k - 1]);
            tmp[k] = cadd(fek, fok);
            tmp[n - k] = csub(fek, fok);
            tmp[n - k].i = (int16_t)-tmp[n - k].i;
        }
        fft_work((cpx16 *)(p->output + frame * p->output_length), tmp, 1, p->factors, tw, 1);
    }
    return 0;
}

int32_t mrt_signal_energy_s16(const int16_t *input, int32_t start, int32_t end, uint32_t *output)
{
    for (int32_t i = start; i < end; ++i) {
        const int32_t re = input[2 * i], im = input[2 * i + 1];
        output[i] = (uint32_t)re * (uint32_t)re + (uint32_t)im * (uint32_t)im;
    }
    return 0;
}
