"""The L2_NORMALIZATION runner for micro_rt.cortexm.ops (int8 and float32, over the last axis;
cortexm/src/mrt_normalization.c). LOG_SOFTMAX, whose kernels share that C file, runs through
ops.softmax with the other softmaxes.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import zero_point_of

from .context import CallContext, KernelCall, last_axis_rows
from .registry import FLOAT32, INT8, KernelKey, OpKernel


def run_l2norm(c: CallContext) -> list[KernelCall]:
    """mrt_l2norm_s8 or mrt_l2norm_f32."""
    rows, depth = last_axis_rows(c)
    if np.dtype(c.t(0).dtype) == np.float32:
        return [c.call("mrt_l2norm_f32", c.in_addr(0), c.out_addr(), rows, depth)]
    return [c.call("mrt_l2norm_s8", c.in_addr(0), c.out_addr(), rows, depth, zero_point_of(c.t(0)))]


KERNELS: dict[KernelKey, OpKernel] = {
    **{("L2_NORMALIZATION", t): OpKernel(run_l2norm) for t in (INT8, FLOAT32)},
}
