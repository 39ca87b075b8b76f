"""Softmax runners for micro_rt.cortexm.ops, one family as CMSIS-NN groups it, all over the last
axis: SOFTMAX int8 in (arm_softmax_s8 / arm_softmax_s8_s16, cortexm/src/mrt_softmax.c), int16
(arm_softmax_s16 with TFLM's two tables, mrt_softmax.c) and float32 (mrt_softmax_f32), and
LOG_SOFTMAX int8 / float32 (mrt_log_softmax_s8 / _f32, mrt_normalization.c). The parameters
come from the same micro_rt.kernels helpers the numpy twins use."""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import element_count, scale_of
from micro_rt.kernels.normalization import log_softmax_scaling
from micro_rt.kernels.quant import calculate_input_radius, preprocess_softmax_scaling
from micro_rt.kernels.softmax import int16_softmax_luts, int16_softmax_multiplier

from .context import (CallContext, KernelCall, UnsupportedOnMcu, f32_bits, is_f32, last_axis_rows, node_params,
                          uwords, words)
from .registry import FLOAT32, INT16, INT8, KernelKey, OpKernel


def run_softmax_s8(c: CallContext) -> list[KernelCall]:
    node = c.node
    inp, out = c.t(0), c.out()
    beta = float(np.float32(node.options.get("beta", 1.0)))
    m, s = preprocess_softmax_scaling(beta, float(np.float32(scale_of(inp))), 5)
    diff_min = -calculate_input_radius(5, s)
    depth = int(inp.shape[-1])
    rows = int(np.prod(inp.shape)) // depth
    fn = "arm_softmax_s8" if np.dtype(out.dtype) == np.int8 else "arm_softmax_s8_s16"
    return [c.call(fn, c.in_addr(0), rows, depth, m, s, diff_min, c.out_addr())]


def run_softmax_s16(c: CallContext) -> list[KernelCall]:
    """arm_softmax_s16 with TFLM's two tables."""
    inp, out = c.t(0), c.out()
    if np.dtype(out.dtype) != np.int16:
        raise UnsupportedOnMcu("SOFTMAX int16 to a non-int16 output")
    rows, depth = last_axis_rows(c)
    beta = float(np.float32(c.node.options.get("beta", 1.0)))
    mult, shift = node_params(c.node, "softmax_s16", lambda: int16_softmax_multiplier(scale_of(inp), beta))
    exp_lut, one_lut = node_params(c.node, "softmax_s16_luts", int16_softmax_luts)
    # TFLM keeps the tables in the arena's persistent tail (SRAM): here in the SRAM ARGS area
    # (2 x 1026 bytes), so their loads cost SRAM, not flash, cycles.
    luts = c.args(uwords(c.args(exp_lut.astype("<i2").tobytes()), c.args(one_lut.astype("<i2").tobytes())))
    return [c.call("arm_softmax_s16", c.in_addr(0), rows, depth, mult, shift, luts, c.out_addr())]


def run_softmax_f32(c: CallContext) -> list[KernelCall]:
    inp, out = c.t(0), c.out()
    if not is_f32(out):
        raise UnsupportedOnMcu("SOFTMAX float32 to a non-float32 output")
    depth = int(inp.shape[-1])
    rows = element_count(inp) // depth if depth else 0
    beta = f32_bits(c.node.options.get("beta", 1.0))
    return [c.call("mrt_softmax_f32", c.in_addr(0), c.out_addr(), rows, depth, beta)]


def run_log_softmax(c: CallContext) -> list[KernelCall]:
    """mrt_log_softmax_s8 (TFLM's LogSoftmaxOpData in a block) or mrt_log_softmax_f32."""
    rows, depth = last_axis_rows(c)
    if np.dtype(c.t(0).dtype) == np.float32:
        return [c.call("mrt_log_softmax_f32", c.in_addr(0), c.out_addr(), rows, depth)]
    scaling = node_params(c.node, "log_softmax", lambda: log_softmax_scaling(float(np.float32(scale_of(c.t(0))))))
    if scaling is None:
        raise UnsupportedOnMcu("LOG_SOFTMAX int8 with an input scale TFLM refuses")
    blob = uwords(c.in_addr(0), c.out_addr()) + words(rows, depth, *scaling)
    return [c.call("mrt_log_softmax_s8", c.args(blob))]


KERNELS: dict[KernelKey, OpKernel] = {
    ("SOFTMAX", INT8): OpKernel(run_softmax_s8),
    ("SOFTMAX", INT16): OpKernel(run_softmax_s16),
    ("SOFTMAX", FLOAT32): OpKernel(run_softmax_f32, libm=True),
    ("LOG_SOFTMAX", INT8): OpKernel(run_log_softmax),
    ("LOG_SOFTMAX", FLOAT32): OpKernel(run_log_softmax, libm=True),
}
