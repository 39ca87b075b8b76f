"""TFLM's Signal operators from the power spectrum to log-mel features: SignalFilterBank,
SignalFilterBankSquareRoot, SignalFilterBankSpectralSubtraction (keeps a noise estimate
across invokes; reset() clears it), SignalPCAN, SignalFilterBankLog.

Read from tensorflow/tflite-micro signal/micro/kernels/{filter_bank,filter_bank_square_root*,
filter_bank_spectral_subtraction,pcan,filter_bank_log}.cc and signal/src (FilterbankAccumulate-
Channels, Sqrt64/Sqrt32, FilterbankSpectralSubtraction, ApplyPcanAutoGainControlFixed, Log32).
All arithmetic is unsigned C integer arithmetic, done here in numpy uint64 / int64.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..flexbuffer import read_options
from ..kernel_api import KernelContext, Node, Registration
from .kernel_util import kernel_error, tensor_desc
from .signal_common import (allocate_op_data, check_index_range, check_io, check_tensor, msb32,
                            msb64, option_int, wrap)

U64 = np.uint64


def kernel_error_for(op: str, message: str) -> ModelError:
    """An error about an operator's options, found in init (no node index yet)."""
    return ModelError(f"{op}: {message}")


# ---- SignalFilterBank -------------------------------------------------------------------------
@dataclass
class FilterBankParams:
    num_channels: int


def _filter_bank_init(ctx, buffer) -> FilterBankParams:
    num_channels = option_int(read_options(buffer, "SignalFilterBank"), "num_channels",
                              "SignalFilterBank")
    if num_channels < 0:
        raise kernel_error_for("SignalFilterBank", f"num_channels {num_channels} is negative")
    allocate_op_data(ctx, "TFLMSignalFilterBankParams", (num_channels + 1) * 8)   # + work area
    return FilterBankParams(num_channels)


def _filter_bank_prepare(ctx: KernelContext, node: Node) -> None:
    ins, (y,) = check_io(ctx, node, 6, 1)
    check_tensor(node, ins[0], "input", np.uint32, 1)
    for i, role in enumerate(("weights", "unweights", "channel frequency starts",
                              "channel weight starts", "channel widths"), start=1):
        check_tensor(node, ins[i], role, np.int16, 1)
    check_tensor(node, y, "output", np.uint64, 1)
    n = node.user_data.num_channels
    if any(t.shape[0] < n + 1 for t in ins[3:]) or y.shape[0] > n:
        raise kernel_error(node, f"num_channels {n} needs {n + 1} channel starts and widths and "
                                 f"at most {n} outputs (output {tensor_desc(y)})")


def _filter_bank_invoke(ctx: KernelContext, node: Node) -> None:
    n = node.user_data.num_channels
    spectrum = ctx.input(node, 0).data.astype(U64)
    weights, unweights = (ctx.input(node, i).data.astype(np.int64) for i in (1, 2))
    freq_starts, weight_starts, widths = (ctx.input(node, i).data[:n + 1].astype(np.int64)
                                          for i in (3, 4, 5))
    for what, starts, table in (("frequency", freq_starts, spectrum.size),
                                ("weight", weight_starts, weights.size)):
        check_index_range(node, f"channel {what} starts + widths", starts + np.maximum(widths, 0), table)
        check_index_range(node, f"channel {what} starts", starts, table)
    check_index_range(node, "unweights", weight_starts + np.maximum(widths, 0), unweights.size)
    # int16 weight * uint64 sample: the weight converts to uint64 (a negative one wraps).
    weighted = np.zeros(n + 1, U64)
    unweighted = np.zeros(n + 1, U64)
    for i in range(n + 1):
        width = int(widths[i])
        if width <= 0:
            continue
        samples = spectrum[freq_starts[i]:freq_starts[i] + width]
        w = weights[weight_starts[i]:weight_starts[i] + width].astype(U64)
        u = unweights[weight_starts[i]:weight_starts[i] + width].astype(U64)
        weighted[i] = np.sum(w * samples, dtype=U64)
        unweighted[i] = np.sum(u * samples, dtype=U64)
    # Channel i's output is its weighted sum plus channel i-1's unweighted sum; output 0 of
    # the work area is dropped (TFLM copies from work_area + 1).
    carried = np.concatenate([np.zeros(1, U64), unweighted[:-1]])
    with np.errstate(over="ignore"):
        work = weighted + carried
    out = ctx.output(node, 0).data
    out[...] = work[1:1 + out.shape[0]]


