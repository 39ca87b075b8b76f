"""TFLM's streaming Signal operators, which keep samples across invokes: SignalFramer,
SignalStacker, SignalDelay (int16 circular buffers) and SignalOverlapAdd (int16, float32).
State lives in the kernel's user data, is sized in the tail as TFLM's persistent buffers are,
and is cleared by the interpreter's reset() as TFLM's registration reset does.

Read from tensorflow/tflite-micro signal/micro/kernels/{framer,stacker,delay,overlap_add}.cc
and signal/src/{circular_buffer,overlap_add}.cc. TFLM's circular buffer only asserts against
overflow (and writes past its end in a release build); the configurations that would overflow
it are refused in prepare instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..errors import KernelError
from ..flexbuffer import read_options
from ..kernel_api import KernelContext, Node, Registration
from .kernel_util import kernel_error, tensor_desc
from .signal_common import allocate_op_data, check_io, check_tensor, option_int

TENSOR_TYPE_INT16, TENSOR_TYPE_FLOAT32 = 7, 0


class SampleFifo:
    """TFLM's CircularBuffer of int16 as a FIFO: what is available, oldest first."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.data = np.zeros(0, np.int16)

    @staticmethod
    def state_bytes(ctx, capacity: int) -> int:
        """CircularBufferGetNeededMemory: the struct and a doubled sample array."""
        return ctx.target.sizeof("CircularBuffer") + 2 * 2 * capacity

    def reset(self) -> None:
        self.data = np.zeros(0, np.int16)

    def write(self, values: np.ndarray) -> None:
        self.data = np.concatenate([self.data, np.asarray(values, np.int16).reshape(-1)])

    def write_zeros(self, n: int) -> None:
        self.write(np.zeros(n, np.int16))

    def extend(self, count: int, times: int) -> None:
        """CircularBufferExtend: append the newest `count` samples `times` times."""
        if count > 0 and times > 0:
            self.write(np.tile(self.data[-count:], times))

    def get(self, n: int) -> np.ndarray:
        return self.data[:n]

    def discard(self, n: int) -> None:
        self.data = self.data[n:]

    @property
    def available(self) -> int:
        return int(self.data.size)


def _pointer_arrays(ctx, count: int, arrays: int = 2) -> None:
    """The per-channel pointer arrays (state buffers, circular buffers) a Prepare allocates."""
    for _ in range(arrays):
        ctx.allocate_persistent(count * ctx.target.pointer_size)


