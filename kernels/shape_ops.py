"""Data-movement ops: RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE, PACK, CONCATENATION, TRANSPOSE,
PAD, PADV2, STRIDED_SLICE, CAST — TFLM's reference kernels (no arithmetic, so bit-exactness is
about indices, pad values and TFLM's own rules: e.g. int8 CONCATENATION copies raw values even
when input scales differ, STRIDED_SLICE ignores ellipsis/new-axis masks and the offset option).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .kernel_util import (kernel_error, require_inputs, scale_of, tensor_desc, type_code, type_label,
                          type_name, zero_point_of)


@dataclass
class ShapeOpData:
    params: dict = field(default_factory=dict)
    index: Optional[np.ndarray] = None       # flat gather index (STRIDED_SLICE)
    slices: Any = None                       # interior slices (PAD)


def _nelem(t) -> int:
    return int(math.prod(t.shape))


def _data(node) -> ShapeOpData:
    if node.user_data is None:
        node.user_data = ShapeOpData()
    return node.user_data


def _copy_flat(dst: np.ndarray, src: np.ndarray) -> None:
    np.copyto(dst.reshape(-1), np.asarray(src).reshape(-1))


# --------------------------------------------------------------------------- RESHAPE / SQUEEZE / EXPAND_DIMS

def _same_size_prepare(ctx: KernelContext, node: Node):
    _data(node)
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    if np.dtype(i.dtype) != np.dtype(o.dtype):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in type")
    if _nelem(i) != _nelem(o):
        raise kernel_error(node, f"input {tensor_desc(i)} has {_nelem(i)} elements, output "
                         f"{tensor_desc(o)} has {_nelem(o)}")


def _copy_invoke(ctx: KernelContext, node: Node):
    _copy_flat(ctx.output(node, 0).data, ctx.required_input(node, 0).data)


def _expand_dims_prepare(ctx: KernelContext, node: Node):
    _same_size_prepare(ctx, node)
    i, axis_t = require_inputs(ctx, node, 2)
    o = ctx.output(node, 0)
    if np.dtype(i.dtype) not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_desc(i)}: Expand_Dims only currently supports int8, int16 "
                         f"and float32, got {type_code(i.dtype)}.")
    if not axis_t.is_constant:
        raise kernel_error(node, f"axis {tensor_desc(axis_t)}: non-constant axis is not supported")
    if _nelem(axis_t) != 1:
        raise kernel_error(node, f"axis {tensor_desc(axis_t)} must hold one value")
    axis = int(np.asarray(axis_t.data).reshape(-1)[0])
    rank = len(i.shape)
    if axis < 0:
        axis += rank + 1
    expected = list(i.shape)
    if not 0 <= axis <= rank:
        raise kernel_error(node, f"axis {axis} out of range for {tensor_desc(i)}")
    expected.insert(axis, 1)
    if list(o.shape) != expected:
        raise kernel_error(node, f"output {tensor_desc(o)} does not match expanded shape {expected}")


# --------------------------------------------------------------------------- SHAPE

def _shape_prepare(ctx: KernelContext, node: Node):
    _data(node)
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    if np.dtype(o.dtype) != np.int32:
        raise kernel_error(node, f"output {tensor_desc(o)}: Output type {type_label(o.dtype)} not supported. "
                         "(SHAPE writes int32 only)")
    if _nelem(o) != len(i.shape):
        raise kernel_error(node, f"output {tensor_desc(o)} cannot hold the {len(i.shape)} dims of "
                         f"{tensor_desc(i)}")


def _shape_invoke(ctx: KernelContext, node: Node):
    i = ctx.required_input(node, 0)
    ctx.output(node, 0).data.reshape(-1)[...] = np.asarray(i.shape, np.int32)


# --------------------------------------------------------------------------- PACK

def _pack_prepare(ctx: KernelContext, node: Node):
    d = _data(node)
    o = ctx.output(node, 0)
    n = len(node.inputs)
    first = require_inputs(ctx, node)[0]
    axis = int(node.options.get("axis", 0))
    if axis < 0:
        axis += len(first.shape) + 1
    if not 0 <= axis <= len(first.shape):
        raise kernel_error(node, f"axis {node.options.get('axis')} out of range for {tensor_desc(first)}")
    if np.dtype(o.dtype) not in (np.float32, np.int8, np.int16, np.int32, np.int64):
        raise kernel_error(node, f"output {tensor_desc(o)}: Type '{type_name(o.dtype)}' is not supported by pack.")
    for k in range(n):
        t = ctx.required_input(node, k)
        if tuple(t.shape) != tuple(first.shape) or np.dtype(t.dtype) != np.dtype(o.dtype):
            raise kernel_error(node, f"input {k} {tensor_desc(t)} does not match {tensor_desc(first)}")
    expected = list(first.shape)
    expected.insert(axis, n)
    if _nelem(o) != math.prod(expected):
        raise kernel_error(node, f"output {tensor_desc(o)} does not match packed shape {expected}")
    # TFLM's PACK has no prepare: its loop copies values_count inputs, laid out by the output's
    # dimensions before and after the axis (counted on the output's rank).
    values_count = int(node.options.get("values_count", 0))
    if values_count != n:
        raise kernel_error(node, f"values_count option {values_count} differs from the {n} inputs: TFLM's "
                                 "kernel would leave the output partly unwritten or read missing inputs")
    out_axis = int(node.options.get("axis", 0))
    out_axis += len(o.shape) if out_axis < 0 else 0
    if not (0 <= out_axis < len(o.shape)
            and math.prod(o.shape[:out_axis]) == math.prod(first.shape[:axis])
            and math.prod(o.shape[out_axis + 1:]) == math.prod(first.shape[axis:])):
        raise kernel_error(node, f"output {tensor_desc(o)} with axis {node.options.get('axis', 0)} does not "
                                 f"lay out {n} inputs {tensor_desc(first)} the way TFLM's kernel copies them "
                                 f"(expected shape {expected})")
    d.params = dict(axis=axis, shape=tuple(expected))


def _pack_invoke(ctx: KernelContext, node: Node):
    d: ShapeOpData = node.user_data
    arrays = [ctx.required_input(node, k).data for k in range(len(node.inputs))]
    dst = ctx.output(node, 0).data.reshape(d.params["shape"])
    np.stack(arrays, axis=d.params["axis"], out=dst)


# --------------------------------------------------------------------------- CONCATENATION

_CONCAT_MAX_INPUTS = 10


def _concat_prepare(ctx: KernelContext, node: Node):
    d = _data(node)
    o = ctx.output(node, 0)
    act = node.options.get("fused_activation_function", "NONE")
    if act != "NONE":
        raise kernel_error(node, f"fused activation {act} is not supported")
    dt = np.dtype(o.dtype)
    if dt not in (np.float32, np.int8, np.int16, np.int32, np.int64, np.bool_):
        raise kernel_error(node, f"output {tensor_desc(o)}: type {dt.name} not supported")
    n = len(node.inputs)
    if n > _CONCAT_MAX_INPUTS:
        raise kernel_error(node, f"{n} inputs, at most {_CONCAT_MAX_INPUTS} are supported")
    axis = int(node.options.get("axis", 0))
    if not -len(o.shape) <= axis < len(o.shape):
        raise kernel_error(node, f"axis {axis} is out of range for output {tensor_desc(o)} of "
                                 f"{len(o.shape)} dimensions")
    if axis < 0:
        axis += len(o.shape)
    require_inputs(ctx, node)
    for k in range(n):
        t = ctx.required_input(node, k)
        if np.dtype(t.dtype) != dt:
            raise kernel_error(node, f"input {k} {tensor_desc(t)} type differs from output {tensor_desc(o)}")
        if len(t.shape) > 6:
            raise kernel_error(node, f"input {k} {tensor_desc(t)} has more than 6 dimensions")
        if len(t.shape) != len(o.shape) or any(
                a != b for j, (a, b) in enumerate(zip(t.shape, o.shape)) if j != axis):
            raise kernel_error(node, f"input {k} {tensor_desc(t)} does not fit output {tensor_desc(o)} "
                             f"on axis {axis}")
    if sum(ctx.required_input(node, k).shape[axis] for k in range(n)) != o.shape[axis]:
        raise kernel_error(node, f"inputs do not add up to output {tensor_desc(o)} along axis {axis}")
    if dt == np.int8:
        # TFLM copies raw int8 values, so every input must share the output's quantization.
        for k in range(n):
            t = ctx.required_input(node, k)
            if float(scale_of(t)) != float(scale_of(o)) or zero_point_of(t) != zero_point_of(o):
                raise kernel_error(node, f"input {k} {tensor_desc(t)} quantization (scale {scale_of(t)}, "
                                 f"zero point {zero_point_of(t)}) differs from output "
                                 f"{tensor_desc(o)} (scale {scale_of(o)}, zero point "
                                 f"{zero_point_of(o)})")
        # The TFLM the oracle is built from keeps no per-input scale/zero-point arrays here
        # (measured: its tail has none), so nothing more is allocated.
    d.params = dict(axis=axis)


def _concat_invoke(ctx: KernelContext, node: Node):
    d: ShapeOpData = node.user_data
    arrays = [ctx.required_input(node, k).data for k in range(len(node.inputs))]
    dst = ctx.output(node, 0).data
    np.concatenate(arrays, axis=d.params["axis"], out=dst)


# --------------------------------------------------------------------------- TRANSPOSE

def _transpose_prepare(ctx: KernelContext, node: Node):
    d = _data(node)
    i, perm_t = require_inputs(ctx, node, 2)
    o = ctx.output(node, 0)
    dt = np.dtype(i.dtype)
    if dt != np.dtype(o.dtype):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in type")
    if dt not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_desc(i)}: Type {type_name(dt)} is currently not supported by "
                         "Transpose. Only float32, int8 and int16 are supported")
    if len(i.shape) > 6:
        raise kernel_error(node, f"input {tensor_desc(i)}: more than 6 dimensions")
    if _nelem(perm_t) != len(i.shape):
        raise kernel_error(node, f"perm {tensor_desc(perm_t)} does not match rank of {tensor_desc(i)}")
    d.params = dict(perm=None)
    if perm_t.is_constant:
        perm = _checked_perm(node, perm_t.data, i, o)
        d.params["perm"] = perm


def _checked_perm(node, raw, i, o) -> tuple:
    perm = tuple(int(p) for p in np.asarray(raw).reshape(-1))
    rank = len(i.shape)
    perm = tuple(p + rank if p < 0 else p for p in perm)
    if sorted(perm) != list(range(rank)):
        raise kernel_error(node, f"perm {list(perm)} is not a permutation of {rank} axes")
    expected = tuple(i.shape[p] for p in perm)
    if _nelem(o) != math.prod(expected):
        raise kernel_error(node, f"output {tensor_desc(o)} does not match transposed shape {list(expected)}")
    return perm


def _transpose_invoke(ctx: KernelContext, node: Node):
    d: ShapeOpData = node.user_data
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    perm = d.params["perm"]
    if perm is None:
        perm = _checked_perm(node, ctx.required_input(node, 1).data, i, o)
    src = i.data
    dst = o.data
    t = np.transpose(src, perm)
    if dst.shape != t.shape:
        dst = dst.reshape(t.shape)
    np.copyto(dst, t)


# --------------------------------------------------------------------------- PAD / PADV2

def _pad_prepare(ctx: KernelContext, node: Node):
    d = _data(node)
    n_in = len(node.inputs)
    if n_in not in (2, 3):
        raise kernel_error(node, f"{n_in} inputs, expected 2 or 3")
    i, pad_t = require_inputs(ctx, node, 2)
    o = ctx.output(node, 0)
    cv = ctx.input(node, 2) if n_in == 3 else None
    dt = np.dtype(i.dtype)
    if dt != np.dtype(o.dtype):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in type")
    if dt not in (np.float32, np.int8, np.int16, np.int32):
        raise kernel_error(node, f"input {tensor_desc(i)}: Type {type_name(dt)} not currently supported by Pad.")
    if len(i.shape) > 5:
        raise kernel_error(node, f"input {tensor_desc(i)}: more than 5 dimensions")
    if cv is not None:
        if np.dtype(cv.dtype) != dt:
            raise kernel_error(node, f"constant_values {tensor_desc(cv)} type differs from input")
        if _nelem(cv) != 1:
            raise kernel_error(node, f"constant_values {tensor_desc(cv)} is not a scalar")
    if len(i.shape) != len(o.shape):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in rank")
    if _nelem(pad_t) != 2 * len(o.shape):
        raise kernel_error(node, f"paddings {tensor_desc(pad_t)} must hold 2 values per output dim")
    if not pad_t.is_constant:
        raise kernel_error(node, f"paddings {tensor_desc(pad_t)}: non-constant paddings are not supported")
    pads = np.asarray(pad_t.data).reshape(-1, 2).astype(np.int64)
    for k, dim in enumerate(o.shape):
        expected = i.shape[k] + int(pads[k, 0]) + int(pads[k, 1])
        if dim != expected:
            raise kernel_error(node, f"output {tensor_desc(o)} dim {k} is {dim}, paddings give {expected}")
    if np.any(pads < 0):
        raise kernel_error(node, f"paddings {tensor_desc(pad_t)} has negative values")
    if dt == np.int8:
        if cv is None:
            if not -128 <= zero_point_of(o) <= 127:
                raise kernel_error(node, f"output {tensor_desc(o)} zero point out of int8 range")
        else:
            if zero_point_of(o) != zero_point_of(cv) or \
                    float(scale_of(o)) != float(scale_of(cv)):
                raise kernel_error(node, f"constant_values {tensor_desc(cv)} quantization differs from "
                                 f"output {tensor_desc(o)}")
    d.slices = tuple(slice(int(p0), int(p0) + s) for (p0, _), s in zip(pads, i.shape))
    default = np.zeros((), dt)
    if dt == np.int8:
        default = np.array(zero_point_of(o), np.int64).astype(np.uint8).view(np.int8)
    d.params = dict(default=default, has_cv=cv is not None, shape=tuple(o.shape))


def _pad_invoke(ctx: KernelContext, node: Node):
    d: ShapeOpData = node.user_data
    src = ctx.required_input(node, 0).data
    dst = ctx.output(node, 0).data
    if dst.shape != d.params["shape"]:
        dst = dst.reshape(d.params["shape"])
    value = ctx.required_input(node, 2).data.reshape(-1)[0] if d.params["has_cv"] else d.params["default"]
    dst[...] = value
    dst[d.slices] = src


# --------------------------------------------------------------------------- STRIDED_SLICE

def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if hi < v else (lo if v < lo else v)


def _ss_start_eval(start: int, stride: int, size: int, begin_masked: bool) -> int:
    """StridedSliceStartForAxis (the eval path)."""
    if start < 0:
        start += size
    start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
    if begin_masked:
        start = 0 if stride > 0 else size - 1
    return start


def _ss_end_eval(end: int, start: int, stride: int, size: int, end_masked: bool,
                 shrink: bool) -> int:
    """StridedSliceEndForAxis (the eval path; TFLM never sets params.offset)."""
    if shrink:
        return start if start >= size else start + 1
    if end < 0:
        end += size
    end = _clamp(end, 0, size) if stride > 0 else _clamp(end, -1, size - 1)
    if end_masked:
        end = size if stride > 0 else -1
    return end


def _ss_start_check(start: int, stride: int, size: int, begin_masked: bool) -> int:
    """strided_slice::StartForAxis (used by TFLM's output-size check)."""
    if size == 0:
        return 0
    if begin_masked:
        start = -(1 << 31) if stride > 0 else (1 << 31) - 1
    if start < 0:
        start += size
    return _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)