# ---- SignalFilterBankSquareRoot ---------------------------------------------------------------
def sqrt32(num: np.ndarray) -> np.ndarray:
    """Sqrt32: bitwise integer square root, rounded up when the remainder exceeds the root."""
    return _bitwise_sqrt(np.asarray(num, U64) & U64(0xFFFFFFFF), msb32, 32, 0xFFFF)


def sqrt64(num: np.ndarray) -> np.ndarray:
    """Sqrt64: Sqrt32 for values below 2^32, else the same algorithm on 64 bits."""
    num = np.asarray(num, U64)
    small = (num >> U64(32)) == 0
    return np.where(small, sqrt32(num), _bitwise_sqrt(num, msb64, 64, 0xFFFFFFFF)).astype(U64)


def _bitwise_sqrt(num: np.ndarray, msb, bits: int, cap: int) -> np.ndarray:
    num = num.copy()
    nonzero = num != 0
    max_bit = (bits - msb(num)) | 1
    start = (bits - 1) - max_bit                          # bit = 1 << start
    iterations = start // 2 + 1
    bit = np.where(num == 0, U64(0), U64(1) << np.maximum(start, 0).astype(U64))
    res = np.zeros_like(num)
    for step in range(int(iterations.max(initial=0))):
        live = (step < iterations) & nonzero
        take = live & (num >= res + bit)
        num = np.where(take, num - (res + bit), num)
        res = np.where(take, (res >> U64(1)) + bit, np.where(live, res >> U64(1), res))
        bit = np.where(live, bit >> U64(2), bit)
    return np.where((num > res) & (res != U64(cap)), res + U64(1), res)


def _square_root_prepare(ctx: KernelContext, node: Node) -> None:
    (x, bits), (y,) = check_io(ctx, node, 2, 1)
    check_tensor(node, x, "input", np.uint64, 1)
    check_tensor(node, bits, "scale bits", np.int32, 0)
    check_tensor(node, y, "output", np.uint32, 1)
    if y.shape[0] < x.shape[0]:
        raise kernel_error(node, f"output {tensor_desc(y)} is shorter than input {tensor_desc(x)}")


def _square_root_invoke(ctx: KernelContext, node: Node) -> None:
    x = ctx.input(node, 0).data
    shift = int(ctx.input(node, 1).data.reshape(-1)[0])
    if not 0 <= shift < 32:
        raise kernel_error(node, f"scale bits {shift} is outside 0..31")
    ctx.output(node, 0).data[:x.shape[0]] = sqrt64(x) >> U64(shift)


# ---- SignalFilterBankSpectralSubtraction ------------------------------------------------------
SPECTRAL_KEYS = ("alternate_one_minus_smoothing", "alternate_smoothing", "min_signal_remaining",
                 "num_channels", "one_minus_smoothing", "smoothing", "smoothing_bits",
                 "spectral_subtraction_bits")


@dataclass
class SpectralSubtractionParams:
    config: dict
    clamping: bool
    noise_estimate: np.ndarray = field(default_factory=lambda: np.zeros(0, U64))

    def reset(self) -> None:
        self.noise_estimate[...] = 0


def _spectral_init(ctx, buffer) -> SpectralSubtractionParams:
    what = "SignalFilterBankSpectralSubtraction"
    options = read_options(buffer, what)
    config = {k: option_int(options, k, what) for k in SPECTRAL_KEYS}
    # the config's fields are uint32 (num_channels int32)
    config = {k: v if k == "num_channels" else v & 0xFFFFFFFF for k, v in config.items()}
    n = config["num_channels"]
    for key in ("smoothing_bits", "spectral_subtraction_bits"):
        if not 0 <= config[key] < 32:
            raise kernel_error_for(what, f"{key} {config[key]} is outside 0..31")
    if n < 0:
        raise kernel_error_for(what, f"num_channels {n} is negative")
    allocate_op_data(ctx, "TFLMSignalSpectralSubtractionParams", n * 4)   # + noise estimate
    return SpectralSubtractionParams(config, option_int(options, "clamping", what) != 0,
                                     np.zeros(n, U64))


def _spectral_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y, noise) = check_io(ctx, node, 1, 2)
    for t, role in ((x, "input"), (y, "output"), (noise, "noise estimate output")):
        check_tensor(node, t, role, np.uint32, 1)
    n = node.user_data.config["num_channels"]
    if min(x.shape[0], y.shape[0]) < n or noise.shape[0] > n:
        raise kernel_error(node, f"num_channels {n}: input {tensor_desc(x)} and output "
                                 f"{tensor_desc(y)} need {n} channels, the noise estimate at most {n}")
    node.user_data.reset()                                  # Prepare resets the state


