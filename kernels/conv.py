"""CONV_2D: TFLM's reference kernel (conv.cc / conv_common.cc, reference_ops::Conv and
reference_integer_ops::ConvPerChannel), vectorised.

int8: im2col over a zero-point-shifted, zero-padded float copy of the input, one BLAS matmul,
then per-channel requantization with TFLM's double-rounding MultiplyByQuantizedMultiplier.
The matmul is exact: float32 when max_oc sum_k |w| * max|x - zp| < 2^24 (every partial sum is
an exactly representable integer, whatever order BLAS adds in), float64 otherwise. TFLM always runs the per-channel kernel: a
per-tensor filter scale is broadcast to every output channel.
float32: TFLM accumulates `total += input * filter` in float32 in (filter_y, filter_x,
in_channel) order and skips taps outside the image; we reproduce that order exactly (one
float32 multiply and one float32 add per tap, vectorised over all outputs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import Registration, op_data_init

from .padding import (Int16Window, PaddingValues, activation_of, check_activation, check_bias, check_geometry, compute_padding_height_width,
                      check_quantized, dtype_name, gather_windows, int16_window, int32_accumulators,
                      kernel_error, make_geometry, scale0,
                      store_float_output, tname, zp0)
from .tflite_types import HYBRID
from .quant import (MAX_LEFT_SHIFT, MAX_LEFT_SHIFT_WIDE, Requantizer, activation_range_float,
                    activation_range_quantized, check_left_shift, quantize_multiplier)


@dataclass
class OpDataConv:
    """Host-side mirror of TFLM's OpDataConv plus everything precomputed for invoke."""

    kind: str = ""
    padding: Any = None
    geometry: Any = None
    groups: int = 1
    input_zero_point: int = 0
    filter_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: Any = None        # per channel, int64
    output_shift: Any = None             # per channel, int64 (positive = left)
    act_min: Any = 0
    act_max: Any = 0
    weights: Any = None                  # (groups, K, OC/groups) float64 or float32
    bias: Any = None                     # int64 / float32 or None
    pad_buffer: Any = None               # host scratch: padded input
    cols: Any = None                     # host scratch: im2col matrix (P, K)
    acc: Any = None                      # host scratch: matmul result (P, OC)
    requant: Any = None
    narrow: Any = None                   # padding.Int16Window when TFLM's int16 fields wrap


conv_init = op_data_init("OpDataConv", OpDataConv)


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


def accumulator_bound(w_groups: np.ndarray, max_abs_x: int) -> int:
    """The largest |sum_k x*w| any output channel can reach. w_groups: (..., K, OC)."""
    return int(np.abs(np.asarray(w_groups, dtype=np.int64)).sum(axis=-2).max(initial=0)) * int(max_abs_x)


def exact_float_type(w_groups: np.ndarray, max_abs_x: int):
    """float32 when every partial sum of x*w over K stays below 2^24 (then any summation
    order, BLAS included, is exact), else float64 (exact below 2^53).

    w_groups: (..., K, OC) integer weights.
    """
    return np.float32 if accumulator_bound(w_groups, max_abs_x) < (1 << 24) else np.float64


def _window_leaves_image(out_size: int, stride: int, pad: int, filter_size: int, dilation: int,
                         in_size: int) -> bool:
    """Whether some output's window has a tap outside the image along one axis (the taps form
    two arithmetic progressions, so the extremes are at their ends; any signs, as wrapped
    int16 fields may have)."""
    ends = [o * stride - pad + k * dilation for o in (0, out_size - 1) for k in (0, filter_size - 1)]
    return min(ends) < 0 or max(ends) >= in_size


def check_finite_float_filter(node, inp, flt, out, stride_h: int, stride_w: int, dil_h: int,
                              dil_w: int, padding: PaddingValues) -> None:
    """A float filter holding NaN or Inf on windows that reach outside the image: TFLM skips
    those taps, micro_rt's kernels (host and MCU) multiply them by zero padding, and 0 x NaN or
    0 x Inf is NaN where TFLM adds nothing, so the outputs would differ: refused."""
    w = np.asarray(flt.data)
    bad = ~np.isfinite(w)
    if not bad.any():
        return
    # the window as TFLM's kernel runs it (int16 fields, possibly wrapped)
    win = int16_window(stride_h, stride_w, dil_h, dil_w, padding) or Int16Window(
        stride_h, stride_w, dil_h, dil_w, padding.height, padding.width)
    fh, fw = int(flt.shape[1]), int(flt.shape[2])
    if not (_window_leaves_image(int(out.shape[1]), win.stride_h, win.pad_h, fh, win.dil_h, int(inp.shape[1]))
            or _window_leaves_image(int(out.shape[2]), win.stride_w, win.pad_w, fw, win.dil_w, int(inp.shape[2]))):
        return
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    raise kernel_error(node, f"filter {tname(flt)} holds non-finite values ({w[first]} at {list(first)}) "
                             "and some windows reach outside the image: TFLM skips those taps, "
                             "micro_rt's kernels multiply them by zero padding (0 x NaN or Inf is NaN), "
                             "so the outputs would differ")


