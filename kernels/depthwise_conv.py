"""DEPTHWISE_CONV_2D: TFLM's reference kernel (depthwise_conv.cc / depthwise_conv_common.cc,
reference_ops::DepthwiseConv and reference_integer_ops::DepthwiseConvPerChannel), vectorised
as one multiply-add per filter tap over the whole output.

Output channel `ic * depth_multiplier + m` reads input channel `ic`. int8 accumulates exactly in
int32 (taps outside the image contribute 0 after the zero-point shift, as TFLM skips them);
float32 accumulates in float32 in (filter_y, filter_x) order like the reference loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .conv_common import (ConvOpData, check_bias, check_finite_float_filter, conv_tensors, int32_accumulators, int_bias, prepare_float_output,
                          prepare_window, quantized_conv_params, store_output, window_invoke)
from .exact_matmul import accumulator_bound, exact_float_type, max_abs_offset
from .kernel_util import (HYBRID, activation_of, check_activation, dtype_name, kernel_error, tensor_name,
                          type_label, type_name)
from .padding import gather_windows, make_geometry, narrow_int16
from .requant import Requantizer


@dataclass
class OpDataDepthwise(ConvOpData):
    depth_multiplier: int = 1
    tmp: Any = None            # host scratch: one tap's products
    matmul: bool = False       # single input channel: im2col + one matmul (exact floats)
    # weights: (KH, KW, OW, OC) repeated along the output row, int32 / int64 / float32; the
    # single-channel matmul: (KH * KW, OC) in the exact float type


dw_init = op_data_init("OpDataConv", OpDataDepthwise)


def dw_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataDepthwise = node.user_data
    inp, flt, bias, out = conv_tensors(ctx, node)
    if len(inp.shape) != 4 or len(flt.shape) != 4 or len(out.shape) != 4:
        raise kernel_error(node, f"input {tensor_name(inp)}, filter and output must be 4-D")
    _, fh, fw, oc = (int(d) for d in flt.shape)
    # TFLM allocates the per-channel arrays before any type check.
    ctx.allocate_persistent(4 * oc)
    ctx.allocate_persistent(4 * oc)
    data.depth_multiplier = _check_tensors(node, inp, flt, bias, out)
    wide = not int32_accumulators(node, np.dtype(inp.dtype), bias)
    act = activation_of(node)
    check_activation(node, act)
    sh, sw, dh, dw = prepare_window(node, data, inp, out, fh, fw)
    data.kind = np.dtype(inp.dtype).name
    if data.kind == "float32":
        check_finite_float_filter(node, data, inp, flt, out, sh, sw, dh, dw)
    if data.narrow is not None:
        _prepare_narrowed(node, data, inp, flt, bias, out, act, wide)
        return
    data.geometry = make_geometry(inp.shape, out.shape, fh, fw, sh, sw, dh, dw, data.padding, channels=oc)
    if data.kind == "float32":
        _prepare_taps(data, flt, np.float32)
        prepare_float_output(data, bias, act)
        return
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=3, wide=wide)
    if bias is not None:
        data.bias = int_bias(bias)
    max_abs_x = max_abs_offset(np.dtype(inp.dtype), data.input_zero_point)
    taps = np.asarray(flt.data).reshape(fh * fw, oc)
    if int(inp.shape[3]) == 1 and fh * fw > 1:
        # One input channel: the depthwise conv is a plain conv with K = KH*KW taps, so use
        # im2col and one exact float matmul instead of KH*KW multiply-adds.
        data.geometry = make_geometry(inp.shape, out.shape, fh, fw, sh, sw, dh, dw, data.padding)
        _prepare_single_channel(data, taps, max_abs_x)
    else:
        _prepare_taps(data, flt, np.int32 if data.kind == "int8" else np.int64)
    g = data.geometry
    data.requant = Requantizer((g.n * g.out_h * g.out_w, oc), data.output_multiplier, data.output_shift,
                               data.bias, data.output_zero_point, data.act_min, data.act_max, tile=g.out_w,
                               wide=wide, acc_bound=accumulator_bound(taps, max_abs_x))


def _check_tensors(node, inp, flt, bias, out) -> int:
    """Types (TFLM's: float32, int8 or 16x8), channels, a constant filter, the bias and the
    depth_multiplier option. Returns the depth multiplier (output / input channels)."""
    oc, ic = int(flt.shape[3]), int(inp.shape[3])
    it, ft = np.dtype(inp.dtype), np.dtype(flt.dtype)
    if inp.dtype != out.dtype:
        raise kernel_error(node, f"input {tensor_name(inp)} is {it.name} but output {tensor_name(out)} is {dtype_name(out)}")
    if it not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_name(inp)}: Input type {type_label(it)} not supported.")
    if it == np.float32 and ft != np.float32:
        raise kernel_error(node, f"input {tensor_name(inp)} has type float32, filter {tensor_name(flt)} {ft.name}: "
                                 f"{HYBRID}")
    if it != np.float32 and ft != np.int8:
        raise kernel_error(node, f"filter {tensor_name(flt)}: Filter type {type_label(ft)} for input type "
                                 f"{type_name(it)} not supported.")
    if ic <= 0 or oc % ic != 0 or int(out.shape[3]) != oc:
        raise kernel_error(node, f"filter {tensor_name(flt)} has {oc} channels, input {tensor_name(inp)} {ic}, "
                                 f"output {tensor_name(out)} {out.shape[3]}")
    if flt.data is None:
        raise kernel_error(node, f"filter {tensor_name(flt)} must be constant")
    if bias is not None:
        check_bias(node, bias, oc, inp.dtype)
    m = oc // ic
    # TFLM's loops run over params.depth_multiplier (an int16_t copy of the option), not oc/ic.
    option_m = narrow_int16(int(node.options.get("depth_multiplier", m)))
    if option_m != m:
        raise kernel_error(node, f"depth_multiplier option {node.options.get('depth_multiplier')} (TFLM keeps "
                                 f"{option_m}) differs from filter {tensor_name(flt)} channels / input "
                                 f"{tensor_name(inp)} channels = {oc} / {ic}: TFLM's kernel would read and "
                                 "write channels out of range")
    return m


def _prepare_taps(data: OpDataDepthwise, flt, dtype) -> None:
    """The multiply-add per filter tap: weights repeated along the output row (KH, KW, OW,
    OC), so every tap's multiply runs over whole contiguous rows instead of OC-long inner
    loops; the padded (channel-repeated) input and the accumulators, in `dtype`."""
    g = data.geometry
    fh, fw, oc = g.filter_h, g.filter_w, g.channels
    w = np.broadcast_to(np.asarray(flt.data).reshape(fh, fw, 1, oc), (fh, fw, g.out_w, oc))
    data.weights = np.ascontiguousarray(w, dtype=dtype)
    data.pad_buffer = np.zeros(g.padded_shape, dtype=dtype)
    acc_shape = (g.n, g.out_h, g.out_w, oc)
    data.acc = np.empty(acc_shape, dtype=dtype)
    data.tmp = np.empty(acc_shape, dtype=dtype)


def _prepare_single_channel(data: OpDataDepthwise, taps: np.ndarray, max_abs_x: int) -> None:
    """im2col and one exact float matmul: weights (KH*KW, OC), padded input, buffers."""
    data.matmul = True
    g = data.geometry
    ft_acc = exact_float_type(taps, max_abs_x)
    data.weights = np.ascontiguousarray(taps, dtype=ft_acc)
    data.pad_buffer = np.zeros(g.padded_shape, dtype=ft_acc)
    p = g.n * g.out_h * g.out_w
    data.cols = np.empty((p, g.filter_h * g.filter_w), dtype=ft_acc)
    data.acc = np.empty((p, taps.shape[1]), dtype=ft_acc)


def _prepare_narrowed(node, data: OpDataDepthwise, inp, flt, bias, out, act: str, wide: bool) -> None:
    """Stride, dilation or padding beyond int16: TFLM's DepthwiseParams hold int16_t fields,
    so its kernel runs with the wrapped values (see conv._prepare_narrowed); reproduced by
    gathering the taps with them."""
    _, fh, fw, oc = (int(d) for d in flt.shape)
    n, oh, ow = int(out.shape[0]), int(out.shape[1]), int(out.shape[2])
    data.geometry = (oh, ow, fh, fw)
    w = np.asarray(flt.data).reshape(fh, fw, oc)
    if data.kind == "float32":
        data.weights = w.astype(np.float32)
        prepare_float_output(data, bias, act)
        return
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=3, wide=wide)
    data.weights = w.astype(np.int64)
    if bias is not None:
        data.bias = int_bias(bias)
    max_abs_x = max_abs_offset(np.dtype(inp.dtype), data.input_zero_point)
    data.requant = Requantizer((n * oh * ow, oc), data.output_multiplier, data.output_shift, data.bias,
                               data.output_zero_point, data.act_min, data.act_max, wide=wide,
                               acc_bound=accumulator_bound(w.reshape(fh * fw, oc), max_abs_x))


def _invoke_narrowed(data: OpDataDepthwise, x: np.ndarray, out) -> None:
    oh, ow, fh, fw = data.geometry
    if data.kind != "float32":
        x = np.asarray(x, np.int64) - data.input_zero_point
    win = gather_windows(x, oh, ow, fh, fw, data.narrow)
    if data.depth_multiplier > 1:       # output channel ic * m + j reads input channel ic
        win = np.repeat(win, data.depth_multiplier, axis=-1)
    acc = np.zeros(win.shape[:3] + win.shape[-1:], dtype=np.float32 if data.kind == "float32" else np.int64)
    for ky in range(fh):                # the reference loop's order (float32 sums are ordered)
        for kx in range(fw):
            acc += win[:, :, :, ky, kx, :] * data.weights[ky, kx]
    store_output(acc, data, out)


def _invoke_padded(data: OpDataDepthwise, x: np.ndarray, out) -> None:
    """The usual path: one multiply-add per filter tap over the padded input (one matmul for a single input channel)."""
    g = data.geometry
    buf = data.pad_buffer
    interior = buf[:, g.pad_top:g.pad_top + g.in_h, g.pad_left:g.pad_left + g.in_w, :]
    if data.matmul:
        np.subtract(x, buf.dtype.type(data.input_zero_point), out=interior)
        np.copyto(data.cols.reshape(g.n, g.out_h, g.out_w, g.filter_h, g.filter_w, 1),
                  g.windows(buf))
        data.requant.run(np.matmul(data.cols, data.weights, out=data.acc), out.data)
        return
    m = data.depth_multiplier
    if data.kind == "float32":
        src = x if m == 1 else np.repeat(x, m, axis=3)
        interior[...] = src
    elif m == 1:
        np.subtract(x, buf.dtype.type(data.input_zero_point), out=interior)
    else:
        interior[...] = np.repeat(x, m, axis=3)
        interior -= buf.dtype.type(data.input_zero_point)
    acc, tmp, w = data.acc, data.tmp, data.weights
    first = True
    for ky in range(g.filter_h):
        for kx in range(g.filter_w):
            view = g.tap(buf, ky, kx)
            if first:
                np.multiply(view, w[ky, kx], out=acc)
                first = False
            else:
                np.multiply(view, w[ky, kx], out=tmp)
                acc += tmp
    store_output(acc, data, out)


dw_invoke = window_invoke(_invoke_padded, _invoke_narrowed)


DEPTHWISE_CONV_2D = Registration(invoke=dw_invoke, prepare=dw_prepare, init=dw_init,
                                 name="DEPTHWISE_CONV_2D",
                                 temps="o0 i0 i1 | i0 i1 i2 o0")   # DepthwiseConvPrepare | CalculateOpDataDepthwiseConv

BUILTINS = [("DEPTHWISE_CONV_2D", DEPTHWISE_CONV_2D, 7)]
