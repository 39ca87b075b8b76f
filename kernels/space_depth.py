"""DEPTH_TO_SPACE, SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND: TFLM's reference
kernels (depth_to_space.cc, space_to_depth.cc, space_to_batch_nd.cc, batch_to_space_nd.cc).

Pure data movement, float32 and int8 only, as TFLM. What is TFLM's own:
* DEPTH_TO_SPACE / SPACE_TO_DEPTH compute their output shape in prepare and copy the output's
  dims to persistent memory first (CreateWritableTensorDimsWithCopy).
* SPACE_TO_BATCH_ND pads with `SpaceToBatchParams.output_offset`, read from a persistent
  struct its init allocates and nothing ever fills: in a fresh (zeroed) arena that is 0, so
  int8 padding is the raw value 0, not the output zero point. micro_rt pads with 0.
* BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND read block shape and crops / paddings at invoke and
  write what TFLM's loops write (block positions outside the output are skipped; output
  elements no input position reaches keep what the arena held, as in TFLM).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .kernel_util import (allocate_writable_dims, check_computed_shape, element_count, kernel_error,
                          require_inputs, tensor_desc, type_label, type_name)

_FLOAT_INT8 = (np.dtype(np.float32), np.dtype(np.int8))


@dataclass
class SpaceOpData:
    """The host twin's precomputed copy: output flat index <- input flat index (None: the
    block shape or paddings are tensors computed at run time, resolved at invoke)."""
    dst: Optional[np.ndarray] = None
    src: Optional[np.ndarray] = None


def _data(node) -> SpaceOpData:
    if node.user_data is None:
        node.user_data = SpaceOpData()
    return node.user_data


def _copy_by_index(ctx: KernelContext, node: Node, d: SpaceOpData) -> None:
    src = ctx.required_input(node, 0).data.reshape(-1)
    dst = ctx.output(node, 0).data.reshape(-1)
    dst[d.dst] = src[d.src]


# --------------------------------------------------------------------------- DEPTH_TO_SPACE / SPACE_TO_DEPTH

def _block_prepare(ctx: KernelContext, node: Node, to_space: bool) -> tuple[int, tuple[int, ...]]:
    """The checks both kernels share; returns the block size and the computed output shape."""
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, "
                                 "expected 1 and 1")
    (inp,) = require_inputs(ctx, node, 1)
    out = ctx.output(node, 0)
    if len(inp.shape) != 4:
        raise kernel_error(node, f"input {tensor_desc(inp)} must be 4-D (NumDimensions(input) != 4)")
    if np.dtype(out.dtype) not in _FLOAT_INT8:
        raise kernel_error(node, f"output {tensor_desc(out)}: {node.op_name} only supports FLOAT32 and "
                                 f"INT8, got {type_name(out.dtype)} (data_type == kTfLiteFloat32 || "
                                 "data_type == kTfLiteInt8 was not true)")
    if np.dtype(inp.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in type")
    bs = int(node.options.get("block_size", 0))
    if bs <= 0:
        raise kernel_error(node, f"block_size is {bs}, must be positive (block_size > 0 was not true)")
    n, h, w, c = (int(v) for v in inp.shape)
    if to_space:
        if c % (bs * bs):
            raise kernel_error(node, f"input {tensor_desc(inp)}: depth {c} is not a multiple of "
                                     f"block_size^2 = {bs * bs}")
        shape = (n, h * bs, w * bs, c // (bs * bs))
    else:
        if h % bs or w % bs:
            raise kernel_error(node, f"input {tensor_desc(inp)}: height {h} and width {w} must be "
                                     f"multiples of block_size {bs}")
        shape = (n, h // bs, w // bs, c * bs * bs)
    allocate_writable_dims(ctx, out)
    check_computed_shape(node, out, shape)
    return bs, shape


def _depth_to_space_prepare(ctx: KernelContext, node: Node):
    _data(node)
    _block_prepare(ctx, node, to_space=True)


def _depth_to_space_invoke(ctx: KernelContext, node: Node):
    bs = int(node.options["block_size"])
    x = ctx.required_input(node, 0).data
    n, h, w, c = x.shape
    y = x.reshape(n, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
    ctx.output(node, 0).data.reshape(y.shape)[...] = y


def _space_to_depth_prepare(ctx: KernelContext, node: Node):
    _data(node)
    _block_prepare(ctx, node, to_space=False)


def _space_to_depth_invoke(ctx: KernelContext, node: Node):
    bs = int(node.options["block_size"])
    x = ctx.required_input(node, 0).data
    n, h, w, c = x.shape
    y = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
    ctx.output(node, 0).data.reshape(y.shape)[...] = y


# --------------------------------------------------------------------------- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND

def nhwc(shape) -> tuple[int, int, int, int]:
    """ExtendShapeSpaceToBatch / ExtendShapeBatchToSpace: a 3-D NHC shape as NH1C."""
    s = [int(v) for v in shape]
    return (s[0], s[1], s[2], s[3]) if len(s) == 4 else (s[0], s[1], 1, s[2])


def _batch_prepare(ctx: KernelContext, node: Node) -> None:
    """The prepare both kernels share (TFLM checks ranks and types; the block shape and
    crops / paddings are read at invoke, so they are checked here only when constant)."""
    if len(node.inputs) != 3 or len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, "
                                 "expected 3 and 1")
    inp, block, pads = require_inputs(ctx, node, 3)
    out = ctx.output(node, 0)
    for role, t in (("input", inp), ("output", out)):
        if not 3 <= len(t.shape) <= 4:
            raise kernel_error(node, f"{role} {tensor_desc(t)} must be 3-D or 4-D "
                                     f"(kInputOutputMinDimensionNum 3, kInputOutputMaxDimensionNum 4)")
    if np.dtype(inp.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in type")
    if np.dtype(inp.dtype) not in _FLOAT_INT8:
        # TFLM refuses at invoke; micro_rt as soon as it knows
        raise kernel_error(node, f"input {tensor_desc(inp)}: Type {type_label(inp.dtype)} not supported.")
    if len(inp.shape) != len(out.shape):
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in rank")
    if nhwc(inp.shape)[3] != nhwc(out.shape)[3]:
        raise kernel_error(node, f"input {tensor_desc(inp)} and output {tensor_desc(out)} differ in depth "
                                 "(TFLM copies the input's depth into each output pixel)")
    for role, t in (("block_shape", block), ("crops / paddings", pads)):
        if np.dtype(t.dtype) != np.int32:
            raise kernel_error(node, f"{role} {tensor_desc(t)} must be int32 (TFLM reads it as int32)")
    spatial = 2 if len(inp.shape) == 4 else 1
    if element_count(block) < spatial or element_count(pads) < 2 * spatial:
        raise kernel_error(node, f"block_shape {tensor_desc(block)} and crops / paddings {tensor_desc(pads)} "
                                 f"need {spatial} and {2 * spatial} values for a {len(inp.shape)}-D input")
    d = _data(node)
    if block.is_constant and pads.is_constant:
        d.dst, d.src = _batch_plan(node, inp, out, block.data, pads.data)


def _block_values(node, inp, block, pads) -> tuple[int, int, int, int]:
    """(block height, block width, top, left) as TFLM reads them (3-D: width block 1, left 0)."""
    b = np.asarray(block).reshape(-1).astype(np.int64)
    p = np.asarray(pads).reshape(-1).astype(np.int64)
    four = len(inp.shape) == 4
    bh, bw = int(b[0]), int(b[1]) if four else 1
    top, left = int(p[0]), int(p[2]) if four else 0
    if bh <= 0 or bw <= 0:
        raise kernel_error(node, f"block shape {b.tolist()} must be positive (TFLM divides by it)")
    return bh, bw, top, left


def _batch_plan(node, inp, out, block, pads) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's loops as (output flat index, input flat index) pairs of whole pixels' depth, in
    the order TFLM writes them; the padding of SPACE_TO_BATCH_ND is input index -1."""
    bh, bw, top, left = _block_values(node, inp, block, pads)
    ib, ih, iw, depth = nhwc(inp.shape)
    ob, oh, ow, _ = nhwc(out.shape)
    if node.op_name == "SPACE_TO_BATCH_ND":
        b = np.arange(ob)[:, None, None]
        shift = b // ib
        y = np.arange(oh)[None, :, None] * bh + shift // bw - top
        x = np.arange(ow)[None, None, :] * bw + shift % bw - left
        inside = (y >= 0) & (y < ih) & (x >= 0) & (x < iw)
        src = np.where(inside, ((b % ib) * ih + np.clip(y, 0, ih - 1)) * iw + np.clip(x, 0, iw - 1), -1)
        dst, src = np.arange(ob * oh * ow), src.reshape(-1)
    else:
        b = np.arange(ib)[:, None, None]
        spatial = b // ob
        y = np.arange(ih)[None, :, None] * bh + spatial // bw - top
        x = np.arange(iw)[None, None, :] * bw + spatial % bw - left
        inside = np.broadcast_to((y >= 0) & (y < oh) & (x >= 0) & (x < ow), (ib, ih, iw))
        dst = ((b % ob) * oh + y) * ow + x
        every = np.arange(ib * ih * iw).reshape(ib, ih, iw)
        dst, src = np.broadcast_to(dst, (ib, ih, iw))[inside], every[inside]
    # whole pixels -> elements
    k = np.arange(depth)
    dst = (dst[:, None] * depth + k).reshape(-1)
    src = np.where(src[:, None] < 0, -1, src[:, None] * depth + k).reshape(-1)
    return dst, src


