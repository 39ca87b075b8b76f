"""TFLM's CIRCULAR_BUFFER custom operator (strided streaming models such as micro_speech's
streaming variants): every invoke shifts the int8 output [1, slots, h, w] one slot towards
the start and writes the input [1, 1, h, w] into the last slot; then, until `cycles_max`
invokes have passed, it ends the run there (kTfLiteAbort: later operators do not run).

Read from tensorflow/tflite-micro kernels/circular_buffer{,_common}.cc, in our words: init
allocates OpData {cycles_until_run, cycles_max} and reads `cycles_max` from the options (0
without options); prepare reads the input and output as temporary tensors, checks the shapes
and int8, and, when cycles_max <= 0, picks the period from the output shape: 1 for 5, 13 or 25
slots, or for the fifth such operator prepared with a [.., 2, 96] output, else 2. TFLM counts
those operators in a C static shared by every interpreter of the process (reset to 0 when the
fifth one matches); micro_rt counts per interpreter, which is the same for the first model a
process loads. reset() restarts the period; the buffer itself lives in the output tensor.
The C kernel on the virtual MCU: cortexm/src/mrt_circular_buffer.c (this module its twin).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..flexbuffer import read_options
from ..kernel_api import ABORT, KernelContext, Node, Registration
from .kernel_util import kernel_error, tensor_desc
from .signal_common import allocate_op_data, option_int

_PERIOD_ONE_SLOTS = (5, 13, 25)


@dataclass
class CircularBufferState:
    """TFLM's OpDataCircularBuffer."""
    cycles_max: int
    cycles_until_run: int = 0


def _init(ctx, custom_options) -> CircularBufferState:
    allocate_op_data(ctx, "OpDataCircularBuffer")
    if not custom_options:
        return CircularBufferState(cycles_max=0)
    return CircularBufferState(cycles_max=option_int(read_options(custom_options, "CIRCULAR_BUFFER"),
                                                     "cycles_max", "CIRCULAR_BUFFER"))


def _prepare(ctx: KernelContext, node: Node) -> None:
    if len(node.inputs) < 1 or not node.outputs or ctx.input(node, 0) is None:
        raise kernel_error(node, "needs an input and an output")
    x, y = ctx.input(node, 0), ctx.output(node, 0)
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise kernel_error(node, f"input {tensor_desc(x)} and output {tensor_desc(y)} must have rank 4")
    if x.shape[0] != y.shape[0] or x.shape[1] != 1 or x.shape[2:] != y.shape[2:]:
        raise kernel_error(node, f"input {tensor_desc(x)} must be [n, 1, h, w] of output "
                                 f"{tensor_desc(y)} [n, slots, h, w]")
    if np.dtype(x.dtype) != np.int8 or np.dtype(y.dtype) != np.int8:
        raise kernel_error(node, f"supports int8 only (input {tensor_desc(x)}, output {tensor_desc(y)})")
    state: CircularBufferState = node.user_data
    if state.cycles_max <= 0:
        statics = ctx.kernel_statics
        statics["CIRCULAR_BUFFER"] = count = statics.get("CIRCULAR_BUFFER", 0) + 1
        if y.shape[1] in _PERIOD_ONE_SLOTS or (count == 5 and y.shape[2:] == (2, 96)):
            state.cycles_max = 1
            statics["CIRCULAR_BUFFER"] = 0
        else:
            state.cycles_max = 2
    state.cycles_until_run = state.cycles_max


def _invoke(ctx: KernelContext, node: Node):
    state: CircularBufferState = node.user_data
    x, y = ctx.input(node, 0), ctx.output(node, 0)
    slots, depth = y.shape[1], y.shape[2] * y.shape[3]
    # TFLM's depth is h * w: with a batch above 1 only batch 0's slots move (the rest of the
    # output keeps what it held) and batch 0's input is written
    buffer = y.data.reshape(-1)[:slots * depth].reshape(slots, depth)
    buffer[:-1] = buffer[1:].copy()
    buffer[-1] = x.data.reshape(-1)[:depth]
    state.cycles_until_run -= 1
    if state.cycles_until_run != 0:
        return ABORT
    state.cycles_until_run = state.cycles_max
    return None


def _reset(ctx, state: CircularBufferState) -> None:
    state.cycles_until_run = state.cycles_max


CUSTOMS = [
    ("CIRCULAR_BUFFER", Registration(init=_init, prepare=_prepare, invoke=_invoke, reset=_reset,
                                     name="CIRCULAR_BUFFER", temps="i0 o0"), 1),
]
