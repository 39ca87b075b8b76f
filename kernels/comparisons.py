"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_OR, SELECT_V2:
TFLM's reference kernels (comparisons.cc, logical.cc, select.cc), bit-exact, in numpy: the
operators that make bool tensors or choose by one.

Comparisons: float32, int32 and int64 compare the values, bool too for EQUAL / NOT_EQUAL.
int8 compares both inputs brought to one scale as ComparisonsPrepare sets it up (each value
minus its zero point, shifted left by 8, times its scale as a multiplier below one), so
inputs of different scales compare as real numbers; precomputed as a 256 x 256 bool table.
TFLM's GREATER also takes int16, but its prepare sets that rescaling for int8 only: int16
GREATER compares whatever the op data held (zeros on a fresh arena: always false), so micro_rt
refuses it, saying why.

LOGICAL_AND / LOGICAL_OR: TFLM has no prepare and never checks a type; it reads both inputs'
and writes the output's bytes as C++ bool. Built for x86 (the oracle), && and || of bytes other
than 0 and 1 come out as the bytes' bitwise AND and OR, which is what is computed here for
tensors of one-byte types (bool, int8, uint8). Wider types are refused: TFLM would write one
byte per element, the first quarter (or half) of the output, and leave the rest as the arena
held it.

SELECT_V2: condition bool, x and y float32 / int8 / int16 (values copied, quantization not
looked at), broadcasting as TFLM's CheckBroadcastShape allows.

