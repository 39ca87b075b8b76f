"""Reduce-family runners for micro_rt.cortexm.ops (cortexm/src/mrt_reduce.c): SUM and MEAN
(int8 MEAN keeps mrt_mean_s8; int16 MEAN and SUM of int8 / int16 here), REDUCE_MAX / REDUCE_MIN
(int8, float32), REDUCE_ALL (bool), float32 SUM / REDUCE_MAX / REDUCE_MIN, ARG_MAX / ARG_MIN
(int8, float32) and CUMSUM (int8, float32). The parameters come from the same micro_rt.kernels
helpers the numpy twins use.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import scale_of, zero_point_of
from micro_rt.kernels.quant import quantize_multiplier, quantize_multiplier_smaller_than_one_exp
from micro_rt.kernels.reduce import folded_multiplier, resolve_axes
from micro_rt.kernels.along_axis import CUMSUM_LEFT_SHIFT, axis_split

from .context import CallContext, KernelCall, UnsupportedOnMcu, node_params, uwords, words
from .elementwise import run_mean_f32, run_mean_s8
from .registry import ANY, FLOAT32, INT16, INT8, KernelKey, OpKernel

_OPS = {"SUM": 0, "REDUCE_MAX": 1, "REDUCE_MIN": 2, "REDUCE_ALL": 3, "MEAN": 4}      # MRT_REDUCE_*
_WALK_GROUPS = 3


def _constant_values(c: CallContext, i: int, what: str) -> np.ndarray:
    t = c.t(i)
    if t is None or getattr(t, "data", None) is None:
        raise UnsupportedOnMcu(f"{c.node.op_name} with a non-constant {what}")
    return np.asarray(t.data, np.int64).ravel()


def reduce_walk(shape: tuple, axes: list[int]) -> tuple[list[int], ...]:
    """mrt_reduce_walk of reducing `shape` over the resolved `axes`: neighbouring kept (reduced)
    axes merged, size-1 axes dropped, as (outer_count, outer_stride, inner_count, inner_stride),
    each padded at the front to three groups; UnsupportedOnMcu beyond three."""
    groups: list[list] = []         # [reduced?, count, stride of the innermost axis]
    stride = 1
    for d in range(len(shape) - 1, -1, -1):
        size = int(shape[d])
        if size != 1:
            reduced = d in axes
            if groups and groups[0][0] == reduced and groups[0][2] * groups[0][1] == stride:
                groups[0][1] *= size
            else:
                groups.insert(0, [reduced, size, stride])
        stride *= size
    walk = []
    for reduced in (False, True):
        part = [(n, s) for r, n, s in groups if r == reduced]
        if len(part) > _WALK_GROUPS:
            raise UnsupportedOnMcu(f"a reduction of shape {list(shape)} over axes {axes} walks "
                                   f"{len(part)} {'reduced' if reduced else 'kept'} axis groups, the kernel 3")
        part = [(1, 0)] * (_WALK_GROUPS - len(part)) + part
        walk += [[n for n, _ in part], [s for _, s in part]]
    return tuple(walk)


def _walk(c: CallContext) -> tuple[list[int], ...]:
    inp = c.t(0)
    axes = resolve_axes(c.node, _constant_values(c, 1, "axis"), len(inp.shape))
    return reduce_walk(tuple(inp.shape), axes)


def _int_params(c: CallContext) -> tuple:
    """(walk, op, elem_size, zp_count, mult, shift, out_zp, lo, hi) of mrt_reduce_int."""
    node, inp, out = c.node, c.t(0), c.out()
    walk = _walk(c)
    dt = np.dtype(inp.dtype)
    if node.op_name == "REDUCE_ALL":
        if dt != np.bool_:
            raise UnsupportedOnMcu(f"REDUCE_ALL of {dt.name} (bool only)")
        return walk, _OPS["REDUCE_ALL"], 1, 0, 0, 0, 0, 0, 1
    info = np.iinfo(dt)
    op = node.op_name
    if op in ("REDUCE_MAX", "REDUCE_MIN"):
        return walk, _OPS[op], dt.itemsize, 0, 0, 0, 0, info.min, info.max
    count = int(np.prod(walk[2]))
    mult, shift = quantize_multiplier(float(np.float32(scale_of(inp))) / float(np.float32(scale_of(out))))
    if op == "MEAN":
        mult, shift = folded_multiplier(mult, shift, count)
    zp_count = (zero_point_of(inp) * count + (1 << 31)) % (1 << 32) - (1 << 31)
    return walk, _OPS["SUM"], dt.itemsize, zp_count, mult, shift, zero_point_of(out), info.min, info.max


def run_reduce_int(c: CallContext) -> list[KernelCall]:
    """mrt_reduce_int: SUM / MEAN (int8, int16), REDUCE_MAX / MIN (int8), REDUCE_ALL (bool)."""
    walk, *rest = node_params(c.node, "reduce_int", lambda: _int_params(c))
    blob = uwords(c.in_addr(0), c.out_addr()) + words(*(v for part in walk for v in part), *rest)
    return [c.call("mrt_reduce_int", c.args(blob))]


def run_reduce_f32(c: CallContext) -> list[KernelCall]:
    """mrt_reduce_f32: SUM, MEAN, REDUCE_MAX, REDUCE_MIN."""
    walk = node_params(c.node, "reduce_f32", lambda: _walk(c))
    blob = uwords(c.in_addr(0), c.out_addr()) + words(*(v for part in walk for v in part), _OPS[c.node.op_name])
    return [c.call("mrt_reduce_f32", c.args(blob))]


def run_mean(c: CallContext) -> list[KernelCall]:
    """MEAN int8 / float32: mrt_mean_s8 / mrt_mean_f32 up to 4-D, the reduce walk above."""
    is_f32 = np.dtype(c.t(0).dtype) == np.float32
    if len(c.t(0).shape) <= 4:
        return (run_mean_f32 if is_f32 else run_mean_s8)(c)
    return (run_reduce_f32 if is_f32 else run_reduce_int)(c)


def _axis_split(c: CallContext) -> tuple[int, int, int]:
    inp = c.t(0)
    rank = len(inp.shape)
    axis = int(_constant_values(c, 1, "axis")[0])
    return axis_split(tuple(inp.shape), axis + rank if axis < 0 else axis)


def run_arg_min_max(c: CallContext) -> list[KernelCall]:
    """mrt_arg_min_max_s8 / _f32 on the input as [outer, axis, inner]."""
    outer, n, inner = node_params(c.node, "arg", lambda: _axis_split(c))
    if n == 0:
        raise UnsupportedOnMcu(f"{c.node.op_name} along an empty axis")
    fn = "mrt_arg_min_max_f32" if np.dtype(c.t(0).dtype) == np.float32 else "mrt_arg_min_max_s8"
    blob = uwords(c.in_addr(0), c.out_addr()) + words(outer, n, inner, int(c.node.op_name == "ARG_MAX"))
    return [c.call(fn, c.args(blob))]


def _cumsum_quant(inp, out) -> tuple[int, ...]:
    """TFLM's CumSum int8 parameters (as kernels/along_axis.cumsum_prepare computes them)."""
    twice_max_input_scale = 2 * float(np.float32(scale_of(inp)))
    in_mult, in_shift = quantize_multiplier_smaller_than_one_exp(float(np.float32(scale_of(inp)))
                                                                 / twice_max_input_scale)
    out_mult, out_shift = quantize_multiplier_smaller_than_one_exp(
        twice_max_input_scale / ((1 << CUMSUM_LEFT_SHIFT) * float(np.float32(scale_of(out)))))
    return -zero_point_of(inp), in_mult, in_shift, out_mult, out_shift, zero_point_of(out)