def quantized_conv_params(node, data, inp, flt, out, act: str, oc: int, channel_dim: int,
                          wide: bool = False) -> None:
    """The quantized part of CalculateOpDataConv shared by CONV_2D and DEPTHWISE_CONV_2D:
    per-channel multipliers and shifts, the activation clamp, and the zero points."""
    if not np.asarray(flt.scales).size:
        raise kernel_error(node, f"filter {tname(flt)} has no quantization parameters (TFLM: "
                                 "filter->quantization.type != kTfLiteAffineQuantization)")
    check_quantized(node, out, "output")
    scales = np.asarray(flt.scales, dtype=np.float32)
    if scales.size not in (1, oc):
        raise kernel_error(node, f"filter {tname(flt)} has {scales.size} scales for {oc} output channels")
    if scales.size > 1 and int(flt.quantized_dimension) != channel_dim:
        raise kernel_error(node, f"filter {tname(flt)} is quantized along dimension "
                                 f"{flt.quantized_dimension}, expected {channel_dim}")
    data.output_multiplier, data.output_shift = populate_per_channel_multipliers(
        scale0(inp), scales, scale0(out), oc)
    check_left_shift(node, data.output_shift, f"input {tname(inp)} x filter {tname(flt)} / output {tname(out)} scale",
                     MAX_LEFT_SHIFT_WIDE if wide else MAX_LEFT_SHIFT)
    data.act_min, data.act_max = activation_range_quantized(act, scale0(out), zp0(out), np.dtype(inp.dtype).type)
    data.input_zero_point = zp0(inp)
    data.output_zero_point = zp0(out)


