"""Convolution and fully-connected runners for micro_rt.cortexm.ops: CONV_2D, DEPTHWISE_CONV_2D
and FULLY_CONNECTED, for int8 (CMSIS-NN wrappers), float32 (mrt_*_f32) and int16
(mrt_conv_s16, 16x8 conv / depthwise / FC), with the parameter computations TFLM's CMSIS-NN
glue does and the kernels' scratch-buffer sizes. Pooling is ops.pooling, softmax ops.softmax.
"""
from __future__ import annotations

from functools import partial

from dataclasses import dataclass

import numpy as np

from micro_rt.kernels.conv_common import int32_accumulators, populate_per_channel_multipliers
from micro_rt.cmsis_nn_scratch import conv_buffer_size, depthwise_conv_buffer_size
from micro_rt.kernels.conv_shapes import ConvShape, conv_shape
from micro_rt.kernels.fully_connected import fc_output_multipliers
from micro_rt.kernels.kernel_util import (activation_of, activation_range_quantized, element_count, scale_of,
                                          zero_point_of)
from micro_rt.kernels.padding import PaddingValues, int16_window

from .context import (CallContext, KernelCall, UnsupportedOnMcu, dims, f32_activation, i32_bytes, is_f32, is_i16, node_params, uwords, words)
from .registry import FLOAT32, INT8, KernelKey, OpKernel

# --------------------------------------------------------------------------- geometry


@dataclass
class ConvGeometry(ConvShape):
    """ConvShape plus the int8 output stage (activation range, input / output offsets)."""
    act_min: int
    act_max: int
    in_off: int
    out_off: int


def _runnable(s: ConvShape, node) -> ConvShape:
    """The shape a C kernel can run: strides, dilations and padding that fit TFLM's int16_t
    fields (beyond, TFLM runs with wrapped values: the host twin reproduces that)."""
    if int16_window(s.sh, s.sw, s.dh, s.dw, PaddingValues(s.pw, s.ph, 0, 0)) is not None:
        raise UnsupportedOnMcu(f"{node.op_name} stride / dilation / padding beyond int16 (TFLM wraps them)")
    return s


def conv_geometry(node, inp, flt, out) -> ConvGeometry:
    """The int8 geometry of a CONV_2D or DEPTHWISE_CONV_2D (the same for both)."""
    s = conv_shape(node, inp, flt, out)
    amin, amax = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), np.int8)
    return ConvGeometry(**vars(s), act_min=int(amin), act_max=int(amax), in_off=-zero_point_of(inp),
                        out_off=zero_point_of(out))


def _per_channel(inp, flt, out, oc: int):
    """Per-output-channel multipliers and shifts, as int32 bytes."""
    mult, shift = populate_per_channel_multipliers(scale_of(inp), np.asarray(flt.scales, np.float32),
                                                   scale_of(out), oc)
    return i32_bytes(mult), i32_bytes(shift)


def _fc_params(node, inp, flt, out):
    scales = np.asarray(flt.scales, np.float32)
    in_scale, out_scale = scale_of(inp), scale_of(out)
    per_channel = scales.size > 1
    mult, shift = (np.atleast_1d(v) for v in fc_output_multipliers(in_scale, scales, out_scale))
    amin, amax = activation_range_quantized(activation_of(node), out_scale, zero_point_of(out), np.int8)
    accum = int(flt.shape[-1])
    out_depth = int(out.shape[-1]) if len(out.shape) else 1
    batches = int(np.prod(inp.shape)) // accum
    filter_offset = 0 if per_channel else -zero_point_of(flt)
    return dict(per_channel=per_channel, mult=mult, shift=shift, amin=int(amin), amax=int(amax),
                accum=accum, out_depth=out_depth, batches=batches, filter_offset=filter_offset,
                in_off=-zero_point_of(inp), out_off=zero_point_of(out))


# Public for the reference flavour's runners (ops.reference), which compute the same parameters.
runnable_shape = _runnable
per_channel_multipliers = _per_channel
fc_params = _fc_params


# --------------------------------------------------------------------------- scratch sizes
# Mirrors of the kernels' *_get_buffer_size (test_scratch_bytes_match_c holds them equal).

# --------------------------------------------------------------------------- int8 runners

