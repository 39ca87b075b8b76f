"""Memory accounting for ops micro_rt plans but cannot yet run (SVDF, LSTM).

`micro-rt plan` and `fit` answer "does it fit?" for these models: each registration makes
exactly the allocations TFLM's kernel makes in init and prepare (measured against the
tflite-micro oracle), and refuses to invoke with a clear error. The interpreter uses them
only with `plan_only=True`, so running such a model fails at load, not halfway.
"""
from __future__ import annotations


import numpy as np

from micro_rt.errors import UnsupportedOpError
from micro_rt.kernel_api import Registration


def _refuse(ctx, node):
    raise UnsupportedOpError(f"op {node.index} {node.op_name}: micro_rt can plan this operator's "
                             "memory but has no kernel to run it")


def _op_data(struct: str):
    def init(ctx, custom_options):
        ctx.allocate_persistent(ctx.target.sizeof(struct))
        return None
    return init


def _svdf_prepare(ctx, node):
    x = ctx.input(node, 0)
    weights_feature = ctx.input(node, 1)
    batch = x.shape[0]
    num_filters = weights_feature.shape[0]
    rank = max(int(node.options.get("rank", 1)), 1)
    units = num_filters // rank
    ctx.request_scratch(batch * num_filters * 4)
    if np.dtype(x.dtype) != np.float32:
        ctx.request_scratch(batch * units * 4)


def _lstm_prepare(ctx, node):
    x = ctx.input(node, 0)
    out = ctx.output(node, 0)
    cell_state = ctx.input(node, 19)
    time_major = bool(node.options.get("time_major", False))
    batch = x.shape[1] if time_major and len(x.shape) == 3 else x.shape[0]
    units = out.shape[-1]
    cell_bytes = np.dtype(cell_state.dtype).itemsize if cell_state is not None else 4
    for _ in range(4):          # TFLM's LSTM keeps four gate buffers
        ctx.request_scratch(batch * units * cell_bytes)


BUILTINS = [
    ("SVDF", Registration(init=_op_data("OpDataSvdf"), prepare=_svdf_prepare, invoke=_refuse,
                          name="SVDF (plan only)"), 4),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", Registration(init=_op_data("OpDataLSTM"), prepare=_lstm_prepare,
                                                  invoke=_refuse, name="LSTM (plan only)"), 3),
]
