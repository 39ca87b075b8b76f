"""GATHER, GATHER_ND, EMBEDDING_LOOKUP: TFLM's reference kernels (gather.cc, gather_nd.cc,
embedding_lookup.cc). The indices are read at invoke.

* GATHER and GATHER_ND take float32 and int8 params with int32 indices; both compute the
  output shape in prepare (after copying the output's dims to persistent memory). TFLM only
  DCHECKs GATHER's indices; an index outside the axis is refused here at invoke. GATHER_ND
  checks each slice's flat start only (`from_pos`), so a negative index another index makes
  up for passes, as in TFLM; otherwise "gather_nd index out of bounds".
* EMBEDDING_LOOKUP copies rows of a float32 or int8 table; with an int8 table and a float32
  output it is hybrid: each row dequantized with `params.scale`, which is the table's FIRST
  scale, so with per-row scales (the converter's default) every row uses row 0's scale, as
  TFLM does. Its op data (scale, columns) is allocated in prepare.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule

from .kernel_util import (allocate_writable_dims, check_computed_shape, element_count, kernel_error,
                          require_inputs, scale_of, tensor_desc, type_name, zero_point_of)

_FLOAT_INT8 = (np.dtype(np.float32), np.dtype(np.int8))
_MAX_INDICES_ND = 5                    # gather_nd.cc MAX_INDICES_ND


@dataclass
class GatherOpData:
    batch: int = 1
    outer: int = 1
    axis_size: int = 1
    inner: int = 1
    coords: int = 1
    hybrid: bool = False               # EMBEDDING_LOOKUP: int8 table, float32 output
    scale: float = 0.0                 # EMBEDDING_LOOKUP hybrid: the table's first scale


def _check_io(node, n_in: int) -> None:
    if len(node.inputs) != n_in or len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, "
                                 f"expected {n_in} and 1")


# --------------------------------------------------------------------------- GATHER

def _gather_init(ctx, custom_options) -> GatherOpData:
    return GatherOpData()


def _gather_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 2)
    inp, coords = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if np.dtype(coords.dtype) != np.int32:
        raise kernel_error(node, f"positions {tensor_desc(coords)}: Positions of type "
                                 f"'{type_name(coords.dtype)}' are not supported by gather.")
    if np.dtype(inp.dtype) not in _FLOAT_INT8:
        raise kernel_error(node, f"input {tensor_desc(inp)}: Type '{type_name(inp.dtype)}' is not supported "
                                 "by gather.")
    if np.dtype(out.dtype) != np.dtype(inp.dtype):
        raise kernel_error(node, f"output {tensor_desc(out)} type differs from input {tensor_desc(inp)} "
                                 "(TFLM writes the input's type)")
    layout = gather_layout(node, inp, coords)
    allocate_writable_dims(ctx, out)
    axis, batch_dims = layout.axis, layout.batch_dims
    check_computed_shape(node, out, [*inp.shape[:axis], *coords.shape[batch_dims:], *inp.shape[axis + 1:]])
    d: GatherOpData = node.user_data
    d.batch, d.outer, d.axis_size, d.inner, d.coords = (layout.batch, layout.outer, layout.axis_size,
                                                        layout.inner, layout.coords)


@dataclass(frozen=True)
class GatherLayout:
    """TFLM's Gather loop bounds: [batch, outer, axis_size, inner] in, [batch, outer, coords,
    inner] out."""
    axis: int
    batch_dims: int
    batch: int
    outer: int
    axis_size: int
    inner: int
    coords: int


def gather_layout(node, inp, coords) -> GatherLayout:
    """GATHER's axis and batch_dims resolved and checked as TFLM's prepare does."""
    rank, crank = len(inp.shape), len(coords.shape)
    axis = int(node.options.get("axis", 0))
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise kernel_error(node, f"axis {node.options.get('axis', 0)} out of range for input {tensor_desc(inp)}")
    batch_dims = int(node.options.get("batch_dims", 0))
    batch_dims = batch_dims + crank if batch_dims < 0 else batch_dims
    if not (batch_dims <= axis and 0 <= batch_dims < rank and batch_dims <= crank):
        raise kernel_error(node, f"batch_dims {node.options.get('batch_dims', 0)} does not fit axis {axis}, "
                                 f"input {tensor_desc(inp)} and positions {tensor_desc(coords)}")
    if list(inp.shape[:batch_dims]) != list(coords.shape[:batch_dims]):
        raise kernel_error(node, f"input {tensor_desc(inp)} and positions {tensor_desc(coords)} differ in "
                                 f"their first {batch_dims} (batch) dimensions")
    return GatherLayout(axis, batch_dims, math.prod(inp.shape[:batch_dims]), math.prod(inp.shape[batch_dims:axis]),
                        int(inp.shape[axis]), math.prod(inp.shape[axis + 1:]), math.prod(coords.shape[batch_dims:]))


def _gather_invoke(ctx: KernelContext, node: Node):
    d: GatherOpData = node.user_data
    inp, coords = ctx.required_input(node, 0), ctx.required_input(node, 1)
    c = coords.data.reshape(d.batch, d.coords)
    bad = (c < 0) | (c >= d.axis_size)
    if bad.any():
        raise kernel_error(node, f"position {int(c[bad][0])} in {tensor_desc(coords)} is outside "
                                 f"[0, {d.axis_size}) (TFLM does not check and reads past the input)")
    x = inp.data.reshape(d.batch, d.outer, d.axis_size, d.inner)
    y = x[np.arange(d.batch)[:, None, None], np.arange(d.outer)[None, :, None], c[:, None, :]]
    ctx.output(node, 0).data.reshape(y.shape)[...] = y


# --------------------------------------------------------------------------- GATHER_ND

def _gather_nd_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 2)
    params, indices = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if np.dtype(params.dtype) not in _FLOAT_INT8:
        raise kernel_error(node, f"params {tensor_desc(params)}: Params of type '{type_name(params.dtype)}' "
                                 "are not supported by gather_nd.")
    if np.dtype(indices.dtype) != np.int32:
        raise kernel_error(node, f"indices {tensor_desc(indices)}: Indices of type "
                                 f"'{type_name(indices.dtype)}' are not supported by gather_nd.")
    if len(params.shape) < 1:
        raise kernel_error(node, f"params {tensor_desc(params)}: Params must be at least a vector.")
    if len(indices.shape) < 1:
        raise kernel_error(node, f"indices {tensor_desc(indices)}: Indices must be at least a vector.")
    nd = int(indices.shape[-1])
    if nd > len(params.shape):
        raise kernel_error(node, f"indices {tensor_desc(indices)}: Index innermost dimension length must "
                                 "be <= params rank.")
    if nd > _MAX_INDICES_ND:
        raise kernel_error(node, f"indices {tensor_desc(indices)}: Index innermost dimension length must "
                                 f"not exceed {_MAX_INDICES_ND}.")
    if np.dtype(out.dtype) != np.dtype(params.dtype):
        raise kernel_error(node, f"output {tensor_desc(out)} type differs from params {tensor_desc(params)} "
                                 "(TFLM writes the params' type)")
    allocate_writable_dims(ctx, out)
    check_computed_shape(node, out, [*indices.shape[:-1], *params.shape[nd:]])


def gather_nd_counts(params_shape, nd: int) -> list[int]:
    """TFLM's dims_to_count: the elements one step of each of the first nd axes skips."""
    counts, remain = [], math.prod(params_shape)
    for k in range(nd):
        remain //= int(params_shape[k]) if params_shape[k] else 1
        counts.append(remain)
    return counts