def _ss_stop_check(stop: int, start: int, stride: int, size: int, end_masked: bool,
                   shrink: bool) -> int:
    if size == 0:
        return 0
    if shrink:
        return start + 1
    if end_masked:
        stop = (1 << 31) - 1 if stride > 0 else -(1 << 31)
    if stop < 0:
        stop += size
    return _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)


def strided_slice_plan(in_shape, begin, end, strides, begin_mask: int, end_mask: int,
                       shrink_mask: int):
    """Per-axis index lists (eval path) and the output shape TFLM's prepare expects."""
    axes = []
    out_shape = []
    for ax, size in enumerate(in_shape):
        stride = int(strides[ax])
        bm, em, sm = bool(begin_mask >> ax & 1), bool(end_mask >> ax & 1), bool(shrink_mask >> ax & 1)
        s = _ss_start_eval(int(begin[ax]), stride, size, bm)
        e = _ss_end_eval(int(end[ax]), s, stride, size, em, sm)
        axes.append(np.arange(s, e, stride, dtype=np.int64))
        cs = _ss_start_check(int(begin[ax]), stride, size, bm)
        ce = _ss_stop_check(int(end[ax]), cs, stride, size, em, sm)
        if sm:
            ce = cs + 1
        dim = math.ceil(float(np.float32(ce - cs) / np.float32(stride)))
        dim = max(dim, 0)
        if not sm:
            out_shape.append(dim)
    return axes, out_shape


