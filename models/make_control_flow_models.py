#!/usr/bin/env python3
"""Build the converter-made control-flow and resource-variable models in models/control_flow/.

Dev-only tool (TensorFlow is never a micro_rt dependency). From the repository root:

    /work/tfvenv/bin/python models/make_control_flow_models.py

Each model comes as `_f32` (float) and `_int8` (full integer quantization, int8 in/out; the
converter keeps the tensors crossing a subgraph boundary and the variables in float32, with
QUANTIZE/DEQUANTIZE around them). The graphs use only operators micro_rt's host kernels
have besides the six under test, so their conditions come from bool inputs, not comparisons:

- `if_flag`: tf.cond on a bool input (IF with two branch subgraphs);
- `while_flags`: tf.while_loop that runs as many times as its bool input has leading Trues
  (a data-dependent trip count, 0 to 6), with a tf.cond nested in the loop body (IF inside
  WHILE: the planner walks the branches once per call site);
- `stream_state`: a streaming model keeping its last 4 frames and a running sum in two
  resource variables (CALL_ONCE initializer subgraph; VAR_HANDLE, READ_VARIABLE,
  ASSIGN_VARIABLE), state carried across invokes.

Deterministic (seeded weights and representative data); two runs give identical files.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent / "control_flow"
N_REPRESENTATIVE = 32


def seeded(seed: int, *shape: int) -> tf.Tensor:
    return tf.constant(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32))


@tf.function(autograph=False)
def if_flag(flag, x):
    return tf.cond(flag[0], lambda: tf.nn.relu(x * 2.0 + 1.0), lambda: x * x - 0.5)


@tf.function(autograph=False)
def while_flags(flags, x):
    def cond(f, y):
        return f[0]

    def body(f, y):
        y = tf.cond(f[1], lambda: y * 0.75 + 0.5, lambda: y - 0.25)
        return tf.concat([f[1:], tf.constant([False])], 0), y

    _, y = tf.while_loop(cond, body, [flags, x])
    return y


class StreamState(tf.Module):
    """The last 4 frames (zero at start) and a running sum (a non-zero start) in variables."""

    def __init__(self):
        super().__init__()
        self.frames = tf.Variable(tf.zeros((1, 4, 3)), name="frames")
        self.total = tf.Variable(seeded(1, 1, 5) * 0.5, name="total")
        self.w = seeded(2, 12, 5)

    @tf.function(autograph=False)
    def __call__(self, x):
        window = tf.concat([self.frames[:, 1:, :], x], axis=1)
        self.frames.assign(window)
        y = tf.matmul(tf.reshape(window, (1, 12)), self.w)
        self.total.assign(self.total * 0.5 + y)
        return y, self.total * 1.0


MODELS = {
    "if_flag": (lambda: (if_flag, None), [((1,), tf.bool), ((1, 8), tf.float32)]),
    "while_flags": (lambda: (while_flags, None), [((6,), tf.bool), ((1, 8), tf.float32)]),
    "stream_state": (lambda: (lambda m: (m.__call__, m))(StreamState()), [((1, 1, 3), tf.float32)]),
}


def representative(specs, seed: int):
    def data():
        rng = np.random.default_rng(seed)
        for _ in range(N_REPRESENTATIVE):
            yield [rng.random(shape) < 0.6 if dtype == tf.bool else
                   rng.uniform(-2, 2, shape).astype(np.float32) for shape, dtype in specs]
    return data


def convert(name: str, int8: bool) -> bytes:
    make, specs = MODELS[name]
    fn, module = make()
    concrete = fn.get_concrete_function(*[tf.TensorSpec(s, d) for s, d in specs])
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], module)
    converter.experimental_enable_resource_variables = True
    if int8:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative(specs, seed=len(name))
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int8
    return converter.convert()


def main(names: list[str]) -> None:
    OUT_DIR.mkdir(exist_ok=True)
    for name in names or list(MODELS):
        for variant, int8 in (("f32", False), ("int8", True)):
            path = OUT_DIR / f"{name}_{variant}.tflite"
            path.write_bytes(convert(name, int8))
            print(f"{path.relative_to(OUT_DIR.parent.parent)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
