"""FILL, BROADCAST_TO, BROADCAST_ARGS, MIRROR_PAD: TFLM's reference kernels (fill.cc,
broadcast_to.cc, broadcast_args.cc, mirror_pad.cc) — ops that make a larger tensor from a
smaller one.

* FILL needs constant dims equal to the output's shape, a scalar value of the output's type,
  and float32, int32 or int8.
* BROADCAST_TO needs a constant shape (int32 or int64, values narrowed to int32) equal to the
  output's, at most 5-D; it copies bytes, so every element type works.
* BROADCAST_ARGS computes the broadcast shape of two int32 / int64 shape vectors at invoke,
  each value narrowed to int as TFLM's `int shape1_i` does; incompatible shapes make TFLM
  abort (TFLITE_CHECK_EQ), micro_rt raises a KernelError instead.
* MIRROR_PAD maps each output element to an input element with TFLM's GetFlatIndex (REFLECT:
  offset 1, anything else: offset 0), padding read at invoke (int32 or int64; another type
  leaves TFLM's pads at 0). It asks for two scratch buffers of rank ints, as TFLM does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .kernel_util import element_count, kernel_error, require_inputs, tensor_desc, type_name

_FILL_TYPES = tuple(np.dtype(t) for t in (np.float32, np.int32, np.int8))
_BROADCAST_MAX_DIMS = 5
_REFLECT = 0                                   # MirrorPadMode REFLECT in the schema


@dataclass
class ExpandOpData:
    index: Optional[np.ndarray] = None         # MIRROR_PAD: input flat index per output element


def _check_io(node, n_in: int) -> None:
    if len(node.inputs) != n_in or len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, "
                                 f"expected {n_in} and 1")


# --------------------------------------------------------------------------- FILL

def _fill_prepare(ctx: KernelContext, node: Node):
    dims, value = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if len(value.shape) != 0:
        raise kernel_error(node, f"value {tensor_desc(value)} must be a scalar (NumDimensions(value) != 0)")
    if np.dtype(value.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"value {tensor_desc(value)} and output {tensor_desc(out)} differ in type")
    if not dims.is_constant:
        raise kernel_error(node, f"dims {tensor_desc(dims)}: Non-constant >dims< tensor is not supported")
    if len(dims.shape) != 1 or int(dims.shape[0]) != len(out.shape):
        raise kernel_error(node, f"dims {tensor_desc(dims)} must list the {len(out.shape)} dimensions of "
                                 f"output {tensor_desc(out)}")
    if np.dtype(dims.dtype) not in (np.int8, np.int16, np.int32, np.int64):
        raise kernel_error(node, f"dims {tensor_desc(dims)}: cannot compare int array to tensor of type "
                                 f"{type_name(dims.dtype)}.")
    if [int(v) for v in np.asarray(dims.data).reshape(-1)] != [int(v) for v in out.shape]:
        raise kernel_error(node, f"dims {np.asarray(dims.data).reshape(-1).tolist()} differ from output "
                                 f"{tensor_desc(out)}")
    if np.dtype(value.dtype) not in _FILL_TYPES:
        raise kernel_error(node, f"value {tensor_desc(value)}: Fill only currently supports float32 for input "
                                 f"1, got {type_name(value.dtype)} (TFLM prints the name's address here).")


def _fill_invoke(ctx: KernelContext, node: Node):
    ctx.output(node, 0).data[...] = ctx.required_input(node, 1).data.reshape(())


# --------------------------------------------------------------------------- BROADCAST_TO

def _broadcast_to_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 2)
    inp, shape = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if len(inp.shape) > _BROADCAST_MAX_DIMS:
        raise kernel_error(node, f"input {tensor_desc(inp)}: BroadcastTo only supports 1-5D tensor.")
    if np.dtype(shape.dtype) not in (np.int32, np.int64):
        raise kernel_error(node, f"shape {tensor_desc(shape)} must be int32 or int64")
    if np.dtype(inp.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in type")
    if not shape.is_constant:
        raise kernel_error(node, f"shape {tensor_desc(shape)}: Non-constant >shape< tensor is not supported")
    if len(shape.shape) != 1:
        raise kernel_error(node, f"shape {tensor_desc(shape)} must be 1-D")
    want = np.asarray(shape.data).reshape(-1).astype(np.int64).astype(np.int32).tolist()
    if len(out.shape) != len(want):
        raise kernel_error(node, f"output {tensor_desc(out)}: Output must match with the expected shape "
                                 "dimension.")
    extra = len(out.shape) - len(inp.shape)
    if extra < 0 or any(d != 1 and d != want[extra + k] for k, d in enumerate(inp.shape)):
        raise kernel_error(node, f"input {tensor_desc(inp)} to {want}: Output shape must be broadcastable "
                                 "from input shape.")
    if len(out.shape) > _BROADCAST_MAX_DIMS:
        raise kernel_error(node, f"output {tensor_desc(out)}: BroadcastTo only supports 1-5D tensor.")
    if [int(d) for d in out.shape] != want:
        raise kernel_error(node, f"output {tensor_desc(out)} differs from shape {want}")


def _broadcast_to_invoke(ctx: KernelContext, node: Node):
    out = ctx.output(node, 0)
    out.data[...] = np.broadcast_to(ctx.required_input(node, 0).data, out.shape)


# --------------------------------------------------------------------------- BROADCAST_ARGS

def _broadcast_args_prepare(ctx: KernelContext, node: Node):
    _check_io(node, 2)
    s1, s2 = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if np.dtype(s1.dtype) not in (np.int32, np.int64):
        raise kernel_error(node, f"shape {tensor_desc(s1)} must be int32 or int64 (shape1->type == "
                                 "kTfLiteInt32 || shape1->type == kTfLiteInt64 was not true)")
    if np.dtype(s2.dtype) != np.dtype(s1.dtype) or np.dtype(out.dtype) != np.dtype(s1.dtype):
        raise kernel_error(node, f"shapes {tensor_desc(s1)}, {tensor_desc(s2)} and output {tensor_desc(out)} "
                                 "must have one type")
    for role, t in (("shape", s1), ("shape", s2), ("output", out)):
        if len(t.shape) != 1:
            raise kernel_error(node, f"{role} {tensor_desc(t)} must be 1-D")


def broadcast_args(node, a: np.ndarray, b: np.ndarray, count: int) -> np.ndarray:
    """reference_ops::BroadcastArgs over the last `count` dimensions (missing ones are 1)."""
    def dim(v: np.ndarray, back: int) -> int:
        k = v.size - 1 - back
        return int(np.int64(v[k]).astype(np.int32)) if k >= 0 else 1
    result = []
    for back in range(count):
        x, y = dim(a, back), dim(b, back)
        if x != 1 and y != 1 and x != y:
            raise kernel_error(node, f"shapes {a.tolist()} and {b.tolist()} do not broadcast ({x} vs {y}; "
                                     "TFLM aborts: TFLITE_CHECK_EQ)")
        result.append(y if x == 1 else x)
    return np.asarray(result[::-1], np.int64)


def _broadcast_args_invoke(ctx: KernelContext, node: Node):
    out = ctx.output(node, 0)
    a, b = (np.asarray(ctx.required_input(node, k).data).reshape(-1) for k in (0, 1))
    out.data[...] = broadcast_args(node, a, b, element_count(out)).astype(out.data.dtype)


# --------------------------------------------------------------------------- MIRROR_PAD

def _mirror_pad_prepare(ctx: KernelContext, node: Node):
    inp, pad = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if len(pad.shape) != 2 or int(pad.shape[0]) != len(inp.shape):
        raise kernel_error(node, f"padding {tensor_desc(pad)} must be [{len(inp.shape)}, 2] for input "
                                 f"{tensor_desc(inp)}")
    if np.dtype(out.dtype) not in (np.float32, np.int8):
        raise kernel_error(node, f"output {tensor_desc(out)}: MIRROR_PAD supports float32 and int8 only, got "
                                 f"{type_name(out.dtype)} (TFLM fails at invoke without a message)")
    if np.dtype(inp.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in type")
    if len(out.shape) != len(inp.shape):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in rank")
    if len(pad.shape) == 2 and int(pad.shape[1]) < 2:
        raise kernel_error(node, f"padding {tensor_desc(pad)} must hold two values per dimension")
    rank = len(inp.shape)
    ctx.request_scratch(4 * rank)          # output_dims_num_elements
    ctx.request_scratch(4 * rank)          # input_dims_num_elements
    if pad.is_constant:
        node.user_data.index = mirror_pad_index(node, inp, out, pad)


def _pads(pad, data) -> np.ndarray:
    """(rank, 2) int64 pads as TFLM's GetPadding reads them into `int` (other types: 0)."""
    if np.dtype(pad.dtype) not in (np.int32, np.int64):
        return np.zeros((len(pad.shape) and int(pad.shape[0]), 2), np.int64)
    p = np.asarray(data).astype(np.int64).reshape(int(pad.shape[0]), -1)[:, :2]
    return p.astype(np.int32).astype(np.int64)


