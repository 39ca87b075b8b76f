/* micro_rt: TFLM's Signal library operators of the audio front end (SignalWindow,
 * SignalFftAutoScale, SignalRfft, SignalIrfft, SignalEnergy, SignalFilterBank, SignalFilterBankSquareRoot,
 * SignalFilterBankSpectralSubtraction, SignalPCAN, SignalFilterBankLog), written from TFLM's
 * signal/src algorithms and KISS FFT's fixed-point (int16) real FFT. Numpy twins:
 * kernels/signal_spectrum.py, signal_kissfft.py, signal_filterbank.py. Declared in
 * mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"

/* MostSignificantBit32 as TFLM's GCC build computes it: 32 - clz(x), and 32 for x == 0. */
static int32_t msb32(uint32_t x)
{
    return x ? 32 - __builtin_clz(x) : 32;
}

static int32_t msb64(uint64_t x)
{
    const uint32_t high = (uint32_t)(x >> 32);
    if (high) {
        return 64 - __builtin_clz(high);
    }
    return x ? 32 - __builtin_clz((uint32_t)x) : 64;
}

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

int32_t mrt_signal_filter_bank(const mrt_signal_filter_bank_params *p)
{
    uint64_t weighted = 0, unweighted = 0;
    for (int32_t i = 0; i < p->num_channels + 1; ++i) {
        const int16_t freq_start = p->channel_frequency_starts[i];
        const int16_t weight_start = p->channel_weight_starts[i];
        for (int32_t j = 0; j < p->channel_widths[i]; ++j) {
            const uint64_t sample = p->input[freq_start + j];
            weighted += (uint64_t)(int64_t)p->weights[weight_start + j] * sample;
            unweighted += (uint64_t)(int64_t)p->unweights[weight_start + j] * sample;
        }
        p->work[i] = weighted;
        weighted = unweighted;
        unweighted = 0;
    }
    for (int32_t i = 0; i < p->output_count; ++i) {
        p->output[i] = p->work[i + 1];
    }
    return 0;
}

static uint32_t sqrt32(uint32_t num)
{
    if (num == 0) {
        return 0;
    }
    uint32_t res = 0;
    const int32_t max_bit = (32 - msb32(num)) | 1;
    uint32_t bit = 1u << (31 - max_bit);
    for (int32_t it = (31 - max_bit) / 2 + 1; it > 0; --it) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFF) {
        ++res;
    }
    return res;
}

