"""MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_ALL: TFLM's reduce kernels (reduce.cc,
reduce_common.cc; reference_ops' QuantizedMeanOrSum, ReduceGeneric and Mean).

Every output is its reduced elements taken in input row-major order (ResolveAxis: negative
axes wrap, duplicates are dropped; a scalar input reduces over nothing).

int8 / int16 MEAN and SUM: an int32 sum of the raw values (wrapping), less input_zp * count
(wrapping to int32), MultiplyByQuantizedMultiplier by input_scale / output_scale, + output_zp,
clamp. MEAN folds 1/count into that multiplier as TFLM does: shift_n = min(floor(log2(count)),
32, 31 + shift), multiplier = (multiplier << shift_n) / count, shift -= shift_n. Measured
against the tflite-micro runtime (0.dev20261023): the older TFLite MEAN paths (rounding
division after requantizing, which differs on 36 of 1280 mobilenet_v2 outputs; truncating
integer mean; float32 QuantizedMeanOrSum) each disagree with it on some inputs.
float32 MEAN / SUM: the float32 sum from 0.0f in input order (0.0f + -0.0f is +0.0f), MEAN then
divided by the count. An empty reduction (a zero-sized input axis) gives raw 0.
REDUCE_MAX / REDUCE_MIN (float32, int8 with the output's quantization equal to the input's):
starting from the type's lowest / highest value, an element replaces the running value only
when strictly greater / smaller, so NaN never wins, -inf gives -FLT_MAX, and of +0.0 / -0.0
the first met stays. REDUCE_ALL (bool): logical and, starting from true.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .exact_matmul import max_abs_offset
from .fixedpoint import INT32_MAX, multiply_by_quantized_multiplier, wrap_int32
from .kernel_util import (check_quantized, element_count, kernel_error, require_inputs, scale_of, tensor_name,
                          type_name, zero_point_of)
from .quant import check_left_shift, quantize_multiplier
from .requant import InPlaceRequant, clip

_MEAN_TYPES = "Currently, only float32, int8 or int16 input type is supported."
_SUM_TYPES = "Only float32, int8, and int16 types are supported."
_MIN_MAX_TYPES = "Only float32 and int8 types are supported."
_F32_MAX = np.float32(np.finfo(np.float32).max)


@dataclass
class OpDataReduce:
    op: str = ""                # MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL
    kind: str = ""              # the input's dtype name
    multiplier: int = 0
    shift: int = 0
    input_zp: int = 0
    output_zp: int = 0
    input_scale: float = 0.0
    output_scale: float = 0.0
    keep_dims: bool = False
    axis: Any = None            # raw axis values (None: read at invoke)
    temp_buffer_idx: int = -1
    plan: Any = None            # (input shape, axis values, ReducePlan), made at first invoke
    fast: Any = None            # integer MEAN / SUM constants for the constant plan


@dataclass(frozen=True)
class ReducePlan:
    """How an input of one shape reduces: transpose by `perm` (kept axes, then the reduced
    ones in order) and view as (outer, count) rows in input order."""
    perm: tuple
    outer: int
    count: int


reduce_init = op_data_init("OpDataReduce", OpDataReduce)


# --------------------------------------------------------------------------- prepare

def _prepare_common(ctx: KernelContext, node: Node, data: OpDataReduce):
    """PrepareSimple's checks (two inputs, one output, an int32 axis) and what every reduce
    keeps: the kind, keep_dims, a constant axis and the output's size against it."""
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 2 inputs (input, axis) and 1 output")
    inp, axis = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if np.dtype(axis.dtype) != np.int32:
        raise kernel_error(node, f"axis {tensor_name(axis)} must be int32, got {np.dtype(axis.dtype).name} "
                                 f"(axis->type != kTfLiteInt32 ({type_name(axis.dtype)} != INT32))")
    data.op = node.op_name
    data.kind = np.dtype(inp.dtype).name
    data.keep_dims = bool(node.options.get("keep_dims", False))
    if axis.is_constant and axis.data is not None:
        data.axis = np.asarray(axis.data, dtype=np.int64).ravel().copy()
        _check_output_size(node, inp, out, resolve_axes(node, data.axis, len(inp.shape)))
    return inp, axis, out