def _batch_invoke(ctx: KernelContext, node: Node):
    d: SpaceOpData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    dst, src = d.dst, d.src
    if dst is None or src is None:
        dst, src = _batch_plan(node, inp, out, ctx.required_input(node, 1).data, ctx.required_input(node, 2).data)
    x = inp.data.reshape(-1)
    y = out.data.reshape(-1)
    padded = src < 0
    y[dst[padded]] = 0          # the never-filled output_offset of a fresh arena
    y[dst[~padded]] = x[src[~padded]]


def _reg(name, prepare, invoke, struct=None, *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(struct, SpaceOpData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("DEPTH_TO_SPACE", _reg("DEPTH_TO_SPACE", _depth_to_space_prepare, _depth_to_space_invoke, temps="i0 o0"), 2),
    ("SPACE_TO_DEPTH", _reg("SPACE_TO_DEPTH", _space_to_depth_prepare, _space_to_depth_invoke, temps="i0 o0"), 2),
    ("SPACE_TO_BATCH_ND", _reg("SPACE_TO_BATCH_ND", _batch_prepare, _batch_invoke, "SpaceToBatchParams", temps="i0 o0"), 4),
    ("BATCH_TO_SPACE_ND", _reg("BATCH_TO_SPACE_ND", _batch_prepare, _batch_invoke, temps="i0 o0"), 4),
]
