"""MEAN: TFLM's reference kernel (reduce.cc / reduce_common.cc EvalMeanHelper).

int8/int16: measured against the tflite-micro runtime (0.dev20261023), every int8 MEAN —
the 4-D keep_dims {1, 2} special case, same input/output quantization, any other axes —
matches one integer formula: acc = int32 sum of (x - input_zp) over the reduced elements;
the input_scale/output_scale multiplier (QuantizeMultiplier, double) gets 1/count folded in:
shift_n = min(floor(log2(count)), 32, 31 + shift), multiplier = (multiplier << shift_n) / count,
shift -= shift_n; then MultiplyByQuantizedMultiplier, + output_zp, clamp. The older TFLite
paths (rounding division after requantizing, which differs on 36 of 1280 mobilenet_v2
outputs; truncating integer mean; float32 QuantizedMeanOrSum) each disagree with it on some
inputs.
float32: the float32 sum in input order, then divided by the count.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import Registration, op_data_init

from .fixedpoint import multiply_by_quantized_multiplier
from .exact_matmul import max_abs_offset
from .kernel_util import check_quantized, kernel_error, require_inputs, scale_of, tensor_name, zero_point_of
from .quant import check_left_shift, quantize_multiplier
from .requant import InPlaceRequant, clip


@dataclass
class OpDataReduce:
    kind: str = ""
    multiplier: int = 0
    shift: int = 0
    input_zp: int = 0
    output_zp: int = 0
    input_scale: float = 0.0
    output_scale: float = 0.0
    keep_dims: bool = False
    axis: Any = None            # raw axis values (None: read at invoke)
    temp_buffer_idx: int = -1
    fast: Any = None            # integer "fold" MEAN over constant axes: made at first invoke


mean_init = op_data_init("OpDataReduce", OpDataReduce)


def mean_prepare(ctx, node) -> None:
    data: OpDataReduce = node.user_data
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 2 inputs (input, axis) and 1 output")
    inp, axis = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    it = np.dtype(inp.dtype)
    if np.dtype(axis.dtype) != np.int32:
        raise kernel_error(node, f"axis {tensor_name(axis)} must be int32, got {np.dtype(axis.dtype).name}")
    if it not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {it.name}: Currently, only float32, "
                                 "int8 or int16 input type is supported.")
    if np.dtype(out.dtype) != it:
        raise kernel_error(node, f"output {tensor_name(out)} type differs from input {tensor_name(inp)}")
    data.kind = it.name
    data.keep_dims = bool(node.options.get("keep_dims", False))
    # TFLM's PrepareSimple asks for two index buffers (input rank, axis count) in every type.
    ctx.request_scratch(4 * len(inp.shape))
    ctx.request_scratch(4 * (int(np.prod(axis.shape)) if len(axis.shape) else 1))
    if axis.is_constant and axis.data is not None:
        data.axis = np.asarray(axis.data, dtype=np.int64).ravel().copy()
        axes = _resolve(node, data.axis, len(inp.shape))
        kept = int(np.prod([d for k, d in enumerate(inp.shape) if k not in axes]))
        got = int(np.prod(out.shape)) if len(out.shape) else 1
        if got != kept:
            raise kernel_error(node, f"output {tensor_name(out)} {list(out.shape)} holds {got} elements, "
                                     f"reducing {tensor_name(inp)} {list(inp.shape)} over axes {axes} "
                                     f"gives {kept}")
    if it != np.float32:
        check_quantized(node, out, "output")
        data.multiplier, data.shift = quantize_multiplier(
            float(np.float32(scale_of(inp))) / float(np.float32(scale_of(out))))
        check_left_shift(node, data.shift, "input / output scale")
        out_size = int(np.prod(out.shape)) if len(out.shape) else 1
        data.temp_buffer_idx = ctx.request_scratch(out_size * 4)
        data.input_zp, data.output_zp = zero_point_of(inp), zero_point_of(out)
        data.input_scale, data.output_scale = scale_of(inp), scale_of(out)


def _resolve(node, axis: np.ndarray, ndim: int) -> list[int]:
    """ResolveAxis: normalise negatives, drop duplicates, keep first-seen order."""
    res: list[int] = []
    for a in axis:
        cur = int(a) + ndim if a < 0 else int(a)
        if cur < 0 or cur >= ndim:
            raise kernel_error(node, f"axis {int(a)} out of range for a {ndim}-D input")
        if cur not in res:
            res.append(cur)
    return res


def _rows(x: np.ndarray, axes: list[int]) -> tuple[np.ndarray, int]:
    """(outer, reduced) view with reduced elements in input row-major order."""
    axes_sorted = sorted(axes)
    keep = [d for d in range(x.ndim) if d not in axes_sorted]
    xt = np.transpose(x, keep + axes_sorted)
    count = int(np.prod([x.shape[a] for a in axes_sorted])) if axes_sorted else 1
    return xt.reshape(-1, count), count


def _folded_multiplier(data: OpDataReduce, count: int) -> tuple[int, int]:
    """The input / output multiplier and shift with 1/count folded in (see the module
    docstring): shift_n = min(floor(log2(count)), 32, 31 + shift)."""
    shift_n = min(int(count).bit_length() - 1, 32, 31 + data.shift)
    return (data.multiplier << shift_n) // count, data.shift - shift_n


def _fold_constants(node, data: OpDataReduce, x: np.ndarray):
    """Everything of the integer "fold" MEAN that depends only on the constant axes and the
    input shape: the transposition, the count, the requantization (zero points included)."""
    axes = _resolve(node, data.axis, x.ndim)
    axes_sorted = sorted(axes)
    keep = [d for d in range(x.ndim) if d not in axes_sorted]
    count = int(np.prod([x.shape[a] for a in axes_sorted])) if axes_sorted else 1
    if count == 0:
        return None
    outer = int(np.prod([x.shape[d] for d in keep])) if keep else 1
    mult, shift = _folded_multiplier(data, count)
    info = np.iinfo(np.dtype(data.kind))
    span = max_abs_offset(np.dtype(data.kind), data.input_zp)
    rq = InPlaceRequant(mult, shift, (outer,), bound=span * count, offset=data.output_zp)
    return (x.shape, keep + axes_sorted, count, np.asarray(data.input_zp * count, np.int64),
            np.empty(outer, np.int64), rq, np.asarray(info.min, np.int64), np.asarray(info.max, np.int64))


def _mean_fold_fast(node, data: OpDataReduce, x: np.ndarray, out) -> bool:
    """The default integer MEAN (see the module docstring) with its constants cached:
    sum(x - zp) = sum(x) - zp * count, exact; MultiplyByQuantizedMultiplier + output zp."""
    fast = data.fast
    if fast is None or fast[0] != x.shape:
        fast = data.fast = _fold_constants(node, data, x)
        if fast is None:
            return False
    _, perm, count, zp_count, acc, rq, lo, hi = fast
    np.add.reduce(x.transpose(perm).reshape(-1, count), axis=1, dtype=np.int64, out=acc)
    acc -= zp_count
    rq(acc)
    clip(acc, lo, hi, out=acc)
    out.data[...] = acc.reshape(out.data.shape)
    return True


def mean_invoke(ctx, node) -> None:
    data: OpDataReduce = node.user_data
    x = np.asarray(ctx.input(node, 0).data)
    out = ctx.output(node, 0)
    if data.kind != "float32" and data.axis is not None and _mean_fold_fast(node, data, x, out):
        return
    raw_axis = data.axis if data.axis is not None else \
        np.asarray(ctx.input(node, 1).data, dtype=np.int64).ravel()
    axes = _resolve(node, raw_axis, x.ndim)
    rows, count = _rows(x, axes)
    if rows.shape[0] != out.data.size:      # a runtime axis (prepare checks constant ones)
        raise kernel_error(node, f"axis {[int(a) for a in raw_axis]} reduces input "
                                 f"{tensor_name(ctx.input(node, 0))} {list(x.shape)} to {rows.shape[0]} values, "
                                 f"output {tensor_name(out)} {list(out.shape)} holds {out.data.size}: TFLM "
                                 "would write past the output (undefined)")
    if data.kind == "float32":
        if rows.shape[1] == 0:
            out.data[...] = 0
            return
        total = np.add.accumulate(rows.astype(np.float32), axis=1, dtype=np.float32)[:, -1]
        res = total / np.float32(count)
        out.data[...] = res.reshape(out.data.shape)
        return
    info = np.iinfo(np.dtype(data.kind))
    if count == 0:
        out.data[...] = 0
        return
    acc = (rows.astype(np.int64) - data.input_zp).sum(axis=1)
    acc = multiply_by_quantized_multiplier(acc, *_folded_multiplier(data, count))
    res = np.clip(acc + data.output_zp, info.min, info.max)
    out.data[...] = np.asarray(res).reshape(out.data.shape)


MEAN = Registration(invoke=mean_invoke, prepare=mean_prepare, init=mean_init, name="MEAN")

BUILTINS = [("MEAN", MEAN, 3)]
