"""The float32 L2_POOL_2D runner for micro_rt.cortexm.ops (cortexm/src/mrt_pooling_more.c; the
int16 AVERAGE_POOL_2D / MAX_POOL_2D kernels of that file run through ops_nn.run_pool_int).
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import activation_of, activation_range_float

from .ops_context import CallContext, KernelCall, f32_bits, uwords, words
from .ops_nn import pool_geometry

_FLT_MAX = float(np.finfo(np.float32).max)


def run_l2_pool_f32(c: CallContext) -> list[KernelCall]:
    """mrt_l2_pool_f32; the activation range as CalculateActivationRange<float> (finite)."""
    node = c.node
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, c.t(0), c.out())
    lo, hi = activation_range_float(activation_of(node))
    lo, hi = max(lo, -_FLT_MAX), min(hi, _FLT_MAX)
    blob = uwords(c.in_addr(0), c.out_addr()) + words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad.height,
                                                      pad.width) + uwords(f32_bits(lo), f32_bits(hi))
    return [c.call("mrt_l2_pool_f32", c.args(blob))]
