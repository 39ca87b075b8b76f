"""The float32 path of UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's lstm_eval.cc, float): every FC is
`total += x * w` in float32 in depth order, then `total + bias`; sigmoid is
`1 / (1 + expf(-x))` with TFLM's cut-offs and tanh is `tanhf`, both the C library's own
(libm.py).
"""
from __future__ import annotations

import numpy as np

from .activations import logistic_float
from .exact_matmul import sequential_matmul_f32
from .libm import tanhf
from .lstm_common import GATE_BIAS, GATES, INPUT_TO_GATE, RECURRENT_TO_GATE, OpDataLSTM, stack_gates


def prepare_float(data: OpDataLSTM, t: list) -> None:
    """The four gates' weights and biases stacked, in float32."""
    data.kind = "float32"
    data.w_in_t = stack_gates(t, INPUT_TO_GATE, np.float32)
    data.w_rec_t = stack_gates(t, RECURRENT_TO_GATE, np.float32)
    data.bias = np.concatenate([np.asarray(t[GATE_BIAS[g]].data, np.float32) for g in GATES])


def run_float(data: OpDataLSTM, xs, os_, h, c) -> None:
    """All steps: xs (steps, batch, input) in, os_ (steps, batch, state) out, the hidden
    state h and the cell state c (batch, state) updated in place."""
    b, s, steps = data.batch, data.n_state, data.steps
    s4 = 4 * s
    x2 = np.asarray(xs, np.float32).reshape(steps * b, data.n_input)
    in_fc = np.empty((steps * b, s4), np.float32)
    sequential_matmul_f32(x2, data.w_in_t, out=in_fc)
    in_fc += data.bias
    in_steps = in_fc.reshape(steps, b, s4)
    rec = np.empty((b, s4), np.float32)
    cell_clip = np.float32(data.cell_clip)
    hs = np.array(h, np.float32)
    cs = np.array(c, np.float32)
    for step in range(steps):
        sequential_matmul_f32(hs, data.w_rec_t, out=rec)
        rec += np.float32(0.0)                      # total + bias_value (0.0f) of the bias-less FC
        pre = in_steps[step] + rec
        i_g = logistic_float(pre[:, 0:s])
        f_g = logistic_float(pre[:, s:2 * s])
        g_g = tanhf(pre[:, 2 * s:3 * s])
        o_g = logistic_float(pre[:, 3 * s:])
        cs = f_g * cs
        cs = cs + i_g * g_g
        if data.cell_clip > 0:
            cs = np.maximum(np.minimum(cell_clip, cs), -cell_clip)
        hs = tanhf(cs) * o_g
        os_[step] = hs
    h[...] = hs
    c[...] = cs
