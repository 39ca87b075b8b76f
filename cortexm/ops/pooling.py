"""Pooling runners for micro_rt.cortexm.ops, one family as CMSIS-NN groups it: AVERAGE_POOL_2D
and MAX_POOL_2D in int8 (arm_avgpool_s8 / arm_max_pool_s8, cortexm/src/mrt_pooling.c), int16
(arm_avgpool_s16 / arm_max_pool_s16, mrt_pooling_s16.c) and float32 (mrt_avgpool_f32 /
mrt_maxpool_f32), and the float32 L2_POOL_2D (mrt_l2_pool_f32). The window is the convolutions'
(kernels/conv_shapes.py window: TFLM's ComputePaddingHeightWidth)."""
from __future__ import annotations

import numpy as np

from micro_rt.cmsis_nn_scratch import avgpool_buffer_size
from micro_rt.kernels.conv_shapes import window
from micro_rt.kernels.kernel_util import (activation_of, activation_range_float, activation_range_quantized,
                                          scale_of, zero_point_of)

from .context import CallContext, KernelCall, UnsupportedOnMcu, dims, f32_activation, f32_bits, uwords, words
from .registry import FLOAT32, INT16, INT8, KernelKey, OpKernel

_FLT_MAX = float(np.finfo(np.float32).max)


def pool_geometry(node, inp, out):
    """(n, ih, iw, ch, oh, ow, fh, fw, sh, sw, padding) of a pooling node."""
    o = node.options
    n, ih, iw, ch = (int(d) for d in inp.shape)
    _, oh, ow, _ = (int(d) for d in out.shape)
    fh, fw = int(o.get("filter_height", 1)), int(o.get("filter_width", 1))
    sh, sw, pad = window(o, ih, iw, fh, fw)
    return n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad


def _every_window_reaches(oh: int, ow: int, ih: int, iw: int, fh: int, fw: int, sh: int, sw: int, pad) -> bool:
    """True when every pooling window holds a tap inside the image."""
    rows = all(max(0, oy * sh - pad.height) < min(ih, oy * sh - pad.height + fh) for oy in range(oh))
    cols = all(max(0, ox * sw - pad.width) < min(iw, ox * sw - pad.width + fw) for ox in range(ow))
    return rows and cols


def run_pool_int(c: CallContext) -> list[KernelCall]:
    """arm_avgpool_s8 / arm_max_pool_s8, or for int16 arm_avgpool_s16 / arm_max_pool_s16 (the
    average's scratch: one int32 per channel on the DSP cores, the same size for both types)."""
    node = c.node
    inp, out = c.t(0), c.out()
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, inp, out)
    dt = np.dtype(inp.dtype)
    if dt == np.int16 and not _every_window_reaches(oh, ow, ih, iw, fh, fw, sh, sw, pad):
        # arm_max_pool_s16 leaves such an output unwritten (the twin gives the activation's minimum)
        raise UnsupportedOnMcu(f"{node.op_name} int16 with a window outside the image")
    amin, amax = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), dt)
    is_avg = node.op_name == "AVERAGE_POOL_2D"
    ctx = c.nn_context(avgpool_buffer_size(ch, c.core, ow, int16=dt == np.int16) if is_avg else 0)
    pool = c.args(words(sw, sh, pad.width, pad.height, amin, amax))
    in_dims = c.args(dims(n, ih, iw, ch))
    f_dims = c.args(dims(1, fh, fw, 1))
    o_dims = c.args(dims(n, oh, ow, ch))
    suffix = "s16" if dt == np.int16 else "s8"
    fn = f"arm_avgpool_{suffix}" if is_avg else f"arm_max_pool_{suffix}"
    return [c.call(fn, ctx, pool, in_dims, c.in_addr(0), f_dims, o_dims, c.out_addr())]


def run_pool_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, c.t(0), c.out())
    lo, hi = f32_activation(node)
    blob = uwords(c.in_addr(0), c.out_addr()) + words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw,
                                                      pad.height, pad.width) + uwords(lo, hi)
    fn = "mrt_avgpool_f32" if node.op_name == "AVERAGE_POOL_2D" else "mrt_maxpool_f32"
    return [c.call(fn, c.args(blob))]


def run_l2_pool_f32(c: CallContext) -> list[KernelCall]:
    """mrt_l2_pool_f32; the activation range as CalculateActivationRange<float> (finite)."""
    node = c.node
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, c.t(0), c.out())
    lo, hi = activation_range_float(activation_of(node))
    lo, hi = max(lo, -_FLT_MAX), min(hi, _FLT_MAX)
    blob = uwords(c.in_addr(0), c.out_addr()) + words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad.height,
                                                      pad.width) + uwords(f32_bits(lo), f32_bits(hi))
    return [c.call("mrt_l2_pool_f32", c.args(blob))]


KERNELS: dict[KernelKey, OpKernel] = {
    **{(op, t): OpKernel(run_pool_int) for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D") for t in (INT8, INT16)},
    **{(op, FLOAT32): OpKernel(run_pool_f32) for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D")},
    ("L2_POOL_2D", FLOAT32): OpKernel(run_l2_pool_f32),
}
