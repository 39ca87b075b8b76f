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

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .conv_common import (ConvOpData, check_bias, check_finite_float_filter, conv_tensors, int32_accumulators, int_bias, prepare_float_output,
                          prepare_window, quantized_conv_params, store_float_output, store_output, window_invoke)
from .exact_matmul import accumulator_bound, exact_float_type, max_abs_offset, sequential_matmul_f32
from .kernel_util import HYBRID, activation_of, check_activation, dtype_name, kernel_error, tensor_name, zero_point_of
from .padding import gather_windows, make_geometry
from .requant import Requantizer


@dataclass
class OpDataConv(ConvOpData):
    groups: int = 1
    filter_zero_point: int = 0
    # weights: (groups, K, OC/groups) float32, or the exact float type of the integer path


conv_init = op_data_init("OpDataConv", OpDataConv)


def conv_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataConv = node.user_data
    inp, flt, bias, out = conv_tensors(ctx, node)
    data.groups = _check_tensors(node, inp, flt, bias, out)
    int32_acc = int32_accumulators(node, np.dtype(inp.dtype), bias)
    oc, fh, fw, fic = (int(d) for d in flt.shape)
    # TFLM allocates the per-channel arrays unconditionally (float too).
    ctx.allocate_persistent(4 * oc)
    ctx.allocate_persistent(4 * oc)
    act = activation_of(node)
    check_activation(node, act)
    sh, sw, dh, dw = prepare_window(node, data, inp, out, fh, fw)
    data.kind = np.dtype(inp.dtype).name
    if data.kind == "float32":
        check_finite_float_filter(node, data, inp, flt, out, sh, sw, dh, dw)
    # (OC, KH, KW, IC/g) -> per group (K, OC/g) with K ordered (ky, kx, ic) like TFLM's loops.
    w_g = np.asarray(flt.data).reshape(data.groups, oc // data.groups, fh * fw * fic).transpose(0, 2, 1)
    if data.narrow is not None:
        _prepare_narrowed(node, data, inp, flt, bias, out, act, w_g, oc)
        return
    data.geometry = make_geometry(inp.shape, out.shape, fh, fw, sh, sw, dh, dw, data.padding)
    if data.kind == "float32":
        data.weights = np.ascontiguousarray(w_g, dtype=np.float32)
        prepare_float_output(data, bias, act)
        data.pad_buffer = np.zeros(data.geometry.padded_shape, dtype=np.float32)
        return
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=0, wide=not int32_acc)
    data.filter_zero_point = zero_point_of(flt)
    _prepare_quantized_buffers(data, inp, bias, w_g, wide=not int32_acc)


def _check_tensors(node, inp, flt, bias, out) -> int:
    """Types (TFLM's: float32, int8 or 16x8), 4-D shapes, channels, a constant filter and the
    bias. Returns the number of groups (input channels / filter channels)."""
    if inp.dtype != out.dtype:
        raise kernel_error(node, f"input {tensor_name(inp)} is {dtype_name(inp)} but output {tensor_name(out)} is {dtype_name(out)}")
    it, ft = np.dtype(inp.dtype), np.dtype(flt.dtype)
    if not ((it == np.float32 and ft == np.float32) or (it == np.int8 and ft == np.int8)
            or (it == np.int16 and ft == np.int8)):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {it.name}, filter {tensor_name(flt)} {ft.name}: "
                                 f"{HYBRID}")
    if len(inp.shape) != 4 or len(flt.shape) != 4 or len(out.shape) != 4:
        raise kernel_error(node, f"input {tensor_name(inp)}, filter and output must be 4-D")
    oc, fic, ic = int(flt.shape[0]), int(flt.shape[3]), int(inp.shape[3])
    if fic <= 0 or ic % fic != 0:
        raise kernel_error(node, f"input depth {ic} of {tensor_name(inp)} is not a multiple of filter depth {fic}")
    groups = ic // fic
    if oc % groups != 0 or int(out.shape[3]) != oc:
        raise kernel_error(node, f"output {tensor_name(out)} has {out.shape[3]} channels, filter {tensor_name(flt)} {oc}")
    if flt.data is None:
        raise kernel_error(node, f"filter {tensor_name(flt)} must be constant")
    if bias is not None:
        check_bias(node, bias, oc, inp.dtype, int32_bias_ok=True)
    return groups


def _prepare_quantized_buffers(data: OpDataConv, inp, bias, w_g: np.ndarray, wide: bool) -> None:
    """The weights in the exact float type, the padded input, im2col and accumulator buffers,
    and the output stage."""
    max_abs_x = max_abs_offset(np.dtype(inp.dtype), data.input_zero_point)
    ft_acc = exact_float_type(w_g, max_abs_x)
    data.weights = np.ascontiguousarray(w_g, dtype=ft_acc)
    # The per-channel kernel ignores the filter zero point (it is 0 by the quantization spec).
    if bias is not None:
        data.bias = int_bias(bias)
    g = data.geometry
    data.pad_buffer = np.zeros(g.padded_shape, dtype=ft_acc)
    p = g.n * g.out_h * g.out_w
    oc = w_g.shape[0] * w_g.shape[2]                   # groups x output channels per group
    if data.groups == 1 and not _is_pointwise(g):
        data.cols = np.empty((p, g.filter_h * g.filter_w * g.channels), dtype=ft_acc)
    data.acc = np.empty((p, oc), dtype=ft_acc)
    data.requant = Requantizer((p, oc), data.output_multiplier, data.output_shift, data.bias,
                               data.output_zero_point, data.act_min, data.act_max,
                               tile=g.out_w, wide=wide, acc_bound=accumulator_bound(w_g, max_abs_x))


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
        prepare_float_output(data, bias, act)
        return
    wide = not int32_accumulators(node, inp.dtype, bias)
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=0, wide=wide)
    data.weights = np.ascontiguousarray(w_g, dtype=np.float64)       # exact below 2^53
    if bias is not None:
        data.bias = int_bias(bias)
    max_abs_x = max_abs_offset(np.dtype(inp.dtype), data.input_zero_point)
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
            parts.append(sequential_matmul_f32(cols, data.weights[gi], products_at_once=False))
        else:
            parts.append(cols.astype(np.float64) @ data.weights[gi])
    acc = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
    store_output(acc, data, out)


def _is_pointwise(g) -> bool:
    return (g.filter_h == 1 and g.filter_w == 1 and g.stride_h == 1 and g.stride_w == 1
            and not g.needs_padding)


def _invoke_padded(data: OpDataConv, x: np.ndarray, out) -> None:
    """The usual path: im2col of the padded input, one matmul per group."""
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
        if _is_pointwise(g):
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
        parts.append(sequential_matmul_f32(_cols(g, buf, gi, data.groups), data.weights[gi],
                                           products_at_once=False))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


conv_invoke = window_invoke(_invoke_padded, _invoke_narrowed)


CONV_2D = Registration(invoke=conv_invoke, prepare=conv_prepare, init=conv_init, name="CONV_2D",
                       temps="o0 i0 i1 | i0 i1 i2 o0")        # ConvPrepare | CalculateOpDataConv

BUILTINS = [("CONV_2D", CONV_2D, 8)]