def conv_prepare(ctx, node) -> None:
    data: OpDataConv = node.user_data
    opts = node.options
    if len(node.inputs) not in (2, 3) or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 2 or 3 inputs and 1 output, got {len(node.inputs)}/{len(node.outputs)}")
    inp = ctx.input(node, 0)
    flt = ctx.input(node, 1)
    bias = ctx.input(node, 2) if len(node.inputs) == 3 else None
    out = ctx.output(node, 0)
    if inp.dtype != out.dtype:
        raise kernel_error(node, f"input {tname(inp)} is {dtype_name(inp)} but output {tname(out)} is {dtype_name(out)}")
    it, ft = np.dtype(inp.dtype), np.dtype(flt.dtype)
    if not ((it == np.float32 and ft == np.float32) or (it == np.int8 and ft == np.int8)
            or (it == np.int16 and ft == np.int8)):
        raise kernel_error(node, f"input {tname(inp)} has type {it.name}, filter {tname(flt)} {ft.name}: "
                                 f"{HYBRID}")
    if len(inp.shape) != 4 or len(flt.shape) != 4 or len(out.shape) != 4:
        raise kernel_error(node, f"input {tname(inp)}, filter and output must be 4-D")
    oc, fh, fw, fic = (int(d) for d in flt.shape)
    n, ih, iw, ic = (int(d) for d in inp.shape)
    if fic <= 0 or ic % fic != 0:
        raise kernel_error(node, f"input depth {ic} of {tname(inp)} is not a multiple of filter depth {fic}")
    groups = ic // fic
    if oc % groups != 0 or int(out.shape[3]) != oc:
        raise kernel_error(node, f"output {tname(out)} has {out.shape[3]} channels, filter {tname(flt)} {oc}")
    if flt.data is None:
        raise kernel_error(node, f"filter {tname(flt)} must be constant")
    if bias is not None:
        check_bias(node, bias, oc, inp.dtype, int32_bias_ok=True)
    int32_acc = int32_accumulators(node, it, bias)

    # TFLM allocates the per-channel arrays unconditionally (float too).
    ctx.allocate_persistent(4 * oc)
    ctx.allocate_persistent(4 * oc)

    act = activation_of(node)
    check_activation(node, act)
    sh, sw = int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))
    dh, dw = int(opts.get("dilation_h_factor", 1)), int(opts.get("dilation_w_factor", 1))
    padding = opts.get("padding", "SAME")
    check_geometry(node, inp, out, fh, fw, sh, sw, dh, dw, padding)
    data.padding, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw, padding)
    data.narrow = int16_window(sh, sw, dh, dw, data.padding)
    data.groups = groups
    data.kind = it.name

    if it == np.float32:
        check_finite_float_filter(node, inp, flt, out, sh, sw, dh, dw, data.padding)
    w = np.asarray(flt.data)
    # (OC, KH, KW, IC/g) -> per group (K, OC/g) with K ordered (ky, kx, ic) like TFLM's loops.
    ocg = oc // groups
    w_g = w.reshape(groups, ocg, fh * fw * fic).transpose(0, 2, 1)
    if data.narrow is not None:
        _prepare_narrowed(node, data, inp, flt, bias, out, act, w_g, oc)
        return
    data.geometry = make_geometry(inp.shape, out.shape, fh, fw, sh, sw, dh, dw, data.padding)

    if it == np.float32:
        data.weights = np.ascontiguousarray(w_g, dtype=np.float32)
        data.bias = None if bias is None else np.asarray(bias.data, dtype=np.float32).reshape(-1).copy()
        lo, hi = activation_range_float(act)
        data.act_min, data.act_max = np.float32(lo), np.float32(hi)
        data.pad_buffer = np.zeros(data.geometry.padded_shape, dtype=np.float32)
        return

    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=0, wide=not int32_acc)
    data.filter_zero_point = zp0(flt)
    # The per-channel kernel ignores the filter zero point (it is 0 by the quantization spec).
    info = np.iinfo(it)
    max_abs_x = max(abs(int(info.min) - data.input_zero_point), abs(int(info.max) - data.input_zero_point))
    ft_acc = exact_float_type(w_g, max_abs_x)
    data.weights = np.ascontiguousarray(w_g, dtype=ft_acc)
    if bias is not None:
        data.bias = np.asarray(bias.data, dtype=np.int64).reshape(-1).copy()
    g = data.geometry
    data.pad_buffer = np.zeros(g.padded_shape, dtype=ft_acc)
    p = g.n * g.out_h * g.out_w
    if groups == 1 and not _is_pointwise(g):
        data.cols = np.empty((p, fh * fw * fic), dtype=ft_acc)
    data.acc = np.empty((p, oc), dtype=ft_acc)
    data.requant = Requantizer((p, oc), data.output_multiplier, data.output_shift, data.bias,
                               data.output_zero_point, data.act_min, data.act_max,
                               tile=g.out_w, wide=not int32_acc,
                               acc_bound=accumulator_bound(w_g, max_abs_x))


def _prepare_narrowed(node, data: OpDataConv, inp, flt, bias, out, act: str, w_g: np.ndarray,
                      oc: int) -> None:
    """A stride, dilation or padding beyond int16: TFLM's ConvParams keep them as int16_t, so
    its kernel runs with the wrapped values (`data.narrow`) over the output tensor's shape.
    Deterministic (every tap outside the image is skipped), so reproduced: the taps are
    gathered with those values, then one exact matmul (float32: the reference order)."""
    fh, fw = int(flt.shape[1]), int(flt.shape[2])
    n, oh, ow = int(out.shape[0]), int(out.shape[1]), int(out.shape[2])
    data.geometry = (oh, ow, fh, fw)
    if data.kind == "float32":
        data.weights = np.ascontiguousarray(w_g, dtype=np.float32)
        data.bias = None if bias is None else np.asarray(bias.data, dtype=np.float32).reshape(-1).copy()
        lo, hi = activation_range_float(act)
        data.act_min, data.act_max = np.float32(lo), np.float32(hi)
        return
    wide = not int32_accumulators(node, inp.dtype, bias)
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=0, wide=wide)
    data.weights = np.ascontiguousarray(w_g, dtype=np.float64)       # exact below 2^53
    if bias is not None:
        data.bias = np.asarray(bias.data, dtype=np.int64).reshape(-1).copy()
    info = np.iinfo(np.dtype(inp.dtype))
    max_abs_x = max(abs(int(info.min) - data.input_zero_point), abs(int(info.max) - data.input_zero_point))
    data.requant = Requantizer((n * oh * ow, oc), data.output_multiplier, data.output_shift, data.bias,
                               data.output_zero_point, data.act_min, data.act_max,
                               wide=wide, acc_bound=accumulator_bound(w_g, max_abs_x))