def _check_output_size(node, inp, out, axes: list[int]) -> None:
    kept = int(np.prod([d for k, d in enumerate(inp.shape) if k not in axes]))
    if element_count(out) != kept:
        raise kernel_error(node, f"output {tensor_name(out)} {list(out.shape)} holds {element_count(out)} "
                                 f"elements, reducing {tensor_name(inp)} {list(inp.shape)} over axes {axes} "
                                 f"gives {kept}")


def _check_same_type(node, inp, out) -> None:
    if np.dtype(out.dtype) != np.dtype(inp.dtype):
        raise kernel_error(node, f"output {tensor_name(out)} type {type_name(out.dtype)} differs from input "
                                 f"{tensor_name(inp)} type {type_name(inp.dtype)}")


def _request_index_scratch(ctx, inp, axis) -> None:
    """The two index buffers every reduce asks for: the input iterator (one int per input
    dimension) and the resolved axes (one int per axis value)."""
    ctx.request_scratch(4 * len(inp.shape))
    ctx.request_scratch(4 * element_count(axis))


def _quantized_multiplier(node, data: OpDataReduce, inp, out) -> None:
    check_quantized(node, out, "output")
    data.multiplier, data.shift = quantize_multiplier(
        float(np.float32(scale_of(inp))) / float(np.float32(scale_of(out))))
    check_left_shift(node, data.shift, "input / output scale")
    data.input_zp, data.output_zp = zero_point_of(inp), zero_point_of(out)
    data.input_scale, data.output_scale = scale_of(inp), scale_of(out)


def mean_or_sum_prepare(ctx: KernelContext, node: Node) -> None:
    """PrepareMeanOrSumHelper (then PrepareSimple): int8 / int16 ask for the int32 sum buffer
    (one per output) before the two index buffers."""
    data: OpDataReduce = node.user_data
    inp, axis, out = _prepare_common(ctx, node, data)
    it = np.dtype(inp.dtype)
    if it not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {type_name(it)}: "
                                 + (_MEAN_TYPES if node.op_name == "MEAN" else _SUM_TYPES))
    _check_same_type(node, inp, out)
    if it != np.float32:
        _quantized_multiplier(node, data, inp, out)
        data.temp_buffer_idx = ctx.request_scratch(4 * element_count(out))
    _request_index_scratch(ctx, inp, axis)


def min_max_prepare(ctx: KernelContext, node: Node) -> None:
    """PrepareSimple, then PrepareMinMaxHelper; int8 needs the output's quantization equal to
    the input's (TFLM checks it at invoke)."""
    data: OpDataReduce = node.user_data
    inp, axis, out = _prepare_common(ctx, node, data)
    it = np.dtype(inp.dtype)
    if it not in (np.float32, np.int8):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {type_name(it)}: {_MIN_MAX_TYPES}")
    _check_same_type(node, inp, out)
    if it == np.int8:
        _quantized_multiplier(node, data, inp, out)
        if (np.float64(data.input_scale), data.input_zp) != (np.float64(data.output_scale), data.output_zp):
            raise kernel_error(node, f"output {tensor_name(out)} must have the input's scale and zero point "
                                     f"(input {data.input_scale!r}, {data.input_zp}; output "
                                     f"{data.output_scale!r}, {data.output_zp})")
    _request_index_scratch(ctx, inp, axis)


def all_prepare(ctx: KernelContext, node: Node) -> None:
    """PrepareAllHelper: bool input only."""
    data: OpDataReduce = node.user_data
    inp, axis, out = _prepare_common(ctx, node, data)
    if np.dtype(inp.dtype) != np.bool_:
        raise kernel_error(node, f"input {tensor_name(inp)} must be bool (input->type != kTfLiteBool "
                                 f"({type_name(inp.dtype)} != BOOL))")
    _check_same_type(node, inp, out)
    _request_index_scratch(ctx, inp, axis)


# --------------------------------------------------------------------------- axes and rows