def _spectral_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    c, n = p.config, p.config["num_channels"]
    x = ctx.input(node, 0).data[:n].astype(U64)
    odd = (np.arange(n) & 1) == 1
    smoothing = np.where(odd, c["alternate_smoothing"], c["smoothing"]).astype(U64)
    one_minus = np.where(odd, c["alternate_one_minus_smoothing"], c["one_minus_smoothing"]).astype(U64)
    mask = U64(0xFFFFFFFF)
    signal_up = (x << U64(c["smoothing_bits"])) & mask
    bits = U64(c["spectral_subtraction_bits"])
    with np.errstate(over="ignore"):
        estimate = ((signal_up * smoothing + p.noise_estimate * one_minus) >> bits) & mask
    above = estimate > signal_up
    p.noise_estimate[...] = np.where(above & p.clamping, signal_up, estimate)
    estimate_up = np.where(above, signal_up, estimate)
    floor = ((x * U64(c["min_signal_remaining"])) >> bits) & mask
    subtracted = ((signal_up - estimate_up) & mask) >> U64(c["smoothing_bits"])
    ctx.output(node, 0).data[:n] = np.maximum(subtracted, floor)
    noise_out = ctx.output(node, 1).data
    noise_out[...] = p.noise_estimate[:noise_out.shape[0]]


def _spectral_reset(ctx, params: SpectralSubtractionParams) -> None:
    params.reset()


# ---- SignalPCAN -------------------------------------------------------------------------------
PCAN_SNR_BITS, PCAN_OUTPUT_BITS = 12, 6


@dataclass
class PcanParams:
    snr_shift: int


def _pcan_init(ctx, buffer) -> PcanParams:
    allocate_op_data(ctx, "TfLitePcanParams")
    shift = option_int(read_options(buffer, "SignalPCAN"), "snr_shift", "SignalPCAN")
    if not 0 <= shift < 64:
        raise kernel_error_for("SignalPCAN", f"snr_shift {shift} is outside 0..63")
    return PcanParams(shift)


def _pcan_prepare(ctx: KernelContext, node: Node) -> None:
    (x, noise, lut), (y,) = check_io(ctx, node, 3, 1)
    check_tensor(node, x, "input", np.uint32, 1)
    check_tensor(node, noise, "noise estimate", np.uint32, 1)
    check_tensor(node, lut, "gain lut", np.int16, 1)
    check_tensor(node, y, "output", np.uint32, 1)
    n = x.shape[0]
    # WideDynamicFunction reads lut[4 * msb - 6 + 2] for msb up to 32: 125 entries.
    if noise.shape[0] < n or y.shape[0] != n or lut.shape[0] < 4 * 32 - 6 + 3:
        raise kernel_error(node, f"needs a noise estimate and output per channel ({n}) and a gain "
                                 f"lut of at least 125 entries (has {lut.shape[0]})")


