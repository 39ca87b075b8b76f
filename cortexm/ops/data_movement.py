"""Data-movement runners of micro_rt.cortexm.ops (any element type or size).

Layout from the tensors' shapes alone, built on mrt_copy, mrt_fill and the 6-D
mrt_strided_copy (`strided_copy`): RESHAPE / SQUEEZE / EXPAND_DIMS, SHAPE, CONCATENATION / PACK,
TRANSPOSE, PAD / PADV2, STRIDED_SLICE, DEPTH_TO_SPACE / SPACE_TO_DEPTH (one 6-D copy), SPLIT /
SPLIT_V / UNPACK (one copy per output), BROADCAST_TO and FILL (zero strides). Own kernels where
the layout depends on tensor data read at run time, as TFLM's Eval reads it:
mrt_space_to_batch_nd, mrt_batch_to_space_nd, mrt_reverse, mrt_gather, mrt_gather_nd,
mrt_embedding_lookup(_hybrid_f32), mrt_slice, mrt_dynamic_update_slice, mrt_mirror_pad,
mrt_broadcast_args (a value TFLM refuses, or with which it would read or write outside a
tensor, makes the kernel return -1 and the glue raise micro_rt's KernelError, as the numpy
twin does).
"""
from __future__ import annotations

import math
import struct

import numpy as np

from micro_rt.kernels.broadcast import mirror_pad_reflects
from micro_rt.kernels.gather import gather_layout, gather_nd_counts
from micro_rt.kernels.kernel_util import element_count, scale_of, zero_point_of
from micro_rt.kernels.slicing import split_layout
from micro_rt.kernels.space_depth import nhwc

from .context import CallContext, KernelCall, UnsupportedOnMcu, f32_bits, uwords, words
from .registry import ANY, KernelKey, OpKernel

_MAX_DIMS = 6


def contig_strides(shape, es: int):
    """Byte strides of a contiguous array of `shape` with `es`-byte elements."""
    st, acc = [], es
    for d in reversed(list(shape)):
        st.append(acc)
        acc *= int(d)
    return list(reversed(st))


def strided_copy(c: CallContext, src: int, dst: int, es: int, counts, src_strides, dst_strides) -> KernelCall:
    """mrt_strided_copy of a (up to) 6-D block: element counts and byte strides per axis."""
    counts = [1] * (6 - len(counts)) + list(counts)
    src_strides = [0] * (6 - len(src_strides)) + list(src_strides)
    dst_strides = [0] * (6 - len(dst_strides)) + list(dst_strides)
    blob = uwords(src, dst) + words(es, *counts, *src_strides, *dst_strides)
    return c.call("mrt_strided_copy", c.args(blob))


def run_reshape(c: CallContext) -> list[KernelCall]:
    """RESHAPE / SQUEEZE / EXPAND_DIMS: the bytes as they are."""
    out = c.out()
    return [c.call("arm_reshape_s8", c.in_addr(0), c.out_addr(), element_count(out) * np.dtype(out.dtype).itemsize)]


def run_shape(c: CallContext) -> list[KernelCall]:
    data = np.asarray(c.t(0).shape, np.int32).astype("<i4").tobytes()
    src = c.const("shape", lambda: data)
    return [c.call("mrt_copy", src, c.out_addr(), len(data))]


def run_concatenation(c: CallContext) -> list[KernelCall]:
    """CONCATENATION and PACK: one strided copy per input into its slot of the output."""
    node = c.node
    out = c.out()
    es = np.dtype(out.dtype).itemsize
    first = c.t(0)
    axis = int(node.options.get("axis", 0))
    if node.op_name == "PACK":
        if axis < 0:
            axis += len(first.shape) + 1
        in_shapes = [list(first.shape[:axis]) + [1] + list(first.shape[axis:])] * len(node.inputs)
    else:
        if axis < 0:
            axis += len(out.shape)
        in_shapes = [list(c.t(k).shape) for k in range(len(node.inputs))]
    outer = int(np.prod(in_shapes[0][:axis])) if axis else 1
    inners = [int(np.prod(s[axis:])) for s in in_shapes]
    total_inner = sum(inners)
    calls, off = [], 0
    for k, inner in enumerate(inners):
        calls.append(strided_copy(c, c.in_addr(k), c.out_addr() + off * es, es, [outer, inner],
                                   [inner * es, es], [total_inner * es, es]))
        off += inner
    return calls


