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

from micro_rt.kernel_api import Registration, op_data_init

from .conv import accumulator_bound, check_finite_float_filter, exact_float_type, quantized_conv_params
from .padding import (activation_of, check_activation, check_bias, check_geometry, compute_padding_height_width,
                      dtype_name, gather_windows, int16_window, int32_accumulators, kernel_error,
                      make_geometry, narrow_int16, store_float_output, tname)
from .tflite_types import HYBRID, type_label, type_name
from .quant import Requantizer, activation_range_float


@dataclass
class OpDataDepthwise:
    """Host-side mirror of TFLM's OpDataConv (depthwise uses the same struct)."""

    kind: str = ""
    padding: Any = None
    geometry: Any = None
    depth_multiplier: int = 1
    input_zero_point: int = 0
    output_zero_point: int = 0
    output_multiplier: Any = None
    output_shift: Any = None
    act_min: Any = 0
    act_max: Any = 0
    weights: Any = None        # (KH, KW, OC) int32 / float32
    bias: Any = None
    pad_buffer: Any = None     # padded (and channel-repeated) input, host scratch
    acc: Any = None
    tmp: Any = None
    matmul: bool = False       # single input channel: im2col + one matmul (exact floats)
    cols: Any = None
    requant: Any = None
    narrow: Any = None         # padding.Int16Window when TFLM's int16 fields wrap


dw_init = op_data_init("OpDataConv", OpDataDepthwise)


def dw_prepare(ctx, node) -> None:
    data: OpDataDepthwise = node.user_data
    opts = node.options
    if len(node.inputs) not in (2, 3) or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 2 or 3 inputs and 1 output, got {len(node.inputs)}/{len(node.outputs)}")
    inp = ctx.input(node, 0)
    flt = ctx.input(node, 1)
    bias = ctx.input(node, 2) if len(node.inputs) == 3 else None
    out = ctx.output(node, 0)
    if len(inp.shape) != 4 or len(flt.shape) != 4 or len(out.shape) != 4:
        raise kernel_error(node, f"input {tname(inp)}, filter and output must be 4-D")
    _, fh, fw, oc = (int(d) for d in flt.shape)
    n, ih, iw, ic = (int(d) for d in inp.shape)

    # TFLM allocates the per-channel arrays before any type check.
    ctx.allocate_persistent(4 * oc)
    ctx.allocate_persistent(4 * oc)

    it, ft = np.dtype(inp.dtype), np.dtype(flt.dtype)
    if inp.dtype != out.dtype:
        raise kernel_error(node, f"input {tname(inp)} is {it.name} but output {tname(out)} is {dtype_name(out)}")
    if it not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tname(inp)}: Input type {type_label(it)} not supported.")
    if it == np.float32 and ft != np.float32:
        raise kernel_error(node, f"input {tname(inp)} has type float32, filter {tname(flt)} {ft.name}: "
                                 f"{HYBRID}")
    if it != np.float32 and ft != np.int8:
        raise kernel_error(node, f"filter {tname(flt)}: Filter type {type_label(ft)} for input type "
                                 f"{type_name(it)} not supported.")
    if ic <= 0 or oc % ic != 0 or int(out.shape[3]) != oc:
        raise kernel_error(node, f"filter {tname(flt)} has {oc} channels, input {tname(inp)} {ic}, "
                                 f"output {tname(out)} {out.shape[3]}")
    if flt.data is None:
        raise kernel_error(node, f"filter {tname(flt)} must be constant")
    if bias is not None:
        check_bias(node, bias, oc, inp.dtype)
    wide = not int32_accumulators(node, it, bias)
    m = oc // ic
    data.depth_multiplier = m
    # TFLM's loops run over params.depth_multiplier (an int16_t copy of the option), not oc/ic.
    option_m = narrow_int16(int(opts.get("depth_multiplier", m)))
    if option_m != m:
        raise kernel_error(node, f"depth_multiplier option {opts.get('depth_multiplier')} (TFLM keeps "
                                 f"{option_m}) differs from filter {tname(flt)} channels / input "
                                 f"{tname(inp)} channels = {oc} / {ic}: TFLM's kernel would read and "
                                 "write channels out of range")
    act = activation_of(node)
    check_activation(node, act)
    sh, sw = int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))
    dh, dw = int(opts.get("dilation_h_factor", 1)), int(opts.get("dilation_w_factor", 1))
    check_geometry(node, inp, out, fh, fw, sh, sw, dh, dw, opts.get("padding", "SAME"))
    data.padding, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw,
                                                      opts.get("padding", "SAME"))
    data.narrow = int16_window(sh, sw, dh, dw, data.padding)
    if it == np.float32:
        check_finite_float_filter(node, inp, flt, out, sh, sw, dh, dw, data.padding)
    if data.narrow is not None:
        _prepare_narrowed(node, data, inp, flt, bias, out, act, wide)
        return
    data.geometry = make_geometry(inp.shape, out.shape, fh, fw, sh, sw, dh, dw, data.padding,
                                  channels=oc)
    g = data.geometry
    data.kind = it.name
    # Weights repeated along the output row: (KH, KW, OW, OC), so every tap's multiply runs
    # over whole contiguous rows instead of OC-long inner loops.
    w = np.broadcast_to(np.asarray(flt.data).reshape(fh, fw, 1, oc), (fh, fw, g.out_w, oc))
    acc_shape = (n, g.out_h, g.out_w, oc)
    if it == np.float32:
        data.weights = np.ascontiguousarray(w, dtype=np.float32)
        data.bias = None if bias is None else np.asarray(bias.data, dtype=np.float32).reshape(-1).copy()
        lo, hi = activation_range_float(act)
        data.act_min, data.act_max = np.float32(lo), np.float32(hi)
        data.pad_buffer = np.zeros(g.padded_shape, dtype=np.float32)
        data.acc = np.empty(acc_shape, dtype=np.float32)
        data.tmp = np.empty(acc_shape, dtype=np.float32)
        return
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=3, wide=wide)
    if ic == 1 and fh * fw > 1:
        # One input channel: the depthwise conv is a plain conv with K = KH*KW taps, so use
        # im2col and one exact float matmul instead of KH*KW multiply-adds.
        data.matmul = True
        gm = make_geometry(inp.shape, out.shape, fh, fw, sh, sw, dh, dw, data.padding)
        data.geometry = gm
        info = np.iinfo(it)
        max_abs_x = max(abs(int(info.min) - data.input_zero_point),
                        abs(int(info.max) - data.input_zero_point))
        wk = np.asarray(flt.data).reshape(fh * fw, oc)
        ft_acc = exact_float_type(wk, max_abs_x)
        data.weights = np.ascontiguousarray(wk, dtype=ft_acc)
        if bias is not None:
            data.bias = np.asarray(bias.data, dtype=np.int64).reshape(-1).copy()
        data.pad_buffer = np.zeros(gm.padded_shape, dtype=ft_acc)
        p = n * gm.out_h * gm.out_w
        data.cols = np.empty((p, fh * fw), dtype=ft_acc)
        data.acc = np.empty((p, oc), dtype=ft_acc)
        data.requant = Requantizer((p, oc), data.output_multiplier, data.output_shift, data.bias,
                                   data.output_zero_point, data.act_min, data.act_max,
                                   tile=gm.out_w, wide=wide, acc_bound=accumulator_bound(wk, max_abs_x))
        return
    acc_t = np.int32 if it == np.int8 else np.int64
    data.weights = np.ascontiguousarray(w, dtype=acc_t)
    if bias is not None:
        data.bias = np.asarray(bias.data, dtype=np.int64).reshape(-1).copy()
    data.pad_buffer = np.zeros(g.padded_shape, dtype=acc_t)
    data.acc = np.empty(acc_shape, dtype=acc_t)
    data.tmp = np.empty(acc_shape, dtype=acc_t)
    info = np.iinfo(it)
    max_abs_x = max(abs(int(info.min) - data.input_zero_point), abs(int(info.max) - data.input_zero_point))
    data.requant = Requantizer((n * g.out_h * g.out_w, oc), data.output_multiplier, data.output_shift, data.bias,
                               data.output_zero_point, data.act_min, data.act_max, tile=g.out_w, wide=wide,
                               acc_bound=accumulator_bound(np.asarray(flt.data).reshape(fh * fw, oc), max_abs_x))


