"""Pooling runners for micro_rt.cortexm.ops beyond ops_nn's int8 / float32 ones
(cortexm/src/mrt_pooling_more.c): int16 AVERAGE_POOL_2D / MAX_POOL_2D (CMSIS-NN's
arm_avgpool_s16 / arm_max_pool_s16) and float32 L2_POOL_2D.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import activation_of, activation_range_float, activation_range_quantized
from micro_rt.kernels.kernel_util import scale_of, zero_point_of

from .ops_context import CallContext, KernelCall, UnsupportedOnMcu, dims, f32_bits, uwords, words
from .ops_nn import avgpool_buffer_size, pool_geometry

_FLT_MAX = float(np.finfo(np.float32).max)


def avgpool_s16_scratch(node, tensors, core: str) -> int:
    """arm_avgpool_s16_get_buffer_size: one int32 per channel on the DSP cores."""
    return avgpool_buffer_size(int(tensors[node.outputs[0]].shape[3]), core)


def _every_window_reaches(oh: int, ow: int, ih: int, iw: int, fh: int, fw: int, sh: int, sw: int, pad) -> bool:
    """True when every window holds a tap inside the image (arm_max_pool_s16 leaves an empty
    window's output unwritten; arm_avgpool_s16 refuses it)."""
    rows = all(max(0, oy * sh - pad.height) < min(ih, oy * sh - pad.height + fh) for oy in range(oh))
    cols = all(max(0, ox * sw - pad.width) < min(iw, ox * sw - pad.width + fw) for ox in range(ow))
    return rows and cols


def run_pool_s16(c: CallContext) -> list[KernelCall]:
    """arm_avgpool_s16 / arm_max_pool_s16 (scratch: the DSP cores' per-channel sums)."""
    node = c.node
    inp, out = c.t(0), c.out()
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, inp, out)
    if not _every_window_reaches(oh, ow, ih, iw, fh, fw, sh, sw, pad):
        raise UnsupportedOnMcu(f"{node.op_name} int16 with a window outside the image")
    amin, amax = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), np.int16)
    is_avg = node.op_name == "AVERAGE_POOL_2D"
    ctx = c.nn_context(avgpool_buffer_size(ch, c.core) if is_avg else 0)
    pool = c.args(words(sw, sh, pad.width, pad.height, amin, amax))
    in_dims = c.args(dims(n, ih, iw, ch))
    f_dims = c.args(dims(1, fh, fw, 1))
    o_dims = c.args(dims(n, oh, ow, ch))
    fn = "arm_avgpool_s16" if is_avg else "arm_max_pool_s16"
    return [c.call(fn, ctx, pool, in_dims, c.in_addr(0), f_dims, o_dims, c.out_addr())]


def run_l2_pool_f32(c: CallContext) -> list[KernelCall]:
    """mrt_l2_pool_f32; the activation range as CalculateActivationRange<float> (finite)."""
    node = c.node
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, c.t(0), c.out())
    lo, hi = activation_range_float(activation_of(node))
    lo, hi = max(lo, -_FLT_MAX), min(hi, _FLT_MAX)
    blob = uwords(c.in_addr(0), c.out_addr()) + words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad.height,
                                                      pad.width) + uwords(f32_bits(lo), f32_bits(hi))
    return [c.call("mrt_l2_pool_f32", c.args(blob))]
