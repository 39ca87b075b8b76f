"""Data-movement runners for micro_rt.cortexm.ops (any element size): RESHAPE / SQUEEZE /
EXPAND_DIMS, SHAPE, CONCATENATION / PACK, TRANSPOSE, PAD / PADV2 and STRIDED_SLICE, built
on mrt_copy, mrt_fill and the 6-D mrt_strided_copy.
"""
from __future__ import annotations

import struct
from dataclasses import replace

import numpy as np

from .ops_context import UnsupportedOnMcu, _count, _Ctx, _uwords, _words, _zp


def _contig_strides(shape, es: int):
    """Byte strides of a contiguous array of `shape` with `es`-byte elements."""
    st, acc = [], es
    for d in reversed(list(shape)):
        st.append(acc)
        acc *= int(d)
    return list(reversed(st))


def _strided_copy(c: _Ctx, src: int, dst: int, es: int, counts, src_strides, dst_strides):
    """mrt_strided_copy of a (up to) 6-D block: element counts and byte strides per axis."""
    counts = [1] * (6 - len(counts)) + list(counts)
    src_strides = [0] * (6 - len(src_strides)) + list(src_strides)
    dst_strides = [0] * (6 - len(dst_strides)) + list(dst_strides)
    blob = _uwords(src, dst) + _words(es, *counts, *src_strides, *dst_strides)
    return c.mcu.call("mrt_strided_copy", c.args(blob))


def _combine(results):
    """One CallResult for several kernel calls: summed counts, the deepest stack."""
    first = results[0]
    if len(results) == 1:
        return first
    total = dict(instructions=sum(r.instructions for r in results), cycles=sum(r.cycles for r in results),
                 stack_bytes=max(r.stack_bytes for r in results),
                 alignment_events=[e for r in results for e in r.alignment_events])
    try:
        return replace(first, **total)
    except Exception:                       # pragma: no cover - non-dataclass result
        for k, v in total.items():
            setattr(first, k, v)
        return first


def _run_reshape(c: _Ctx, core: str):
    out = c.out()
    return c.mcu.call("arm_reshape_s8", c.in_addr(0), c.out_addr(), _count(out) * np.dtype(out.dtype).itemsize)


def _run_shape(c: _Ctx, core: str):
    data = np.asarray(c.t(0).shape, np.int32).astype("<i4").tobytes()
    src = c.const("shape", lambda: data)
    return c.mcu.call("mrt_copy", src, c.out_addr(), len(data))


def _run_concat_like(c: _Ctx, core: str):
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
    results, off = [], 0
    for k, inner in enumerate(inners):
        c.mcu.args_reset()
        results.append(_strided_copy(c, c.in_addr(k), c.out_addr() + off * es, es, [outer, inner],
                                     [inner * es, es], [total_inner * es, es]))
        off += inner
    return _combine(results)


def _run_transpose(c: _Ctx, core: str):
    inp = c.t(0)
    es = np.dtype(inp.dtype).itemsize
    perm = [int(p) for p in np.asarray(c.t(1).data).reshape(-1)]
    rank = len(inp.shape)
    perm = [p + rank if p < 0 else p for p in perm]
    src_st = _contig_strides(inp.shape, es)
    counts = [int(inp.shape[p]) for p in perm]
    return _strided_copy(c, c.in_addr(0), c.out_addr(), es, counts, [src_st[p] for p in perm],
                         _contig_strides(counts, es))


def _pad_fill_word(c: _Ctx, dt: np.dtype) -> int:
    """The padding value (PADV2's third input, else the output zero point / 0) as a 32-bit word."""
    if len(c.node.inputs) == 3 and c.node.inputs[2] >= 0:
        value = np.asarray(c.t(2).data).reshape(-1)[:1].astype(dt)
    elif dt == np.int8:
        value = np.array([_zp(c.out())], np.int64).astype(np.uint8).view(np.int8)
    else:
        value = np.zeros(1, dt)
    raw = value.tobytes().ljust(4, b"\0")
    return struct.unpack("<I", raw[:4])[0]


def _run_pad(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    dt = np.dtype(inp.dtype)
    es = dt.itemsize
    pads = np.asarray(c.t(1).data).reshape(-1, 2).astype(np.int64)
    fill_word = _pad_fill_word(c, dt)
    if es == 8:
        raise UnsupportedOnMcu("PAD of 8-byte elements")
    out_st = _contig_strides(out.shape, es)
    interior = c.out_addr() + sum(int(p0) * s for (p0, _), s in zip(pads, out_st))
    filled = c.mcu.call("mrt_fill", c.out_addr(), fill_word, int(np.prod(out.shape)), es)
    c.mcu.args_reset()
    copied = _strided_copy(c, c.in_addr(0), interior, es, [int(d) for d in inp.shape],
                           _contig_strides(inp.shape, es), out_st)
    return _combine([filled, copied])


def _run_strided_slice(c: _Ctx, core: str):
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
    src_st = _contig_strides(inp.shape, es)
    src = c.in_addr(0) + sum(int(a[0]) * s for a, s in zip(axes, src_st) if len(a))
    sst = [int(a[1] - a[0]) * s if len(a) > 1 else s for a, s in zip(axes, src_st)]
    return _strided_copy(c, src, c.out_addr(), es, counts, sst, _contig_strides(counts, es))
