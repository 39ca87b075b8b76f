"""TRANSPOSE_CONV: TFLM's reference kernel (transpose_conv.cc, reference_ops::TransposeConv and
reference_integer_ops::TransposeConv), vectorised per filter tap.

Inputs: 0 the output shape (int32; TFLM ignores it and takes the output tensor's shape), 1 the
filter [OC, KH, KW, IC], 2 the input [N, H, W, IC], 3 an optional bias. TFLM's kernel scatters:
input pixel (y, x) adds x * w to output pixel (y * stride - pad + ky, x * stride - pad + kx) when
that lies inside the output, where pad is the padding of the forward convolution whose input is
this operator's output (ComputePaddingHeightWidth on the output size).

Integer types: the sums are exact (float64 products of one matmul per input pixel, summed per
tap), then TFLM's output stage: int8 wraps the int32 accumulator, adds the bias and requantizes
with the double-rounding MultiplyByQuantizedMultiplier plus the output zero point; int16
(16x8) accumulates in int64 with an int64 bias (or an int16 one, widened as TFLM does), uses the
int64 MultiplyByQuantizedMultiplier and, as TFLM's 16x8 kernel, neither the input nor the
output zero point.
float32: bit-identical. Each output element receives its terms in the reference loop's order,
(input y, input x, input channel) ascending, one float32 multiply and one float32 add each,
starting from 0.0f; the bias is added after, then the fused activation's clamp. Walking the
taps with ky and kx descending and the channels ascending gives exactly that order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .conv_common import check_bias, int_bias, prepare_float_output, quantized_conv_params
from .exact_matmul import max_abs_offset
from .kernel_util import (HYBRID, activation_of, check_activation, check_elements, element_count, is_quantized,
                          kernel_error, tensor_name, type_label, type_name)
from .padding import PaddingValues, compute_padding_height_width, narrow_int16
from .requant import Requantizer

OUTPUT_SHAPE, FILTER, INPUT, BIAS = 0, 1, 2, 3


@dataclass
class TapRange:
    """Where one filter tap's contributions land: input rows/columns [y0, y1) x [x0, x1)
    scatter to output rows oy0, oy0 + stride_h, ... and columns ox0, ox0 + stride_w, ..."""

    ky: int
    kx: int
    y0: int
    y1: int
    x0: int
    x1: int
    oy0: int
    ox0: int


@dataclass
class OpDataTransposeConv:
    """Host mirror of TFLM's transpose_conv OpData plus what invoke needs."""

    kind: str = ""
    padding: Any = None                  # padding.PaddingValues
    stride_h: int = 1
    stride_w: int = 1
    filter_w: int = 1
    out_shape: tuple = ()
    taps: list = field(default_factory=list)      # TapRange, in the order the sums need
    input_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: Any = None
    output_shift: Any = None
    act_min: Any = 0
    act_max: Any = 0
    weights: Any = None                  # float32 [OC, KH, KW, IC]; integer: (IC, KH*KW*OC) float64
    bias: Any = None
    requant: Any = None


transpose_conv_init = op_data_init("OpDataTransposeConv", OpDataTransposeConv)


def scatter_padding(stride_h: int, stride_w: int, out_h: int, out_w: int, filter_h: int, filter_w: int,
                    padding: str) -> PaddingValues:
    """TFLM's padding for TRANSPOSE_CONV: that of the forward convolution over the output."""
    values, _, _ = compute_padding_height_width(stride_h, stride_w, 1, 1, out_h, out_w, filter_h, filter_w,
                                                padding)
    return values


