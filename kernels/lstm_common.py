"""What the UNIDIRECTIONAL_SEQUENCE_LSTM kernel's float and integer paths share (TFLM's
lstm_shared.h and the checks of unidirectional_sequence_lstm.cc's prepare): the tensor
indices, the gate order of the stacked weights, the op data, and the validation of the
tensors, their shapes and the options.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .kernel_util import kernel_error, tensor_desc, zero_point_of
from micro_rt.kernel_api import KernelContext, Node

# lstm_shared.h tensor indices.
INPUT = 0
INPUT_TO_GATE = {"input": 1, "forget": 2, "cell": 3, "output": 4}
RECURRENT_TO_GATE = {"input": 5, "forget": 6, "cell": 7, "output": 8}
PEEPHOLE = (9, 10, 11)
GATE_BIAS = {"input": 12, "forget": 13, "cell": 14, "output": 15}
PROJECTION = (16, 17)
OUTPUT_STATE = 18
CELL_STATE = 19
LAYER_NORM = (20, 21, 22, 23)
GATES = ("input", "forget", "cell", "output")   # column blocks of the stacked weights


@dataclass
class OpDataLSTM:
    kind: str = ""                 # "float32", "int8" (8x8->16) or "int16" (16x8->16)
    time_major: bool = False
    batch: int = 0
    steps: int = 0
    n_input: int = 0
    n_state: int = 0
    activation: str = "TANH"       # cell gate non-linearity (TANH: the schema has no SIGMOID)
    cell_clip: float = 0.0
    buffer_indices: list = field(default_factory=list)
    # stacked weights: (depth, 4 * state), column blocks in GATES order
    w_in_t: Any = None
    w_rec_t: Any = None
    bias: Any = None               # (4 * state,)
    # int8 path
    input_zp: int = 0
    hidden_zp: int = 0
    in_mult: Any = None            # per column (4 * state,)
    in_shift: Any = None
    rec_mult: Any = None
    rec_shift: Any = None
    quantized_cell_clip: int = 0
    cell_power: int = 0
    sigmoid_lut: Any = None        # int16 result for int16 input + 32768
    gate_tanh_lut: Any = None
    cell_tanh_lut: Any = None
    forget_cell_mul: tuple = (0, 0)
    input_mul: tuple = (0, 0)
    output_mul: tuple = (0, 0)
    bufs: Any = None               # invoke buffers and constants, made in prepare


def validate_tensors(ctx: KernelContext, node: Node) -> tuple[list, Any]:
    """LstmTensors::ValidateTensorStatus: the 24 inputs (present, absent, variable, constant
    as the standard LSTM needs them) and the output. Returns (inputs, output)."""
    if len(node.inputs) != 24:
        raise kernel_error(node, f"needs 24 inputs, has {len(node.inputs)}")
    if len(node.outputs) != 1:
        raise kernel_error(node, f"needs 1 output, has {len(node.outputs)}")
    t = [ctx.input(node, i) for i in range(24)]
    out = ctx.output(node, 0)
    x = t[INPUT]
    if x is None:
        raise kernel_error(node, "the input tensor is missing")
    for idx, what in ((OUTPUT_STATE, "output (hidden) state"), (CELL_STATE, "cell state")):
        state = t[idx]
        if state is None:
            raise kernel_error(node, f"the {what} tensor (input {idx}) is missing")
        if not state.is_variable:
            raise kernel_error(node, f"the {what} {tensor_desc(state)} must be a variable tensor")
    hidden = ctx.required_input(node, OUTPUT_STATE)
    if hidden.dtype != x.dtype:
        raise kernel_error(node, f"output state {tensor_desc(hidden)} and input {tensor_desc(x)} differ in type")
    if out.dtype != x.dtype:
        raise kernel_error(node, f"output {tensor_desc(out)} and input {tensor_desc(x)} differ in type")
    # every weight and gate bias present before their types are compared (a missing input 2 or
    # 13 is named, not dereferenced)
    for i in range(1, 9):
        if t[i] is None:
            raise kernel_error(node, f"weights input {i} is missing (CIFG LSTMs are not supported by TFLM)")
    for i in range(12, 16):
        if t[i] is None:
            raise kernel_error(node, f"gate bias input {i} is missing")
    weights = [w for w in t[1:9] if w is not None]
    biases = [b for b in t[12:16] if b is not None]
    for w in weights:
        if w.dtype != weights[1].dtype:
            raise kernel_error(node, f"weights {tensor_desc(w)} differ in type from {tensor_desc(weights[1])}")
    for b in biases:
        if b.dtype != biases[1].dtype:
            raise kernel_error(node, f"bias {tensor_desc(b)} differs in type from {tensor_desc(biases[1])}")
    for group, what in ((PEEPHOLE, "peephole"), (PROJECTION, "projection"), (LAYER_NORM, "layer norm")):
        for i in group:
            if t[i] is not None:
                raise kernel_error(node, f"{what} input {i} {tensor_desc(t[i])} is present; TFLM's LSTM kernel "
                                         "supports only the standard LSTM (no peephole, projection or layer norm)")
    if len(x.shape) != 3:
        raise kernel_error(node, f"input {tensor_desc(x)} must be 3-D")
    for w in weights + biases:
        if w.data is None:
            raise kernel_error(node, f"weights/bias {tensor_desc(w)} must be constant")
    return t, out


def read_sizes(node, data: OpDataLSTM, t: list, out) -> None:
    """LstmTensors::ValidateTensorSize and the options: batch, steps, input and state sizes
    into `data`, every weight, bias, state and the output of the shape they imply."""
    x, h, c = t[INPUT], t[OUTPUT_STATE], t[CELL_STATE]
    opts = node.options
    data.time_major = bool(opts.get("time_major", False))
    data.batch = int(x.shape[1] if data.time_major else x.shape[0])
    data.steps = int(x.shape[0] if data.time_major else x.shape[1])
    data.n_input = int(x.shape[2])
    if len(h.shape) < 2:
        raise kernel_error(node, f"output state {tensor_desc(h)} must be 2-D (batch, state)")
    data.n_state = int(h.shape[1])
    b, s, d = data.batch, data.n_state, data.n_input
    for i in range(1, 5):
        if tuple(t[i].shape) != (s, d):
            raise kernel_error(node, f"input weights {tensor_desc(t[i])} must have shape {[s, d]}")
    for i in range(5, 9):
        if tuple(t[i].shape) != (s, s):
            raise kernel_error(node, f"recurrent weights {tensor_desc(t[i])} must have shape {[s, s]}")
    for i in range(12, 16):
        if tuple(t[i].shape) != (s,):
            raise kernel_error(node, f"bias {tensor_desc(t[i])} must have shape {[s]}")
    for st in (h, c):
        if int(np.prod(st.shape)) != b * s:
            raise kernel_error(node, f"state {tensor_desc(st)} must hold batch x state = {b * s} values")
    if len(out.shape) != 3 or tuple(out.shape[:2]) != tuple(x.shape[:2]) or out.shape[2] != s:
        raise kernel_error(node, f"output {tensor_desc(out)} must have shape {[*x.shape[:2], s]}")
    data.activation = opts.get("fused_activation_function", "TANH")
    if data.activation != "TANH":
        # TFLM asserts: the cell gate is sigmoid or tanh, and the schema cannot express sigmoid.
        raise kernel_error(node, f"cell gate activation {data.activation} is not supported (TANH only)")
    data.cell_clip = float(np.float32(opts.get("cell_clip", 0.0) or 0.0))
    if not math.isfinite(data.cell_clip):
        raise kernel_error(node, f"cell_clip {data.cell_clip!r} is not finite (TFLM would convert it to an "
                                 "integer clip: undefined)")


def stack_gates(t: list, idx: dict, dtype, less_zero_point: bool = False) -> np.ndarray:
    """(depth, 4 * state): the transposed weights of the four gates side by side (less each
    tensor's zero point, TFLM's weights_offset, with `less_zero_point`)."""
    def block(tensor) -> np.ndarray:
        w = np.asarray(tensor.data, dtype=dtype)
        return (w - zero_point_of(tensor) if less_zero_point else w).T
    return np.ascontiguousarray(np.concatenate([block(t[idx[g]]) for g in GATES], axis=1))
