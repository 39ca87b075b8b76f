"""UNIDIRECTIONAL_SEQUENCE_LSTM runners for micro_rt.cortexm.ops: the integer LSTMs with an
int16 cell state, 8x8->16 on mrt_lstm_s8 and 16x8->16 on mrt_lstm_s16 (cortexm/src/mrt_lstm.c),
bit-equal with the numpy twins (kernels/lstm_int8.py); the float32 LSTM on mrt_lstm_f32
(cortexm/src/mrt_lstm.c, twin kernels/lstm_float.py: bit-equal given the same expf / tanhf,
its gates in the four scratch buffers TFLM requests).

The multipliers, shifts, zero points and the cell state's clamp are the host kernel's (its
OpDataLSTM, filled by prepare from TFLM's formulas); TFLM's 256-entry sigmoid table is a
constant placed in flash. The hidden and cell states are variable tensors, in MCU memory
(executor). The kernel needs no scratch: the gate buffers TFLM requests stay planned in the
arena, unused (the reference flavour's mrt_ref_lstm_s8 / _s16 use its four: ops.reference).
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.fixedpoint import SIGMOID_TABLE_UINT16
from micro_rt.kernels.lstm_int8 import cell_state_bounds, lstm_tanh_params

from .context import CallContext, KernelCall, UnsupportedOnMcu, f32_bits, uwords, words
from .registry import FLOAT32, INT16, INT8, KernelKey, OpKernel

# lstm_shared.h tensor indices: gate weights (input, forget, cell, output), biases, states.
_W_IN, _W_REC, _BIAS = (1, 2, 3, 4), (5, 6, 7, 8), (12, 13, 14, 15)
_HIDDEN, _CELL = 18, 19
# tanh(cell)'s int32 input rescale stays inside int32 for left shifts up to this.
_MAX_TANH_LEFT_SHIFT = 14


def _lstm_words(c: CallContext, data) -> list[int]:
    s = data.n_state
    cell_m, cell_s = lstm_tanh_params(data.cell_power)
    per_gate = lambda v: [int(v[g * s]) for g in range(4)]       # noqa: E731 - one value per gate
    return [data.batch, data.steps, data.n_input, s, int(data.time_major), -data.input_zp, -data.hidden_zp,
            *per_gate(data.in_mult), *per_gate(data.in_shift), *per_gate(data.rec_mult), *per_gate(data.rec_shift),
            *data.forget_cell_mul, *data.input_mul, *data.output_mul, data.hidden_zp,
            *cell_state_bounds(data), cell_m, cell_s]


def lstm_block(c: CallContext) -> bytes:
    """The mrt_lstm_params block of the node (mrt_lstm_s8 / _s16 and the reference flavour's
    mrt_ref_lstm_s8 / _s16), after the checks both kernels need."""
    node = c.node
    data = getattr(node, "user_data", None)
    if data is None or getattr(data, "kind", "") not in ("int8", "int16"):
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: not prepared for an integer path")
    if any(np.any(np.asarray(c.t(i).zero_points) != 0) for i in _W_IN + _W_REC):
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: weights with a zero point")
    if data.n_state == 0 or data.batch == 0:
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: empty state")
    cell_m, cell_s = lstm_tanh_params(data.cell_power)
    if cell_m == 0 and cell_s > _MAX_TANH_LEFT_SHIFT:
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: cell scale 2^{data.cell_power} "
                               "puts tanh's input rescale outside int32")
    table = c.const("sigmoid_table", lambda: SIGMOID_TABLE_UINT16.astype("<u2").tobytes())
    return uwords(c.in_addr(0), c.out_addr(), c.in_addr(_HIDDEN), c.in_addr(_CELL),
                  *(c.in_addr(i) for i in _W_IN), *(c.in_addr(i) for i in _W_REC),
                  *(c.in_addr(i) for i in _BIAS), table) + words(*_lstm_words(c, data))


def run_lstm_f32(c: CallContext) -> list[KernelCall]:
    """mrt_lstm_f32, where the op was prepared for the float32 path."""
    node = c.node
    data = getattr(node, "user_data", None)
    if data is None or getattr(data, "kind", "") != "float32":
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: not prepared for the float32 path")
    if data.n_state == 0 or data.batch == 0:
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: empty state")
    scratch = c.scratch_offset if isinstance(c.scratch_offset, (tuple, list)) else ()
    if len(scratch) < 4:
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's four gate buffers are not planned")
    blob = uwords(c.in_addr(0), c.out_addr(), c.in_addr(_HIDDEN), c.in_addr(_CELL),
                  *(c.in_addr(i) for i in _W_IN), *(c.in_addr(i) for i in _W_REC),
                  *(c.in_addr(i) for i in _BIAS), *(c.scratch_addr(k) for k in range(4)),
                  ) + words(data.batch, data.steps, data.n_input, data.n_state, int(data.time_major)) + uwords(
                      f32_bits(data.cell_clip))
    return [c.call("mrt_lstm_f32", c.args(blob))]


def run_lstm(c: CallContext) -> list[KernelCall]:
    """mrt_lstm_s8 / mrt_lstm_s16, where the op was prepared for an integer path with symmetric
    weights."""
    blob = lstm_block(c)
    return [c.call("mrt_lstm_s8" if c.node.user_data.kind == "int8" else "mrt_lstm_s16", c.args(blob))]


__all__ = ["lstm_block", "run_lstm", "run_lstm_f32"]


KERNELS: dict[KernelKey, OpKernel] = {
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", INT8): OpKernel(run_lstm),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", INT16): OpKernel(run_lstm),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", FLOAT32): OpKernel(run_lstm_f32, libm=True),  # expf, tanhf
}