def tap_ranges(in_h: int, in_w: int, out_h: int, out_w: int, filter_h: int, filter_w: int,
               stride_h: int, stride_w: int, pad: PaddingValues) -> list[TapRange]:
    """Every tap with at least one contribution inside the output, ky then kx descending (the
    order that keeps each output's terms in the reference loop's order)."""
    def span(size_in: int, size_out: int, stride: int, pad_before: int, k: int) -> tuple[int, int]:
        lo = max(0, -(-(pad_before - k) // stride))               # ceil((pad - k) / stride)
        hi = min(size_in, (size_out - 1 + pad_before - k) // stride + 1)
        return lo, hi
    taps = []
    for ky in range(filter_h - 1, -1, -1):
        y0, y1 = span(in_h, out_h, stride_h, pad.height, ky)
        if y0 >= y1:
            continue
        for kx in range(filter_w - 1, -1, -1):
            x0, x1 = span(in_w, out_w, stride_w, pad.width, kx)
            if x0 < x1:
                taps.append(TapRange(ky, kx, y0, y1, x0, x1, y0 * stride_h - pad.height + ky,
                                     x0 * stride_w - pad.width + kx))
    return taps


def transpose_conv_tensors(ctx: KernelContext, node: Node) -> tuple:
    """(filter, input, bias or None, output), refusing a wrong number of inputs or outputs."""
    if len(node.inputs) not in (3, 4) or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 3 or 4 inputs and 1 output, got "
                                 f"{len(node.inputs)}/{len(node.outputs)}")
    bias = ctx.input(node, BIAS) if len(node.inputs) == 4 else None
    return ctx.input(node, FILTER), ctx.input(node, INPUT), bias, ctx.output(node, 0)


def transpose_conv_prepare(ctx: KernelContext, node: Node) -> None:
    """TFLM's reference Prepare: it requests the int32 (int8) or int64 (16x8) accumulators of
    the whole output as its scratch."""
    prepare_transpose_conv(ctx, node, accumulators=True)


def prepare_transpose_conv(ctx: KernelContext, node: Node, accumulators: bool) -> None:
    """The Prepare every build's TRANSPOSE_CONV shares; `accumulators`: request the reference
    kernel's scratch (a build whose kernel needs other buffers requests its own after this)."""
    data: OpDataTransposeConv = node.user_data
    flt, inp, bias, out = transpose_conv_tensors(ctx, node)
    it, ft = np.dtype(inp.dtype), np.dtype(flt.dtype)
    if not (it == ft or (it == np.int16 and ft == np.int8)):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {type_name(it)}, filter "
                                 f"{tensor_name(flt)} {type_name(ft)}: {HYBRID}")
    _check_shapes(node, flt, inp, out)
    oc, fh, fw, _ = (int(d) for d in flt.shape)
    # TFLM allocates the per-channel arrays for every type, then its scratch: the int32 (int8)
    # or int64 (16x8) accumulators of the whole output.
    ctx.allocate_persistent(4 * oc)
    ctx.allocate_persistent(4 * oc)
    out_elements = int(np.prod(out.shape))
    if accumulators and it in (np.int8, np.int16):
        ctx.request_scratch(out_elements * (4 if it == np.int8 else 8))
    _check_types(node, flt, inp, out)
    _prepare_window(node, data, inp, out, fh, fw)
    act = activation_of(node)
    check_activation(node, act)
    data.kind = kind = it.name
    if kind == "float32":
        if bias is not None:
            check_bias(node, bias, oc, it)
        data.weights = _float_weights(flt.data) if flt.is_constant else None
        prepare_float_output(data, bias, act)
        return
    _prepare_quantized(ctx, node, data, flt, inp, bias, out, act, oc)


def _check_types(node, flt, inp, out) -> None:
    """What TFLM's kernel runs: float32, int8 (int8 filter) and 16x8 (int16 input, int8 filter),
    with the output of the input's type; TFLM's own wording where it refuses."""
    it, ft, ot = np.dtype(inp.dtype), np.dtype(flt.dtype), np.dtype(out.dtype)
    kind = it.name
    if kind not in ("float32", "int8", "int16"):
        if kind != "uint8" and not is_quantized(inp):
            raise kernel_error(node, f"input {tensor_name(inp)} ({type_label(it)}) is not quantized: TFLM refuses "
                                     "it (input->quantization.type != kTfLiteAffineQuantization)")
        raise kernel_error(node, f"Type {type_label(it)} not supported. (input {tensor_name(inp)}; TFLM "
                                 "refuses it when invoked)")
    if kind == "int16" and ft != np.int8:
        raise kernel_error(node, f"filter {tensor_name(flt)} is {type_label(ft)}: TFLM's 16x8 kernel reads "
                                 "the filter as int8 whatever its type")
    if ot != it:
        raise kernel_error(node, f"input {tensor_name(inp)} is {kind} but output {tensor_name(out)} is "
                                 f"{ot.name} (TFLM: input->type != output->type)")


def _float_weights(filter_data) -> np.ndarray:
    return np.asarray(filter_data, dtype=np.float32)


def _integer_weights(filter_data) -> np.ndarray:
    """[OC, KH, KW, IC] -> (IC, KH*KW*OC) float64: one matmul gives every tap's products."""
    w = np.asarray(filter_data, dtype=np.float64)
    oc, fh, fw, ic = w.shape
    return np.ascontiguousarray(w.transpose(3, 1, 2, 0).reshape(ic, fh * fw * oc))


def _check_shapes(node, flt, inp, out) -> None:
    """4-D tensors whose batch and channels agree (TFLM only DCHECKs them: a mismatch makes its
    loops read or write past the tensors)."""
    for role, t in (("filter", flt), ("input", inp), ("output", out)):
        if len(t.shape) != 4:
            raise kernel_error(node, f"{role} {tensor_name(t)} is {len(t.shape)}-D, must be 4-D")
    oc, fh, fw, fic = (int(d) for d in flt.shape)
    n, _, _, ic = (int(d) for d in inp.shape)
    if fic != ic:
        raise kernel_error(node, f"filter {tensor_name(flt)} has {fic} input channels, input {tensor_name(inp)} {ic}")
    if int(out.shape[0]) != n or int(out.shape[3]) != oc:
        raise kernel_error(node, f"output {tensor_name(out)} {list(out.shape)} must have the input's batch {n} "
                                 f"and the filter's {oc} channels")
    if min(oc, fh, fw, ic, n, int(out.shape[1]), int(out.shape[2])) <= 0:
        raise kernel_error(node, f"filter {list(flt.shape)}, input {list(inp.shape)} and output "
                                 f"{list(out.shape)} must have no empty dimension")


def _prepare_window(node, data: OpDataTransposeConv, inp, out, fh: int, fw: int) -> None:
    opts = node.options
    sh, sw = int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))
    padding = opts.get("padding", "SAME")
    if sh <= 0 or sw <= 0:
        raise kernel_error(node, f"stride {sh}x{sw}: strides must be positive")
    if padding not in ("SAME", "VALID"):
        raise kernel_error(node, f"padding {padding!r} is not SAME or VALID")
    _, oh, ow, _ = (int(d) for d in out.shape)
    pad = scatter_padding(sh, sw, oh, ow, fh, fw, padding)
    # TFLM keeps stride and padding in ConvParams' int16_t fields.
    if any(narrow_int16(v) != v for v in (sh, sw, pad.height, pad.width)):
        raise kernel_error(node, f"stride {sh}x{sw} / padding {pad.height}x{pad.width} do not fit TFLM's "
                                 "int16 ConvParams fields (they would wrap)")
    data.stride_h, data.stride_w, data.padding, data.filter_w = sh, sw, pad, fw
    data.out_shape = tuple(int(d) for d in out.shape)
    data.taps = tap_ranges(int(inp.shape[1]), int(inp.shape[2]), oh, ow, fh, fw, sh, sw, pad)


