"""One UNIDIRECTIONAL_SEQUENCE_LSTM operator with seeded weights (`lstm_model`): float32, int8
(8x8->16) or int16 (16x8->16). The LSTM tests (tests/test_kernels_lstm.py, test_vmcu_lstm.py,
...), the type cases and benchmarks/bench_op_cycles.py share it."""
from __future__ import annotations

from typing import Any

import numpy as np

from micro_rt.builder import ModelBuilder


def lstm_model(kind: str, batch: int, steps: int, n_input: int, n_state: int, *,
               time_major: bool = False, cell_clip: float = 10.0, activation: str = "TANH",
               cell_scale_power: int = -11, seed: int = 0, peephole: bool = False,
               weight_std: float = 0.4, input_zp: int = 0, hidden_zp: int = 0) -> bytes:
    """One UNIDIRECTIONAL_SEQUENCE_LSTM op, float32, int8 (8x8->16) or int16 (16x8->16, int64
    biases; `input_zp` / `hidden_zp` its zero points), random weights."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder("lstm test")
    f = kind == "float32"
    shape_in = (steps, batch, n_input) if time_major else (batch, steps, n_input)
    shape_out = (steps, batch, n_state) if time_major else (batch, steps, n_state)
    q16 = kind == "int16"
    act = "FLOAT32" if f else ("INT16" if q16 else "INT8")
    in_scale, in_zp = (0.05 / 256, input_zp) if q16 else (0.05, -3)
    h_scale, h_zp = (1.0 / 32768, hidden_zp) if q16 else (1.0 / 128, 2)
    quantization: dict[str, Any] = {} if f else {"scale": in_scale, "zero_point": in_zp}
    x = b.add_tensor("x", shape_in, act, **quantization)
    inputs: list[Any] = [x]            # int8: (tensor, scale) pairs for the weights, then tensors
    for k in range(8):
        depth = n_input if k < 4 else n_state
        if f:
            w = rng.normal(0, weight_std, (n_state, depth)).astype(np.float32)
            inputs.append(b.add_tensor(f"w{k}", w.shape, "FLOAT32", data=w))
        else:
            w = rng.integers(-127, 128, (n_state, depth)).astype(np.int8)
            ws = float(rng.uniform(0.003, 0.03))
            inputs.append(b.add_tensor(f"w{k}", w.shape, "INT8", data=w, scale=ws, zero_point=0))
            inputs[-1] = (inputs[-1], ws)
    weight_scales: list[Any] = [None] * 8 if f else [s for _, s in inputs[1:]]
    if not f:
        inputs = [x] + [t for t, _ in inputs[1:]]
    if peephole:      # cell-to-gate weights: a variant TFLM's kernel rejects
        inputs += [b.add_tensor(f"p{k}", (n_state,), "FLOAT32", data=np.ones(n_state, np.float32))
                   for k in range(3)]
    else:
        inputs += [-1, -1, -1]
    for k in range(4):
        if f:
            bias = rng.normal(0, weight_std + 0.1, n_state).astype(np.float32)
            inputs.append(b.add_tensor(f"b{k}", bias.shape, "FLOAT32", data=bias))
        else:
            bs = in_scale * weight_scales[k]
            span = 3000 * 256 if q16 else 3000
            bias = rng.integers(-span, span, n_state).astype(np.int64 if q16 else np.int32)
            inputs.append(b.add_tensor(f"b{k}", bias.shape, "INT64" if q16 else "INT32", data=bias, scale=bs,
                                       zero_point=0))
    inputs += [-1, -1]
    if f:
        h = b.add_tensor("h", (batch, n_state), "FLOAT32", is_variable=True)
        c = b.add_tensor("c", (batch, n_state), "FLOAT32", is_variable=True)
        out = b.add_tensor("y", shape_out, "FLOAT32")
    else:
        h = b.add_tensor("h", (batch, n_state), act, scale=h_scale, zero_point=h_zp, is_variable=True)
        c = b.add_tensor("c", (batch, n_state), "INT16", scale=2.0 ** cell_scale_power, zero_point=0,
                         is_variable=True)
        out = b.add_tensor("y", shape_out, act, scale=h_scale, zero_point=h_zp)
    inputs += [h, c, -1, -1, -1, -1]
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [out],
                   options={"fused_activation_function": activation, "cell_clip": cell_clip,
                            "proj_clip": 0.0, "time_major": time_major})
    b.inputs, b.outputs = [x], [out]
    return b.build()