def _strided_slice_prepare(ctx: KernelContext, node: Node):
    d = _data(node)
    if len(node.inputs) != 4:
        raise kernel_error(node, f"{len(node.inputs)} inputs, expected 4")
    i, b_t, e_t, s_t = require_inputs(ctx, node, 4)
    o = ctx.output(node, 0)
    rank = len(i.shape)
    if rank > 4:
        raise kernel_error(node, f"input {tensor_desc(i)}: input dim should not exceed 4")
    for name, t in (("begin", b_t), ("end", e_t), ("strides", s_t)):
        if not t.is_constant:
            raise kernel_error(node, f"non-constant {name} tensor {tensor_desc(t)} is not supported")
        if _nelem(t) < rank:
            raise kernel_error(node, f"{name} tensor {tensor_desc(t)} has fewer than {rank} values")
    begin = np.asarray(b_t.data).reshape(-1).astype(np.int64)
    end = np.asarray(e_t.data).reshape(-1).astype(np.int64)
    strides = np.asarray(s_t.data).reshape(-1).astype(np.int64)
    if np.any(strides[:rank] == 0):
        raise kernel_error(node, "stride value has to be non-zero")
    opts = node.options
    axes, out_shape = strided_slice_plan(i.shape, begin, end, strides,
                                         int(opts.get("begin_mask", 0)), int(opts.get("end_mask", 0)),
                                         int(opts.get("shrink_axis_mask", 0)))
    if list(o.shape) != out_shape:
        raise kernel_error(node, f"output {tensor_desc(o)} does not match computed shape {out_shape}")
    if np.dtype(i.dtype) != np.dtype(o.dtype):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in type")
    if np.dtype(i.dtype) not in _STRIDED_SLICE_TYPES:
        raise kernel_error(node, f"input {tensor_desc(i)}: Type {type_label(i.dtype)} not supported.")
    flat = np.arange(_nelem(i), dtype=np.int64).reshape(i.shape) if rank else np.zeros((), np.int64)
    d.index = flat[np.ix_(*axes)].reshape(-1) if rank else flat.reshape(-1)