def _prepare_quantized(ctx: KernelContext, node: Node, data: OpDataTransposeConv, flt, inp, bias, out, act: str, oc: int) -> None:
    it = np.dtype(inp.dtype)
    wide = it == np.int16
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=0, wide=wide)
    if bias is not None:
        if wide and np.dtype(bias.dtype) == np.int16:
            # TFLM widens an int16 bias into an int64 scratch buffer every invoke.
            ctx.request_scratch(element_count(bias) * 8)
            check_elements(node, "bias", bias, oc)
        else:
            check_bias(node, bias, oc, it)
    data.bias = int_bias(bias)
    if wide:
        # The 16x8 kernel applies neither zero point (the int16 spec has them 0).
        data.input_zero_point = data.output_zero_point = 0
    data.weights = _integer_weights(flt.data) if flt.is_constant else None
    n, oh, ow, _ = data.out_shape
    # |w| <= 128 (int8 filter): a bound on every accumulator, constant filter or not.
    _, fh, fw, ic = (int(d) for d in flt.shape)
    bound = 128 * fh * fw * ic * max_abs_offset(it, data.input_zero_point)
    data.requant = Requantizer((n * oh * ow, oc), data.output_multiplier, data.output_shift, data.bias,
                               data.output_zero_point, data.act_min, data.act_max, tile=ow, wide=wide,
                               acc_bound=bound)


