"""What CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED share (TFLM's conv_common.cc and
fully_connected_common.cc): the node's tensors and window options, the bias checks, whether
the accumulator is TFLM's int32, the per-channel requantization parameters, the biases as
the kernels keep them, and the float32 epilogue.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .kernel_util import (activation_range_float, activation_range_quantized, check_elements, check_quantized,
                          kernel_error, scale_of, tensor_name, type_label, type_name, zero_point_of)
from .padding import Int16Window, check_geometry, compute_padding_height_width, int16_window
from .quant import MAX_LEFT_SHIFT, MAX_LEFT_SHIFT_WIDE, check_left_shift, quantize_multiplier
from micro_rt.kernel_api import KernelContext, Node


@dataclass
class ConvOpData:
    """Host-side mirror of TFLM's OpDataConv (CONV_2D and DEPTHWISE_CONV_2D both use it)
    plus what both kernels precompute for invoke."""

    kind: str = ""
    padding: Any = None                  # padding.PaddingValues
    geometry: Any = None                 # padding.WindowGeometry (the narrowed path: a tuple)
    input_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: Any = None        # per channel, int64
    output_shift: Any = None             # per channel, int64 (positive = left)
    act_min: Any = 0
    act_max: Any = 0
    weights: Any = None                  # in the kernel's layout and accumulation type
    bias: Any = None                     # int64 / float32 or None
    pad_buffer: Any = None               # host scratch: padded input
    cols: Any = None                     # host scratch: im2col matrix (P, K)
    acc: Any = None                      # host scratch: accumulators
    requant: Any = None                  # requant.Requantizer
    narrow: Any = None                   # padding.Int16Window when TFLM's int16 fields wrap


def conv_tensors(ctx: KernelContext, node: Node) -> tuple:
    """(input, filter, bias or None, output) of a CONV_2D / DEPTHWISE_CONV_2D node."""
    if len(node.inputs) not in (2, 3) or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 2 or 3 inputs and 1 output, got {len(node.inputs)}/{len(node.outputs)}")
    bias = ctx.input(node, 2) if len(node.inputs) == 3 else None
    return ctx.input(node, 0), ctx.input(node, 1), bias, ctx.output(node, 0)


def prepare_window(node, data, inp, out, filter_h: int, filter_w: int) -> tuple[int, int, int, int]:
    """The options' stride and dilation, checked against the input and the output
    (padding.check_geometry); TFLM's padding into `data.padding`, and into `data.narrow` the
    int16-narrowed window when TFLM's int16_t fields wrap (None otherwise). Returns
    (stride_h, stride_w, dilation_h, dilation_w)."""
    opts = node.options
    sh, sw = int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))
    dh, dw = int(opts.get("dilation_h_factor", 1)), int(opts.get("dilation_w_factor", 1))
    padding = opts.get("padding", "SAME")
    check_geometry(node, inp, out, filter_h, filter_w, sh, sw, dh, dw, padding)
    data.padding, _, _ = compute_padding_height_width(sh, sw, dh, dw, int(inp.shape[1]), int(inp.shape[2]),
                                                      filter_h, filter_w, padding)
    data.narrow = int16_window(sh, sw, dh, dw, data.padding)
    return sh, sw, dh, dw

def _window_leaves_image(out_size: int, stride: int, pad: int, filter_size: int, dilation: int,
                         in_size: int) -> bool:
    """Whether some output's window has a tap outside the image along one axis (the taps form
    two arithmetic progressions, so the extremes are at their ends; any signs, as wrapped
    int16 fields may have)."""
    ends = [o * stride - pad + k * dilation for o in (0, out_size - 1) for k in (0, filter_size - 1)]
    return min(ends) < 0 or max(ends) >= in_size


def check_finite_float_filter(node, data, inp, flt, out, stride_h: int, stride_w: int, dil_h: int,
                              dil_w: int) -> None:
    """A float filter holding NaN or Inf on windows that reach outside the image: TFLM skips
    those taps, micro_rt's kernels (host and MCU) multiply them by zero padding, and 0 x NaN or
    0 x Inf is NaN where TFLM adds nothing, so the outputs would differ: refused. Call after
    prepare_window."""
    w = np.asarray(flt.data)
    bad = ~np.isfinite(w)
    if not bad.any():
        return
    # the window as TFLM's kernel runs it (int16 fields, possibly wrapped)
    win = data.narrow or Int16Window(stride_h, stride_w, dil_h, dil_w, data.padding.height, data.padding.width)
    fh, fw = int(flt.shape[1]), int(flt.shape[2])
    if not (_window_leaves_image(int(out.shape[1]), win.stride_h, win.pad_h, fh, win.dil_h, int(inp.shape[1]))
            or _window_leaves_image(int(out.shape[2]), win.stride_w, win.pad_w, fw, win.dil_w, int(inp.shape[2]))):
        return
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    raise kernel_error(node, f"filter {tensor_name(flt)} holds non-finite values ({w[first]} at {list(first)}) "
                             "and some windows reach outside the image: TFLM skips those taps, "
                             "micro_rt's kernels multiply them by zero padding (0 x NaN or Inf is NaN), "
                             "so the outputs would differ")


# Why a bias of another type than TFLM's kernel expects is refused: TFLM does not check it
# and reads the buffer as words of the expected type (wrong values, or past its end).
_BIAS_READ_AS = {"float32": "float32", "int8": "int32", "int16": "int64"}


def check_bias(node, bias, channels: int, input_dtype, int32_bias_ok: bool = False) -> None:
    """A bias holds one value per output channel, of the type TFLM's kernel reads: float32
    for float kernels, int32 for int8 ones, int64 for 16x8 ones (or int32 where the kernel
    has an int32-accumulator variant: `int32_bias_ok`, CONV_2D and FULLY_CONNECTED)."""
    kind = np.dtype(input_dtype).name
    allowed = {"float32": ["FLOAT32"], "int8": ["INT32"],
               "int16": ["INT64", "INT32"] if int32_bias_ok else ["INT64"]}.get(kind, [])
    got = type_name(bias.dtype)
    if got not in allowed:
        if kind == "int16" and int32_bias_ok:
            why = f"Bias type {type_label(bias.dtype)} not supported."
        else:
            why = (f"TFLM's {kind} kernel reads the bias as {_BIAS_READ_AS.get(kind, '?')} words "
                   "whatever its type")
        raise kernel_error(node, f"bias {tensor_name(bias)} has type {got}, expected "
                                 f"{' or '.join(allowed) or 'none'} for {kind} input: {why}")
    check_elements(node, "bias", bias, channels)


def int32_accumulators(node, input_dtype, bias) -> bool:
    """Whether TFLM's kernel accumulates in int32 (wrapping): always for int8; for 16x8
    CONV_2D / FULLY_CONNECTED with an int32 bias, or with no bias when the options ask for
    an int32 quantized bias type; never for float."""
    kind = np.dtype(input_dtype)
    if kind == np.int8:
        return True
    if kind != np.int16 or node.op_name == "DEPTHWISE_CONV_2D":
        return False
    if bias is not None:
        return np.dtype(bias.dtype) == np.int32
    return node.options.get("quantized_bias_type") in ("INT32", 2)


def populate_per_channel_multipliers(input_scale: float, filter_scales: np.ndarray,
                                     output_scale: float, num_channels: int
                                     ) -> tuple[np.ndarray, np.ndarray]:
    """PopulateConvolutionQuantizationParams' per-channel loop (double arithmetic)."""
    fs = np.asarray(filter_scales, dtype=np.float32)
    mult = np.zeros(num_channels, dtype=np.int64)
    shift = np.zeros(num_channels, dtype=np.int64)
    for i in range(num_channels):
        scale = float(fs[i] if fs.size > 1 else fs[0])
        effective = float(np.float32(input_scale)) * scale / float(np.float32(output_scale))
        mult[i], shift[i] = quantize_multiplier(effective)
    return mult, shift


