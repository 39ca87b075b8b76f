"""ARG_MAX, ARG_MIN and CUMSUM: TFLM's kernels along one axis (arg_min_max.cc, cumsum.cc;
reference_ops ArgMinMax and CumSum).

ARG_MAX / ARG_MIN (float32, int8 input; int32 axis and output): per position, the index of
the first extreme along the axis; a later element replaces the running one only when
strictly greater (smaller), so NaN never wins and a NaN first element keeps index 0. TFLM
checks the types at invoke: the axis's, then the output's, then the input's.
CUMSUM float32: a float32 running sum from 0.0f in the axis order (reversed with `reverse`);
`exclusive` writes the sum before adding. CUMSUM int8: TFLM's quantized path with left shift
20: every (x - zp) << 20 halved by the input multiplier (1/2), accumulated in int32 (wrapping)
from an accumulator that starts at (-zp << 20) / 2 rather than 0 (TFLM's code, reproduced),
then each running sum requantized by 2 * input_scale / (2^20 * output_scale), + output zp.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .fixedpoint import rounding_divide_by_pot, saturating_rounding_doubling_high_mul, wrap_int32
from .kernel_util import (check_quantized, element_count, kernel_error, require_inputs, scale_of, tensor_name,
                          type_name, zero_point_of)
from .quant import quantize_multiplier_smaller_than_one_exp

CUMSUM_LEFT_SHIFT = 20


def axis_split(shape: tuple, axis: int) -> tuple[int, int, int]:
    """(outer, axis size, inner) of a row-major shape around `axis`."""
    outer = int(np.prod(shape[:axis])) if axis else 1
    inner = int(np.prod(shape[axis + 1:])) if axis + 1 < len(shape) else 1
    return outer, int(shape[axis]), inner


def _resolve_axis(node, value: int, rank: int, message: str) -> int:
    axis = value + rank if value < 0 else value
    if not 0 <= axis < rank:
        raise kernel_error(node, message.format(value=value, rank=rank))
    return axis


@dataclass
class ArgMinMaxData:
    axis: Any = None            # resolved constant axis (None: read at invoke)


def _arg_prepare(ctx: KernelContext, node: Node) -> None:
    """TFLM's ARG_MAX / ARG_MIN have no prepare: its invoke's type checks, made here."""
    data: ArgMinMaxData = node.user_data
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 2 inputs (input, axis) and 1 output")
    inp, axis = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    for t in (axis, out):
        if np.dtype(t.dtype) != np.int32:
            raise kernel_error(node, f"{'axis' if t is axis else 'output'} {tensor_name(t)} has type "
                                     f"{type_name(t.dtype)}: Only int32_t are supported currently, got "
                                     f"{type_name(t.dtype)}.")
    if np.dtype(inp.dtype) not in (np.float32, np.int8):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {type_name(inp.dtype)}: Only float32, "
                                 f"uint8_t and int8_t are supported currently, got {type_name(inp.dtype)}.")
    if len(inp.shape) < 1:
        raise kernel_error(node, f"input {tensor_name(inp)} must have at least one dimension")
    if element_count(axis) < 1:
        raise kernel_error(node, f"axis {tensor_name(axis)} holds no value")
    if axis.is_constant and axis.data is not None:
        data.axis = _arg_axis(node, int(np.asarray(axis.data).ravel()[0]), inp, out)


def _arg_axis(node, value: int, inp, out) -> int:
    """The resolved axis, the output's size checked against it (TFLM writes outer * inner
    indices whatever the output holds)."""
    axis = _resolve_axis(node, value, len(inp.shape), "axis {value} out of range for a {rank}-D input")
    outer, _, inner = axis_split(tuple(inp.shape), axis)
    if element_count(out) != outer * inner:
        raise kernel_error(node, f"output {tensor_name(out)} {list(out.shape)} holds {element_count(out)} "
                                 f"elements, {tensor_name(inp)} {list(inp.shape)} without axis {axis} gives "
                                 f"{outer * inner}")
    return axis


def arg_min_max(x: np.ndarray, axis: int, is_max: bool) -> np.ndarray:
    """reference_ops::ArgMinMax with GreaterFn / LessFn, as int32 (see the module docstring)."""
    outer, n, inner = axis_split(x.shape, axis)
    v = x.reshape(outer, n, inner)
    if n == 0:
        return np.zeros((outer, inner), np.int32)
    if v.dtype == np.float32:
        nan = np.isnan(v)
        if nan.any():
            v = np.where(nan, np.float32(-np.inf if is_max else np.inf), v)
            idx = (np.argmax if is_max else np.argmin)(v, axis=1)
            return np.where(nan[:, 0, :], 0, idx).astype(np.int32)
    return (np.argmax if is_max else np.argmin)(v, axis=1).astype(np.int32)


def _arg_invoke(ctx: KernelContext, node: Node, is_max: bool) -> None:
    data: ArgMinMaxData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    axis = data.axis
    if axis is None:
        axis = _arg_axis(node, int(np.asarray(ctx.required_input(node, 1).data).ravel()[0]), inp, out)
    out.data[...] = arg_min_max(np.asarray(inp.data), axis, is_max).reshape(out.data.shape)


def arg_max_invoke(ctx: KernelContext, node: Node) -> None:
    _arg_invoke(ctx, node, True)


def arg_min_invoke(ctx: KernelContext, node: Node) -> None:
    _arg_invoke(ctx, node, False)


# --------------------------------------------------------------------------- CUMSUM

@dataclass
class CumsumData:
    kind: str = ""
    axis: Any = None            # resolved constant axis (None: read at invoke)
    input_offset: int = 0
    output_offset: int = 0
    input_multiplier: int = 0
    input_shift: int = 0
    output_multiplier: int = 0
    output_shift: int = 0


def cumsum_prepare(ctx: KernelContext, node: Node) -> None:
    """CalculateOpData: int8 allocates its OpData here (persistent), not in init."""
    data: CumsumData = node.user_data
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 2 inputs (input, axis) and 1 output")
    inp, axis = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    it = np.dtype(inp.dtype)
    if it not in (np.float32, np.int8):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {type_name(it)}: input->type == "
                                 "kTfLiteFloat32 || input->type == kTfLiteInt8 was not true.")
    if np.dtype(axis.dtype) != np.int32:
        raise kernel_error(node, f"axis {tensor_name(axis)} must be int32 (axis->type != kTfLiteInt32 "
                                 f"({type_name(axis.dtype)} != INT32))")
    if element_count(axis) != 1:
        raise kernel_error(node, f"axis {tensor_name(axis)} must hold one value, holds {element_count(axis)}")
    if len(inp.shape) < 1:
        raise kernel_error(node, f"input {tensor_name(inp)} must have at least one dimension")
    if np.dtype(out.dtype) != it or tuple(out.shape) != tuple(inp.shape):
        raise kernel_error(node, f"output {tensor_name(out)} ({type_name(out.dtype)}{list(out.shape)}) must have "
                                 f"the input's type and shape ({type_name(it)}{list(inp.shape)})")
    data.kind = it.name
    if axis.is_constant and axis.data is not None:
        data.axis = _cumsum_axis(node, int(np.asarray(axis.data).ravel()[0]), len(inp.shape))
    if it == np.int8:
        ctx.allocate_persistent(ctx.target.sizeof("OpDataCumsum"))
        check_quantized(node, out, "output")
        data.input_offset, data.output_offset = -zero_point_of(inp), zero_point_of(out)
        twice_max_input_scale = 2 * float(np.float32(scale_of(inp)))
        real_output = twice_max_input_scale / ((1 << CUMSUM_LEFT_SHIFT) * float(np.float32(scale_of(out))))
        if not 0 < real_output < 1:
            raise kernel_error(node, f"input {tensor_name(inp)} / output {tensor_name(out)} scales give the "
                                     f"output multiplier {real_output!r}, not in (0, 1): TFLM's "
                                     "QuantizeMultiplierSmallerThanOneExp aborts")
        data.input_multiplier, data.input_shift = quantize_multiplier_smaller_than_one_exp(
            float(np.float32(scale_of(inp))) / twice_max_input_scale)
        data.output_multiplier, data.output_shift = quantize_multiplier_smaller_than_one_exp(real_output)


def _cumsum_axis(node, value: int, rank: int) -> int:
    return _resolve_axis(node, value, rank, "CUMSUM Invalid axis: {value}")


def _mbqm_smaller_than_one(x: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -shift)


def cumsum_int8(data: CumsumData, x3: np.ndarray, exclusive: bool) -> np.ndarray:
    """The quantized CumSum on (outer, depth, inner) int8 values in accumulation order."""
    scaled = _mbqm_smaller_than_one((x3.astype(np.int64) + data.input_offset) << CUMSUM_LEFT_SHIFT,
                                    data.input_multiplier, data.input_shift)
    start = int(_mbqm_smaller_than_one(np.asarray(data.input_offset << CUMSUM_LEFT_SHIFT, np.int64),
                                       data.input_multiplier, data.input_shift))
    running = np.cumsum(scaled, axis=1)
    if exclusive:
        running = np.concatenate([np.zeros_like(running[:, :1]), running[:, :-1]], axis=1)
    sums = wrap_int32(running + start)
    res = _mbqm_smaller_than_one(sums, data.output_multiplier, data.output_shift) + data.output_offset
    return np.clip(res, -128, 127)


def cumsum_f32(x3: np.ndarray, exclusive: bool) -> np.ndarray:
    """The float32 CumSum on (outer, depth, inner) values in accumulation order: numpy's
    sequential cumsum, + 0.0f (TFLM's sum starts at +0.0f, so no partial sum is -0.0f)."""
    running = np.cumsum(x3, axis=1, dtype=np.float32)
    if exclusive:
        running = np.concatenate([np.zeros_like(running[:, :1]), running[:, :-1]], axis=1)
    return running + np.float32(0.0)


def cumsum_invoke(ctx: KernelContext, node: Node) -> None:
    data: CumsumData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    x = np.asarray(inp.data)
    axis = data.axis if data.axis is not None else \
        _cumsum_axis(node, int(np.asarray(ctx.required_input(node, 1).data).ravel()[0]), x.ndim)
    exclusive, reverse = bool(node.options.get("exclusive", False)), bool(node.options.get("reverse", False))
    x3 = x.reshape(axis_split(x.shape, axis))
    if reverse:
        x3 = x3[:, ::-1, :]
    res = cumsum_int8(data, x3, exclusive) if data.kind == "int8" else cumsum_f32(x3, exclusive)
    if reverse:
        res = res[:, ::-1, :]
    out.data[...] = res.reshape(out.data.shape)


ARG_MAX = Registration(invoke=arg_max_invoke, prepare=_arg_prepare, init=op_data_init(None, ArgMinMaxData),
                       name="ARG_MAX",
                       temps="")
ARG_MIN = Registration(invoke=arg_min_invoke, prepare=_arg_prepare, init=op_data_init(None, ArgMinMaxData),
                       name="ARG_MIN",
                       temps="")
CUMSUM = Registration(invoke=cumsum_invoke, prepare=cumsum_prepare, init=op_data_init(None, CumsumData),
                      name="CUMSUM",
                      temps="i0 i1 o0", persistent_after_temps=True)

BUILTINS = [("ARG_MAX", ARG_MAX, 3), ("ARG_MIN", ARG_MIN, 3), ("CUMSUM", CUMSUM, 1)]