def _strided_slice_invoke(ctx: KernelContext, node: Node):
    d: ShapeOpData = node.user_data
    src = ctx.required_input(node, 0).data.reshape(-1)
    dst = ctx.output(node, 0).data.reshape(-1)
    assert d.index is not None                  # prepare made it
    if d.index.size == dst.size:
        np.take(src, d.index, out=dst)
    else:
        # TFLM's sequential writer fills only the elements its loops visit (e.g. a shrunk axis
        # with a negative stride visits none); the rest of the output is left as it was.
        n = min(d.index.size, dst.size)
        dst[:n] = src[d.index[:n]]


_STRIDED_SLICE_TYPES = tuple(np.dtype(t) for t in (np.float32, np.int8, np.int16, np.int32, np.bool_))


# --------------------------------------------------------------------------- CAST

def _cast_prepare(ctx: KernelContext, node: Node):
    _data(node)
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    if _nelem(i) != _nelem(o):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in size")
    # TFLM's CastEval: these types in and out (uint8 and int64 neither way).
    if np.dtype(i.dtype) not in _CAST_INPUT_TYPES:
        raise kernel_error(node, f"input {tensor_desc(i)}: Input type {type_label(i.dtype)} not supported.")
    if np.dtype(o.dtype) not in _CAST_OUTPUT_TYPES:
        raise kernel_error(node, f"output {tensor_desc(o)}: Output type {type_label(o.dtype)} not supported.")