def _invoke_narrowed(data: OpDataConv, x: np.ndarray, out) -> None:
    oh, ow, fh, fw = data.geometry
    if data.kind != "float32":
        x = np.asarray(x, np.int64) - data.input_zero_point
    win = gather_windows(x, oh, ow, fh, fw, data.narrow)
    cg = win.shape[-1] // data.groups
    parts = []
    for gi in range(data.groups):
        cols = win[..., gi * cg:(gi + 1) * cg].reshape(-1, fh * fw * cg)
        if data.kind == "float32":
            parts.append(sequential_dot_f32(np.ascontiguousarray(cols.T, np.float32), data.weights[gi]))
        else:
            parts.append(cols.astype(np.float64) @ data.weights[gi])
    acc = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    if data.kind == "float32":
        store_float_output(acc, data, out)
    else:
        data.requant.run(acc, out.data)


def _is_pointwise(g) -> bool:
    return (g.filter_h == 1 and g.filter_w == 1 and g.stride_h == 1 and g.stride_w == 1
            and not g.needs_padding)


def conv_invoke(ctx, node) -> None:
    data: OpDataConv = node.user_data
    x = ctx.input(node, 0).data
    out = ctx.output(node, 0)
    if data.narrow is not None:
        _invoke_narrowed(data, x, out)
        return
    g = data.geometry
    buf = data.pad_buffer
    if data.kind == "float32":
        g.fill(buf, x)
        store_float_output(_float_conv(data, buf), data, out)
        return
    if data.kind == "int8":
        # x + input_offset, padded taps contribute 0 (TFLM skips them).
        np.subtract(x, buf.dtype.type(data.input_zero_point),
                    out=buf[:, g.pad_top:g.pad_top + g.in_h, g.pad_left:g.pad_left + g.in_w, :])
    else:  # int16: zero point is 0 by spec; TFLM still applies input_offset
        g.fill(buf, np.asarray(x, dtype=np.int64) - data.input_zero_point)
    data.requant.run(_matmul_conv(data, buf), out.data)


def _cols(g, buf: np.ndarray, group: int, groups: int) -> np.ndarray:
    """im2col matrix (P, K) of one group."""
    if groups > 1:
        cg = g.channels // groups
        buf = buf[..., group * cg:(group + 1) * cg]
        win = np.lib.stride_tricks.as_strided(
            buf, shape=(g.n, g.out_h, g.out_w, g.filter_h, g.filter_w, cg),
            strides=(buf.strides[0], buf.strides[1] * g.stride_h, buf.strides[2] * g.stride_w,
                     buf.strides[1] * g.dil_h, buf.strides[2] * g.dil_w, buf.strides[3]))
        k = g.filter_h * g.filter_w * cg
    else:
        if g.filter_h == 1 and g.filter_w == 1 and g.stride_h == 1 and g.stride_w == 1 \
                and not g.needs_padding:
            return buf.reshape(-1, g.channels)
        win = g.windows(buf)
        k = g.filter_h * g.filter_w * g.channels
    return win.reshape(g.n * g.out_h * g.out_w, k)


def _matmul_conv(data: OpDataConv, buf: np.ndarray) -> np.ndarray:
    g = data.geometry
    if data.groups == 1:
        if data.cols is not None:
            np.copyto(data.cols.reshape(g.n, g.out_h, g.out_w, g.filter_h, g.filter_w, g.channels),
                      g.windows(buf))
            cols = data.cols
        else:
            cols = buf.reshape(-1, g.channels)
        return np.matmul(cols, data.weights[0], out=data.acc)
    return np.concatenate([_cols(g, buf, i, data.groups) @ data.weights[i]
                           for i in range(data.groups)], axis=1)


def _float_conv(data: OpDataConv, buf: np.ndarray) -> np.ndarray:
    g = data.geometry
    parts = []
    for gi in range(data.groups):
        cols = np.ascontiguousarray(_cols(g, buf, gi, data.groups).T)   # (K, P)
        w = data.weights[gi]                                            # (K, OCg)
        acc = sequential_dot_f32(cols, w)
        parts.append(acc)
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def sequential_dot_f32(cols_t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """sum_k cols_t[k, p] * w[k, o] accumulated in float32, k in order, as a C loop would.

    cols_t: (K, P) float32, w: (K, O) float32 -> (P, O) float32.
    """
    k_total, p = cols_t.shape
    o = w.shape[1]
    acc = np.zeros((p, o), dtype=np.float32)
    tmp = np.empty((p, o), dtype=np.float32)
    for k in range(k_total):
        np.multiply(cols_t[k][:, None], w[k][None, :], out=tmp)
        acc += tmp
    return acc


CONV_2D = Registration(invoke=conv_invoke, prepare=conv_prepare, init=conv_init, name="CONV_2D")

BUILTINS = [("CONV_2D", CONV_2D, 8)]