def resolve_axes(node, axis: np.ndarray, ndim: int) -> list[int]:
    """ResolveAxis: normalise negatives, drop duplicates, keep first-seen order; a scalar
    input reduces over nothing."""
    res: list[int] = []
    if ndim == 0:
        return res
    for a in axis:
        cur = int(a) + ndim if a < 0 else int(a)
        if cur < 0 or cur >= ndim:
            raise kernel_error(node, f"axis {int(a)} out of range for a {ndim}-D input")
        if cur not in res:
            res.append(cur)
    return res


def reduce_plan(shape: tuple, axes: list[int]) -> ReducePlan:
    """The ReducePlan of reducing `shape` over the resolved `axes`."""
    axes_sorted = sorted(axes)
    keep = [d for d in range(len(shape)) if d not in axes_sorted]
    count = int(np.prod([shape[a] for a in axes_sorted])) if axes_sorted else 1
    outer = int(np.prod([shape[d] for d in keep])) if keep else 1
    return ReducePlan(tuple(keep + axes_sorted), outer, count)


def _plan(ctx: KernelContext, node: Node, data: OpDataReduce, x: np.ndarray) -> ReducePlan:
    raw = data.axis if data.axis is not None else np.asarray(ctx.required_input(node, 1).data, np.int64).ravel()
    cached = data.plan
    if cached is not None and cached[0] == x.shape and np.array_equal(cached[1], raw):
        return cached[2]
    plan = reduce_plan(x.shape, resolve_axes(node, raw, x.ndim))
    data.plan = (x.shape, raw.copy(), plan)
    data.fast = None
    return plan


def _rows(x: np.ndarray, plan: ReducePlan) -> np.ndarray:
    return x.transpose(plan.perm).reshape(plan.outer, plan.count)


# --------------------------------------------------------------------------- integer MEAN / SUM

def folded_multiplier(multiplier: int, shift: int, count: int) -> tuple[int, int]:
    """MEAN's multiplier and shift with 1/count folded in (see the module docstring)."""
    shift_n = min(int(count).bit_length() - 1, 32, 31 + shift)
    return (multiplier << shift_n) // count, shift - shift_n


def _int_constants(data: OpDataReduce, plan: ReducePlan):
    """The requantization of an integer MEAN / SUM for one plan: (multiplier, shift, whether
    the int32 sum can wrap, InPlaceRequant)."""
    mult, shift = data.multiplier, data.shift
    if data.op == "MEAN":
        mult, shift = folded_multiplier(mult, shift, plan.count)
    bound = max_abs_offset(np.dtype(data.kind), data.input_zp) * plan.count
    wraps = bound > INT32_MAX
    rq = InPlaceRequant(mult, shift, (plan.outer,), bound=min(bound, INT32_MAX), offset=data.output_zp)
    return mult, shift, wraps, rq


def _mean_or_sum_int(data: OpDataReduce, x: np.ndarray, plan: ReducePlan) -> np.ndarray:
    """sum(x) - zp * count (int32, wrapping), requantized, + output zero point, clamped."""
    if data.fast is None:
        data.fast = _int_constants(data, plan)
    _, _, wraps, rq = data.fast
    acc = np.add.reduce(_rows(x, plan), axis=1, dtype=np.int64)
    acc -= data.input_zp * plan.count
    if wraps:
        acc = wrap_int32(acc)
    rq(acc)
    info = np.iinfo(np.dtype(data.kind))
    return clip(acc, np.int64(info.min), np.int64(info.max), out=acc)


# --------------------------------------------------------------------------- invoke

def first_zero_sign(rows: np.ndarray, res: np.ndarray) -> np.ndarray:
    """Where a max / min is zero, the sign of the first zero of its row (the first met stays)."""
    zero = np.flatnonzero(res == 0)
    if zero.size:
        first = np.argmax(rows[zero] == 0, axis=1)
        res[zero] = rows[zero, first]
    return res