def _per_channel_quant(c: CallContext, mult_b: bytes, shift_b: bytes) -> int:
    """A cmsis_nn_per_channel_quant_params {multiplier*, shift*} with both arrays in flash."""
    return c.args(uwords(c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b)))


def run_conv_s8(c: CallContext, depthwise: bool) -> list[KernelCall]:
    """arm_convolve_wrapper_s8 or arm_depthwise_conv_wrapper_s8."""
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    g = node_params(node, "geom", lambda: _runnable(conv_geometry(node, inp, flt, out), node))
    mult_b, shift_b = node_params(node, "pc", lambda: _per_channel(inp, flt, out, g.oc))
    ctx = c.nn_context((depthwise_conv_buffer_size if depthwise else conv_buffer_size)(g, c.core))
    window = (g.sw, g.sh, g.pw, g.ph, g.dw, g.dh, g.act_min, g.act_max)
    if depthwise:
        layer_params = c.args(words(g.in_off, g.out_off, g.oc // g.ic, *window))
        filter_dims, fn = (1, g.fh, g.fw, g.oc), "arm_depthwise_conv_wrapper_s8"
    else:
        layer_params = c.args(words(g.in_off, g.out_off, *window))
        filter_dims, fn = (g.oc, g.fh, g.fw, g.fc), "arm_convolve_wrapper_s8"
    quant = _per_channel_quant(c, mult_b, shift_b)
    in_dims = c.args(dims(g.n, g.ih, g.iw, g.ic))
    f_dims = c.args(dims(*filter_dims))
    b_dims = c.args(dims(1, 1, 1, g.oc))
    o_dims = c.args(dims(g.n, g.oh, g.ow, g.oc))
    return [c.call(fn, ctx, layer_params, quant, in_dims, c.in_addr(0), f_dims, c.in_addr(1), b_dims,
                   c.in_addr(2), o_dims, c.out_addr())]


def run_fully_connected_s8(c: CallContext) -> list[KernelCall]:
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    p = node_params(node, "fc", lambda: _fc_params(node, inp, flt, out))
    ctx = c.nn_context(0)
    fc_params = c.args(words(p["in_off"], p["filter_offset"], p["out_off"], p["amin"], p["amax"]))
    in_dims = c.args(dims(p["batches"], 1, 1, p["accum"]))
    f_dims = c.args(dims(p["accum"], 1, 1, p["out_depth"]))
    b_dims = c.args(dims(1, 1, 1, p["out_depth"]))
    o_dims = c.args(dims(p["batches"], 1, 1, p["out_depth"]))
    bias = c.in_addr(2)
    if p["per_channel"]:
        quant = _per_channel_quant(c, i32_bytes(p["mult"]), i32_bytes(p["shift"]))
        fn = "arm_fully_connected_per_channel_s8"
    else:
        quant = c.args(words(int(p["mult"][0]), int(p["shift"][0])))
        fn = "arm_fully_connected_s8"
    return [c.call(fn, ctx, fc_params, quant, in_dims, c.in_addr(0), f_dims, c.in_addr(1), b_dims, bias,
                   o_dims, c.out_addr())]


# --------------------------------------------------------------------------- float32 runners

def run_conv_f32(c: CallContext, depthwise: bool) -> list[KernelCall]:
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    if not is_f32(flt) or not is_f32(out):
        raise UnsupportedOnMcu(f"{node.op_name} float32 input with {np.dtype(flt.dtype).name} filter")

    def geom():
        s = _runnable(conv_shape(node, inp, flt, out), node)
        return (*s.geometry(s.oc // s.ic if depthwise else None), *f32_activation(node))
    g = node_params(node, "geom_f32", geom)
    bias = c.in_addr(2)
    blob = uwords(c.in_addr(0), c.in_addr(1), bias, c.out_addr()) + words(*g[:-2]) + uwords(*g[-2:])
    return [c.call("mrt_depthwise_conv_f32" if depthwise else "mrt_conv_f32", c.args(blob))]


def run_fully_connected_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    if not is_f32(flt) or not is_f32(out):
        raise UnsupportedOnMcu("FULLY_CONNECTED float32 input with a non-float32 filter")
    accum = int(flt.shape[-1])
    out_depth = int(flt.shape[0])
    batches = element_count(inp) // accum
    bias = c.in_addr(2)
    lo, hi = node_params(node, "act_f32", lambda: f32_activation(node))
    blob = uwords(c.in_addr(0), c.in_addr(1), bias, c.out_addr()) + words(batches, accum, out_depth) + \
        uwords(lo, hi)
    return [c.call("mrt_fully_connected_f32", c.args(blob))]


# --------------------------------------------------------------------------- int16 (16x8) runners

_CONV_S16_FIELDS = ("n", "ih", "iw", "ic", "oh", "ow", "oc", "fh", "fw", "fc", "sh", "sw", "dh", "dw", "ph", "pw",
                    "depth_multiplier", "in_off", "filter_off", "out_off", "act_min", "act_max", "bias_size",
                    "per_channel")


def _conv_s16_bias_size(node, inp, bias) -> int:
    """Bytes per bias element of a 16x8 layer: 0 (none), 4 or 8."""
    bias_size = 0 if bias is None else np.dtype(bias.dtype).itemsize
    if bias is None and int32_accumulators(node, inp.dtype, None):
        bias_size = 4       # TFLM's int32-accumulator variant without a bias
    if bias_size not in (0, 4, 8):
        raise UnsupportedOnMcu(f"{node.op_name} bias of {np.dtype(bias.dtype).name}")
    return bias_size


def _conv_s16_layer(node, inp, flt, out, kind: str) -> dict:
    """The geometry fields of a 16x8 layer and its multipliers / shifts as int32 bytes."""
    if kind == "fc":
        p = _fc_params(node, inp, flt, out)
        if p["per_channel"]:
            raise UnsupportedOnMcu("per-channel FULLY_CONNECTED needs an int8 input")
        return dict(n=p["batches"], ih=1, iw=1, ic=p["accum"], oh=1, ow=1, oc=p["out_depth"], fh=1, fw=1,
                    fc=p["accum"], sh=1, sw=1, dh=1, dw=1, ph=0, pw=0, depth_multiplier=0,
                    filter_off=p["filter_offset"], per_channel=0, mult_b=i32_bytes(p["mult"]),
                    shift_b=i32_bytes(p["shift"]))
    s = _runnable(conv_shape(node, inp, flt, out), node)
    mult_b, shift_b = _per_channel(inp, flt, out, s.oc)
    return dict(vars(s), depth_multiplier=s.oc // s.ic if kind == "dw" else 0, filter_off=0, per_channel=1,
                mult_b=mult_b, shift_b=shift_b)


def conv_s16_params(node, inp, flt, bias, out, kind: str) -> dict:
    """Geometry and output stage of a 16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED."""
    if np.dtype(flt.dtype) != np.int8 or not is_i16(out):
        raise UnsupportedOnMcu(f"{node.op_name} int16 input with {np.dtype(flt.dtype).name} filter")
    bias_size = _conv_s16_bias_size(node, inp, bias)
    amin, amax = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), np.int16)
    d = _conv_s16_layer(node, inp, flt, out, kind)
    d.update(in_off=-zero_point_of(inp), out_off=zero_point_of(out), act_min=int(amin), act_max=int(amax),
             bias_size=bias_size)
    return d


def run_conv_s16(c: CallContext, kind: str) -> list[KernelCall]:
    """mrt_conv_s16; `kind` is "conv", "dw" or "fc"."""
    node = c.node
    p = node_params(node, "conv_s16", lambda: conv_s16_params(node, c.t(0), c.t(1), c.t(2), c.out(), kind))
    blob = uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), c.out_addr(),
                  c.const("mult16", lambda: p["mult_b"]), c.const("shift16", lambda: p["shift_b"]))
    blob += words(*(p[k] for k in _CONV_S16_FIELDS))
    return [c.call("mrt_conv_s16", c.args(blob))]


KERNELS: dict[KernelKey, OpKernel] = {
    ("CONV_2D", INT8): OpKernel(partial(run_conv_s8, depthwise=False)),
    ("CONV_2D", FLOAT32): OpKernel(partial(run_conv_f32, depthwise=False)),
    ("DEPTHWISE_CONV_2D", INT8): OpKernel(partial(run_conv_s8, depthwise=True)),
    ("DEPTHWISE_CONV_2D", FLOAT32): OpKernel(partial(run_conv_f32, depthwise=True)),
    ("FULLY_CONNECTED", INT8): OpKernel(run_fully_connected_s8),
    ("FULLY_CONNECTED", FLOAT32): OpKernel(run_fully_connected_f32),
}