def run_transpose(c: CallContext) -> list[KernelCall]:
    inp = c.t(0)
    es = np.dtype(inp.dtype).itemsize
    perm = [int(p) for p in np.asarray(c.t(1).data).reshape(-1)]
    rank = len(inp.shape)
    perm = [p + rank if p < 0 else p for p in perm]
    src_st = contig_strides(inp.shape, es)
    counts = [int(inp.shape[p]) for p in perm]
    return [strided_copy(c, c.in_addr(0), c.out_addr(), es, counts, [src_st[p] for p in perm],
                          contig_strides(counts, es))]


def _pad_fill_word(c: CallContext, dt: np.dtype) -> int:
    """The padding value (PADV2's third input, else the output zero point / 0) as a 32-bit word."""
    if len(c.node.inputs) == 3 and c.node.inputs[2] >= 0:
        value = np.asarray(c.t(2).data).reshape(-1)[:1].astype(dt)
    elif dt == np.int8:
        value = np.array([zero_point_of(c.out())], np.int64).astype(np.uint8).view(np.int8)
    else:
        value = np.zeros(1, dt)
    raw = value.tobytes().ljust(4, b"\0")
    return struct.unpack("<I", raw[:4])[0]


def run_pad(c: CallContext) -> list[KernelCall]:
    """PAD / PADV2: fill the output with the padding value, then copy the input inside."""
    inp, out = c.t(0), c.out()
    dt = np.dtype(inp.dtype)
    es = dt.itemsize
    pads = np.asarray(c.t(1).data).reshape(-1, 2).astype(np.int64)
    fill_word = _pad_fill_word(c, dt)
    if es == 8:
        raise UnsupportedOnMcu("PAD of 8-byte elements")
    out_st = contig_strides(out.shape, es)
    interior = c.out_addr() + sum(int(p0) * s for (p0, _), s in zip(pads, out_st))
    filled = c.call("mrt_fill", c.out_addr(), fill_word, int(np.prod(out.shape)), es)
    copied = strided_copy(c, c.in_addr(0), interior, es, [int(d) for d in inp.shape],
                           contig_strides(inp.shape, es), out_st)
    return [filled, copied]


def run_strided_slice(c: CallContext) -> list[KernelCall]:
    from micro_rt.kernels.shape_ops import strided_slice_plan
    o = c.node.options
    inp, out = c.t(0), c.out()
    es = np.dtype(inp.dtype).itemsize
    begin, end, strides = (np.asarray(c.t(i).data).reshape(-1).astype(np.int64) for i in (1, 2, 3))
    axes, _ = strided_slice_plan(inp.shape, begin, end, strides, int(o.get("begin_mask", 0)),
                                 int(o.get("end_mask", 0)), int(o.get("shrink_axis_mask", 0)))
    counts = [len(a) for a in axes]
    if int(np.prod(counts)) != int(np.prod(out.shape)):
        raise UnsupportedOnMcu("STRIDED_SLICE writing part of its output")
    src_st = contig_strides(inp.shape, es)
    src = c.in_addr(0) + sum(int(a[0]) * s for a, s in zip(axes, src_st) if len(a))
    sst = [int(a[1] - a[0]) * s if len(a) > 1 else s for a, s in zip(axes, src_st)]
    return [strided_copy(c, src, c.out_addr(), es, counts, sst, contig_strides(counts, es))]


def _es(t) -> int:
    return np.dtype(t.dtype).itemsize


def _coalesce(counts, src, dst) -> tuple[list[int], list[int], list[int]]:
    """The same copy over fewer axes: axes of one element dropped, an axis merged into the
    next when both sides step over it contiguously (element strides)."""
    axes = [(int(n), int(s), int(d)) for n, s, d in zip(counts, src, dst) if int(n) != 1]
    merged: list[tuple[int, int, int]] = []
    for n, s, d in axes:
        if merged:
            pn, ps, pd = merged[-1]
            if ps == s * n and pd == d * n:
                merged[-1] = (pn * n, s, d)
                continue
        merged.append((n, s, d))
    merged = merged or [(1, 1, 1)]
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