def quantized_conv_params(node, data, inp, flt, out, act: str, oc: int, channel_dim: int,
                          wide: bool = False) -> None:
    """The quantized part of CalculateOpDataConv shared by CONV_2D and DEPTHWISE_CONV_2D:
    per-channel multipliers and shifts, the activation clamp, and the zero points."""
    if not np.asarray(flt.scales).size:
        raise kernel_error(node, f"filter {tensor_name(flt)} has no quantization parameters (TFLM: "
                                 "filter->quantization.type != kTfLiteAffineQuantization)")
    check_quantized(node, out, "output")
    scales = np.asarray(flt.scales, dtype=np.float32)
    if scales.size not in (1, oc):
        raise kernel_error(node, f"filter {tensor_name(flt)} has {scales.size} scales for {oc} output channels")
    if scales.size > 1 and int(flt.quantized_dimension) != channel_dim:
        raise kernel_error(node, f"filter {tensor_name(flt)} is quantized along dimension "
                                 f"{flt.quantized_dimension}, expected {channel_dim}")
    data.output_multiplier, data.output_shift = populate_per_channel_multipliers(
        scale_of(inp), scales, scale_of(out), oc)
    check_left_shift(node, data.output_shift, f"input {tensor_name(inp)} x filter {tensor_name(flt)} / output {tensor_name(out)} scale",
                     MAX_LEFT_SHIFT_WIDE if wide else MAX_LEFT_SHIFT)
    data.act_min, data.act_max = activation_range_quantized(act, scale_of(out), zero_point_of(out), np.dtype(inp.dtype).type)
    data.input_zero_point = zero_point_of(inp)
    data.output_zero_point = zero_point_of(out)


def int_bias(bias) -> np.ndarray | None:
    """The integer kernels' bias: int64 values, one per output channel (None without one)."""
    return None if bias is None else np.asarray(bias.data, dtype=np.int64).reshape(-1).copy()


def prepare_float_output(data, bias, act: str) -> None:
    """What store_float_output needs: the bias in float32 and the fused activation's range."""
    data.bias = None if bias is None else np.asarray(bias.data, dtype=np.float32).reshape(-1).copy()
    lo, hi = activation_range_float(act)
    data.act_min, data.act_max = np.float32(lo), np.float32(hi)


def store_float_output(acc: np.ndarray, data, out) -> None:
    """The float32 epilogue of TFLM's conv and fully connected: + bias, clamp to the fused
    activation's range, write the output tensor."""
    if data.bias is not None:
        acc += data.bias
    np.maximum(acc, data.act_min, out=acc)
    np.minimum(acc, data.act_max, out=acc)
    out.data[...] = acc.reshape(out.data.shape)


def store_output(acc: np.ndarray, data, out) -> None:
    """The epilogue of either kind: float32 (store_float_output) or the integer output stage
    (`data.requant`)."""
    if data.kind == "float32":
        store_float_output(acc, data, out)
    else:
        data.requant.run(acc, out.data)


def window_invoke(padded, narrowed):
    """The invoke of CONV_2D / DEPTHWISE_CONV_2D: `narrowed(data, x, out)` where TFLM's int16
    window fields wrap (`data.narrow`), else `padded(data, x, out)`."""
    def invoke(ctx: KernelContext, node: Node) -> None:
        data = node.user_data
        run = narrowed if data.narrow is not None else padded
        run(data, ctx.required_input(node, 0).data, ctx.output(node, 0))
    return invoke
