"""Data-movement runners for micro_rt.cortexm.ops (any element size): RESHAPE / SQUEEZE /
EXPAND_DIMS, SHAPE, CONCATENATION / PACK, TRANSPOSE, PAD / PADV2 and STRIDED_SLICE, built
on mrt_copy, mrt_fill and the 6-D mrt_strided_copy.
"""
from __future__ import annotations

import struct
import numpy as np

from micro_rt.kernels.kernel_util import element_count, zero_point_of

from .ops_context import CallContext, KernelCall, UnsupportedOnMcu, uwords, words


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
