"""Static facts about a model's operators: multiply-accumulate counts."""
from __future__ import annotations

import math

from .model import OperatorInfo, Subgraph


def op_macs(sg: Subgraph, op: OperatorInfo) -> int:
    """Multiply-accumulates one invoke of `op` performs (0 for ops without MACs)."""
    def shape(slot: int, outputs: bool = False) -> tuple[int, ...]:
        indices = op.outputs if outputs else op.inputs
        if slot >= len(indices) or indices[slot] < 0:
            return ()
        return sg.tensors[indices[slot]].shape

    out = shape(0, outputs=True)
    if not out:
        return 0
    out_elems = math.prod(out)
    name = op.op_name
    if name == "CONV_2D":
        f = shape(1)                      # [out_ch, kh, kw, in_ch]
        return out_elems * math.prod(f[1:]) if len(f) == 4 else 0
    if name == "DEPTHWISE_CONV_2D":
        f = shape(1)                      # [1, kh, kw, out_ch]
        return out_elems * f[1] * f[2] if len(f) == 4 else 0
    if name == "TRANSPOSE_CONV":
        f = shape(1)                      # [out_ch, kh, kw, in_ch]
        x = shape(2)
        return math.prod(x) * f[0] * f[1] * f[2] if len(f) == 4 and x else 0
    if name == "FULLY_CONNECTED":
        w = shape(1)                      # [units, depth]
        return out_elems * w[-1] if w else 0
    if name in ("BATCH_MATMUL",):
        a = shape(0)
        return out_elems * a[-1] if a else 0
    if name in ("SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM"):
        # Every 2-D weight matrix is applied once per time step.
        weights = sum(math.prod(sg.tensors[t].shape) for t in op.inputs
                      if t >= 0 and sg.tensors[t].is_constant and len(sg.tensors[t].shape) == 2)
        x = shape(0)
        time_steps = x[1] if name == "UNIDIRECTIONAL_SEQUENCE_LSTM" and len(x) == 3 else 1
        return weights * time_steps * (x[0] if x else 1)
    return 0