def copy_block(c: CallContext, src: int, dst: int, es: int, counts, src_strides, dst_strides) -> KernelCall:
    """One mrt_strided_copy of a block given by element counts and element strides (any
    number of axes, coalesced to at most 6)."""
    n, s, d = _coalesce(counts, src_strides, dst_strides)
    if len(n) > _MAX_DIMS:
        raise UnsupportedOnMcu(f"op {c.node.index} {c.node.op_name}: a copy over {len(n)} axes")
    return strided_copy(c, src, dst, es, n, [v * es for v in s], [v * es for v in d])


def _elements(shape) -> list[int]:
    """Element strides of a contiguous shape."""
    return contig_strides(shape, 1)


# --------------------------------------------------------------------------- strided copies

def run_depth_to_space(c: CallContext) -> list[KernelCall]:
    """out[b, h*bs + i, w*bs + j, d] = in[b, h, w, (i*bs + j)*depth + d], in output order."""
    inp, bs = c.t(0), int(c.node.options["block_size"])
    n, h, w, ic = (int(v) for v in inp.shape)
    od = ic // (bs * bs)
    counts = [n, h, bs, w, bs, od]
    src = [h * w * ic, w * ic, bs * od, ic, od, 1]
    return [copy_block(c, c.in_addr(0), c.out_addr(), _es(inp), counts, src, _elements(counts))]


