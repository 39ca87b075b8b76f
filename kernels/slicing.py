"""SLICE, REVERSE_V2, SPLIT, SPLIT_V, UNPACK, DYNAMIC_UPDATE_SLICE: TFLM's reference kernels
(slice.cc, reverse.cc, split.cc, split_v.cc, unpack.cc, dynamic_update_slice.cc).

Data movement, so bit-exactness is about TFLM's own rules:
* SLICE reads begin / size (int32 or int64, the latter narrowed to int32) at invoke, size -1
  meaning "to the end", and writes the elements its loops visit one after the other: fewer
  than the output holds leaves the rest as the arena held it; reads outside the input or
  writes past the output (TFLM's undefined behaviour) are refused.
* REVERSE_V2 takes contiguous axes only (checked at invoke by TFLM, at prepare here when the
  axis tensor is a constant); it copies bytes, so it takes every type TFLM lists.
* SPLIT gives every output the size of output 0 along the axis; SPLIT_V each its own; both
  need a constant axis. UNPACK makes `num` outputs (its option, not the output count).
* DYNAMIC_UPDATE_SLICE copies the operand, then the update at start indices clamped to
  [0, operand - update] per axis (an update as large as the operand replaces it whole).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .kernel_util import (element_count, kernel_error, require_inputs, tensor_desc, type_label, type_name)

_SLICE_TYPES = tuple(np.dtype(t) for t in (np.float32, np.int32, np.int8, np.int16, np.bool_))
_REVERSE_TYPES = tuple(np.dtype(t) for t in (np.int32, np.float32, np.uint8, np.int8, np.int16, np.int64,
                                             np.bool_))
_SPLIT_TYPES = tuple(np.dtype(t) for t in (np.float32, np.int8, np.int16, np.int32))
_DUS_TYPES = _SPLIT_TYPES
_SLICE_MAX_DIMS = 5          # slice.cc kMaxDim
_MAX_DIMS = 6                # RuntimeShape::kMaxSmallSize (reverse.cc, dynamic_update_slice.cc)


@dataclass
class SliceOpData:
    """The host twin's precomputed plan (None: it depends on a tensor computed at run time)."""
    index: Optional[np.ndarray] = None     # SLICE: input flat index of each element written
    axes: Optional[tuple[int, ...]] = None  # REVERSE_V2: the axes reversed
    parts: Optional[list] = None           # SPLIT / SPLIT_V / UNPACK: per output, input flat index


def _data(node) -> SliceOpData:
    if node.user_data is None:
        node.user_data = SliceOpData()
    return node.user_data


def _check_io(node, n_in: Optional[int], n_out: Optional[int]) -> None:
    if (n_in is not None and len(node.inputs) != n_in) or (n_out is not None and len(node.outputs) != n_out):
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, expected "
                                 f"{n_in if n_in is not None else 'any'} and "
                                 f"{n_out if n_out is not None else 'any'}")


def _first_int32(t) -> int:
    """What TFLM's GetTensorData<int32_t>(t)[0] reads: the first 4 bytes as int32."""
    raw = np.ascontiguousarray(t.data).reshape(-1).view(np.uint8)
    return int(raw[:4].view(np.int32)[0])


# --------------------------------------------------------------------------- SLICE

