"""FULLY_CONNECTED: TFLM's reference kernel (fully_connected.cc / fully_connected_common.cc,
reference_ops::FullyConnected, reference_integer_ops::FullyConnected[PerChannel]).

int8: one exact float BLAS matmul (float32 or float64, see conv.exact_float_type), + bias, then TFLM's double-rounding
MultiplyByQuantizedMultiplier. Per-tensor weights take their multiplier from
GetQuantizedConvolutionMultipler (input_scale * filter_scale multiplied in float32, then
divided in double); per-channel weights from double arithmetic per channel.
float32: `total += input * weight` in float32, in accum_depth order, then `total + bias`.
Batches are every output dimension but the last (keep_num_dims only shapes the output).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .conv_common import check_bias, int32_accumulators, int_bias, prepare_float_output, store_float_output
from .exact_matmul import accumulator_bound, exact_float_type, max_abs_offset, sequential_matmul_f32
from .kernel_util import (activation_of, activation_range_quantized, check_activation, check_elements,
                          check_quantized, dtype_name, element_count, kernel_error, scale_of, tensor_name,
                          type_label, type_name, zero_point_of)
from .quant import MAX_LEFT_SHIFT, MAX_LEFT_SHIFT_WIDE, check_left_shift, quantize_multiplier
from .requant import Requantizer


@dataclass
class OpDataFullyConnected:
    kind: str = ""
    is_per_channel: bool = False
    input_zero_point: int = 0
    filter_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: Any = 0
    output_shift: Any = 0
    act_min: Any = 0
    act_max: Any = 0
    weights_t: Any = None      # (accum_depth, output_depth)
    bias: Any = None
    accum_depth: int = 0
    output_depth: int = 0
    xs: Any = None
    acc: Any = None
    requant: Any = None


fc_init = op_data_init("OpDataFullyConnected", OpDataFullyConnected)


def fc_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataFullyConnected = node.user_data
    inp = ctx.required_input(node, 0)
    flt = ctx.required_input(node, 1)
    bias = ctx.input(node, 2) if len(node.inputs) > 2 else None
    out = ctx.output(node, 0)
    act = activation_of(node)
    data.accum_depth, data.output_depth = _check_tensors(node, inp, flt, bias, out, act)
    data.kind = np.dtype(inp.dtype).name
    w = np.asarray(flt.data).reshape(data.output_depth, data.accum_depth)
    if data.kind == "float32":
        data.weights_t = np.ascontiguousarray(w.T, dtype=np.float32)
        prepare_float_output(data, bias, act)
        return
    _quantization_params(ctx, node, data, inp, flt, bias, out, act)
    _prepare_quantized_buffers(node, data, inp, bias, w)


def _check_tensors(node, inp, flt, bias, out, act: str) -> tuple[int, int]:
    """Types (float32, int8 or 16x8), the weights format, constant 2-D weights, the fused
    activation, sizes and the bias. Returns (accumulation depth, output depth)."""
    it, ft = np.dtype(inp.dtype), np.dtype(flt.dtype)
    if inp.dtype != out.dtype:
        raise kernel_error(node, f"input {tensor_name(inp)} is {it.name} but output {tensor_name(out)} is {dtype_name(out)}")
    if it not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_name(inp)}: Input type {type_label(it)} not supported.")
    if ft != (np.float32 if it == np.float32 else np.int8):
        raise kernel_error(node, f"filter {tensor_name(flt)}: Input type: {type_name(it)} with filter type: "
                                 f"{type_name(ft)} not supported.")
    if node.options.get("weights_format", "DEFAULT") not in ("DEFAULT", 0):
        raise kernel_error(node, "only the DEFAULT weights format is supported")
    if flt.data is None:
        raise kernel_error(node, f"weights {tensor_name(flt)} must be constant")
    check_activation(node, act)
    if len(flt.shape) != 2:
        raise kernel_error(node, f"weights {tensor_name(flt)} must be 2-D, got shape {list(flt.shape)}")
    out_depth = int(out.shape[-1]) if len(out.shape) else 1
    accum_depth = int(flt.shape[-1])
    if int(flt.shape[0]) != out_depth:
        raise kernel_error(node, f"weights {tensor_name(flt)} have {flt.shape[0]} rows, output {tensor_name(out)} depth {out_depth}")
    in_size = element_count(inp)
    if accum_depth == 0 or in_size % accum_depth != 0:
        raise kernel_error(node, f"input {tensor_name(inp)} size {in_size} is not a multiple of {accum_depth}")
    check_elements(node, "output", out, in_size // accum_depth * out_depth)
    if bias is not None:
        check_bias(node, bias, out_depth, inp.dtype, int32_bias_ok=True)
    return accum_depth, out_depth


def _quantization_params(ctx: KernelContext, node: Node, data: OpDataFullyConnected, inp, flt, bias, out, act: str) -> None:
    """Per-channel or per-tensor multipliers and shifts (per channel: TFLM's two persistent
    arrays), the zero points and the fused activation's clamp."""
    it = np.dtype(inp.dtype)
    check_quantized(node, out, "output")
    scales = np.asarray(flt.scales, dtype=np.float32)
    data.is_per_channel = scales.size > 1
    in_scale, out_scale = scale_of(inp), scale_of(out)
    if data.is_per_channel:
        if it != np.int8:
            raise kernel_error(node, "per-channel weights need an int8 input")
        if not 0 <= flt.quantized_dimension < len(flt.shape):
            raise kernel_error(node, f"weights {tensor_name(flt)} are quantized along dimension "
                                     f"{flt.quantized_dimension} of a {len(flt.shape)}-D tensor")
        if scales.size != int(flt.shape[flt.quantized_dimension]):
            raise kernel_error(node, f"weights {tensor_name(flt)} have {scales.size} scales")
        if flt.quantized_dimension != 0:     # one scale per output row, as TFLM reads them
            raise kernel_error(node, f"weights {tensor_name(flt)} are quantized per channel along "
                                     f"dimension {flt.quantized_dimension}; FULLY_CONNECTED takes "
                                     f"one scale per output channel (dimension 0)")
        ctx.allocate_persistent(4 * scales.size)
        ctx.allocate_persistent(4 * scales.size)
    else:
        if bias is not None and np.asarray(bias.scales).size and scales.size:
            bias_scale = float(np.float32(np.asarray(bias.scales, np.float32)[0]))
            exact_product = float(np.float32(in_scale)) * float(scales[0])
            if abs(exact_product - bias_scale) / float(np.float32(out_scale)) > 0.02:
                raise kernel_error(node, f"bias {tensor_name(bias)} scale does not match input*weights scale")
    data.output_multiplier, data.output_shift = fc_output_multipliers(in_scale, scales, out_scale)
    check_left_shift(node, data.output_shift, f"input {tensor_name(inp)} x weights {tensor_name(flt)} / output {tensor_name(out)} scale",
                     MAX_LEFT_SHIFT_WIDE if it == np.int16 and not int32_accumulators(node, it, bias)
                     else MAX_LEFT_SHIFT)
    data.input_zero_point = zero_point_of(inp)
    data.filter_zero_point = zero_point_of(flt)
    data.output_zero_point = zero_point_of(out)
    data.act_min, data.act_max = activation_range_quantized(act, out_scale, zero_point_of(out), it)