def run_space_to_depth(c: CallContext) -> list[KernelCall]:
    """out[b, h, w, (i*bs + j)*depth + d] = in[b, h*bs + i, w*bs + j, d], in output order."""
    inp, bs = c.t(0), int(c.node.options["block_size"])
    n, h, w, d = (int(v) for v in inp.shape)
    counts = [n, h // bs, w // bs, bs, bs, d]
    src = [h * w * d, bs * w * d, bs * d, w * d, d, 1]
    return [copy_block(c, c.in_addr(0), c.out_addr(), _es(inp), counts, src, _elements(counts))]


def _space_batch(c: CallContext, symbol: str, refusal: str) -> list[KernelCall]:
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: block shape and paddings / crops read by the
    kernel from their tensors; padding is the raw byte 0 (TFLM's never-filled output_offset
    in a fresh arena, as the numpy twin)."""
    inp, out = c.t(0), c.out()
    blob = uwords(c.in_addr(0), c.out_addr(), c.in_addr(1), c.in_addr(2)) + words(
        _es(inp), 1 if len(inp.shape) == 4 else 0, *nhwc(inp.shape), *nhwc(out.shape)) + uwords(0)
    return [c.call(symbol, c.args(blob), refusal=f"op {c.node.index} {c.node.op_name}: {refusal}")]


def run_space_to_batch(c: CallContext) -> list[KernelCall]:
    return _space_batch(c, "mrt_space_to_batch_nd", "block shape must be positive (TFLM divides by it)")


def run_batch_to_space(c: CallContext) -> list[KernelCall]:
    return _space_batch(c, "mrt_batch_to_space_nd", "block shape must be positive (TFLM divides by it)")


def run_split(c: CallContext) -> list[KernelCall]:
    """SPLIT / SPLIT_V / UNPACK: output k takes rows[k] * inner elements per outer index."""
    op = c.node.op_name
    inp = c.t(1) if op == "SPLIT" else c.t(0)
    axis_t = None if op == "UNPACK" else c.t(0 if op == "SPLIT" else 2)
    outputs = [c.out(k) for k in range(len(c.node.outputs))]
    outer, inner, rows = split_layout(c.node, inp, axis_t, outputs)
    es, step, first = _es(inp), sum(rows) * inner, 0
    src = c.in_addr(1 if op == "SPLIT" else 0)
    calls = []
    for k, r in enumerate(rows):
        if r * inner and outer:
            calls.append(copy_block(c, src + first * es, c.out_addr(k), es, [outer, r * inner], [step, 1],
                                    [r * inner, 1]))
        first += r * inner
    return calls


def run_reverse(c: CallContext) -> list[KernelCall]:
    """REVERSE_V2: the axis tensor read by the kernel."""
    inp, axis = c.t(0), c.t(1)
    rank = len(inp.shape)
    blob = uwords(c.in_addr(0), c.out_addr(), c.in_addr(1)) + words(
        element_count(axis), _es(inp), rank, *inp.shape, *[1] * (_MAX_DIMS - rank))
    return [c.call("mrt_reverse", c.args(blob), refusal=f"op {c.node.index} REVERSE_V2: axes empty, out of range "
                                                        "or Non-contiguous `axes` not supported")]


def run_broadcast_to(c: CallContext) -> list[KernelCall]:
    """BROADCAST_TO: stride 0 along the input's broadcast (size 1 or missing) axes."""
    inp, out = c.t(0), c.out()
    shape = [int(v) for v in out.shape]
    in_shape = [1] * (len(shape) - len(inp.shape)) + [int(v) for v in inp.shape]
    src = [0 if d == 1 else s for d, s in zip(in_shape, _elements(in_shape))]
    return [copy_block(c, c.in_addr(0), c.out_addr(), _es(inp), shape, src, _elements(shape))]


def run_fill(c: CallContext) -> list[KernelCall]:
    """FILL: the value tensor's element copied to every output element."""
    out = c.out()
    n = element_count(out)
    return [copy_block(c, c.in_addr(1), c.out_addr(), _es(out), [n], [0], [1])]


# --------------------------------------------------------------------------- own kernels

def _index_size(t) -> int:
    return 8 if np.dtype(t.dtype) == np.int64 else 4


def run_slice(c: CallContext) -> list[KernelCall]:
    inp, begin = c.t(0), c.t(1)
    rank = len(inp.shape)
    shape = [1] * (5 - rank) + [int(v) for v in inp.shape]
    blob = uwords(c.in_addr(0), c.out_addr(), c.in_addr(1), c.in_addr(2)) + words(
        _index_size(begin), _es(inp), rank, *shape, element_count(c.out()))
    return [c.call("mrt_slice", c.args(blob), refusal=f"op {c.node.index} SLICE: begin / size reach outside "
                                                     "the input or the output")]


def run_dynamic_update_slice(c: CallContext) -> list[KernelCall]:
    operand, update, start = c.t(0), c.t(1), c.t(2)
    rank = len(operand.shape)
    if rank > _MAX_DIMS:
        raise UnsupportedOnMcu(f"op {c.node.index} DYNAMIC_UPDATE_SLICE: {rank} dimensions")
    pad = [1] * (_MAX_DIMS - rank)
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr(), c.in_addr(2)) + words(
        _index_size(start), _es(operand), rank, *[int(v) for v in operand.shape], *pad,
        *[int(v) for v in update.shape], *pad)
    return [c.call("mrt_dynamic_update_slice", c.args(blob))]


def run_gather(c: CallContext) -> list[KernelCall]:
    inp, coords = c.t(0), c.t(1)
    g = gather_layout(c.node, inp, coords)
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(_es(inp), g.batch, g.outer, g.axis_size,
                                                                     g.inner, g.coords)
    return [c.call("mrt_gather", c.args(blob), refusal=f"op {c.node.index} GATHER: a position is outside "
                                                       f"[0, {g.axis_size}) (TFLM does not check)")]


def run_gather_nd(c: CallContext) -> list[KernelCall]:
    params, indices = c.t(0), c.t(1)
    nd = int(indices.shape[-1])
    counts = gather_nd_counts(params.shape, nd)
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(
        _es(params), math.prod(indices.shape[:-1]), nd, math.prod(params.shape[nd:]), element_count(params),
        *(counts + [0] * (5 - nd)))
    return [c.call("mrt_gather_nd", c.args(blob), refusal=f"op {c.node.index} GATHER_ND: gather_nd index out "
                                                          "of bounds")]