def mirror_pad_index(node, inp, out, pad, data=None) -> np.ndarray:
    """GetFlatIndex of every output element, vectorised; refuses reads outside the input."""
    pads = _pads(pad, pad.data if data is None else data)
    offset = 1 if mirror_pad_reflects(node) else 0
    in_shape = [int(v) for v in inp.shape]
    out_shape = [int(v) for v in out.shape]
    in_strides = [math.prod(in_shape[k + 1:]) for k in range(len(in_shape))]
    out_strides = [math.prod(out_shape[k + 1:]) for k in range(len(out_shape))]
    index = np.arange(math.prod(out_shape), dtype=np.int64)
    flat = np.zeros_like(index)
    for k, (left, _right) in enumerate(pads):
        p = index // out_strides[k]
        index = index % out_strides[k]
        flat += _input_dimension(p, int(left), in_shape[k], offset) * in_strides[k]
    if flat.size and (flat.min() < 0 or flat.max() >= element_count(inp)):
        raise kernel_error(node, f"padding {pads.tolist()} reaches outside input {tensor_desc(inp)} "
                                 "(TFLM would read past it)")
    return flat


def mirror_pad_reflects(node) -> bool:
    """REFLECT (TFLM's offset 1: the edge is not repeated); any other mode is SYMMETRIC's 0."""
    return int(node.options.get("mode", _REFLECT)) == _REFLECT