def transpose_conv_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataTransposeConv = node.user_data
    x = ctx.required_input(node, INPUT).data
    out = ctx.output(node, 0)
    weights = data.weights
    if weights is None:                    # a filter computed at run time
        make = _float_weights if data.kind == "float32" else _integer_weights
        weights = make(ctx.required_input(node, FILTER).data)
    if data.kind == "float32":
        acc = float_scatter(data, weights, np.asarray(x, np.float32))
        if data.bias is not None:
            acc += data.bias
        np.maximum(acc, data.act_min, out=acc)
        np.minimum(acc, data.act_max, out=acc)
        out.data[...] = acc
        return
    data.requant.run(integer_scatter(data, weights, x).reshape(-1, data.out_shape[3]), out.data)


def float_scatter(data: OpDataTransposeConv, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The float32 sums before the bias, in the reference order (see the module docstring)."""
    acc = np.zeros(data.out_shape, np.float32)
    sh, sw = data.stride_h, data.stride_w
    for t in data.taps:
        xs = x[:, t.y0:t.y1, t.x0:t.x1, :]
        dst = acc[:, t.oy0:t.oy0 + (t.y1 - t.y0 - 1) * sh + 1:sh, t.ox0:t.ox0 + (t.x1 - t.x0 - 1) * sw + 1:sw, :]
        w = weights[:, t.ky, t.kx, :]                            # [OC, IC]
        for c in range(x.shape[3]):
            dst += xs[..., c:c + 1] * w[:, c]
    return acc


def integer_scatter(data: OpDataTransposeConv, weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The exact integer sums (in float64) of (x - input zero point) * w, before the bias."""
    n, h, w_in, ic = x.shape
    xo = np.asarray(x, np.float64).reshape(-1, ic)
    if data.input_zero_point:
        xo = xo - data.input_zero_point
    oc = data.out_shape[3]
    products = (xo @ weights).reshape(n, h, w_in, -1, oc)     # [N, H, W, KH*KW, OC]
    acc = np.zeros(data.out_shape, np.float64)
    sh, sw = data.stride_h, data.stride_w
    for t in data.taps:
        dst = acc[:, t.oy0:t.oy0 + (t.y1 - t.y0 - 1) * sh + 1:sh, t.ox0:t.ox0 + (t.x1 - t.x0 - 1) * sw + 1:sw, :]
        dst += products[:, t.y0:t.y1, t.x0:t.x1, t.ky * data.filter_w + t.kx, :]
    return acc


def _transpose_conv_temps(op: Any, tensors: Any) -> str:
    # TransposeConvPrepare, then CalculateOpData reads the tensors again unless float32.
    inp = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] >= 0 else -1
    quantized = inp >= 0 and tensors[inp].type_name != "FLOAT32"
    return "o0 i2 i1" + (" | i2 i1 i3 o0" if quantized else "")


TRANSPOSE_CONV = Registration(invoke=transpose_conv_invoke, prepare=transpose_conv_prepare,
                              init=transpose_conv_init, name="TRANSPOSE_CONV",
                              temps=_transpose_conv_temps)

BUILTINS = [("TRANSPOSE_CONV", TRANSPOSE_CONV, 5)]
