"""BATCH_MATMUL runner for micro_rt.cortexm.ops. First the per-invoke transposing copies TFLM
makes (TransposeRowsColumns, reference_ops::Transpose of the last two axes): of the lhs for
adj_x, of a non-constant rhs without adj_y, each into its persistent buffer (TFLM's
transposed tensor in the tail: `batch_matmul_persistent` asks the executor for MCU memory for
them, so the arena plan is unchanged), by mrt_strided_copy, the TRANSPOSE operator's kernel.
Then the product reads the copies as TFLM does: int8 with at most two batch axes on CMSIS-NN's
arm_batch_matmul_s8, as TFLM's CMSIS-NN glue calls it; otherwise one call of
mrt_batch_matmul_s8 / _s16 / _f32 (cortexm/src/mrt_batch_matmul.c) reading the operands through
strides (adj_y and broadcast batch axes need no copy). A constant rhs without adj_y is placed in
flash transposed, as TFLM holds it after its first invoke (it transposes a constant rhs once,
into its persistent buffer): that one-time copy is not counted."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from micro_rt.kernels.fully_connected import fc_output_multipliers
from micro_rt.kernels.kernel_util import scale_of, zero_point_of

from .context import CallContext, KernelCall, UnsupportedOnMcu, dims, uwords, words
from .data_movement import contig_strides, strided_copy
from .registry import FLOAT32, INT16, INT8, KernelKey, OpKernel

SYMBOLS = {"int8": "mrt_batch_matmul_s8", "int16": "mrt_batch_matmul_s16", "float32": "mrt_batch_matmul_f32"}


def _batch_strides(shape: tuple, out_batch: Sequence[int]) -> list[int]:
    """Element strides of the batch axes (0 where this operand broadcasts), 3 axes."""
    strides, acc = [], int(np.prod(shape[-2:]))
    for d in reversed(shape[:-2]):
        strides.append(0 if d == 1 else acc)
        acc *= d
    strides = list(reversed(strides))
    return [0] * (3 - len(strides)) + strides


def _extended(shape, rank: int) -> tuple:
    return (1,) * (rank - len(shape)) + tuple(int(d) for d in shape)


def _transposed_copies(node, lhs_t, rhs_t) -> list[int]:
    """The inputs TFLM transposes at every invoke: 0 (lhs) for adj_x, 1 (rhs) when it is not
    constant and not adj_y, in TFLM's order (rhs first)."""
    opts = node.options
    adj_x, adj_y = bool(opts.get("adj_x", False)), bool(opts.get("adj_y", False))
    return ([1] if not adj_y and not rhs_t.is_constant else []) + ([0] if adj_x else [])


def batch_matmul_persistent(node, tensors) -> tuple[int, ...]:
    """Bytes of the persistent buffers the per-invoke transposes write (see the module doc)."""
    lhs_t, rhs_t = tensors[node.inputs[0]], tensors[node.inputs[1]]
    return tuple(int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize
                 for t in (tensors[node.inputs[i]] for i in _transposed_copies(node, lhs_t, rhs_t)))


def _transpose_call(c: CallContext, t, src: int, dst: int) -> KernelCall:
    """TransposeRowsColumns: `t` with its last two axes swapped, from src into dst."""
    es = np.dtype(t.dtype).itemsize
    shape = [int(d) for d in t.shape]
    perm = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
    src_st = contig_strides(shape, es)
    counts = [shape[p] for p in perm]
    return strided_copy(c, src, dst, es, counts, [src_st[p] for p in perm], contig_strides(counts, es))