def run_embedding_lookup(c: CallContext) -> list[KernelCall]:
    ids, table, out = c.t(0), c.t(1), c.out()
    rows = int(table.shape[0])
    hybrid = np.dtype(table.dtype) == np.int8 and np.dtype(out.dtype) == np.float32
    lookups = int(ids.shape[0]) if rows or hybrid else 0        # TFLM: an empty table copies nothing
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(
        lookups, rows, element_count(table) // rows if rows else 0, _es(table)) + uwords(
        f32_bits(scale_of(table)) if hybrid else 0)
    return [c.call("mrt_embedding_lookup_hybrid_f32" if hybrid else "mrt_embedding_lookup", c.args(blob),
                   refusal=f"op {c.node.index} EMBEDDING_LOOKUP: index out of bounds, bounds are [0, {rows - 1}]")]


def run_mirror_pad(c: CallContext) -> list[KernelCall]:
    """Any rank: the shapes and the kernel's two stride arrays (TFLM's scratch buffers) are
    arrays of `rank` words in the ARGS area."""
    inp, pad, out = c.t(0), c.t(1), c.out()
    rank = len(inp.shape)
    pad_size = {np.dtype(np.int32): 4, np.dtype(np.int64): 8}.get(np.dtype(pad.dtype), 0)
    in_shape, out_shape = c.args(words(*inp.shape)), c.args(words(*out.shape))
    in_stride, out_stride = c.args(words(*[0] * rank)), c.args(words(*[0] * rank))
    blob = uwords(c.in_addr(0), c.out_addr(), c.in_addr(1)) + words(
        pad_size, _es(inp), rank, 1 if mirror_pad_reflects(c.node) else 0) + uwords(
        in_shape, out_shape, in_stride, out_stride) + words(element_count(out), element_count(inp))
    return [c.call("mrt_mirror_pad", c.args(blob), refusal=f"op {c.node.index} MIRROR_PAD: the padding reaches "
                                                           "outside the input (TFLM would read past it)")]


def run_broadcast_args(c: CallContext) -> list[KernelCall]:
    s1, s2, out = c.t(0), c.t(1), c.out()
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(element_count(s1), element_count(s2),
                                                                     element_count(out), _es(out))
    return [c.call("mrt_broadcast_args", c.args(blob), refusal=f"op {c.node.index} BROADCAST_ARGS: the shapes "
                                                               "do not broadcast (TFLM aborts)")]


KERNELS: dict[KernelKey, OpKernel] = {
    **{(op, ANY): OpKernel(run_reshape) for op in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")},
    ("SHAPE", ANY): OpKernel(run_shape),
    ("PACK", ANY): OpKernel(run_concatenation),
    ("CONCATENATION", ANY): OpKernel(run_concatenation),
    ("TRANSPOSE", ANY): OpKernel(run_transpose),
    ("PAD", ANY): OpKernel(run_pad),
    ("PADV2", ANY): OpKernel(run_pad),
    ("STRIDED_SLICE", ANY): OpKernel(run_strided_slice),
    ("DEPTH_TO_SPACE", ANY): OpKernel(run_depth_to_space),
    ("SPACE_TO_DEPTH", ANY): OpKernel(run_space_to_depth),
    ("SPACE_TO_BATCH_ND", ANY): OpKernel(run_space_to_batch),
    ("BATCH_TO_SPACE_ND", ANY): OpKernel(run_batch_to_space),
    **{(op, ANY): OpKernel(run_split) for op in ("SPLIT", "SPLIT_V", "UNPACK")},
    ("SLICE", ANY): OpKernel(run_slice),
    ("REVERSE_V2", ANY): OpKernel(run_reverse),
    ("DYNAMIC_UPDATE_SLICE", ANY): OpKernel(run_dynamic_update_slice),
    ("GATHER", ANY): OpKernel(run_gather),
    ("GATHER_ND", ANY): OpKernel(run_gather_nd),
    ("EMBEDDING_LOOKUP", ANY): OpKernel(run_embedding_lookup),
    ("FILL", ANY): OpKernel(run_fill),
    ("BROADCAST_TO", ANY): OpKernel(run_broadcast_to),
    ("BROADCAST_ARGS", ANY): OpKernel(run_broadcast_args),
    ("MIRROR_PAD", ANY): OpKernel(run_mirror_pad),
}