_CAST_INPUT_TYPES = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint32, np.float32, np.bool_))
_CAST_OUTPUT_TYPES = _CAST_INPUT_TYPES


def cast_values(x: np.ndarray, out_dtype) -> np.ndarray:
    """CAST as the oracle computes it: integers wrap (static_cast), bool is x != 0, and float ->
    integer truncates and saturates to the output type, NaN giving 0 (measured on the oracle:
    3e9 -> uint32 3000000000, -200.0 -> int8 -128, 1e20 -> int32 2147483647, NaN -> 0)."""
    out_dtype = np.dtype(out_dtype)
    x = np.asarray(x)
    if out_dtype == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and out_dtype.kind in "iu":
        info = np.iinfo(out_dtype)
        with np.errstate(invalid="ignore"):
            t = np.clip(np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=np.inf, neginf=-np.inf)),
                        float(info.min), float(info.max))
        return t.astype(out_dtype)
    return x.astype(out_dtype)


def _cast_invoke(ctx: KernelContext, node: Node):
    o = ctx.output(node, 0)
    dst = o.data
    np.copyto(dst.reshape(-1), cast_values(ctx.required_input(node, 0).data, dst.dtype).reshape(-1))


def _reg(name, prepare, invoke, struct_name=None, *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(struct_name, ShapeOpData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("RESHAPE", _reg("RESHAPE", _same_size_prepare, _copy_invoke, temps="i0 o0"), 2),
    ("SQUEEZE", _reg("SQUEEZE", _same_size_prepare, _copy_invoke, temps="i0 o0"), 2),
    ("EXPAND_DIMS", _reg("EXPAND_DIMS", _expand_dims_prepare, _copy_invoke, temps="i0 i1 o0"), 2),
    ("SHAPE", _reg("SHAPE", _shape_prepare, _shape_invoke, temps=""), 2),
    ("PACK", _reg("PACK", _pack_prepare, _pack_invoke, temps=""), 4),
    ("CONCATENATION", _reg("CONCATENATION", _concat_prepare, _concat_invoke,
                           "OpDataConcatenation", temps="i0 o0 | i*"), 4),
    ("TRANSPOSE", _reg("TRANSPOSE", _transpose_prepare, _transpose_invoke, temps="i0 i1 o0"), 6),
    ("PAD", _reg("PAD", _pad_prepare, _pad_invoke, "OpDataPad", temps="i0 i1 i2 o0"), 4),
    ("PADV2", _reg("PADV2", _pad_prepare, _pad_invoke, "OpDataPad", temps="i0 i1 i2 o0"), 4),
    ("STRIDED_SLICE", _reg("STRIDED_SLICE", _strided_slice_prepare, _strided_slice_invoke,
                           "StridedSliceOpData", temps="i0 i1 i2 i3 o0"), 8),
    ("CAST", _reg("CAST", _cast_prepare, _cast_invoke, temps="i0 o0"), 6),
]