static uint32_t sqrt64(uint64_t num)
{
    if ((num >> 32) == 0) {
        return sqrt32((uint32_t)num);
    }
    uint64_t res = 0;
    const int32_t max_bit = (64 - msb64(num)) | 1;
    uint64_t bit = (uint64_t)1 << (63 - max_bit);
    for (int32_t it = (63 - max_bit) / 2 + 1; it > 0; --it) {
        if (num >= res + bit) {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if (num > res && res != 0xFFFFFFFFu) {
        ++res;
    }
    return (uint32_t)res;
}

int32_t mrt_signal_filter_bank_sqrt(const uint64_t *input, int32_t count, const int32_t *scale_bits,
                                    uint32_t *output)
{
    const int32_t shift = *scale_bits;
    if (shift < 0 || shift > 31) {
        return -1;
    }
    for (int32_t i = 0; i < count; ++i) {
        output[i] = sqrt64(input[i]) >> shift;
    }
    return 0;
}

int32_t mrt_signal_spectral_subtraction(const mrt_signal_spectral_subtraction_params *p)
{
    for (int32_t i = 0; i < p->num_channels; ++i) {
        const uint32_t smoothing = (i & 1) ? p->alternate_smoothing : p->smoothing;
        const uint32_t one_minus = (i & 1) ? p->alternate_one_minus_smoothing : p->one_minus_smoothing;
        const uint32_t signal_up = p->input[i] << p->smoothing_bits;
        p->noise_estimate[i] = (uint32_t)(((uint64_t)signal_up * smoothing +
                                           (uint64_t)p->noise_estimate[i] * one_minus) >>
                                          p->spectral_subtraction_bits);
        uint32_t estimate_up = p->noise_estimate[i];
        if (estimate_up > signal_up) {
            estimate_up = signal_up;
            if (p->clamping) {
                p->noise_estimate[i] = estimate_up;
            }
        }
        const uint32_t floor = (uint32_t)(((uint64_t)p->input[i] * p->min_signal_remaining) >>
                                          p->spectral_subtraction_bits);
        const uint32_t subtracted = (signal_up - estimate_up) >> p->smoothing_bits;
        p->output[i] = subtracted > floor ? subtracted : floor;
    }
    for (int32_t i = 0; i < p->noise_output_count; ++i) {
        p->noise_output[i] = p->noise_estimate[i];
    }
    return 0;
}

/* WideDynamicFunction: the PCAN gain, a quadratic per octave of the noise estimate. */
static int16_t wide_dynamic(uint32_t x, const int16_t *lut)
{
    if (x <= 2) {
        return lut[x];
    }
    const int16_t interval = (int16_t)msb32(x);
    lut += 4 * interval - 6;
    const int16_t frac = (int16_t)(((interval < 11) ? (x << (11 - interval)) : (x >> (interval - 11))) & 0x3FF);
    int32_t result = ((int32_t)lut[2] * frac) >> 5;
    result += (int32_t)((uint32_t)lut[1] << 5);
    result *= frac;
    result = (result + (1 << 14)) >> 15;
    result += lut[0];
    return (int16_t)result;
}

int32_t mrt_signal_pcan(const mrt_signal_pcan_params *p)
{
    for (int32_t i = 0; i < p->num_channels; ++i) {
        const uint32_t gain = (uint32_t)(int32_t)wide_dynamic(p->noise_estimate[i], p->gain_lut);
        const uint32_t snr = (uint32_t)(((uint64_t)p->input[i] * gain) >> p->snr_shift);
        p->output[i] = snr < (2u << 12) ? (snr * snr) >> 20 : (snr >> 6) - (1u << 6);
    }
    return 0;
}

/* Log32: log2 from the MSB and a table-interpolated fraction (Q16; log_lut: TFLM's 129 + 1
 * segment corrections, placed in flash by the glue), then ln scaled. */
static uint32_t log32(uint32_t x, uint32_t out_scale, const uint16_t *log_lut)
{
    const uint32_t integer = (uint32_t)msb32(x) - 1;
    int32_t frac = (int32_t)(x - ((uint64_t)1 << integer));
    if (integer < 16) {
        frac <<= 16 - integer;
    } else {
        frac >>= integer - 16;
    }
    const uint32_t seg = (uint32_t)frac >> 9;
    const int32_t c0 = log_lut[seg], c1 = log_lut[seg + 1];
    const int32_t rel = ((c1 - c0) * (frac - (int32_t)(512u * seg))) >> 16;
    const uint32_t log2 = (integer << 16) + (uint32_t)(frac + c0 + rel);
    const uint32_t loge = (uint32_t)(((uint64_t)45426 * log2 + 32768u) >> 16);
    return (out_scale * loge + 32768u) >> 16;
}

int32_t mrt_signal_filter_bank_log(const mrt_signal_log_params *p)
{
    for (int32_t i = 0; i < p->num_channels; ++i) {
        const uint32_t scaled = p->input[i] << p->input_correction_bits;
        if (scaled > 1) {
            const uint32_t v = log32(scaled, (uint32_t)p->output_scale, p->log_lut);
            p->output[i] = (int16_t)(v < 32767u ? v : 32767u);
        } else {
            p->output[i] = 0;
        }
    }
    return 0;
}

int32_t mrt_signal_delay_s16(const mrt_signal_stream_params *p)
{
    const int32_t frame = p->frame_size, delay = p->state_size;
    const int16_t *in = (const int16_t *)p->input;
    int16_t *out = (int16_t *)p->output, *states = (int16_t *)p->state;
    for (int32_t i = 0; i < p->outer_dims; ++i, in += frame, out += frame) {
        int16_t *state = states + i * delay;
        /* out: the first `frame` of state ++ input; state: the last `delay` of them */
        if (frame <= delay) {
            __builtin_memcpy(out, state, (uint32_t)frame * 2);
            __builtin_memmove(state, state + frame, (uint32_t)(delay - frame) * 2);
            __builtin_memcpy(state + delay - frame, in, (uint32_t)frame * 2);
        } else {
            __builtin_memcpy(out, state, (uint32_t)delay * 2);
            __builtin_memcpy(out + delay, in, (uint32_t)(frame - delay) * 2);
            __builtin_memcpy(state, in + frame - delay, (uint32_t)delay * 2);
        }
    }
    return 0;
}

/* OverlapAdd's output step: the first `step` sums out, the rest moved down, zeros after. */
static void overlap_shift(uint8_t *buffer, uint8_t *out, int32_t size, int32_t step, int32_t es)
{
    __builtin_memcpy(out, buffer, (uint32_t)(step * es));
    __builtin_memmove(buffer, buffer + step * es, (uint32_t)((size - step) * es));
    __builtin_memset(buffer + (size - step) * es, 0, (uint32_t)(step * es));
}

int32_t mrt_signal_overlap_add_s16(const mrt_signal_stream_params *p)
{
    const int32_t size = p->frame_size, step = p->frame_step;
    const int16_t *in = (const int16_t *)p->input;
    int16_t *out = (int16_t *)p->output;
    for (int32_t i = 0; i < p->outer_dims; ++i) {
        int16_t *buffer = (int16_t *)p->state + i * size;
        for (int32_t f = 0; f < p->n_frames; ++f, in += size, out += step) {
            for (int32_t j = 0; j < size; ++j) {
                const int32_t v = in[j] + buffer[j];
                buffer[j] = (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
            }
            overlap_shift((uint8_t *)buffer, (uint8_t *)out, size, step, 2);
        }
    }
    return 0;
}

int32_t mrt_signal_overlap_add_f32(const mrt_signal_stream_params *p)
{
    const int32_t size = p->frame_size, step = p->frame_step;
    const float *in = (const float *)p->input;
    float *out = (float *)p->output;
    for (int32_t i = 0; i < p->outer_dims; ++i) {
        float *buffer = (float *)p->state + i * size;
        for (int32_t f = 0; f < p->n_frames; ++f, in += size, out += step) {
            for (int32_t j = 0; j < size; ++j) {
                buffer[j] += in[j];
            }
            overlap_shift((uint8_t *)buffer, (uint8_t *)out, size, step, 4);
        }
    }
    return 0;
}

int32_t mrt_signal_framer_s16(const mrt_signal_fifo_params *p)
{
    const int32_t size = p->frame_size, step = p->frame_step;
    const int16_t *in = p->input;
    int16_t *out = p->output;
    uint8_t valid = 1;
    for (int32_t i = 0; i < p->outer_dims; ++i) {
        int16_t *buf = p->samples + i * p->capacity;
        int32_t count = p->counts[i];
        for (int32_t f = 0; f < p->n_frames; ++f, in += step, out += size) {
            __builtin_memcpy(buf + count, in, (uint32_t)step * 2);
            count += step;
            if (count >= size) {
                __builtin_memcpy(out, buf, (uint32_t)size * 2);
                __builtin_memmove(buf, buf + step, (uint32_t)(count - step) * 2);
                count -= step;
            } else {
                valid = 0;           /* this frame's output is left as it was */
            }
        }
        p->counts[i] = count;
    }
    *p->valid = valid;
    return 0;
}

int32_t mrt_signal_stacker_s16(const mrt_signal_fifo_params *p)
{
    const int32_t channels = p->frame_step, size = p->frame_size, step = p->n_frames;
    int16_t *buf = p->samples;
    int32_t count = p->counts[0];
    __builtin_memcpy(buf + count, p->input, (uint32_t)channels * 2);
    count += channels;
    if (!p->counts[1]) {             /* the first frame stands in for the left context */
        for (int32_t k = 0; k < p->extend; ++k, count += channels) {
            __builtin_memcpy(buf + count, buf + count - channels, (uint32_t)channels * 2);
        }
        p->counts[1] = 1;
    }
    uint8_t valid = 0;
    if (count >= size) {
        __builtin_memcpy(p->output, buf, (uint32_t)size * 2);
        __builtin_memmove(buf, buf + step, (uint32_t)(count - step) * 2);
        count -= step;
        valid = 1;
    }
    p->counts[0] = count;
    *p->valid = valid;
    return 0;
}
