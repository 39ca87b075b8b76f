"""TFLM's Signal front-end operators up to the power spectrum: SignalWindow,
SignalFftAutoScale, SignalRfft and SignalIrfft (int16, int32, float32), SignalEnergy. Custom operators, registered under
these names as TFLM's resolver does; options come from the flexbuffer map.

Read from tensorflow/tflite-micro signal/micro/kernels/{window,fft_auto_scale_*,rfft,irfft,energy}.cc
and signal/src (ApplyWindow, FftAutoScale/MaxAbs16, kiss_fftr/kiss_fftri, SpectrumToEnergy).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import KernelError, ModelError
from ..flexbuffer import read_options
from ..kernel_api import KernelContext, Node, Registration
from .kernel_util import kernel_error, tensor_desc
from .signal_common import allocate_op_data, check_io, check_tensor, msb32, option_int, wrap
from .signal_kissfft import KissFftr, fftr_state_bytes, unsupported_factor


# ---- SignalWindow -----------------------------------------------------------------------------
@dataclass
class WindowParams:
    shift: int
    input_size: int = 0


def _window_init(ctx, buffer) -> WindowParams:
    allocate_op_data(ctx, "TFLMSignalWindowParams")
    shift = option_int(read_options(buffer, "SignalWindow"), "shift", "SignalWindow")
    if not 0 <= shift < 32:
        raise ModelError(f"SignalWindow: shift {shift} is outside 0..31")
    return WindowParams(shift)


def _window_prepare(ctx: KernelContext, node: Node) -> None:
    (x, w), (y,) = check_io(ctx, node, 2, 1)
    if len(x.shape) < 1 or len(w.shape) != 1 or len(x.shape) != len(y.shape):
        raise kernel_error(node, f"needs input rank >= 1, 1-D weights and output rank equal to the "
                                 f"input's: {tensor_desc(x)}, {tensor_desc(w)}, {tensor_desc(y)}")
    for t, role in ((x, "input"), (w, "weights"), (y, "output")):
        check_tensor(node, t, role, np.int16)
    size, width = int(np.prod(x.shape)), int(w.shape[0])
    if width == 0 or size % width or int(np.prod(y.shape)) != size:
        raise kernel_error(node, f"input {tensor_desc(x)} is not a whole number of windows of "
                                 f"{width} (weights) or the output {tensor_desc(y)} differs in size")
    node.user_data.input_size = size


def _window_invoke(ctx: KernelContext, node: Node) -> None:
    x, w = ctx.input(node, 0).data, ctx.input(node, 1).data
    frames = x.reshape(-1, w.shape[0]).astype(np.int32)
    raw = (frames * w.astype(np.int32)) >> node.user_data.shift
    ctx.output(node, 0).data.reshape(frames.shape)[...] = np.clip(raw, -32768, 32767)


# ---- SignalFftAutoScale -----------------------------------------------------------------------
def max_abs16(x: np.ndarray) -> int:
    """MaxAbs16 as C computes it in int16: -(-32768) wraps, so the running maximum can become
    -32768 and later values then replace it; follow the loop only when that can happen."""
    values = np.asarray(x, np.int32).reshape(-1)
    if not (values == -32768).any():
        return int(np.abs(values).max(initial=0))
    best = 0
    for v in values.tolist():
        if v > best:
            best = v
        elif -v > best:
            best = int(wrap(-v, 16))
    return best


def _fft_auto_scale_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y, bits) = check_io(ctx, node, 1, 2)
    check_tensor(node, x, "input", np.int16, 1)
    check_tensor(node, y, "output", np.int16, 1)
    check_tensor(node, bits, "scale bits output", np.int32, 0)
    if x.shape != y.shape:
        raise kernel_error(node, f"input {tensor_desc(x)} and output {tensor_desc(y)} differ")


def _fft_auto_scale_invoke(ctx: KernelContext, node: Node) -> None:
    x = ctx.input(node, 0).data
    peak = max_abs16(x) & 0xFFFFFFFF                   # int16 -> uint32 argument
    scale_bits = max(16 - int(msb32(np.array([peak]))[0]) - 1, 0)
    ctx.output(node, 0).data[...] = wrap(x.astype(np.int64) << scale_bits, 16)
    ctx.output(node, 1).data[...] = scale_bits


# ---- SignalRfft -------------------------------------------------------------------------------
TENSOR_TYPE_INT16, TENSOR_TYPE_INT32, TENSOR_TYPE_FLOAT32 = 7, 2, 0
FFT_TYPES = {TENSOR_TYPE_INT16: np.int16, TENSOR_TYPE_INT32: np.int32, TENSOR_TYPE_FLOAT32: np.float32}


@dataclass
class RfftParams:
    fft_length: int
    plan: Optional[KissFftr] = None
    input_length: int = 0
    scratch_index: int = -1


def _fft_init(ctx, buffer, what: str, struct: str, inverse: bool) -> RfftParams:
    """RfftInitAll / IrfftInitAll for T=int16: the params struct, then the KISS state."""
    options = read_options(buffer, what)
    tensor_type = option_int(options, "T", what)
    if tensor_type not in FFT_TYPES:
        # TFLM's init returns no op data for another type, and its prepare then crashes
        raise KernelError(f"{what}: T={tensor_type} is not int16 (7), int32 (2) or float32 (0)")
    dtype = FFT_TYPES[tensor_type]
    fft_length = option_int(options, "fft_length", what)
    if fft_length < 2 or fft_length % 2 or fft_length > 1 << 16:
        raise ModelError(f"{what}: fft_length {fft_length} must be even, 2..65536 "
                         "(kiss_fftr needs an even length)")
    radix = unsupported_factor(fft_length)
    if radix:
        raise ModelError(f"{what}: fft_length {fft_length} needs a radix-{radix} stage, which "
                         "TFLM's KISS FFT build cannot run (it crashes): use a length whose half "
                         "has only the factors 2, 3 and 5")
    cpx_bytes = 2 * np.dtype(dtype).itemsize
    state = fftr_state_bytes(fft_length, ctx.target.pointer_size, cpx_bytes)
    if inverse and dtype == np.float32:
        state += 2 * ctx.target.pointer_size        # IrfftFloatState {int32 length; cfg pointer}
    allocate_op_data(ctx, struct, state)
    return RfftParams(fft_length, KissFftr(fft_length, inverse, dtype))


def _rfft_init(ctx, buffer) -> RfftParams:
    return _fft_init(ctx, buffer, "SignalRfft", "TfLiteAudioFrontendRfftParams", inverse=False)


def _rfft_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y,) = check_io(ctx, node, 1, 1)
    if len(x.shape) != len(y.shape) or not x.shape:
        raise kernel_error(node, f"input {tensor_desc(x)} and output {tensor_desc(y)} need the "
                                 "same rank (at least 1)")
    params = node.user_data
    check_tensor(node, x, "input", params.plan.dtype)
    check_tensor(node, y, "output", params.plan.dtype)
    params.input_length = int(x.shape[-1])
    frames = int(np.prod(x.shape)) // max(params.input_length, 1)
    if params.input_length > params.fft_length or int(y.shape[-1]) != params.fft_length + 2 \
            or int(np.prod(y.shape[:-1])) != frames:
        raise kernel_error(node, f"input {tensor_desc(x)} must be at most fft_length "
                                 f"{params.fft_length} long and the output {tensor_desc(y)} "
                                 f"{params.fft_length + 2} (fft_length/2 + 1 complex) per frame")
    params.scratch_index = ctx.request_scratch(params.fft_length * np.dtype(params.plan.dtype).itemsize)


def _rfft_invoke(ctx: KernelContext, node: Node) -> None:
    params = node.user_data
    x = ctx.input(node, 0).data.reshape(-1, params.input_length)
    work = np.zeros((x.shape[0], params.fft_length), params.plan.dtype)
    work[:, :params.input_length] = x
    ctx.output(node, 0).data.reshape(x.shape[0], -1)[...] = params.plan(work).reshape(x.shape[0], -1)


# ---- SignalIrfft ------------------------------------------------------------------------------
def _irfft_init(ctx, buffer) -> RfftParams:
    return _fft_init(ctx, buffer, "SignalIrfft", "TfLiteAudioFrontendIrfftParams", inverse=True)


def _irfft_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y,) = check_io(ctx, node, 1, 1)
    if len(x.shape) != len(y.shape) or not x.shape:
        raise kernel_error(node, f"input {tensor_desc(x)} and output {tensor_desc(y)} need the "
                                 "same rank (at least 1)")
    check_tensor(node, x, "input", node.user_data.plan.dtype)
    check_tensor(node, y, "output", node.user_data.plan.dtype)
    n = node.user_data.fft_length
    frames = int(np.prod(x.shape[:-1]))
    # kiss_fftri reads fft_length/2 + 1 complex values and writes fft_length samples per frame
    if int(x.shape[-1]) != n + 2 or int(y.shape[-1]) != n or int(np.prod(y.shape[:-1])) != frames:
        raise kernel_error(node, f"input {tensor_desc(x)} must hold {n + 2} values (fft_length/2 "
                                 f"+ 1 complex) per frame and the output {tensor_desc(y)} {n}")


def _irfft_invoke(ctx: KernelContext, node: Node) -> None:
    params = node.user_data
    x = ctx.input(node, 0).data.reshape(-1, params.fft_length // 2 + 1, 2)
    frames = params.plan.inverse_real(x)
    if frames.dtype == np.float32:        # IrfftFloatApply undoes KISS FFT's scaling
        frames = frames / np.float32(params.fft_length)
    ctx.output(node, 0).data.reshape(x.shape[0], -1)[...] = frames


# ---- SignalEnergy -----------------------------------------------------------------------------
@dataclass
class EnergyParams:
    end_index: int
    start_index: int


def _energy_init(ctx, buffer) -> EnergyParams:
    allocate_op_data(ctx, "TFLMSignalEnergyParams")
    options = read_options(buffer, "SignalEnergy")
    return EnergyParams(option_int(options, "end_index", "SignalEnergy"),
                        option_int(options, "start_index", "SignalEnergy"))


def _energy_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y,) = check_io(ctx, node, 1, 1)
    check_tensor(node, x, "input", np.int16, 1)
    check_tensor(node, y, "output", np.uint32, 1)
    p = node.user_data
    if not 0 <= p.start_index <= p.end_index <= min(x.shape[0] // 2, y.shape[0]):
        raise kernel_error(node, f"start_index {p.start_index} .. end_index {p.end_index} must lie "
                                 f"within the {x.shape[0] // 2} complex inputs and {y.shape[0]} outputs")


def _energy_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    spectrum = ctx.input(node, 0).data.reshape(-1, 2)[p.start_index:p.end_index].astype(np.int64)
    # The rest of the output is left as it was, as in TFLM (the model slices it away).
    ctx.output(node, 0).data[p.start_index:p.end_index] = wrap(
        (spectrum * spectrum).sum(axis=1), 32, signed=False)


CUSTOMS = [
    ("SignalWindow", Registration(init=_window_init, prepare=_window_prepare,
                                  invoke=_window_invoke, name="SignalWindow", temps="i0 i1 o0"), 1),
    ("SignalFftAutoScale", Registration(prepare=_fft_auto_scale_prepare,
                                        invoke=_fft_auto_scale_invoke,
                                        name="SignalFftAutoScale", temps="i0 o0 o1"), 1),
    ("SignalRfft", Registration(init=_rfft_init, prepare=_rfft_prepare, invoke=_rfft_invoke,
                                name="SignalRfft", temps="i0 o0"), 1),
    ("SignalIrfft", Registration(init=_irfft_init, prepare=_irfft_prepare, invoke=_irfft_invoke,
                                 name="SignalIrfft", temps="i0 o0"), 1),
    ("SignalEnergy", Registration(init=_energy_init, prepare=_energy_prepare,
                                  invoke=_energy_invoke, name="SignalEnergy", temps="i0 o0"), 1),
]