def _slice_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 3, 1)
    inp, begin, size = require_inputs(ctx, node, 3)
    out = ctx.output(node, 0)
    d = _data(node)
    if np.dtype(inp.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in type")
    if np.dtype(inp.dtype) not in _SLICE_TYPES:
        raise kernel_error(node, f"input {tensor_desc(inp)}: Input tensor type {type_label(inp.dtype)} "
                                 "not supported.")
    for role, t in (("begin", begin), ("size", size)):
        if np.dtype(t.dtype) not in (np.int32, np.int64):
            # TFLM's message names the input's type here (a slip in slice.cc)
            raise kernel_error(node, f"{role} {tensor_desc(t)}: Begin tensor type {type_label(inp.dtype)} "
                                     f"not supported. ({role} must be int32 or int64)")
        if element_count(t) < len(inp.shape):
            raise kernel_error(node, f"{role} {tensor_desc(t)} has fewer values than input {tensor_desc(inp)} "
                                     "has dimensions")
    if np.dtype(begin.dtype) != np.dtype(size.dtype):
        raise kernel_error(node, f"begin {tensor_desc(begin)} and size {tensor_desc(size)} differ in type")
    if len(inp.shape) > _SLICE_MAX_DIMS:
        raise kernel_error(node, f"input {tensor_desc(inp)} has more than {_SLICE_MAX_DIMS} dimensions")
    if begin.is_constant and size.is_constant:
        d.index = slice_index(node, inp, out, begin.data, size.data)


def slice_bounds(inp, begin, size) -> tuple[list[int], list[int]]:
    """TFLM's start and stop per axis of the 5-D extended input (int64 values narrowed to
    int32 as GetBeginAndSizeVectors stores them; size -1: to the end)."""
    rank = len(inp.shape)
    b = np.asarray(begin).reshape(-1)[:rank].astype(np.int64).astype(np.int32).astype(np.int64)
    s = np.asarray(size).reshape(-1)[:rank].astype(np.int64).astype(np.int32).astype(np.int64)
    shape = [1] * (_SLICE_MAX_DIMS - rank) + [int(v) for v in inp.shape]
    start = [0] * (_SLICE_MAX_DIMS - rank) + [int(v) for v in b]
    sizes = [1] * (_SLICE_MAX_DIMS - rank) + [int(v) for v in s]
    stop = [dim if n == -1 else first + n for dim, first, n in zip(shape, start, sizes)]
    return start, stop


def slice_index(node, inp, out, begin, size) -> np.ndarray:
    """The input flat index of each element TFLM's loops write, in order; refuses reads
    outside the input and writes past the output."""
    start, stop = slice_bounds(inp, begin, size)
    shape = [1] * (_SLICE_MAX_DIMS - len(inp.shape)) + [int(v) for v in inp.shape]
    counts = [max(0, b - a) for a, b in zip(start, stop)]
    if any(n and (a < 0 or b > dim) for a, b, n, dim in zip(start, stop, counts, shape)):
        raise kernel_error(node, f"begin {start[-len(inp.shape):]} / end {stop[-len(inp.shape):]} reach "
                                 f"outside input {tensor_desc(inp)}")
    if math.prod(counts) > element_count(out):
        raise kernel_error(node, f"the slice holds {math.prod(counts)} elements, output {tensor_desc(out)} "
                                 f"only {element_count(out)} (TFLM would write past it)")
    flat = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    return flat[tuple(slice(a, a + n) for a, n in zip(start, counts))].reshape(-1)


def _slice_invoke(ctx: KernelContext, node: Node):
    d: SliceOpData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    index = d.index
    if index is None:
        index = slice_index(node, inp, out, ctx.required_input(node, 1).data, ctx.required_input(node, 2).data)
    out.data.reshape(-1)[:index.size] = inp.data.reshape(-1)[index]


# --------------------------------------------------------------------------- REVERSE_V2

def _reverse_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 2, 1)
    inp, axis = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if len(axis.shape) != 1:
        raise kernel_error(node, f"axis {tensor_desc(axis)} must be 1-D (NumDimensions(axis) != 1)")
    if len(inp.shape) > _MAX_DIMS:
        raise kernel_error(node, f"input {tensor_desc(inp)} has more than {_MAX_DIMS} dimensions")
    if len(inp.shape) < element_count(axis):
        raise kernel_error(node, f"axis {tensor_desc(axis)} lists more axes than input {tensor_desc(inp)} has")
    if np.dtype(inp.dtype) not in _REVERSE_TYPES:
        raise kernel_error(node, f"input {tensor_desc(inp)}: Type '{type_name(inp.dtype)}' is not supported "
                                 "by reverse.")
    if np.dtype(axis.dtype) != np.int32:
        raise kernel_error(node, f"axis {tensor_desc(axis)}: Axis Type '{type_name(axis.dtype)}' is not "
                                 "supported by reverse.")
    if np.dtype(inp.dtype) != np.dtype(out.dtype) or element_count(out) < element_count(inp):
        raise kernel_error(node, f"output {tensor_desc(out)} must have input {tensor_desc(inp)}'s type and size")
    if axis.is_constant:
        _data(node).axes = reverse_axes(node, inp, axis.data)


def reverse_axes(node, inp, raw) -> tuple[int, ...]:
    """The axes TFLM's ReverseV2Eval reverses: negatives wrapped, sorted, contiguous."""
    rank = len(inp.shape)
    axes = sorted(int(a) + rank if int(a) < 0 else int(a) for a in np.asarray(raw).reshape(-1))
    if not axes:
        raise kernel_error(node, "axis is empty (TFLM reads the axis before the first)")
    if any(not 0 <= a < rank for a in axes):
        raise kernel_error(node, f"axes {axes} out of range for input {tensor_desc(inp)}")
    if any(b != a + 1 for a, b in zip(axes, axes[1:])):
        raise kernel_error(node, f"axes {axes}: Non-contiguous `axes` not supported")
    return tuple(axes)


