"""Runners for micro_rt.cortexm.ops of the second binary family: DIV, FLOOR_DIV, FLOOR_MOD,
SQUARED_DIFFERENCE, PRELU, ADD_N (cortexm/src/mrt_binary_ops.c) and the comparisons,
LOGICAL_AND / LOGICAL_OR, SELECT_V2 (cortexm/src/mrt_compare.c). The parameters come from the
numpy twins' own helpers (kernels/binary_ops.py, kernels/comparisons.py), so both compute one
thing; what TFLM refuses when invoked (a zero divisor, INT32_MIN / -1) is refused here before
the call, with the twin's words.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.binary_ops import (add_n_params, div_params, prelu_params,
                                         squared_difference_params, SQD_LEFT_SHIFT)
from micro_rt.kernels.comparisons import COMPARE_LEFT_SHIFT, compare_params
from micro_rt.kernels.kernel_util import activation_of, activation_range_int, element_count

from .context import CallContext, KernelCall, UnsupportedOnMcu, f32_activation, node_params, uwords, words
from .elementwise import broadcast_strides, broadcast_words
from .registry import ANY, FLOAT32, INT16, INT8, KernelKey, OpKernel

_OPCODE = {"DIV": 0, "FLOOR_DIV": 1, "FLOOR_MOD": 2, "SQUARED_DIFFERENCE": 3, "PRELU": 4}   # MRT_OP_DIV ..
_COMPARE = {"EQUAL": 0, "NOT_EQUAL": 1, "GREATER": 2, "GREATER_EQUAL": 3, "LESS": 4, "LESS_EQUAL": 5}
_COMPARE_TYPE = {np.dtype(np.float32): 0, np.dtype(np.int32): 1, np.dtype(np.int64): 2, np.dtype(np.int8): 3,
                 np.dtype(np.bool_): 4}                                                     # MRT_CMP_F32 ..
_LOGICAL = {"LOGICAL_AND": 0, "LOGICAL_OR": 1}
# mrt_binary_ops_q_params after the broadcast dims
_Q_FIELDS = ("left_shift", "in1_off", "m1", "sh1", "in2_off", "m2", "sh2", "out_off", "mo", "sho", "amin", "amax")


def _dims(c: CallContext) -> list[int]:
    """The mrt_broadcast_dims words: inputs of one shape as one flat run (TFLM's elementwise
    loop; the output may have another shape of as many elements), else the 6-D broadcast of both
    inputs to their broadcast shape."""
    in1, in2 = c.t(0), c.t(1)
    if tuple(in1.shape) == tuple(in2.shape):
        flat = [0] * 5 + [1]
        return [1] * 5 + [element_count(in1)] + flat + flat
    return broadcast_words(in1, in2, tuple(np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape))))


def _head(c: CallContext, op: int) -> bytes:
    """in1, in2, out, op and the broadcast of both inputs."""
    return uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(op, *_dims(c))


def _dtype(t) -> np.dtype:
    return np.dtype(t.dtype)


# --------------------------------------------------------------------------- DIV .. PRELU

def _divisor_checks(c: CallContext, block: int) -> list[KernelCall]:
    """What TFLM refuses when invoked, checked by the firmware on the values the call reads
    (mrt_data_checks.c; twins: kernels/binary_ops.check_int_division, FLOOR_DIV's "Division by
    0"): calls made before the kernel's, each refusing with TFLM's reason. `block`: the
    kernel's mrt_binary_ops_params."""
    node, divisor = c.node, c.t(1)
    where = f"op {node.index} {node.op_name}"
    count = element_count(divisor)
    if node.op_name == "FLOOR_DIV":
        return [c.call("mrt_check_nonzero_f32", c.in_addr(1), count,
                       refusal=f"{where}: Division by 0 (the check returns the zero divisor's index + 1)")]
    return [c.call("mrt_check_nonzero_s32", c.in_addr(1), count,
                   refusal=f"{where}: input 2 holds 0: TFLM's int32 DIV fails to invoke on a zero divisor "
                           "(the check returns its index + 1)"),
            c.call("mrt_check_div_overflow_s32", block,
                   refusal=f"{where}: INT32_MIN / -1 overflows int32: TFLM's int32 DIV does not check it (the "
                           "x86 build the oracle is stops with SIGFPE)")]


def run_binary_ops_f32(c: CallContext) -> list[KernelCall]:
    if _dtype(c.t(1)) != np.float32 or _dtype(c.out()) != np.float32:
        raise UnsupportedOnMcu(f"{c.node.op_name} float32 with mixed types")
    lo, hi = f32_activation(c.node) if c.node.op_name == "DIV" else (0, 0)
    block = c.args(_head(c, _OPCODE[c.node.op_name]) + uwords(lo, hi))
    checks = _divisor_checks(c, block) if c.node.op_name == "FLOOR_DIV" else []
    return checks + [c.call("mrt_binary_ops_f32", block)]


def run_binary_ops_s32(c: CallContext) -> list[KernelCall]:
    if _dtype(c.t(0)) != np.int32 or _dtype(c.t(1)) != np.int32 or _dtype(c.out()) != np.int32:
        raise UnsupportedOnMcu(f"{c.node.op_name} {_dtype(c.t(0)).name}")
    op = c.node.op_name
    lo, hi = activation_range_int(activation_of(c.node), np.int32) if op == "DIV" else (0, 0)
    block = c.args(_head(c, _OPCODE[op]) + words(lo, hi))
    checks = _divisor_checks(c, block) if op == "DIV" else []
    return checks + [c.call("mrt_binary_ops_s32", block)]


def _quant_fields(node, in1, in2, out) -> dict:
    """mrt_binary_ops_q_params' fields after the dims, from the twin's prepare helpers."""
    op = node.op_name
    q = dict.fromkeys(_Q_FIELDS, 0)
    if op == "DIV":
        p = div_params(in1, in2, out, activation_of(node))
        q.update(in1_off=p["in1_off"], in2_off=p["in2_off"], out_off=p["out_off"], mo=p["mult"], sho=p["shift"],
                 amin=p["amin"], amax=p["amax"])
    elif op == "SQUARED_DIFFERENCE":
        p = squared_difference_params(node, in1, in2, out, SQD_LEFT_SHIFT[_dtype(in1)])
        q.update({k: p[k] for k in q})
    elif op == "PRELU":
        p = prelu_params(node, in1, in2, out)
        q.update(in1_off=p["in_off"], m1=p["m1"], sh1=p["sh1"], in2_off=p["alpha_off"], m2=p["m2"], sh2=p["sh2"],
                 out_off=p["out_off"], amin=p["amin"], amax=p["amax"])
    else:
        raise UnsupportedOnMcu(op)
    return {k: int(v) for k, v in q.items()}


def run_binary_ops_q(c: CallContext) -> list[KernelCall]:
    """int8 DIV / SQUARED_DIFFERENCE / PRELU, int16 SQUARED_DIFFERENCE / PRELU (int8 alpha)."""
    node = c.node
    in1, in2, out = c.t(0), c.t(1), c.out()
    kind = _dtype(in1)
    want_in2 = np.dtype(np.int8) if node.op_name == "PRELU" else kind
    if _dtype(in2) != want_in2 or _dtype(out) != kind or (kind == np.int16 and node.op_name == "DIV"):
        raise UnsupportedOnMcu(f"{node.op_name} {kind.name} with these types")
    q = node_params(node, "binary_ops_q", lambda: _quant_fields(node, in1, in2, out))
    symbol = "mrt_binary_ops_s8" if kind == np.int8 else "mrt_binary_ops_s16"
    return [c.call(symbol, c.args(_head(c, _OPCODE[node.op_name]) + words(*(q[k] for k in _Q_FIELDS))))]


def run_add_n(c: CallContext) -> list[KernelCall]:
    node = c.node
    n = len(node.inputs)
    first, out = c.t(0), c.out()
    pointers = c.args(uwords(*(c.in_addr(i) for i in range(n))))
    if _dtype(first) == np.float32:
        fields = [0] * 8
        symbol = "mrt_add_n_f32"
    else:
        p = node_params(node, "add_n", lambda: add_n_params(node, first, out))
        fields = [p["in_off"], p["m_in"], p["sh_in"], p["out_off"], p["mo"], p["sho"], p["amin"], p["amax"]]
        symbol = "mrt_add_n_s8"
    blob = uwords(pointers, c.out_addr()) + words(n, element_count(first), *fields)
    return [c.call(symbol, c.args(blob))]


# --------------------------------------------------------------------------- comparisons, logical, select

def run_compare(c: CallContext) -> list[KernelCall]:
    node = c.node
    in1, in2 = c.t(0), c.t(1)
    kind = _dtype(in1)
    if kind not in _COMPARE_TYPE or _dtype(in2) != kind:
        raise UnsupportedOnMcu(f"{node.op_name} {kind.name}")
    if kind == np.int8:
        p = node_params(node, "compare", lambda: compare_params(node, in1, in2))
        quant = [COMPARE_LEFT_SHIFT, p["in1_off"], p["m1"], p["sh1"], p["in2_off"], p["m2"], p["sh2"]]
    else:
        quant = [0] * 7
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + \
        words(_COMPARE[node.op_name], _COMPARE_TYPE[kind], *_dims(c), *quant)
    return [c.call("mrt_compare", c.args(blob))]


def run_logical(c: CallContext) -> list[KernelCall]:
    if any(_dtype(t).itemsize != 1 for t in (c.t(0), c.t(1), c.out())):
        raise UnsupportedOnMcu(f"{c.node.op_name} on wider than byte elements")
    return [c.call("mrt_logical_u8", c.args(_head(c, _LOGICAL[c.node.op_name])))]


def run_select(c: CallContext) -> list[KernelCall]:
    cond, x, y, out = c.t(0), c.t(1), c.t(2), c.out()
    size = _dtype(x).itemsize
    if size not in (1, 2, 4) or _dtype(cond) != np.bool_:
        raise UnsupportedOnMcu(f"SELECT_V2 {_dtype(x).name}")
    shapes = [tuple(t.shape) for t in (cond, x, y)]
    if shapes[0] == shapes[1] == shapes[2] or all(int(np.prod(s)) == 1 for s in shapes):
        n = element_count(out)           # element by element, as TFLM's unbroadcast path
        count, strides = [1] * 5 + [n], [[0] * 5 + [1]] * 3
    else:
        count = [1] * (6 - len(out.shape)) + [int(d) for d in out.shape]
        strides = [broadcast_strides(s, out.shape)[1] for s in shapes]
    blob = uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), c.out_addr()) + words(size, *count, *strides[0],
                                                                                  *strides[1], *strides[2])
    return [c.call("mrt_select", c.args(blob))]


KERNELS: dict[KernelKey, OpKernel] = {
    **{(op, FLOAT32): OpKernel(run_binary_ops_f32) for op in ("DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE",
                                                              "PRELU")},
    **{(op, ANY): OpKernel(run_binary_ops_s32) for op in ("DIV", "SQUARED_DIFFERENCE")},     # int32
    **{(op, INT8): OpKernel(run_binary_ops_q) for op in ("DIV", "SQUARED_DIFFERENCE", "PRELU")},
    **{(op, INT16): OpKernel(run_binary_ops_q) for op in ("SQUARED_DIFFERENCE", "PRELU")},
    **{("ADD_N", t): OpKernel(run_add_n) for t in (FLOAT32, INT8)},
    **{(op, t): OpKernel(run_compare) for op in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
                                                 "LESS_EQUAL") for t in (FLOAT32, INT8, ANY)},
    **{(op, t): OpKernel(run_logical) for op in ("LOGICAL_AND", "LOGICAL_OR") for t in (INT8, ANY)},
    ("SELECT_V2", ANY): OpKernel(run_select),                                   # keyed by the bool condition
}