def _input_dimension(p: np.ndarray, left: int, size: int, offset: int) -> np.ndarray:
    """GetInputDimension: a padded coordinate's coordinate in the input."""
    before = left + offset - 1
    in_left = before - np.minimum(p, before - offset)
    q = p - left
    after = size - (1 + offset)
    in_right = after - np.minimum(q - size, after)
    return np.where(p < left, in_left, np.where(q >= size, in_right, q))


def _mirror_pad_invoke(ctx: KernelContext, node: Node):
    d: ExpandOpData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    index = d.index
    if index is None:
        pad = ctx.required_input(node, 1)
        index = mirror_pad_index(node, inp, out, pad, pad.data)
    out.data.reshape(-1)[...] = inp.data.reshape(-1)[index]


def _reg(name, prepare, invoke, struct=None, *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(struct, ExpandOpData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("FILL", _reg("FILL", _fill_prepare, _fill_invoke, temps="i0 i1 o0"), 4),
    ("BROADCAST_TO", _reg("BROADCAST_TO", _broadcast_to_prepare, _broadcast_to_invoke, temps="i0 i1 o0"), 3),
    ("BROADCAST_ARGS", _reg("BROADCAST_ARGS", _broadcast_args_prepare, _broadcast_args_invoke, temps="i0 i1 o0"), 1),
    ("MIRROR_PAD", _reg("MIRROR_PAD", _mirror_pad_prepare, _mirror_pad_invoke, "OpDataMirrorPad", temps="i0 i1 o0"), 3),
]
