"""Neural-network layer runners for micro_rt.cortexm.ops: CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, AVERAGE_POOL_2D / MAX_POOL_2D and SOFTMAX, for int8 (CMSIS-NN wrappers),
float32 (mrt_*_f32) and int16 (mrt_conv_s16, 16x8 conv / depthwise / FC), with the
parameter computations TFLM's CMSIS-NN glue does and the kernels' scratch-buffer sizes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from micro_rt.kernels.conv_common import int32_accumulators, populate_per_channel_multipliers
from micro_rt.kernels.fully_connected import fc_output_multipliers
from micro_rt.kernels.kernel_util import activation_range_quantized
from micro_rt.kernels.padding import PaddingValues, compute_padding_height_width, int16_window
from micro_rt.kernels.quant import calculate_input_radius, preprocess_softmax_scaling

from .ops_context import (UnsupportedOnMcu, _Ctx, _act, _count, _dims, _f32_act, _f32_bits, _has_dsp, _i32_bytes,
                          _is_f32, _is_i16, _params, _scale, _uwords, _words, _zp)

# --------------------------------------------------------------------------- geometry


def _window(options, ih: int, iw: int, fh: int, fw: int, dh: int = 1, dw: int = 1):
    """(stride_h, stride_w, padding) of a conv / pool window (TFLM's ComputePaddingHeightWidth).
    The padding is never negative."""
    sh, sw = int(options.get("stride_h", 1)), int(options.get("stride_w", 1))
    pad, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw, options.get("padding", "SAME"))
    return sh, sw, pad


@dataclass
class _ConvShape:
    n: int
    ih: int
    iw: int
    ic: int
    oh: int
    ow: int
    oc: int
    fh: int
    fw: int
    fc: int
    sh: int
    sw: int
    dh: int
    dw: int
    ph: int
    pw: int


@dataclass
class _ConvGeom(_ConvShape):
    """_ConvShape plus the int8 output stage (activation range, input / output offsets)."""
    act_min: int
    act_max: int
    in_off: int
    out_off: int


def _conv_shape(node, inp, flt, out) -> _ConvShape:
    """Sizes, strides, dilations and padding of a CONV_2D or DEPTHWISE_CONV_2D (NHWC input and
    output; filter [oc, fh, fw, fc] or, depthwise, [1, fh, fw, oc]: read the same way)."""
    o = node.options
    n, ih, iw, ic = (int(d) for d in inp.shape)
    _, oh, ow, oc = (int(d) for d in out.shape)
    _, fh, fw, fc = (int(d) for d in flt.shape)
    dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
    sh, sw, pad = _window(o, ih, iw, fh, fw, dh, dw)
    return _ConvShape(n, ih, iw, ic, oh, ow, oc, fh, fw, fc, sh, sw, dh, dw, int(pad.height), int(pad.width))


def _runnable(s: _ConvShape, node) -> _ConvShape:
    """The shape a C kernel can run: strides, dilations and padding that fit TFLM's int16_t
    fields (beyond, TFLM runs with wrapped values: the host twin reproduces that)."""
    if int16_window(s.sh, s.sw, s.dh, s.dw, PaddingValues(s.pw, s.ph, 0, 0)) is not None:
        raise UnsupportedOnMcu(f"{node.op_name} stride / dilation / padding beyond int16 (TFLM wraps them)")
    return s


def _conv_geom(node, inp, flt, out, depthwise: bool = False) -> _ConvGeom:
    """The int8 conv / depthwise geometry (the same for both: `depthwise` is informational)."""
    s = _conv_shape(node, inp, flt, out)
    amin, amax = activation_range_quantized(_act(node), _scale(out), _zp(out), np.int8)
    return _ConvGeom(**vars(s), act_min=int(amin), act_max=int(amax), in_off=-_zp(inp), out_off=_zp(out))


def _pool_geom(node, inp, out):
    """(n, ih, iw, ch, oh, ow, fh, fw, sh, sw, padding) of a pooling node."""
    o = node.options
    n, ih, iw, ch = (int(d) for d in inp.shape)
    _, oh, ow, _ = (int(d) for d in out.shape)
    fh, fw = int(o.get("filter_height", 1)), int(o.get("filter_width", 1))
    sh, sw, pad = _window(o, ih, iw, fh, fw)
    return n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad


def _per_channel(inp, flt, out, oc: int):
    """Per-output-channel multipliers and shifts, as int32 bytes."""
    mult, shift = populate_per_channel_multipliers(_scale(inp), np.asarray(flt.scales, np.float32),
                                                   _scale(out), oc)
    return _i32_bytes(mult), _i32_bytes(shift)


def _fc_params(node, inp, flt, out):
    scales = np.asarray(flt.scales, np.float32)
    in_scale, out_scale = _scale(inp), _scale(out)
    per_channel = scales.size > 1
    mult, shift = (np.atleast_1d(v) for v in fc_output_multipliers(in_scale, scales, out_scale))
    amin, amax = activation_range_quantized(_act(node), out_scale, _zp(out), np.int8)
    accum = int(flt.shape[-1])
    out_depth = int(out.shape[-1]) if len(out.shape) else 1
    batches = int(np.prod(inp.shape)) // accum
    filter_offset = 0 if per_channel else -_zp(flt)
    return dict(per_channel=per_channel, mult=mult, shift=shift, amin=int(amin), amax=int(amax),
                accum=accum, out_depth=out_depth, batches=batches, filter_offset=filter_offset,
                in_off=-_zp(inp), out_off=_zp(out))


# --------------------------------------------------------------------------- scratch sizes

def _conv_buffer_size(g: _ConvShape, core: str) -> int:
    if g.pw == 0 and g.ph == 0 and g.fh == 1 and g.fw == 1 and g.dh == 1 and g.dw == 1 and g.ic == g.fc:
        return 0                                   # 1x1 (fast or strided): no buffer
    # 1xN and general: two q15 columns of the 4-aligned kernel volume
    k = g.fh * g.fw * g.fc
    k = k + (4 - k % 4) % 4
    return 2 * k * 2


def _dw_buffer_size(g: _ConvShape, core: str) -> int:
    if g.ic == g.oc and g.n == 1 and g.dh == 1 and g.dw == 1:
        if g.fh == 3 and g.fw == 3 and g.ph <= 1 and g.pw <= 1:
            return 0
        return g.ic * g.fh * g.fw * 2 if _has_dsp(core) else 0
    return 0


def _avgpool_buffer_size(channels: int, core: str) -> int:
    return channels * 4 if _has_dsp(core) else 0


# --------------------------------------------------------------------------- int8 runners

def _per_channel_quant(c: _Ctx, mult_b: bytes, shift_b: bytes) -> int:
    """A cmsis_nn_per_channel_quant_params {multiplier*, shift*} with both arrays in flash."""
    return c.args(_uwords(c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b)))


def _run_conv_s8(c: _Ctx, core: str, depthwise: bool):
    """arm_convolve_wrapper_s8 or arm_depthwise_conv_wrapper_s8."""
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    g = _params(node, "geom", lambda: _runnable(_conv_geom(node, inp, flt, out, depthwise), node))
    mult_b, shift_b = _params(node, "pc", lambda: _per_channel(inp, flt, out, g.oc))
    ctx = c.nn_context((_dw_buffer_size if depthwise else _conv_buffer_size)(g, core))
    window = (g.sw, g.sh, g.pw, g.ph, g.dw, g.dh, g.act_min, g.act_max)
    if depthwise:
        layer_params = c.args(_words(g.in_off, g.out_off, g.oc // g.ic, *window))
        filter_dims, fn = (1, g.fh, g.fw, g.oc), "arm_depthwise_conv_wrapper_s8"
    else:
        layer_params = c.args(_words(g.in_off, g.out_off, *window))
        filter_dims, fn = (g.oc, g.fh, g.fw, g.fc), "arm_convolve_wrapper_s8"
    quant = _per_channel_quant(c, mult_b, shift_b)
    in_dims = c.args(_dims(g.n, g.ih, g.iw, g.ic))
    f_dims = c.args(_dims(*filter_dims))
    b_dims = c.args(_dims(1, 1, 1, g.oc))
    o_dims = c.args(_dims(g.n, g.oh, g.ow, g.oc))
    return c.mcu.call(fn, ctx, layer_params, quant, in_dims, c.in_addr(0), f_dims,
                      c.in_addr(1), b_dims, c.in_addr(2), o_dims, c.out_addr())


def _run_fc(c: _Ctx, core: str):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    p = _params(node, "fc", lambda: _fc_params(node, inp, flt, out))
    ctx = c.nn_context(0)
    fc_params = c.args(_words(p["in_off"], p["filter_offset"], p["out_off"], p["amin"], p["amax"]))
    in_dims = c.args(_dims(p["batches"], 1, 1, p["accum"]))
    f_dims = c.args(_dims(p["accum"], 1, 1, p["out_depth"]))
    b_dims = c.args(_dims(1, 1, 1, p["out_depth"]))
    o_dims = c.args(_dims(p["batches"], 1, 1, p["out_depth"]))
    bias = c.in_addr(2)
    if p["per_channel"]:
        quant = _per_channel_quant(c, _i32_bytes(p["mult"]), _i32_bytes(p["shift"]))
        fn = "arm_fully_connected_per_channel_s8"
    else:
        quant = c.args(_words(int(p["mult"][0]), int(p["shift"][0])))
        fn = "arm_fully_connected_s8"
    return c.mcu.call(fn, ctx, fc_params, quant, in_dims, c.in_addr(0), f_dims, c.in_addr(1), b_dims, bias,
                      o_dims, c.out_addr())


def _run_pool(c: _Ctx, core: str):
    node = c.node
    inp, out = c.t(0), c.out()
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = _pool_geom(node, inp, out)
    amin, amax = activation_range_quantized(_act(node), _scale(out), _zp(out), np.int8)
    is_avg = node.op_name == "AVERAGE_POOL_2D"
    ctx = c.nn_context(_avgpool_buffer_size(ch, core) if is_avg else 0)
    pool = c.args(_words(sw, sh, pad.width, pad.height, amin, amax))
    in_dims = c.args(_dims(n, ih, iw, ch))
    f_dims = c.args(_dims(1, fh, fw, 1))
    o_dims = c.args(_dims(n, oh, ow, ch))
    fn = "arm_avgpool_s8" if is_avg else "arm_max_pool_s8"
    return c.mcu.call(fn, ctx, pool, in_dims, c.in_addr(0), f_dims, o_dims, c.out_addr())


def _run_softmax(c: _Ctx, core: str):
    node = c.node
    inp, out = c.t(0), c.out()
    beta = float(np.float32(node.options.get("beta", 1.0)))
    m, s = preprocess_softmax_scaling(beta, float(np.float32(_scale(inp))), 5)
    diff_min = -calculate_input_radius(5, s)
    depth = int(inp.shape[-1])
    rows = int(np.prod(inp.shape)) // depth
    fn = "arm_softmax_s8" if np.dtype(out.dtype) == np.int8 else "arm_softmax_s8_s16"
    return c.mcu.call(fn, c.in_addr(0), rows, depth, m, s, diff_min, c.out_addr())


# --------------------------------------------------------------------------- float32 runners

def _run_conv_f32(c: _Ctx, core: str, depthwise: bool):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    if not _is_f32(flt) or not _is_f32(out):
        raise UnsupportedOnMcu(f"{node.op_name} float32 input with {np.dtype(flt.dtype).name} filter")

    def geom():
        s = _runnable(_conv_shape(node, inp, flt, out), node)
        fc = s.oc // s.ic if depthwise else s.fc
        return (s.n, s.ih, s.iw, s.ic, s.oh, s.ow, s.oc, s.fh, s.fw, fc, s.sh, s.sw, s.dh, s.dw, s.ph, s.pw,
                *_f32_act(node))
    g = _params(node, "geom_f32", geom)
    bias = c.in_addr(2)
    blob = _uwords(c.in_addr(0), c.in_addr(1), bias, c.out_addr()) + _words(*g[:-2]) + _uwords(*g[-2:])
    return c.mcu.call("mrt_depthwise_conv_f32" if depthwise else "mrt_conv_f32", c.args(blob))


def _run_fc_f32(c: _Ctx, core: str):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    if not _is_f32(flt) or not _is_f32(out):
        raise UnsupportedOnMcu("FULLY_CONNECTED float32 input with a non-float32 filter")
    accum = int(flt.shape[-1])
    out_depth = int(flt.shape[0])
    batches = _count(inp) // accum
    bias = c.in_addr(2)
    lo, hi = _params(node, "act_f32", lambda: _f32_act(node))
    blob = _uwords(c.in_addr(0), c.in_addr(1), bias, c.out_addr()) + _words(batches, accum, out_depth) + \
        _uwords(lo, hi)
    return c.mcu.call("mrt_fully_connected_f32", c.args(blob))


def _run_pool_f32(c: _Ctx, core: str):
    node = c.node
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = _pool_geom(node, c.t(0), c.out())
    lo, hi = _f32_act(node)
    blob = _uwords(c.in_addr(0), c.out_addr()) + _words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw,
                                                         pad.height, pad.width) + _uwords(lo, hi)
    fn = "mrt_avgpool_f32" if node.op_name == "AVERAGE_POOL_2D" else "mrt_maxpool_f32"
    return c.mcu.call(fn, c.args(blob))


def _run_softmax_f32(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    if not _is_f32(out):
        raise UnsupportedOnMcu("SOFTMAX float32 to a non-float32 output")
    depth = int(inp.shape[-1])
    rows = _count(inp) // depth if depth else 0
    beta = _f32_bits(c.node.options.get("beta", 1.0))
    return c.mcu.call("mrt_softmax_f32", c.in_addr(0), c.out_addr(), rows, depth, beta)


# --------------------------------------------------------------------------- int16 (16x8) runners

_CONV_S16_FIELDS = ("n", "ih", "iw", "ic", "oh", "ow", "oc", "fh", "fw", "fc", "sh", "sw", "dh", "dw", "ph", "pw",
                    "depth_multiplier", "in_off", "filter_off", "out_off", "act_min", "act_max", "bias_size",
                    "per_channel")


def _conv_s16_params(node, inp, flt, bias, out, kind: str) -> dict:
    """Geometry and output stage of a 16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED."""
    if np.dtype(flt.dtype) != np.int8 or not _is_i16(out):
        raise UnsupportedOnMcu(f"{node.op_name} int16 input with {np.dtype(flt.dtype).name} filter")
    bias_size = 0 if bias is None else np.dtype(bias.dtype).itemsize
    if bias is None and int32_accumulators(node, inp.dtype, None):
        bias_size = 4       # TFLM's int32-accumulator variant without a bias
    if bias_size not in (0, 4, 8):
        raise UnsupportedOnMcu(f"{node.op_name} bias of {np.dtype(bias.dtype).name}")
    amin, amax = activation_range_quantized(_act(node), _scale(out), _zp(out), np.int16)
    if kind == "fc":
        p = _fc_params(node, inp, flt, out)
        if p["per_channel"]:
            raise UnsupportedOnMcu("per-channel FULLY_CONNECTED needs an int8 input")
        d = dict(n=p["batches"], ih=1, iw=1, ic=p["accum"], oh=1, ow=1, oc=p["out_depth"], fh=1, fw=1,
                 fc=p["accum"], sh=1, sw=1, dh=1, dw=1, ph=0, pw=0, depth_multiplier=0, filter_off=p["filter_offset"],
                 per_channel=0, mult_b=_i32_bytes(p["mult"]), shift_b=_i32_bytes(p["shift"]))
    else:
        s = _runnable(_conv_shape(node, inp, flt, out), node)
        mult_b, shift_b = _per_channel(inp, flt, out, s.oc)
        d = dict(vars(s), depth_multiplier=s.oc // s.ic if kind == "dw" else 0, filter_off=0, per_channel=1,
                 mult_b=mult_b, shift_b=shift_b)
    d.update(in_off=-_zp(inp), out_off=_zp(out), act_min=int(amin), act_max=int(amax), bias_size=bias_size)
    return d


def _run_conv_s16(c: _Ctx, core: str, kind: str):
    """mrt_conv_s16; `kind` is "conv", "dw" or "fc"."""
    node = c.node
    p = _params(node, "conv_s16", lambda: _conv_s16_params(node, c.t(0), c.t(1), c.t(2), c.out(), kind))
    blob = _uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), c.out_addr(),
                   c.const("mult16", lambda: p["mult_b"]), c.const("shift16", lambda: p["shift_b"]))
    blob += _words(*(p[k] for k in _CONV_S16_FIELDS))
    return c.mcu.call("mrt_conv_s16", c.args(blob))