def _outer_and_inner(x) -> tuple[int, int]:
    inner = int(x.shape[-1]) if x.shape else 1
    return (int(np.prod(x.shape)) // inner if inner else 0), inner


# ---- SignalFramer -----------------------------------------------------------------------------
@dataclass
class FramerParams:
    frame_size: int
    frame_step: int
    prefill: bool
    outer_dims: int = 0
    n_frames: int = 0
    fifos: list = field(default_factory=list)

    def reset(self) -> None:
        for fifo in self.fifos:
            fifo.reset()
            if self.prefill:
                fifo.write_zeros(self.frame_size - self.frame_step)


def _framer_init(ctx, buffer) -> FramerParams:
    allocate_op_data(ctx, "TFLMSignalFramerParams")
    options = read_options(buffer, "SignalFramer")
    return FramerParams(option_int(options, "frame_size", "SignalFramer"),
                        option_int(options, "frame_step", "SignalFramer"),
                        option_int(options, "prefill", "SignalFramer") != 0)


def _framer_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y, valid) = check_io(ctx, node, 1, 2)
    if len(x.shape) + 1 != len(y.shape) or len(valid.shape) != 0:
        raise kernel_error(node, f"output {tensor_desc(y)} needs one more dimension than input "
                                 f"{tensor_desc(x)} and the valid flag {tensor_desc(valid)} none")
    check_tensor(node, x, "input", np.int16)
    check_tensor(node, y, "output", np.int16)
    check_tensor(node, valid, "output valid", np.bool_)
    p = node.user_data
    outer, inner = _outer_and_inner(x)
    if p.frame_step < 1 or p.frame_size < 1 or inner < p.frame_step or inner % p.frame_step \
            or (p.prefill and p.frame_size < p.frame_step):
        raise kernel_error(node, f"frame_size {p.frame_size} / frame_step {p.frame_step} do not fit "
                                 f"input {tensor_desc(x)}: the innermost dimension must be a "
                                 "positive multiple of frame_step (and prefill needs frame_size "
                                 ">= frame_step)")
    p.outer_dims, p.n_frames = outer, inner // p.frame_step
    if int(np.prod(y.shape)) != outer * p.n_frames * p.frame_size:
        raise kernel_error(node, f"output {tensor_desc(y)} must hold {outer * p.n_frames} frames "
                                 f"of {p.frame_size}")
    capacity = -(-p.frame_size // p.frame_step) * p.frame_step
    _pointer_arrays(ctx, outer)
    for _ in range(outer):
        ctx.allocate_persistent(SampleFifo.state_bytes(ctx, capacity))
    p.fifos = [SampleFifo(capacity) for _ in range(outer)]
    p.reset()


def _framer_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    x = ctx.input(node, 0).data.reshape(p.outer_dims, p.n_frames, p.frame_step)
    y = ctx.output(node, 0).data.reshape(p.outer_dims, p.n_frames, p.frame_size)
    valid = True
    for i, fifo in enumerate(p.fifos):
        for frame in range(p.n_frames):
            fifo.write(x[i, frame])
            if fifo.available >= p.frame_size:
                y[i, frame] = fifo.get(p.frame_size)
                fifo.discard(p.frame_step)
            else:
                valid = False                       # this frame's output is left as it was
    ctx.output(node, 1).data[...] = valid


# ---- SignalStacker ----------------------------------------------------------------------------
@dataclass
class StackerParams:
    num_channels: int
    left: int
    right: int
    step: int
    has_first_frame: bool = False
    fifo: Optional[SampleFifo] = None

    @property
    def buffer_size(self) -> int:
        return self.num_channels * (self.left + self.right + 1)

    def reset(self) -> None:
        if self.fifo is not None:               # made in prepare; a reset before it has nothing to clear
            self.fifo.reset()
        self.has_first_frame = False


def _stacker_init(ctx, buffer) -> StackerParams:
    what = "SignalStacker"
    options = read_options(buffer, what)
    num_channels, left, right, step = (option_int(options, k, what) for k in (
        "num_channels", "stacker_left_context", "stacker_right_context", "stacker_step"))
    p = StackerParams(num_channels, left, right, step)
    if p.num_channels < 1 or p.left < 0 or p.right < 0 or not 1 <= p.step <= p.left + p.right + 1:
        raise KernelError(f"{what}: num_channels {p.num_channels}, contexts {p.left}/{p.right} and "
                          f"step {p.step} must be positive, non-negative and 1..left+right+1 "
                          "(TFLM's circular buffer would overflow)")
    allocate_op_data(ctx, "TFLMSignalStackerParams", SampleFifo.state_bytes(ctx, p.buffer_size))
    p.fifo = SampleFifo(p.buffer_size)
    return p


def _stacker_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y, valid) = check_io(ctx, node, 1, 2)
    check_tensor(node, x, "input", np.int16, 1)
    check_tensor(node, y, "output", np.int16, 1)
    check_tensor(node, valid, "output valid", np.bool_, 0)
    p = node.user_data
    if x.shape[0] < p.num_channels or y.shape[0] < p.buffer_size:
        raise kernel_error(node, f"input {tensor_desc(x)} needs {p.num_channels} channels and "
                                 f"output {tensor_desc(y)} {p.buffer_size} values")


def _stacker_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    p.fifo.write(ctx.input(node, 0).data[:p.num_channels])
    if not p.has_first_frame:
        p.fifo.extend(p.num_channels, p.left)       # the first frame stands in for the past
        p.has_first_frame = True
    valid = p.fifo.available >= p.buffer_size
    if valid:
        ctx.output(node, 0).data[:p.buffer_size] = p.fifo.get(p.buffer_size)
        p.fifo.discard(p.num_channels * p.step)
    ctx.output(node, 1).data[...] = valid


# ---- SignalDelay ------------------------------------------------------------------------------
@dataclass
class DelayParams:
    delay_length: int
    frame_size: int = 0
    fifos: list = field(default_factory=list)

    def reset(self) -> None:
        for fifo in self.fifos:
            fifo.reset()
            fifo.write_zeros(self.delay_length)


def _delay_init(ctx, buffer) -> DelayParams:
    allocate_op_data(ctx, "TFLMSignalFrontendDelayParams")
    delay = option_int(read_options(buffer, "SignalDelay"), "delay_length", "SignalDelay")
    if delay < 0:
        raise KernelError(f"SignalDelay: delay_length {delay} is negative")
    return DelayParams(delay)


def _delay_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y,) = check_io(ctx, node, 1, 1)
    check_tensor(node, x, "input", np.int16)
    check_tensor(node, y, "output", np.int16)
    p = node.user_data
    outer, p.frame_size = _outer_and_inner(x)
    if p.frame_size < 1 or int(np.prod(y.shape)) != int(np.prod(x.shape)):
        raise kernel_error(node, f"input {tensor_desc(x)} and output {tensor_desc(y)} must be "
                                 "non-empty and of one size")
    _pointer_arrays(ctx, outer)
    for _ in range(outer):
        ctx.allocate_persistent(SampleFifo.state_bytes(ctx, p.frame_size + p.delay_length))
    p.fifos = [SampleFifo(p.frame_size + p.delay_length) for _ in range(outer)]
    p.reset()