All of them handle at most 6 dimensions (TFLM's RuntimeShape).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .binary_ops import MAX_RANK, rescaled
from .elementwise import check_broadcast, pair_index, pair_table
from .kernel_util import check_quantized, kernel_error, require_inputs, scale_of, tensor_desc, type_label, \
    type_name, zero_point_of
from .quant import checked_smaller_than_one_multiplier

COMPARE_FUNCTIONS = {"EQUAL": np.equal, "NOT_EQUAL": np.not_equal, "GREATER": np.greater,
                     "GREATER_EQUAL": np.greater_equal, "LESS": np.less, "LESS_EQUAL": np.less_equal}
_VALUE_TYPES = tuple(np.dtype(t) for t in (np.float32, np.int32, np.int64, np.int8))
_COMPARE_TYPES = {op: _VALUE_TYPES + ((np.dtype(np.bool_),) if op in ("EQUAL", "NOT_EQUAL") else ())
                  for op in COMPARE_FUNCTIONS}
COMPARE_LEFT_SHIFT = 8
SELECT_TYPES = tuple(np.dtype(t) for t in (np.float32, np.int8, np.int16))


@dataclass
class CompareOpData:
    """What prepare leaves for invoke (and for the virtual MCU's glue)."""
    kind: str = ""
    out_shape: tuple = ()
    params: Optional[dict] = None       # int8: the rescaling of both inputs
    lut: Optional[np.ndarray] = None    # int8: 65536 bool results indexed by pair_index


def _store(out, shape: tuple, values: np.ndarray) -> None:
    out.data.reshape(shape)[...] = np.reshape(values, shape)


def _check_rank(node, tensors, limit: int = MAX_RANK) -> None:
    for t in tensors:
        if len(t.shape) > limit:
            raise kernel_error(node, f"{tensor_desc(t)} has {len(t.shape)} dimensions; TFLM's kernel handles "
                                     f"at most {limit} (beyond that it overruns its shape arrays)")


# --------------------------------------------------------------------------- comparisons

def compare_params(node, in1, in2) -> dict:
    """ComparisonsPrepare for int8: each input's scale as a multiplier below one."""
    m1, sh1 = checked_smaller_than_one_multiplier(node, scale_of(in1), "input 1 scale")
    m2, sh2 = checked_smaller_than_one_multiplier(node, scale_of(in2), "input 2 scale")
    return dict(left_shift=COMPARE_LEFT_SHIFT, in1_off=-zero_point_of(in1), m1=m1, sh1=sh1,
                in2_off=-zero_point_of(in2), m2=m2, sh2=sh2)


def compare_quantized(op: str, a: np.ndarray, b: np.ndarray, p: dict) -> np.ndarray:
    """The WithScaling comparison of reference_ops on int8 values."""
    s1 = rescaled(a, p["in1_off"], p["left_shift"], p["m1"], p["sh1"])
    s2 = rescaled(b, p["in2_off"], p["left_shift"], p["m2"], p["sh2"])
    return COMPARE_FUNCTIONS[op](s1, s2)


def _compare_prepare(op: str):
    def prepare(ctx: KernelContext, node: Node) -> None:
        data: CompareOpData = node.user_data
        in1, in2 = require_inputs(ctx, node, 2)
        out = ctx.output(node, 0)
        dt = np.dtype(in1.dtype)
        if op == "GREATER" and dt == np.int16:
            raise kernel_error(node, "int16 GREATER: TFLM runs it, but its prepare sets the input rescaling "
                                     "for int8 only, so it compares uninitialised op data (all false on a "
                                     "zeroed arena), not the inputs")
        if dt not in _COMPARE_TYPES[op]:
            raise kernel_error(node, f"input {tensor_desc(in1)}: Type {type_label(dt)} not supported.")
        if np.dtype(in2.dtype) != dt:
            raise kernel_error(node, f"input {tensor_desc(in2)} differs in type from input {tensor_desc(in1)} "
                                     f"(TFLM would read it as {type_name(dt)})")
        if np.dtype(out.dtype) != np.bool_:
            raise kernel_error(node, f"output {tensor_desc(out)} must be BOOL (TFLM writes bool bytes into it "
                                     "without checking)")
        if dt == np.int8:
            check_quantized(node, in1, "input 1")
            check_quantized(node, in2, "input 2")
            p = compare_params(node, in1, in2)
            data.params = p
            data.lut = pair_table(lambda a, b: compare_quantized(op, a, b, p), np.bool_)
        data.kind = dt.name
        data.out_shape = check_broadcast(node, in1, in2, out, MAX_RANK)
    return prepare


def _compare_invoke(op: str):
    fn = COMPARE_FUNCTIONS[op]

    def invoke(ctx: KernelContext, node: Node) -> None:
        data: CompareOpData = node.user_data
        a, b = ctx.required_input(node, 0).data, ctx.required_input(node, 1).data
        result = np.take(data.lut, pair_index(a, b)) if data.lut is not None else fn(a, b)
        _store(ctx.output(node, 0), data.out_shape, result)
    return invoke


# --------------------------------------------------------------------------- LOGICAL_AND, LOGICAL_OR

LOGICAL_FUNCTIONS = {"LOGICAL_AND": np.bitwise_and, "LOGICAL_OR": np.bitwise_or}


def _logical_prepare(ctx: KernelContext, node: Node) -> None:
    data: CompareOpData = node.user_data
    in1, in2 = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    for t in (in1, in2, out):
        if np.dtype(t.dtype).itemsize != 1:
            raise kernel_error(node, f"{tensor_desc(t)}: TFLM's {node.op_name} reads and writes every tensor as "
                                     f"bool bytes, whatever its type: for {type_name(t.dtype)} it would write "
                                     "one byte per element and leave the rest of the output as the arena held "
                                     "it (bool, int8 and uint8 tensors only)")
    data.kind = "bytes"
    data.out_shape = check_broadcast(node, in1, in2, out, MAX_RANK)


def _logical_invoke(ctx: KernelContext, node: Node) -> None:
    data: CompareOpData = node.user_data
    a = np.asarray(ctx.required_input(node, 0).data).view(np.uint8)
    b = np.asarray(ctx.required_input(node, 1).data).view(np.uint8)
    out = ctx.output(node, 0)
    out.data.view(np.uint8).reshape(data.out_shape)[...] = LOGICAL_FUNCTIONS[node.op_name](a, b)


# --------------------------------------------------------------------------- SELECT_V2

def select_broadcast_shape(node, cond, x, y, out) -> Optional[tuple]:
    """TFLM's CheckBroadcastShape: the output shape of a broadcasting SELECT_V2, None when TFLM
    selects element by element (equal shapes, or four one-element tensors)."""
    shapes = [tuple(t.shape) for t in (cond, x, y)]
    if shapes[0] == shapes[1] == shapes[2]:
        if int(np.prod(out.shape)) != int(np.prod(shapes[0])):
            raise kernel_error(node, f"output {tensor_desc(out)} does not hold the {int(np.prod(shapes[0]))} "
                                     "elements of the inputs")
        return None
    if all(int(np.prod(s)) == 1 for s in shapes) and int(np.prod(out.shape)) == 1:
        return None
    rank = max(len(s) for s in shapes)
    if len(out.shape) != rank:
        raise kernel_error(node, f"output {tensor_desc(out)} has {len(out.shape)} dimensions, the inputs "
                                 f"broadcast to {rank}")
    for i in range(1, rank + 1):
        dims = [s[-i] if i <= len(s) else 1 for s in shapes]
        largest = 0 if min(dims) == 0 else max(dims)
        if any(d not in (1, largest) for d in dims):
            raise kernel_error(node, "Given shapes are not broadcastable. (condition, x, y: "
                                     f"{', '.join(str(list(s)) for s in shapes)})")
        if out.shape[-i] != largest:
            raise kernel_error(node, f"output {tensor_desc(out)} does not match the broadcast of the inputs")
    return tuple(out.shape)


def _select_prepare(ctx: KernelContext, node: Node) -> None:
    data: CompareOpData = node.user_data
    if len(node.inputs) != 3 or len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, needs 3 and 1")
    cond, x, y = require_inputs(ctx, node, 3)
    out = ctx.output(node, 0)
    _check_rank(node, (cond, x, y, out))
    if np.dtype(cond.dtype) != np.bool_:
        raise kernel_error(node, f"condition {tensor_desc(cond)} must be BOOL "
                                 f"(input_condition->type != kTfLiteBool ({type_name(cond.dtype)} != BOOL))")
    if np.dtype(x.dtype) != np.dtype(y.dtype):
        raise kernel_error(node, f"{tensor_desc(x)} and {tensor_desc(y)} differ in type")
    broadcast = select_broadcast_shape(node, cond, x, y, out)
    dt = np.dtype(x.dtype)
    if dt not in SELECT_TYPES:
        raise kernel_error(node, f"Does not support type other than int8|int16|float32, but got {type_name(dt)}")
    if np.dtype(out.dtype) != dt:
        raise kernel_error(node, f"output {tensor_desc(out)} differs in type from x {tensor_desc(x)}")
    data.kind = dt.name
    data.out_shape = broadcast if broadcast is not None else tuple(x.shape)


def _select_invoke(ctx: KernelContext, node: Node) -> None:
    data: CompareOpData = node.user_data
    cond, x, y = (ctx.required_input(node, i).data for i in range(3))
    _store(ctx.output(node, 0), data.out_shape, np.where(cond, x, y))


# --------------------------------------------------------------------------- registration

def _registration(name: str, prepare, invoke, struct: Optional[str], *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(struct, CompareOpData), name=name,
                        temps=temps)


# TFLM does not look at operator versions; these are the newest TFLite writes.
BUILTINS: list[tuple[str, Registration, int]] = [
    *((op, _registration(op, _compare_prepare(op), _compare_invoke(op), "OpDataComparison",
                         temps="i0 i1"), 4)
      for op in COMPARE_FUNCTIONS),
    *((op, _registration(op, _logical_prepare, _logical_invoke, None, temps=""), 1) for op in LOGICAL_FUNCTIONS),
    ("SELECT_V2", _registration("SELECT_V2", _select_prepare, _select_invoke, "OpDataSelect",
                                temps="i0 i1 i2 o0"), 2),
]