def run_cumsum(c: CallContext) -> list[KernelCall]:
    """mrt_cumsum_s8 / _f32 on the input as [outer, depth, inner]."""
    inp, out = c.t(0), c.out()
    outer, depth, inner = node_params(c.node, "cumsum", lambda: _axis_split(c))
    is_f32 = np.dtype(inp.dtype) == np.float32
    quant = (0,) * 6 if is_f32 else node_params(c.node, "cumsum_q", lambda: _cumsum_quant(inp, out))
    opts = c.node.options
    blob = uwords(c.in_addr(0), c.out_addr()) + words(outer, depth, inner, int(bool(opts.get("exclusive", False))),
                                                      int(bool(opts.get("reverse", False))), *quant)
    return [c.call("mrt_cumsum_f32" if is_f32 else "mrt_cumsum_s8", c.args(blob))]


KERNELS: dict[KernelKey, OpKernel] = {
    ("MEAN", INT8): OpKernel(run_mean),
    ("MEAN", FLOAT32): OpKernel(run_mean),
    ("MEAN", INT16): OpKernel(run_reduce_int),
    ("SUM", INT8): OpKernel(run_reduce_int),
    ("SUM", INT16): OpKernel(run_reduce_int),
    ("REDUCE_MAX", INT8): OpKernel(run_reduce_int),
    ("REDUCE_MIN", INT8): OpKernel(run_reduce_int),
    **{(op, FLOAT32): OpKernel(run_reduce_f32) for op in ("SUM", "REDUCE_MAX", "REDUCE_MIN")},
    ("REDUCE_ALL", ANY): OpKernel(run_reduce_int),
    **{(op, t): OpKernel(run_arg_min_max) for op in ("ARG_MAX", "ARG_MIN") for t in (INT8, FLOAT32)},
    **{("CUMSUM", t): OpKernel(run_cumsum) for t in (INT8, FLOAT32)},
}