def gather_nd_starts(params_shape, indices: np.ndarray) -> tuple[np.ndarray, int]:
    """Each slice's flat start as TFLM sums it (int arithmetic), and the slice size."""
    nd = int(indices.shape[-1])
    counts = gather_nd_counts(params_shape, nd)
    slices = math.prod(indices.shape[:-1])
    idx = indices.reshape(slices, nd).astype(np.int64)
    starts = (idx * np.asarray(counts, np.int64).reshape(1, nd)).sum(axis=1)
    starts = starts.astype(np.int32).astype(np.int64)        # TFLM's int from_pos
    return starts, math.prod(params_shape[nd:])


def _gather_nd_invoke(ctx: KernelContext, node: Node):
    params, indices = ctx.required_input(node, 0), ctx.required_input(node, 1)
    starts, size = gather_nd_starts(params.shape, indices.data)
    x = params.data.reshape(-1)
    y = ctx.output(node, 0).data.reshape(-1)
    bad = (starts < 0) | (starts + size > x.size)
    if bad.any():
        first = int(np.argmax(bad))
        y[:first * size] = x[(starts[:first, None] + np.arange(size)).reshape(-1)]
        raise kernel_error(node, f"gather_nd index out of bounds (slice {first} of {tensor_desc(indices)} "
                                 f"starts at element {int(starts[first])} of params {tensor_desc(params)})")
    y[:starts.size * size] = x[(starts[:, None] + np.arange(size)).reshape(-1)]


