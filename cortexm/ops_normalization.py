"""Normalization-family runners for micro_rt.cortexm.ops: LOG_SOFTMAX and L2_NORMALIZATION
(int8, float32; cortexm/src/mrt_normalization.c) and int16 SOFTMAX (CMSIS-NN's arm_softmax_s16,
cortexm/src/mrt_softmax_s16.c), all over the last axis. The parameters come from the same
micro_rt.kernels helpers the numpy twins use.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import element_count, scale_of, zero_point_of
from micro_rt.kernels.normalization import log_softmax_scaling
from micro_rt.kernels.softmax import int16_softmax_luts, int16_softmax_multiplier

from .ops_context import CallContext, KernelCall, UnsupportedOnMcu, node_params, uwords, words


def _rows(c: CallContext) -> tuple[int, int]:
    """(rows, depth) of a last-axis op."""
    inp = c.t(0)
    depth = int(inp.shape[-1]) if len(inp.shape) else 1
    return (element_count(inp) // depth if depth else 0), depth


def run_log_softmax(c: CallContext) -> list[KernelCall]:
    """mrt_log_softmax_s8 (TFLM's LogSoftmaxOpData in a block) or mrt_log_softmax_f32."""
    rows, depth = _rows(c)
    if np.dtype(c.t(0).dtype) == np.float32:
        return [c.call("mrt_log_softmax_f32", c.in_addr(0), c.out_addr(), rows, depth)]
    scaling = node_params(c.node, "log_softmax", lambda: log_softmax_scaling(float(np.float32(scale_of(c.t(0))))))
    if scaling is None:
        raise UnsupportedOnMcu("LOG_SOFTMAX int8 with an input scale TFLM refuses")
    blob = uwords(c.in_addr(0), c.out_addr()) + words(rows, depth, *scaling)
    return [c.call("mrt_log_softmax_s8", c.args(blob))]


def run_l2norm(c: CallContext) -> list[KernelCall]:
    """mrt_l2norm_s8 or mrt_l2norm_f32."""
    rows, depth = _rows(c)
    if np.dtype(c.t(0).dtype) == np.float32:
        return [c.call("mrt_l2norm_f32", c.in_addr(0), c.out_addr(), rows, depth)]
    return [c.call("mrt_l2norm_s8", c.in_addr(0), c.out_addr(), rows, depth, zero_point_of(c.t(0)))]


def run_softmax_s16(c: CallContext) -> list[KernelCall]:
    """arm_softmax_s16 with TFLM's two tables."""
    inp, out = c.t(0), c.out()
    if np.dtype(out.dtype) != np.int16:
        raise UnsupportedOnMcu("SOFTMAX int16 to a non-int16 output")
    rows, depth = _rows(c)
    beta = float(np.float32(c.node.options.get("beta", 1.0)))
    mult, shift = node_params(c.node, "softmax_s16", lambda: int16_softmax_multiplier(scale_of(inp), beta))
    exp_lut, one_lut = node_params(c.node, "softmax_s16_luts", int16_softmax_luts)
    # TFLM keeps the tables in the arena's persistent tail (SRAM): here in the SRAM ARGS area
    # (2 x 1026 bytes), so their loads cost SRAM, not flash, cycles.
    luts = c.args(uwords(c.args(exp_lut.astype("<i2").tobytes()), c.args(one_lut.astype("<i2").tobytes())))
    return [c.call("arm_softmax_s16", c.in_addr(0), rows, depth, mult, shift, luts, c.out_addr())]
