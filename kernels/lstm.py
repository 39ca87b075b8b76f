"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's reference kernel (unidirectional_sequence_lstm.cc,
lstm_eval.h / lstm_eval.cc, lstm_eval_common.cc, lstm_shared.h): init, prepare and invoke,
with the shared checks in lstm_common.py, the float32 path in lstm_float.py and the integer
path in lstm_int8.py.

TFLM's current kernel runs the standard (keras) LSTM only: all four gates with their input and
recurrent weights and biases, no peephole, no projection, no layer norm (those inputs must be
absent, -1). Each time step computes, from the *old* hidden state h and cell state c:

    gate = act(FC(x_t, W_gate, bias_gate) + FC(h, R_gate, no bias))   act: sigmoid, tanh for cell
    c    = clip(f * c + i * g)
    h    = tanh(c) * o;  output[t] = h

Batch-major inputs run batch after batch in TFLM; rows never interact, so all batches step
together here. The input FC does not depend on the state and is computed for the whole
sequence at once. Memory: OpDataLSTM in init, four scratch buffers of batch x state cells in
prepare, exactly as TFLM (the buffers themselves are not needed by the host kernel).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .kernel_util import HYBRID, kernel_error, tensor_desc, type_label
from .lstm_common import CELL_STATE, INPUT, OUTPUT_STATE, OpDataLSTM, read_sizes, validate_tensors
from .lstm_float import prepare_float, run_float
from .lstm_int8 import prepare_int16, prepare_int8, run_int16, run_int8

lstm_init = op_data_init("OpDataLSTM", OpDataLSTM)


def lstm_prepare(ctx: KernelContext, node: Node) -> None:
    """TFLM's reference Prepare: four gate buffers."""
    prepare_lstm(ctx, node, lambda kind: 4)


def prepare_lstm(ctx: KernelContext, node: Node, gate_buffers: Callable[[str], int]) -> None:
    """The Prepare every build's LSTM shares; `gate_buffers(kind)`: how many gate buffers of
    batch x state cells the build's kernel for that kind ("float32", "int8", "int16") asks for."""
    data: OpDataLSTM = node.user_data
    t, out = validate_tensors(ctx, node)
    read_sizes(node, data, t, out)
    x, c = t[INPUT], t[CELL_STATE]
    xt, wt = np.dtype(x.dtype), np.dtype(t[2].dtype)
    ct = np.dtype(c.dtype)
    if xt not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_desc(x)}: Input type {type_label(xt)} not supported.")
    if ct == np.float32:
        if xt != np.float32 or wt != np.float32:
            # TFLM's float kernel would read int8 weights as float32 words (hybrid model).
            raise kernel_error(node, f"float cell state needs float32 input and weights, got input {tensor_desc(x)}, "
                                     f"weights {tensor_desc(t[2])}: {HYBRID}")
        prepare_float(data, t)
    elif ct == np.int16:
        bt = np.dtype(t[13].dtype)
        if xt == np.int8 and wt == np.int8 and bt == np.int32:
            prepare_int8(node, data, t)
        elif xt == np.int16 and wt == np.int8 and bt == np.int64:
            prepare_int16(node, data, t)
        else:
            raise kernel_error(node, f"int16 cell state is supported with int8 input, int8 weights and int32 "
                                     f"bias, or int16 input, int8 weights and int64 bias (got input "
                                     f"{tensor_desc(x)}, weights {tensor_desc(t[2])}, bias {tensor_desc(t[13])})")
    else:
        raise kernel_error(node, f"cell state {tensor_desc(c)}: type not supported (float32 or int16)")
    # Gate buffers of batch x state cells, as TFLM requests them
    count = gate_buffers(data.kind)
    data.buffer_indices = [ctx.request_scratch(data.batch * data.n_state * ct.itemsize) for _ in range(count)]


def lstm_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataLSTM = node.user_data
    x = ctx.required_input(node, INPUT).data
    h_t = ctx.required_input(node, OUTPUT_STATE)
    c_t = ctx.required_input(node, CELL_STATE)
    out = ctx.output(node, 0).data
    b, s = data.batch, data.n_state
    # Views as (steps, batch, features) whichever the layout.
    xs = x if data.time_major else x.transpose(1, 0, 2)
    os_ = out if data.time_major else out.transpose(1, 0, 2)
    h = h_t.data.reshape(b, s)
    c = c_t.data.reshape(b, s)
    if data.kind == "float32":
        run_float(data, xs, os_, h, c)
    elif data.kind == "int16":
        run_int16(data, xs, os_, h, c)
    else:
        run_int8(data, xs, os_, h, c)


UNIDIRECTIONAL_SEQUENCE_LSTM = Registration(invoke=lstm_invoke, prepare=lstm_prepare, init=lstm_init,
                                            name="UNIDIRECTIONAL_SEQUENCE_LSTM",
                                            temps="i* o0")         # LstmTensors: all 24 inputs

BUILTINS = [("UNIDIRECTIONAL_SEQUENCE_LSTM", UNIDIRECTIONAL_SEQUENCE_LSTM, 3)]