def run_batch_matmul(c: CallContext, cmsis: bool = True) -> list[KernelCall]:
    """`cmsis=False` (the reference flavour): always TFLM's reference loop, mrt_batch_matmul_*."""
    lhs_t, rhs_t, out_t = c.t(0), c.t(1), c.out()
    opts = c.node.options
    adj_x, adj_y = bool(opts.get("adj_x", False)), bool(opts.get("adj_y", False))
    copies = _transposed_copies(c.node, lhs_t, rhs_t)
    addrs = [a for a in (c.persistent_addr(k) for k in range(len(copies))) if a is not None]
    if len(addrs) != len(copies):
        raise UnsupportedOnMcu(f"op {c.node.index} BATCH_MATMUL: no MCU memory for TFLM's transposed copies")
    calls = [_transpose_call(c, c.t(i), c.in_addr(i), addr) for i, addr in zip(copies, addrs)]
    copy_of = dict(zip(copies, addrs))
    rank = max(len(lhs_t.shape), len(rhs_t.shape))
    lhs, rhs = _extended(lhs_t.shape, rank), _extended(rhs_t.shape, rank)
    rows, depth = (lhs[-1], lhs[-2]) if adj_x else (lhs[-2], lhs[-1])
    cols = rhs[-2] if adj_y else rhs[-1]
    batch = [rhs[k] if lhs[k] == 1 else lhs[k] for k in range(rank - 2)]
    batch = [1] * (3 - len(batch)) + batch
    # The product reads the lhs rows contiguous (adj_x: from its transposed copy) and the rhs
    # columns contiguous (adj_y as given, else its transposed copy, in flash when constant).
    lhs_addr = copy_of.get(0, c.in_addr(0))
    lhs_row, lhs_depth = depth, 1
    rhs_addr = copy_of.get(1, c.in_addr(1))
    if not adj_y and rhs_t.is_constant:
        data = np.ascontiguousarray(np.swapaxes(np.asarray(rhs_t.data), -1, -2))
        rhs_addr = c.const("rhs_transposed", lambda: data.tobytes())
    rhs_depth, rhs_col = 1, depth
    dtype = np.dtype(lhs_t.dtype)
    mult = shift = lo = hi = lhs_off = rhs_off = out_off = 0
    if dtype != np.float32:
        m, s = fc_output_multipliers(scale_of(lhs_t), np.asarray([scale_of(rhs_t)], np.float32), scale_of(out_t))
        mult, shift = int(m), int(s)
        info = np.iinfo(dtype)
        lo, hi = int(info.min), int(info.max)
        lhs_off, rhs_off, out_off = -zero_point_of(lhs_t), -zero_point_of(rhs_t), zero_point_of(out_t)
    if cmsis and dtype == np.int8 and rank <= 4:
        ext_l, ext_r = _extended(lhs, 4), _extended(rhs, 4)
        bmm = c.args(bytes([int(adj_x), int(adj_y), 0, 0]) + words(lhs_off, rhs_off, out_off, lo, hi))
        quant = c.args(words(mult, shift))
        lhs_dims = c.args(dims(ext_l[0], ext_l[1], rows, depth))
        rhs_dims = c.args(dims(ext_r[0], ext_r[1], cols, depth))
        out_batch = _extended(batch[1:], 2)
        out_dims = c.args(dims(out_batch[0], out_batch[1], rows, cols))
        return calls + [c.call("arm_batch_matmul_s8", c.args(uwords(0, 0)), bmm, quant, lhs_dims, lhs_addr,
                               rhs_dims, rhs_addr, out_dims, c.out_addr())]
    block = (uwords(lhs_addr, rhs_addr, c.out_addr())
             + words(*batch, *_batch_strides(lhs, batch), *_batch_strides(rhs, batch), rows, cols, depth,
                     lhs_row, lhs_depth, rhs_depth, rhs_col, lhs_off, rhs_off, out_off, mult, shift, lo, hi))
    return calls + [c.call(SYMBOLS[dtype.name], c.args(block))]


KERNELS: dict[KernelKey, OpKernel] = {
    **{("BATCH_MATMUL", t): OpKernel(run_batch_matmul, persistent=batch_matmul_persistent)
       for t in (INT8, INT16, FLOAT32)},
}