def wide_dynamic_function(x: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """WideDynamicFunction: piecewise quadratic gain from the LUT, as int16."""
    x = np.asarray(x, np.int64)
    lut = np.asarray(lut, np.int64)
    interval = msb32(x)
    base = np.clip(4 * interval - 6, 0, lut.size - 3)
    shifted = np.where(interval < 11, x << np.maximum(11 - interval, 0),
                       x >> np.maximum(interval - 11, 0))
    frac = wrap(wrap(shifted, 32, signed=False) & 0x3FF, 16)
    result = (lut[base + 2] * frac) >> 5
    result = wrap(result + wrap(wrap(lut[base + 1], 32, signed=False) << 5, 32), 32)
    result = wrap(result * frac, 32)
    result = wrap(result + (1 << 14), 32) >> 15
    result = result + lut[base]
    small = lut[np.clip(x, 0, 2)]
    return np.where(x <= 2, small, wrap(result, 16))


def pcan_shrink(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, U64)
    low = ((x * x) & U64(0xFFFFFFFF)) >> U64(2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS)
    high = ((x >> U64(PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - U64(1 << PCAN_OUTPUT_BITS)) & U64(0xFFFFFFFF)
    return np.where(x < U64(2 << PCAN_SNR_BITS), low, high)


def _pcan_invoke(ctx: KernelContext, node: Node) -> None:
    x = ctx.input(node, 0).data
    noise = ctx.input(node, 1).data[:x.shape[0]]
    gain = wrap(wide_dynamic_function(noise, ctx.input(node, 2).data), 32, signed=False).astype(U64)
    with np.errstate(over="ignore"):
        snr = ((x.astype(U64) * gain) >> U64(node.user_data.snr_shift)) & U64(0xFFFFFFFF)
    ctx.output(node, 0).data[...] = pcan_shrink(snr)


# ---- SignalFilterBankLog ----------------------------------------------------------------------
LOG_LUT = np.array([
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797,
    2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549,
    4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444,
    5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626,
    5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203,
    5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
    4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875,
    2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094,
    963, 830, 695, 559, 421, 282, 142, 0, 0], np.int64)
LOG_SEGMENTS_LOG2, LOG_SCALE_LOG2, LOG_COEFF = 7, 16, 45426


@dataclass
class LogParams:
    input_correction_bits: int
    output_scale: int


def _log_init(ctx, buffer) -> LogParams:
    allocate_op_data(ctx, "TFLMSignalLogParams")
    options = read_options(buffer, "SignalFilterBankLog")
    bits = option_int(options, "input_correction_bits", "SignalFilterBankLog")
    if not 0 <= bits < 32:
        raise kernel_error_for("SignalFilterBankLog", f"input_correction_bits {bits} is outside 0..31")
    return LogParams(bits, option_int(options, "output_scale", "SignalFilterBankLog"))


def _log_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y,) = check_io(ctx, node, 1, 1)
    check_tensor(node, x, "input", np.uint32, 1)
    check_tensor(node, y, "output", np.int16, 1)
    if y.shape[0] < x.shape[0]:
        raise kernel_error(node, f"output {tensor_desc(y)} is shorter than input {tensor_desc(x)}")


def log32(x: np.ndarray, out_scale: int) -> np.ndarray:
    """Log32: log2 from the MSB plus a LUT-interpolated fraction, then scaled to ln * out_scale."""
    x = np.asarray(x, np.int64)
    integer = msb32(x) - 1
    frac = wrap(x - (np.int64(1) << integer), 32)
    frac = np.where(integer < LOG_SCALE_LOG2, wrap(frac << np.maximum(LOG_SCALE_LOG2 - integer, 0), 32),
                    frac >> np.maximum(integer - LOG_SCALE_LOG2, 0))
    base_seg = wrap(frac, 32, signed=False) >> (LOG_SCALE_LOG2 - LOG_SEGMENTS_LOG2)
    seg_unit = (1 << LOG_SCALE_LOG2) >> LOG_SEGMENTS_LOG2
    c0, c1 = LOG_LUT[base_seg], LOG_LUT[base_seg + 1]
    rel_pos = wrap((c1 - c0) * wrap(frac - seg_unit * base_seg, 32), 32) >> LOG_SCALE_LOG2
    fraction = wrap(frac + c0 + rel_pos, 32, signed=False)
    log2 = wrap((integer << LOG_SCALE_LOG2) + fraction, 32, signed=False).astype(U64)
    round_ = U64(1 << (LOG_SCALE_LOG2 - 1))
    loge = ((U64(LOG_COEFF) * log2 + round_) >> U64(LOG_SCALE_LOG2)) & U64(0xFFFFFFFF)
    with np.errstate(over="ignore"):
        scaled = ((U64(out_scale & 0xFFFFFFFF) * loge) & U64(0xFFFFFFFF)) + round_
    return ((scaled & U64(0xFFFFFFFF)) >> U64(LOG_SCALE_LOG2)).astype(np.int64)


def _log_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    x = ctx.input(node, 0).data.astype(np.int64)
    scaled = wrap(x << p.input_correction_bits, 32, signed=False)
    logs = log32(np.maximum(scaled, 2), p.output_scale)
    out = np.where(scaled > 1, np.minimum(logs, 32767), 0)
    ctx.output(node, 0).data[:x.shape[0]] = out


CUSTOMS = [
    # SignalFilterBank's Prepare reads its six inputs without freeing any in between
    ("SignalFilterBank", Registration(init=_filter_bank_init, prepare=_filter_bank_prepare,
                                      invoke=_filter_bank_invoke, name="SignalFilterBank",
                                      temps="i0 i1 i2 i3 i4 i5 o0"), 1),
    ("SignalFilterBankSquareRoot", Registration(prepare=_square_root_prepare,
                                                invoke=_square_root_invoke,
                                                name="SignalFilterBankSquareRoot", temps="i0 i1 o0"), 1),
    ("SignalFilterBankSpectralSubtraction",
     Registration(init=_spectral_init, prepare=_spectral_prepare, invoke=_spectral_invoke,
                  reset=_spectral_reset, name="SignalFilterBankSpectralSubtraction", temps="i0 o0 o1"), 1),
    ("SignalPCAN", Registration(init=_pcan_init, prepare=_pcan_prepare, invoke=_pcan_invoke,
                                name="SignalPCAN", temps="i0 i1 i2 o0"), 1),
    ("SignalFilterBankLog", Registration(init=_log_init, prepare=_log_prepare,
                                         invoke=_log_invoke, name="SignalFilterBankLog", temps="i0 o0"), 1),
]