def _reduce_rows(data: OpDataReduce, rows: np.ndarray) -> np.ndarray:
    """REDUCE_MAX / MIN / ALL and the float32 MEAN / SUM of (outer, count) rows."""
    op, count = data.op, rows.shape[1]
    if op == "REDUCE_ALL":
        return np.logical_and.reduce(rows, axis=1, initial=True)
    if data.kind == "float32" and op in ("MEAN", "SUM"):
        if count == 0:
            return np.zeros(rows.shape[0], np.float32)
        total = np.add.accumulate(rows, axis=1, dtype=np.float32)[:, -1] + np.float32(0.0)
        return total / np.float32(count) if op == "MEAN" else total
    if data.kind == "float32":
        fn, init = (np.fmax, -_F32_MAX) if op == "REDUCE_MAX" else (np.fmin, _F32_MAX)
        return first_zero_sign(rows, fn.reduce(rows, axis=1, initial=init))
    info = np.iinfo(np.dtype(data.kind))
    if op == "REDUCE_MAX":
        return np.max(rows, axis=1, initial=info.min)
    return np.min(rows, axis=1, initial=info.max)


def reduce_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataReduce = node.user_data
    x = np.asarray(ctx.required_input(node, 0).data)
    out = ctx.output(node, 0)
    plan = _plan(ctx, node, data, x)
    if plan.outer != out.data.size:     # a runtime axis (prepare checks constant ones)
        raw_axis = data.axis if data.axis is not None else np.asarray(ctx.required_input(node, 1).data).ravel()
        raise kernel_error(node, f"axis {[int(a) for a in raw_axis]} reduces input "
                                 f"{tensor_name(ctx.input(node, 0))} {list(x.shape)} to {plan.outer} values, "
                                 f"output {tensor_name(out)} {list(out.shape)} holds {out.data.size}: TFLM "
                                 "would write past the output (undefined)")
    if data.op in ("MEAN", "SUM") and data.kind != "float32":
        res = np.zeros(plan.outer, np.int64) if plan.count == 0 or x.size == 0 else \
            _mean_or_sum_int(data, x, plan)
    else:
        res = _reduce_rows(data, _rows(x, plan))
    out.data[...] = np.asarray(res).reshape(out.data.shape)


def reference_mean_or_sum_int(data: OpDataReduce, x: np.ndarray, plan: ReducePlan) -> np.ndarray:
    """The integer MEAN / SUM written plainly (the tests hold the fast path to it)."""
    mult, shift = data.multiplier, data.shift
    if data.op == "MEAN":
        mult, shift = folded_multiplier(mult, shift, plan.count)
    acc = wrap_int32(wrap_int32(_rows(x, plan).astype(np.int64).sum(axis=1)) - data.input_zp * plan.count)
    res = multiply_by_quantized_multiplier(acc, mult, shift) + data.output_zp
    info = np.iinfo(np.dtype(data.kind))
    return np.clip(res, info.min, info.max)


def _input_type(op, tensors) -> Optional[str]:
    return tensors[op.inputs[0]].type_name if op.inputs and op.inputs[0] >= 0 else None


def _mean_or_sum_temps(op, tensors) -> str:
    # PrepareMeanOrSumHelper, then PrepareSimple (which reads the output for int8 only).
    return "i0 o0 i1 | i0 i1" + (" o0" if _input_type(op, tensors) == "INT8" else "")


def _min_max_temps(op, tensors) -> str:
    # PrepareSimple first, then PrepareMinMaxHelper's own reads.
    return "i0 i1" + (" o0" if _input_type(op, tensors) == "INT8" else "") + " | i0 o0 i1"


def _reg(name: str, prepare, temps) -> Registration:
    return Registration(invoke=reduce_invoke, prepare=prepare, init=reduce_init, name=name, temps=temps)


MEAN = _reg("MEAN", mean_or_sum_prepare, _mean_or_sum_temps)
SUM = _reg("SUM", mean_or_sum_prepare, _mean_or_sum_temps)
REDUCE_MAX = _reg("REDUCE_MAX", min_max_prepare, _min_max_temps)
REDUCE_MIN = _reg("REDUCE_MIN", min_max_prepare, _min_max_temps)
REDUCE_ALL = _reg("REDUCE_ALL", all_prepare, _mean_or_sum_temps)     # its Prepare reads as MEAN's

BUILTINS = [("MEAN", MEAN, 3), ("SUM", SUM, 2), ("REDUCE_MAX", REDUCE_MAX, 3), ("REDUCE_MIN", REDUCE_MIN, 3),
            ("REDUCE_ALL", REDUCE_ALL, 1)]