def _reverse_invoke(ctx: KernelContext, node: Node):
    d: SliceOpData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    axes = d.axes if d.axes is not None else reverse_axes(node, inp, ctx.required_input(node, 1).data)
    flipped = np.flip(inp.data, axes)
    out.data.reshape(-1)[:flipped.size] = flipped.reshape(-1)


# --------------------------------------------------------------------------- SPLIT / SPLIT_V / UNPACK

def split_axis(node, inp, axis_t) -> int:
    """SPLIT / SPLIT_V's axis: a constant (TFLM refuses another in prepare), read as int32
    (GetTensorData<int32_t>), negatives from the end."""
    if not axis_t.is_constant:
        raise kernel_error(node, f"axis {tensor_desc(axis_t)}: Non-constant >axis< tensor is not supported")
    if axis_t.nbytes < 4:
        raise kernel_error(node, f"axis {tensor_desc(axis_t)} holds no int32 value")
    axis = _first_int32(axis_t)
    rank = len(inp.shape)
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise kernel_error(node, f"axis {_first_int32(axis_t)} out of range for input {tensor_desc(inp)}")
    return axis


def split_layout(node, inp, axis_t, outputs) -> tuple[int, int, list[int]]:
    """(outer, inner, rows per output) of TFLM's SplitImpl / UnpackImpl: for each outer
    index, output k takes its next rows[k] * inner input elements in turn. SPLIT sizes every
    output like output 0, SPLIT_V each by its own shape, UNPACK one row each (its axis is an
    option: axis_t None). Refuses reads
    past the input and writes past an output (TFLM does not check)."""
    if node.op_name == "UNPACK":
        rank = len(inp.shape)
        axis = int(node.options.get("axis", 0))
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            raise kernel_error(node, f"axis {node.options.get('axis', 0)} out of range for input "
                                     f"{tensor_desc(inp)}")
        rows = [1] * len(outputs)
    else:
        axis = split_axis(node, inp, axis_t)
        for k, o in enumerate(outputs):
            if len(o.shape) <= axis:
                raise kernel_error(node, f"output {k} {tensor_desc(o)} has no axis {axis}")
        rows = ([int(outputs[0].shape[axis])] * len(outputs) if node.op_name == "SPLIT"
                else [int(o.shape[axis]) for o in outputs])
    outer, inner = math.prod(inp.shape[:axis]), math.prod(inp.shape[axis + 1:])
    step = sum(rows) * inner
    if outer * step > element_count(inp):
        raise kernel_error(node, f"the outputs take {outer * step} elements, input {tensor_desc(inp)} has "
                                 f"{element_count(inp)} (TFLM would read past it)")
    for k, (o, r) in enumerate(zip(outputs, rows)):
        if element_count(o) < outer * r * inner:
            raise kernel_error(node, f"output {k} {tensor_desc(o)} holds {element_count(o)} elements, TFLM "
                                     f"writes {outer * r * inner}")
    return outer, inner, rows


def _check_split_type(node, inp, outputs, message: str) -> None:
    if np.dtype(inp.dtype) not in _SPLIT_TYPES:
        raise kernel_error(node, f"input {tensor_desc(inp)}: {message.format(type_name(inp.dtype))}")
    for k, o in enumerate(outputs):
        if np.dtype(o.dtype) != np.dtype(inp.dtype):
            raise kernel_error(node, f"output {k} {tensor_desc(o)} type differs from input {tensor_desc(inp)}")


def _split_prepare(ctx: KernelContext, node: Node):
    if node.op_name == "UNPACK":
        (inp,) = require_inputs(ctx, node, 1)
        num = int(node.options.get("num", 0))
        if num != len(node.outputs):
            raise kernel_error(node, f"option num is {num} but the operator has {len(node.outputs)} outputs "
                                     "(TFLM writes `num` outputs)")
        axis_t, message = None, "Type '{}' is not supported by unpack."
    else:
        _check_io(node, 2 if node.op_name == "SPLIT" else 3, None)
        inputs = require_inputs(ctx, node, len(node.inputs))
        inp, axis_t = (inputs[1], inputs[0]) if node.op_name == "SPLIT" else (inputs[0], inputs[2])
        split_axis(node, inp, axis_t)
        message = "Type {} currently not supported."
    outputs = [ctx.output(node, k) for k in range(len(node.outputs))]
    _check_split_type(node, inp, outputs, message)
    if node.op_name == "SPLIT" and len(outputs[0].shape) != len(inp.shape):
        raise kernel_error(node, f"output 0 {tensor_desc(outputs[0])} and input {tensor_desc(inp)} differ in rank")
    outer, inner, rows = split_layout(node, inp, axis_t, outputs)
    step, first, parts = sum(rows) * inner, 0, []
    for r in rows:
        parts.append((np.arange(outer)[:, None] * step + first + np.arange(r * inner)[None, :]).reshape(-1))
        first += r * inner
    _data(node).parts = parts