def _prepare_narrowed(node, data: OpDataDepthwise, inp, flt, bias, out, act: str, wide: bool) -> None:
    """Stride, dilation or padding beyond int16: TFLM's DepthwiseParams hold int16_t fields,
    so its kernel runs with the wrapped values (see conv._prepare_narrowed); reproduced by
    gathering the taps with them."""
    _, fh, fw, oc = (int(d) for d in flt.shape)
    n, oh, ow = int(out.shape[0]), int(out.shape[1]), int(out.shape[2])
    data.geometry = (oh, ow, fh, fw)
    data.kind = np.dtype(inp.dtype).name
    w = np.asarray(flt.data).reshape(fh, fw, oc)
    if data.kind == "float32":
        data.weights = w.astype(np.float32)
        data.bias = None if bias is None else np.asarray(bias.data, dtype=np.float32).reshape(-1).copy()
        lo, hi = activation_range_float(act)
        data.act_min, data.act_max = np.float32(lo), np.float32(hi)
        return
    quantized_conv_params(node, data, inp, flt, out, act, oc, channel_dim=3, wide=wide)
    data.weights = w.astype(np.int64)
    if bias is not None:
        data.bias = np.asarray(bias.data, dtype=np.int64).reshape(-1).copy()
    info = np.iinfo(np.dtype(inp.dtype))
    max_abs_x = max(abs(int(info.min) - data.input_zero_point), abs(int(info.max) - data.input_zero_point))
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
    if data.kind == "float32":
        store_float_output(acc, data, out)
    else:
        data.requant.run(acc, out.data)


def dw_invoke(ctx, node) -> None:
    data: OpDataDepthwise = node.user_data
    x = ctx.input(node, 0).data
    out = ctx.output(node, 0)
    if data.narrow is not None:
        _invoke_narrowed(data, x, out)
        return
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
    if data.kind == "float32":
        res = acc + data.bias if data.bias is not None else acc.copy()
        np.maximum(res, data.act_min, out=res)
        np.minimum(res, data.act_max, out=res)
        out.data[...] = res.reshape(out.data.shape)
        return
    data.requant.run(acc, out.data)


DEPTHWISE_CONV_2D = Registration(invoke=dw_invoke, prepare=dw_prepare, init=dw_init,
                                 name="DEPTHWISE_CONV_2D")

BUILTINS = [("DEPTHWISE_CONV_2D", DEPTHWISE_CONV_2D, 7)]
