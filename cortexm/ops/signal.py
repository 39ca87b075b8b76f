"""Runners of TFLM's Signal operators (cortexm/src/mrt_signal*.c; mrt_signal_fft.c for the int32
and float32 FFTs): SignalWindow, SignalFftAutoScale, SignalRfft and SignalIrfft (int16, int32,
float32), SignalEnergy, SignalFilterBank,
SignalFilterBankSquareRoot, SignalFilterBankSpectralSubtraction, SignalPCAN,
SignalFilterBankLog, SignalFramer, SignalStacker, SignalDelay, SignalOverlapAdd. Their
parameters come from the host kernel's op data (node.user_data, filled by init and prepare as
TFLM's are).

What TFLM keeps in persistent memory and micro_rt keeps on the host side travels through the
ARGS area for the call: the KISS FFT's half-length buffer, the filter bank's accumulators, the
spectral subtraction's noise estimate and the streaming ops' buffered samples (written before
the call, read back after it, so the state carries across invokes on the MCU as on the host;
the streaming kernels keep plain FIFOs, not TFLM's doubled circular buffer: same results,
somewhat different copy costs). The FFT twiddles are the host plan's, placed in flash as the
persistent state TFLM's init computes.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.signal_filterbank import LOG_LUT

from .context import CallContext, KernelCall, UnsupportedOnMcu, uwords, words
from .registry import ANY, FLOAT32, INT16, KernelKey, OpKernel

# ARGS is 4 KiB: an FFT whose work buffer would not fit runs on the host twin.
_MAX_ARGS_BUFFER = 3 * 1024


def _interleaved(pair, dtype=np.int16) -> bytes:
    """(re, im) arrays as complex pairs of `dtype` (int16, int32, float32), little-endian."""
    little = np.dtype(dtype).newbyteorder("<")
    return np.stack([np.asarray(pair[0]), np.asarray(pair[1])], -1).astype(little).tobytes()


def run_window(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    weights = c.t(1)
    block = c.args(uwords(c.in_addr(0), c.in_addr(1), c.out_addr(0)) +
                   words(p.input_size, weights.shape[0], p.shift))
    return [c.call("mrt_signal_window_s16", block)]


def run_fft_auto_scale(c: CallContext) -> list[KernelCall]:
    size = int(c.out(0).shape[0])
    return [c.call("mrt_signal_fft_auto_scale_s16", c.in_addr(0), size, c.out_addr(0), c.out_addr(1))]


# The FFT kernels per sample type: mrt_signal.c (int16), mrt_signal_fft.c (int32, float32).
_FFT_SUFFIX = {np.dtype(np.int16): "s16", np.dtype(np.int32): "s32", np.dtype(np.float32): "f32"}


def _fft_call(c: CallContext, kind: str, work: int, input_length: int,
              output_length: int) -> KernelCall:
    p = c.node.user_data
    plan = p.plan
    dtype = np.dtype(plan.dtype)
    tmp_bytes = plan.ncfft * 2 * dtype.itemsize
    if tmp_bytes > _MAX_ARGS_BUFFER:
        raise UnsupportedOnMcu(f"op {c.node.index} {c.node.op_name}: fft_length {p.fft_length} "
                               f"needs {tmp_bytes} bytes of work memory beyond the ARGS area")
    symbol = f"mrt_signal_{kind}_{_FFT_SUFFIX[dtype]}"
    twiddles = c.const("twiddles", lambda: _interleaved(plan.twiddles, dtype))
    super_twiddles = c.const("super_twiddles", lambda: _interleaved(plan.super_twiddles, dtype) or b"\0" * 4)
    factors = c.const("factors", lambda: np.asarray(plan.factors, "<i4").tobytes())
    tmp = c.args(bytes(tmp_bytes), writable=True)
    frames = int(np.prod(c.out(0).shape[:-1]))
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), work, tmp, twiddles, super_twiddles, factors) +
                   words(p.fft_length, input_length, output_length, frames))
    return c.call(symbol, block)


def run_rfft(c: CallContext) -> list[KernelCall]:
    if c.scratch_offset is None:
        raise UnsupportedOnMcu(f"op {c.node.index} SignalRfft: no scratch buffer planned")
    return [_fft_call(c, "rfft", c.scratch_addr(), c.node.user_data.input_length,
                      int(c.out(0).shape[-1]) // 2)]


def run_irfft(c: CallContext) -> list[KernelCall]:
    return [_fft_call(c, "irfft", 0, int(c.t(0).shape[-1]) // 2,
                      int(c.out(0).shape[-1]))]


def run_energy(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    return [c.call("mrt_signal_energy_s16", c.in_addr(0), p.start_index, p.end_index, c.out_addr(0))]


def run_filter_bank(c: CallContext) -> list[KernelCall]:
    n = c.node.user_data.num_channels
    work = c.args(bytes(8 * (n + 1)), writable=True)
    block = c.args(uwords(*(c.in_addr(i) for i in range(6)), c.out_addr(0), work) +
                   words(n, c.out(0).shape[0]))
    return [c.call("mrt_signal_filter_bank", block)]


def run_filter_bank_sqrt(c: CallContext) -> list[KernelCall]:
    count = int(c.t(0).shape[0])
    return [c.call("mrt_signal_filter_bank_sqrt", c.in_addr(0), count, c.in_addr(1), c.out_addr(0),
                   refusal=f"op {c.node.index} SignalFilterBankSquareRoot: scale bits outside 0..31")]


def run_spectral_subtraction(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    cfg, n = p.config, p.config["num_channels"]
    state = c.args(p.noise_estimate.astype("<u4").tobytes() or b"\0" * 4, writable=True)
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), c.out_addr(1), state) +
                   words(n, c.out(1).shape[0]) +
                   uwords(cfg["smoothing"], cfg["one_minus_smoothing"], cfg["alternate_smoothing"],
                          cfg["alternate_one_minus_smoothing"], cfg["min_signal_remaining"],
                          cfg["smoothing_bits"], cfg["spectral_subtraction_bits"], int(p.clamping)))

    def read_back(mcu) -> None:
        p.noise_estimate[...] = np.frombuffer(mcu.read(state, 4 * n), "<u4")

    return [c.call("mrt_signal_spectral_subtraction", block, after=read_back)]


def run_pcan(c: CallContext) -> list[KernelCall]:
    block = c.args(uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), c.out_addr(0)) +
                   words(c.t(0).shape[0], c.node.user_data.snr_shift))
    return [c.call("mrt_signal_pcan", block)]


def run_filter_bank_log(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    lut = c.const("log_lut", lambda: LOG_LUT.astype("<u2").tobytes())
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), lut) +
                   words(c.t(0).shape[0], p.output_scale, p.input_correction_bits))
    return [c.call("mrt_signal_filter_bank_log", block)]


def _with_state(c: CallContext, symbol: str, state: np.ndarray, fields: bytes,
                store) -> list[KernelCall]:
    """A call whose kernel state (kept on the host between invokes) is written to ARGS before
    it and read back after it through `store`."""
    raw = np.ascontiguousarray(state).tobytes()
    if len(raw) > _MAX_ARGS_BUFFER:
        raise UnsupportedOnMcu(f"op {c.node.index} {c.node.op_name}: {len(raw)} bytes of state "
                               "exceed the ARGS area")
    addr = c.args(raw or b"\0" * 4, writable=True)
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), addr) + fields)

    def read_back(mcu) -> None:
        store(np.frombuffer(mcu.read(addr, len(raw)), state.dtype).reshape(state.shape))

    return [c.call(symbol, block, after=read_back)]


def run_delay(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    lines = np.stack([f.data for f in p.fifos]) if p.fifos else np.zeros((0, 0), np.int16)

    def store(values: np.ndarray) -> None:
        for fifo, line in zip(p.fifos, values):
            fifo.data = line.copy()

    fields = words(len(p.fifos), 1, p.frame_size, p.frame_size, p.delay_length)
    return _with_state(c, "mrt_signal_delay_s16", lines.astype(np.int16), fields, store)


def run_overlap_add(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    symbol = "mrt_signal_overlap_add_s16" if p.dtype == np.int16 else "mrt_signal_overlap_add_f32"

    def store(values: np.ndarray) -> None:
        p.buffers[...] = values

    fields = words(p.buffers.shape[0], p.n_frames, p.frame_size, p.frame_step, 0)
    return _with_state(c, symbol, p.buffers, fields, store)


def _fifo_call(c: CallContext, symbol: str, fifos: list, capacity: int, counts: list,
               fields: bytes, store_counts) -> list[KernelCall]:
    """A call over FIFOs kept on the host: their samples (capacity each, oldest first) and
    counts written to ARGS before it, read back after it."""
    samples = np.zeros((len(fifos), capacity), np.int16)
    for row, fifo in zip(samples, fifos):
        row[:fifo.available] = fifo.data
    if samples.nbytes + 4 * len(counts) > _MAX_ARGS_BUFFER:
        raise UnsupportedOnMcu(f"op {c.node.index} {c.node.op_name}: {samples.nbytes} bytes of "
                               "buffered samples exceed the ARGS area")
    samples_addr = c.args(samples.tobytes() or b"\0" * 4, writable=True)
    counts_addr = c.args(words(*counts), writable=True)
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), c.out_addr(1), samples_addr, counts_addr) +
                   fields)

    def read_back(mcu) -> None:
        got = np.frombuffer(mcu.read(counts_addr, 4 * len(counts)), "<i4")
        rows = np.frombuffer(mcu.read(samples_addr, samples.nbytes), "<i2").reshape(samples.shape)
        for fifo, row, n in zip(fifos, rows, got):
            fifo.data = row[:n].astype(np.int16)
        store_counts(got)

    return [c.call(symbol, block, after=read_back)]


def run_framer(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data
    capacity = p.fifos[0].capacity if p.fifos else 0
    fields = words(len(p.fifos), capacity, p.n_frames, p.frame_size, p.frame_step, 0)
    return _fifo_call(c, "mrt_signal_framer_s16", p.fifos, capacity,
                      [f.available for f in p.fifos], fields, lambda counts: None)


def run_stacker(c: CallContext) -> list[KernelCall]:
    p = c.node.user_data

    def store(counts) -> None:
        p.has_first_frame = bool(counts[1])

    fields = words(1, p.buffer_size, p.num_channels * p.step, p.buffer_size, p.num_channels, p.left)
    return _fifo_call(c, "mrt_signal_stacker_s16", [p.fifo], p.buffer_size,
                      [p.fifo.available, int(p.has_first_frame)], fields, store)


# TFLM's Signal custom operators (uint32 / uint64 inputs register as ANY)
KERNELS: dict[KernelKey, OpKernel] = {
    ("SignalWindow", INT16): OpKernel(run_window),
    ("SignalFftAutoScale", INT16): OpKernel(run_fft_auto_scale),
    **{("SignalRfft", t): OpKernel(run_rfft) for t in (INT16, FLOAT32, ANY)},      # ANY: int32
    **{("SignalIrfft", t): OpKernel(run_irfft) for t in (INT16, FLOAT32, ANY)},
    ("SignalEnergy", INT16): OpKernel(run_energy),
    ("SignalFilterBank", ANY): OpKernel(run_filter_bank),
    ("SignalFilterBankSquareRoot", ANY): OpKernel(run_filter_bank_sqrt),
    ("SignalFilterBankSpectralSubtraction", ANY): OpKernel(run_spectral_subtraction),
    ("SignalPCAN", ANY): OpKernel(run_pcan),
    ("SignalFilterBankLog", ANY): OpKernel(run_filter_bank_log),
    ("SignalDelay", INT16): OpKernel(run_delay),
    ("SignalFramer", INT16): OpKernel(run_framer),
    ("SignalStacker", INT16): OpKernel(run_stacker),
    ("SignalOverlapAdd", INT16): OpKernel(run_overlap_add),
    ("SignalOverlapAdd", FLOAT32): OpKernel(run_overlap_add),
}