# --------------------------------------------------------------------------- EMBEDDING_LOOKUP

def _embedding_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 2)
    lookup, value = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if len(lookup.shape) != 1 or np.dtype(lookup.dtype) != np.int32:
        raise kernel_error(node, f"lookup {tensor_desc(lookup)} must be a 1-D int32 tensor")
    if len(value.shape) < 2:
        raise kernel_error(node, f"value {tensor_desc(value)} must have at least 2 dimensions")
    if np.dtype(value.dtype) not in _FLOAT_INT8:
        raise kernel_error(node, f"value {tensor_desc(value)}: EMBEDDING_LOOKUP only supports FLOAT32 and "
                                 f"INT8 tables, got {type_name(value.dtype)} (value->type == kTfLiteFloat32 || "
                                 "value->type == kTfLiteInt8 was not true)")
    allowed = (np.float32,) if np.dtype(value.dtype) == np.float32 else (np.float32, np.int8)
    if np.dtype(out.dtype) not in tuple(np.dtype(t) for t in allowed):
        raise kernel_error(node, f"output {tensor_desc(out)} cannot hold rows of value {tensor_desc(value)}")
    if len(out.shape) < len(value.shape):
        raise kernel_error(node, f"output {tensor_desc(out)} has fewer dimensions than value {tensor_desc(value)}")
    allocate_writable_dims(ctx, out)
    shape = [int(lookup.shape[0]), *value.shape[1:], *out.shape[len(value.shape):]]
    check_computed_shape(node, out, shape)
    # CalculateOpData: the op data comes from prepare, after the dims
    ctx.allocate_persistent(ctx.target.sizeof("OpDataEmbeddingLookup"))
    d: GatherOpData = node.user_data
    d.hybrid = np.dtype(value.dtype) == np.int8 and np.dtype(out.dtype) == np.float32
    if d.hybrid:
        if zero_point_of(value) != 0:
            raise kernel_error(node, f"value {tensor_desc(value)} has zero point {zero_point_of(value)}; a "
                                     "hybrid (int8 table, float32 output) lookup needs 0 "
                                     "(tensor_1->params.zero_point != 0)")
        d.scale = scale_of(value)
    rows = int(value.shape[0])
    d.axis_size = rows
    d.inner = element_count(value) // rows if rows else 0


def _embedding_invoke(ctx: KernelContext, node: Node):
    d: GatherOpData = node.user_data
    lookup, value = ctx.required_input(node, 0), ctx.required_input(node, 1)
    if d.axis_size == 0 and not d.hybrid:
        return                                  # TFLM: an empty table propagates
    ids = lookup.data.reshape(-1)
    table = value.data.reshape(d.axis_size, d.inner)
    y = ctx.output(node, 0).data.reshape(-1)
    bad = (ids < 0) | (ids >= d.axis_size)
    count = int(np.argmax(bad)) if bad.any() else ids.size
    rows = table[ids[:count]]
    if d.hybrid:
        rows = rows.astype(np.float32) * np.float32(d.scale)
    y[:rows.size] = rows.reshape(-1)
    if count < ids.size:
        raise kernel_error(node, f"EMBEDDING_LOOKUP: index out of bounds. Got {int(ids[count])}, and bounds are "
                                 f"[0, {d.axis_size - 1}]")


def _reg(name, prepare, invoke, *, temps: TempRule, persistent_after_temps: bool = False) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=_gather_init, name=name, temps=temps,
                        persistent_after_temps=persistent_after_temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("GATHER", _reg("GATHER", _gather_prepare, _gather_invoke, temps="i0 i1 o0"), 7),
    ("GATHER_ND", _reg("GATHER_ND", _gather_nd_prepare, _gather_nd_invoke, temps="i0 i1 o0"), 5),
    ("EMBEDDING_LOOKUP", _reg("EMBEDDING_LOOKUP", _embedding_prepare, _embedding_invoke, temps="i0 i1 o0", persistent_after_temps=True), 4),
]