def _split_invoke(ctx: KernelContext, node: Node):
    d: SliceOpData = node.user_data
    x = ctx.required_input(node, 1 if node.op_name == "SPLIT" else 0).data.reshape(-1)
    assert d.parts is not None                  # prepare made them
    for k, index in enumerate(d.parts):
        ctx.output(node, k).data.reshape(-1)[:index.size] = x[index]


# --------------------------------------------------------------------------- DYNAMIC_UPDATE_SLICE

def _dus_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 3, 1)
    operand, update, start = require_inputs(ctx, node, 3)
    out = ctx.output(node, 0)
    _data(node)
    if np.dtype(operand.dtype) != np.dtype(update.dtype):
        raise kernel_error(node, f"operand {tensor_desc(operand)} and update {tensor_desc(update)} differ "
                                 "in type")
    if np.dtype(start.dtype) not in (np.int32, np.int64):
        raise kernel_error(node, f"start indices {tensor_desc(start)} must be int32 or int64 "
                                 "(start_indices->type == kTfLiteInt32 || start_indices->type == "
                                 "kTfLiteInt64 was not true)")
    rank = len(operand.shape)
    if len(start.shape) != 1 or int(start.shape[0]) != rank:
        raise kernel_error(node, f"start indices {tensor_desc(start)} must hold one index per dimension "
                                 f"of operand {tensor_desc(operand)}")
    if len(update.shape) != rank or any(u > o for u, o in zip(update.shape, operand.shape)):
        raise kernel_error(node, f"update {tensor_desc(update)} must have operand {tensor_desc(operand)}'s "
                                 "rank and fit inside it")
    if np.dtype(operand.dtype) not in _DUS_TYPES:
        raise kernel_error(node, f"operand {tensor_desc(operand)}: DYNAMIC_UPDATE_SLICE: Operand type "
                                 f"{type_name(operand.dtype)} not supported.")
    if rank > _MAX_DIMS:
        raise kernel_error(node, f"operand {tensor_desc(operand)} has more than {_MAX_DIMS} dimensions")
    if np.dtype(out.dtype) != np.dtype(operand.dtype) or element_count(out) < element_count(operand):
        raise kernel_error(node, f"output {tensor_desc(out)} must have operand {tensor_desc(operand)}'s "
                                 "type and size")


def clamped_starts(operand_shape, update_shape, raw) -> list[int]:
    """CalculateClampedStartIndices: min(max(0, index), operand - update) per axis."""
    values = np.asarray(raw).reshape(-1).astype(np.int64)
    return [int(min(max(0, int(v)), o - u)) for v, o, u in zip(values, operand_shape, update_shape)]


def _dus_invoke(ctx: KernelContext, node: Node):
    operand, update, start = (ctx.required_input(node, k) for k in range(3))
    out = ctx.output(node, 0).data.reshape(-1)
    n = element_count(operand)
    if element_count(update) == n:
        out[:n] = update.data.reshape(-1)
        return
    out[:n] = operand.data.reshape(-1)
    if element_count(update) == 0:
        return
    first = clamped_starts(operand.shape, update.shape, start.data)
    view = out[:n].reshape(operand.shape)
    view[tuple(slice(a, a + u) for a, u in zip(first, update.shape))] = update.data


def _reg(name, prepare, invoke, *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(None, SliceOpData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("SLICE", _reg("SLICE", _slice_prepare, _slice_invoke, temps="i0 i1 i2 o0"), 6),
    ("REVERSE_V2", _reg("REVERSE_V2", _reverse_prepare, _reverse_invoke, temps="i0 i1 o0"), 3),
    ("SPLIT", _reg("SPLIT", _split_prepare, _split_invoke, temps="i0"), 4),
    ("SPLIT_V", _reg("SPLIT_V", _split_prepare, _split_invoke, temps="i2"), 2),
    ("UNPACK", _reg("UNPACK", _split_prepare, _split_invoke, temps=""), 4),
    ("DYNAMIC_UPDATE_SLICE", _reg("DYNAMIC_UPDATE_SLICE", _dus_prepare, _dus_invoke, temps="i0 i1 i2 o0"), 4),
]
