/* micro_rt: TFLM's Signal library, the filter bank of a spectrum (SignalFilterBank,
 * SignalFilterBankSquareRoot, SignalFilterBankSpectralSubtraction, SignalPCAN,
 * SignalFilterBankLog), written from TFLM's signal/src algorithms. Numpy twin:
 * kernels/signal_filterbank.py. Declared in mrt_nnfunctions.h. */
#include "mrt_nnfunctions.h"
#include "mrt_signal_common.h"

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