def _prepare_quantized_buffers(node, data: OpDataFullyConnected, inp, bias, w: np.ndarray) -> None:
    """The weights (less the filter zero point per tensor) in the exact float type, the input
    zero point folded into the bias, the input and accumulator buffers, the output stage."""
    it = np.dtype(inp.dtype)
    # Per-tensor kernel adds weights_offset (= -filter zero point); per-channel ignores it.
    wf = w.astype(np.float64)
    if not data.is_per_channel:
        wf = wf - data.filter_zero_point
    max_abs_x = max_abs_offset(it, data.input_zero_point)
    ft_acc = exact_float_type(wf.T, max_abs_x)
    data.weights_t = np.ascontiguousarray(wf.T, dtype=ft_acc)
    if bias is not None:
        data.bias = int_bias(bias)
    batches = element_count(inp) // data.accum_depth
    out_depth = data.output_depth
    data.xs = np.empty((batches, data.accum_depth), dtype=ft_acc)
    data.acc = np.empty((batches, out_depth), dtype=ft_acc)
    # The input zero point joins the bias: sum((x - zp) * w) = sum(x * w) - zp * sum(w), so
    # invoke only converts x (|x| <= max_abs_x: the float type stays exact).
    bias_eff = data.bias
    zp_term = np.zeros(1, np.int64)
    if data.input_zero_point:
        zp_term = data.input_zero_point * np.rint(wf.sum(axis=1)).astype(np.int64)
        bias_eff = (np.zeros(out_depth, np.int64) if data.bias is None else data.bias) - zp_term
    # acc_bound: |sum((x - zp) * w)|, the value TFLM's int32 accumulator holds before the bias.
    data.requant = Requantizer((batches, out_depth), data.output_multiplier, data.output_shift,
                               bias_eff, data.output_zero_point, data.act_min, data.act_max,
                               wide=not int32_accumulators(node, it, bias),
                               acc_bound=accumulator_bound(wf.T, max_abs_x) + int(np.abs(zp_term).max(initial=0)))


def fc_output_multipliers(input_scale: float, weight_scales: np.ndarray,
                          output_scale: float) -> tuple[np.ndarray, np.ndarray]:
    """FULLY_CONNECTED's requantization: per channel (several weight scales) or per tensor
    (GetQuantizedConvolutionMultipler: the scales' product and the division in double, the
    oracle's build; a float32 product flips rare ties). Per tensor gives 0-d arrays."""
    ws = np.asarray(weight_scales, dtype=np.float32).reshape(-1)
    in_s, out_s = float(np.float32(input_scale)), float(np.float32(output_scale))
    pairs = [quantize_multiplier(in_s * float(s) / out_s) for s in (ws if ws.size else [0.0])]
    mult = np.array([p[0] for p in pairs], np.int64)
    shift = np.array([p[1] for p in pairs], np.int64)
    return (mult, shift) if ws.size > 1 else (mult[0], shift[0])


def fc_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataFullyConnected = node.user_data
    x = ctx.required_input(node, 0).data
    out = ctx.output(node, 0)
    x2 = x.reshape(-1, data.accum_depth)
    if data.kind == "float32":
        store_float_output(sequential_matmul_f32(x2, data.weights_t), data, out)
        return
    data.xs[...] = x2
    data.requant.run(np.matmul(data.xs, data.weights_t, out=data.acc), out.data)


FULLY_CONNECTED = Registration(invoke=fc_invoke, prepare=fc_prepare, init=fc_init,
                               name="FULLY_CONNECTED",
                               temps="i0 i1 i2 o0")

BUILTINS = [("FULLY_CONNECTED", FULLY_CONNECTED, 12)]