def _delay_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    x = ctx.input(node, 0).data.reshape(-1, p.frame_size)
    y = ctx.output(node, 0).data.reshape(-1, p.frame_size)
    for i, fifo in enumerate(p.fifos):
        fifo.write(x[i])
        y[i] = fifo.get(p.frame_size)
        fifo.discard(p.frame_size)


# ---- SignalOverlapAdd -------------------------------------------------------------------------
@dataclass
class OverlapAddParams:
    dtype: type
    frame_step: int
    frame_size: int = 0
    n_frames: int = 0
    buffers: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def reset(self) -> None:
        self.buffers[...] = 0


def _overlap_add_init(ctx, buffer) -> OverlapAddParams:
    options = read_options(buffer, "SignalOverlapAdd")
    kind = option_int(options, "T", "SignalOverlapAdd")
    if kind not in (TENSOR_TYPE_INT16, TENSOR_TYPE_FLOAT32):
        raise KernelError(f"SignalOverlapAdd: T={kind} is not int16 (7) or float32 (0); TFLM's "
                          "init returns no op data for it")
    allocate_op_data(ctx, "TFLMSignalOverlapAddParams")
    return OverlapAddParams(np.int16 if kind == TENSOR_TYPE_INT16 else np.float32,
                            option_int(options, "frame_step", "SignalOverlapAdd"))


def _overlap_add_prepare(ctx: KernelContext, node: Node) -> None:
    (x,), (y,) = check_io(ctx, node, 1, 1)
    p = node.user_data
    if len(x.shape) != len(y.shape) + 1 or len(x.shape) < 2:
        raise kernel_error(node, f"input {tensor_desc(x)} needs rank >= 2, one more than the "
                                 f"output {tensor_desc(y)}")
    check_tensor(node, x, "input", p.dtype)
    check_tensor(node, y, "output", p.dtype)
    p.frame_size, p.n_frames = int(x.shape[-1]), int(x.shape[-2])
    outer = int(np.prod(x.shape)) // max(p.frame_size * p.n_frames, 1)
    if not 0 < p.frame_step <= p.frame_size or \
            int(np.prod(y.shape)) != outer * p.n_frames * p.frame_step:
        raise kernel_error(node, f"frame_step {p.frame_step} must be 1..frame_size {p.frame_size} "
                                 f"and the output {tensor_desc(y)} hold {outer * p.n_frames} steps")
    ctx.allocate_persistent(outer * ctx.target.pointer_size)
    for _ in range(outer):
        ctx.allocate_persistent(p.frame_size * np.dtype(p.dtype).itemsize)
    p.buffers = np.zeros((outer, p.frame_size), p.dtype)


def _overlap_add_invoke(ctx: KernelContext, node: Node) -> None:
    p = node.user_data
    outer = p.buffers.shape[0]
    x = ctx.input(node, 0).data.reshape(outer, p.n_frames, p.frame_size)
    y = ctx.output(node, 0).data.reshape(outer, p.n_frames, p.frame_step)
    for i in range(outer):
        buf = p.buffers[i]
        for frame in range(p.n_frames):
            if p.dtype == np.int16:
                buf[...] = np.clip(buf.astype(np.int32) + x[i, frame], -32768, 32767)
            else:
                buf += x[i, frame]
            y[i, frame] = buf[:p.frame_step]
            buf[:p.frame_size - p.frame_step] = buf[p.frame_step:].copy()
            buf[p.frame_size - p.frame_step:] = 0


def _reset(ctx, params) -> None:
    params.reset()


CUSTOMS = [
    ("SignalFramer", Registration(init=_framer_init, prepare=_framer_prepare,
                                  invoke=_framer_invoke, reset=_reset, name="SignalFramer", temps="i0 o0 o1"), 1),
    ("SignalStacker", Registration(init=_stacker_init, prepare=_stacker_prepare,
                                   invoke=_stacker_invoke, reset=_reset, name="SignalStacker", temps="i0 o0 o1"), 1),
    ("SignalDelay", Registration(init=_delay_init, prepare=_delay_prepare, invoke=_delay_invoke,
                                 reset=_reset, name="SignalDelay", temps="i0 o0"), 1),
    ("SignalOverlapAdd", Registration(init=_overlap_add_init, prepare=_overlap_add_prepare,
                                      invoke=_overlap_add_invoke, reset=_reset,
                                      name="SignalOverlapAdd", temps="i0 o0"), 1),
]
