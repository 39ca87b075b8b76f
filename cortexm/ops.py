"""Glue: run one micro_rt operator on the virtual MCU with the firmware's C kernels.

For a node and its tensors this module computes the kernel parameters exactly as TFLM's
CMSIS-NN glue (tensorflow/lite/micro/kernels/cmsis_nn/*.cc) fills them from the model
(multipliers and shifts from the same micro_rt.kernels helpers the numpy twins use), packs
the CMSIS-NN argument structs little-endian into the ARGS area (every field is a 32-bit
word, so the AAPCS layout is consecutive words), places constant tensors in flash once, and
calls the function.

    supported(op_name, dtype) -> bool
    scratch_bytes(mcu, core, node, tensors) -> int        # the kernel's *_get_buffer_size
    run_op(mcu, node, tensors, arena_offsets, scratch_offset) -> CallResult

Types: int8 (CMSIS-NN style kernels + mrt_ops.c), float32 (mrt_float.c: soft-float, the numpy
twins' float32 operation order, bit-exact except LOGISTIC / TANH / SOFTMAX, which call newlib's
expf / tanhf as TFLM does on a device), int16 (mrt_int16.c: 16x8 conv / depthwise / FC with
TFLM's int64 output stage, ADD / SUB / MUL / MAXIMUM / MINIMUM, RELU / RELU6 / LEAKY_RELU,
QUANTIZE between int8 / int16 / int32), and type-agnostic data movement.

`tensors` maps a tensor index to a TensorView-like object (dtype, shape, scales,
zero_points, quantized_dimension, is_constant, data for constants); `arena_offsets` maps
(or indexes) a tensor index to its arena offset; `scratch_offset` is the arena offset of the
node's scratch buffer (None when the kernel needs none).
"""
from __future__ import annotations

import math
import struct
import weakref
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from micro_rt.kernels.conv import populate_per_channel_multipliers
from micro_rt.kernels.padding import compute_padding_height_width
from micro_rt.kernels.quant import (activation_range_quantized, calculate_input_radius,
                                    preprocess_softmax_scaling, quantize_multiplier)

DSP_CORES = ("cortex-m4", "cortex-m7", "cortex-m33")

_INT8_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
    "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SHAPE",
    "PACK", "CONCATENATION", "TRANSPOSE", "PAD", "PADV2", "STRIDED_SLICE", "QUANTIZE",
    "DEQUANTIZE", "RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH", "MEAN",
}
# Data movement is type-agnostic (any element size).
_ANY_TYPE_OPS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SHAPE", "PACK", "CONCATENATION",
                 "TRANSPOSE", "PAD", "PADV2", "STRIDED_SLICE"}


class UnsupportedOnMcu(NotImplementedError):
    """The operator / type combination has no C kernel (the caller runs the numpy twin)."""


# float32 compute ops (soft-float C kernels in mrt_float.c, the numpy twins' operation order).
_F32_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
    "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH",
    "HARD_SWISH", "MEAN",
}
# Ops whose float32 results come from newlib's expf / tanhf: within a few ulp of the host's
# glibc, not bit-equal (every other float32 kernel is bit-exact with its twin).
TRANSCENDENTAL_F32_OPS = {"LOGISTIC", "TANH", "SOFTMAX"}


# int16 activations (16x8 conv / depthwise / FC, binary ops, requantization, int16 ReLUs).
_I16_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
    "RELU", "RELU6", "LEAKY_RELU", "QUANTIZE",
}


def supported(op_name: str, dtype) -> bool:
    """True when `op_name` with input element type `dtype` runs on the virtual MCU."""
    dt = np.dtype(dtype)
    if op_name in _ANY_TYPE_OPS:
        return dt.itemsize in (1, 2, 4, 8)
    if op_name == "QUANTIZE":
        return dt in (np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.int16))
    if op_name == "DEQUANTIZE":
        return dt in (np.dtype(np.int8), np.dtype(np.int16))
    if dt == np.dtype(np.float32):
        return op_name in _F32_OPS
    if dt == np.dtype(np.int16):
        return op_name in _I16_OPS
    return op_name in _INT8_OPS and dt == np.dtype(np.int8)


# --------------------------------------------------------------------------- packing helpers

def _words(*values: int) -> bytes:
    return struct.pack("<%di" % len(values), *(int(v) for v in values))


def _uwords(*values: int) -> bytes:
    return struct.pack("<%dI" % len(values), *(int(v) & 0xFFFFFFFF for v in values))


def _dims(n: int, h: int, w: int, c: int) -> bytes:
    return _words(n, h, w, c)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(np.float32(x))))[0]


def _scale(t) -> float:
    s = np.asarray(getattr(t, "scales", ()), dtype=np.float32)
    return float(s[0]) if s.size else 0.0


def _zp(t) -> int:
    z = np.asarray(getattr(t, "zero_points", ()))
    return int(z[0]) if z.size else 0


def _act(node) -> str:
    a = node.options.get("fused_activation_function", "NONE")
    return a if isinstance(a, str) else str(a)


def _core_of(mcu, core: Optional[str] = None) -> str:
    if core:
        return core
    for attr in ("core", "core_name", "cpu"):
        v = getattr(mcu, attr, None)
        if isinstance(v, str):
            return v
    return "cortex-m4"


def _has_dsp(core: str) -> bool:
    return core in DSP_CORES


def _obj_cache(obj, name: str) -> dict:
    """A dict stored on `obj` itself (so it dies with it: no stale id() keys)."""
    d = obj.__dict__.get(name)
    if d is None:
        d = {}
        obj.__dict__[name] = d
    return d


def _flash(mcu, owner, key, data_fn: Callable[[], bytes], align: int = 16) -> int:
    """Address of a constant placed in `mcu`'s flash once; cached on `owner` (tensor or node)."""
    cache = _obj_cache(owner, "_mrt_flash")
    hit = cache.get((id(mcu), key))
    if hit is not None and hit[0]() is mcu:
        return hit[1]
    addr = mcu.place_constant(bytes(data_fn()), align)
    try:
        ref = weakref.ref(mcu)
    except TypeError:                           # pragma: no cover
        ref = (lambda m=mcu: m)
    cache[(id(mcu), key)] = (ref, addr)
    return addr


class _Ctx:
    """Per-call addressing: tensors to SRAM (arena) or flash (constants) addresses."""

    def __init__(self, mcu, node, tensors, arena_offsets, scratch_offset):
        self.mcu, self.node, self.tensors = mcu, node, tensors
        self.arena_offsets, self.scratch_offset = arena_offsets, scratch_offset

    def t(self, i: int):
        idx = self.node.inputs[i] if i < len(self.node.inputs) else -1
        return None if idx < 0 else self.tensors[idx]

    def out(self, i: int = 0):
        return self.tensors[self.node.outputs[i]]

    def addr_of_index(self, idx: int) -> int:
        t = self.tensors[idx]
        if getattr(t, "is_constant", False) and getattr(t, "data", None) is not None:
            data = np.ascontiguousarray(np.asarray(t.data))
            return _flash(self.mcu, t, "data", lambda: data.tobytes())
        return self.mcu.arena_base + int(self.arena_offsets[idx])

    def in_addr(self, i: int) -> int:
        idx = self.node.inputs[i] if i < len(self.node.inputs) else -1
        return 0 if idx < 0 else self.addr_of_index(idx)

    def out_addr(self, i: int = 0) -> int:
        return self.addr_of_index(self.node.outputs[i])

    def const(self, name: str, data_fn: Callable[[], bytes]) -> int:
        return _flash(self.mcu, self.node, name, data_fn)

    def scratch_addr(self) -> int:
        return 0 if self.scratch_offset is None else self.mcu.arena_base + int(self.scratch_offset)

    def args(self, data: bytes) -> int:
        return self.mcu.args_alloc(data, 4)


def _params(node, key: str, fn: Callable[[], Any]):
    cache = _obj_cache(node, "_mrt_params")
    if key not in cache:
        cache[key] = fn()
    return cache[key]


# --------------------------------------------------------------------------- conv-like params

@dataclass
class _ConvGeom:
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
    act_min: int
    act_max: int
    in_off: int
    out_off: int


def _conv_geom(node, inp, flt, out, depthwise: bool) -> _ConvGeom:
    o = node.options
    n, ih, iw, ic = (int(d) for d in inp.shape)
    _, oh, ow, oc = (int(d) for d in out.shape)
    if depthwise:
        _, fh, fw, fc = (int(d) for d in flt.shape)
    else:
        _, fh, fw, fc = (int(d) for d in flt.shape)
    sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
    pad, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw, o.get("padding", "SAME"))
    amin, amax = activation_range_quantized(_act(node), _scale(out), _zp(out), np.int8)
    return _ConvGeom(n, ih, iw, ic, oh, ow, oc, fh, fw, fc, sh, sw, dh, dw, int(pad.height),
                     int(pad.width), int(amin), int(amax), -_zp(inp), _zp(out))


def _per_channel(inp, flt, out, oc: int):
    mult, shift = populate_per_channel_multipliers(_scale(inp), np.asarray(flt.scales, np.float32),
                                                   _scale(out), oc)
    return (np.asarray(mult, np.int64).astype("<i4").tobytes(),
            np.asarray(shift, np.int64).astype("<i4").tobytes())


def _conv_buffer_size(g: _ConvGeom, core: str) -> int:
    if g.pw == 0 and g.ph == 0 and g.fh == 1 and g.fw == 1 and g.dh == 1 and g.dw == 1 and g.ic == g.fc:
        return 0                                   # 1x1 (fast or strided): no buffer
    # 1xN and general: two q15 columns of the 4-aligned kernel volume
    k = g.fh * g.fw * g.fc
    k = k + (4 - k % 4) % 4
    return 2 * k * 2


def _dw_buffer_size(g: _ConvGeom, core: str) -> int:
    if g.ic == g.oc and g.n == 1 and g.dh == 1 and g.dw == 1:
        if g.fh == 3 and g.fw == 3 and g.ph <= 1 and g.pw <= 1:
            return 0
        return g.ic * g.fh * g.fw * 2 if _has_dsp(core) else 0
    return 0


# --------------------------------------------------------------------------- scratch sizes

def scratch_bytes(mcu, core: Optional[str], node, tensors) -> int:
    """Bytes the kernel asks for (its *_get_buffer_size), as TFLM's CMSIS-NN glue requests."""
    core = _core_of(mcu, core)
    op = node.op_name
    get = lambda i: tensors[node.inputs[i]]  # noqa: E731
    out = tensors[node.outputs[0]]
    if np.dtype(get(0).dtype) != np.int8:
        return 0
    if op == "CONV_2D":
        return _conv_buffer_size(_conv_geom(node, get(0), get(1), out, False), core)
    if op == "DEPTHWISE_CONV_2D":
        return _dw_buffer_size(_conv_geom(node, get(0), get(1), out, True), core)
    if op == "AVERAGE_POOL_2D":
        return int(out.shape[3]) * 4 if _has_dsp(core) else 0
    return 0


# --------------------------------------------------------------------------- op runners

def _run_conv(c: _Ctx, core: str):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    g = _params(node, "geom", lambda: _conv_geom(node, inp, flt, out, False))
    mult_b, shift_b = _params(node, "pc", lambda: _per_channel(inp, flt, out, g.oc))
    size = _conv_buffer_size(g, core)
    ctx = c.args(_uwords(c.scratch_addr() if size else 0, size))
    conv_params = c.args(_words(g.in_off, g.out_off, g.sw, g.sh, g.pw, g.ph, g.dw, g.dh, g.act_min, g.act_max))
    quant = c.args(_uwords(c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b)))
    in_dims = c.args(_dims(g.n, g.ih, g.iw, g.ic))
    f_dims = c.args(_dims(g.oc, g.fh, g.fw, g.fc))
    b_dims = c.args(_dims(1, 1, 1, g.oc))
    o_dims = c.args(_dims(g.n, g.oh, g.ow, g.oc))
    return c.mcu.call("arm_convolve_wrapper_s8", ctx, conv_params, quant, in_dims, c.in_addr(0), f_dims,
                      c.in_addr(1), b_dims, c.in_addr(2), o_dims, c.out_addr())


def _run_depthwise(c: _Ctx, core: str):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    g = _params(node, "geom", lambda: _conv_geom(node, inp, flt, out, True))
    mult_b, shift_b = _params(node, "pc", lambda: _per_channel(inp, flt, out, g.oc))
    size = _dw_buffer_size(g, core)
    ctx = c.args(_uwords(c.scratch_addr() if size else 0, size))
    ch_mult = g.oc // g.ic
    dw_params = c.args(_words(g.in_off, g.out_off, ch_mult, g.sw, g.sh, g.pw, g.ph, g.dw, g.dh,
                              g.act_min, g.act_max))
    quant = c.args(_uwords(c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b)))
    in_dims = c.args(_dims(g.n, g.ih, g.iw, g.ic))
    f_dims = c.args(_dims(1, g.fh, g.fw, g.oc))
    b_dims = c.args(_dims(1, 1, 1, g.oc))
    o_dims = c.args(_dims(g.n, g.oh, g.ow, g.oc))
    return c.mcu.call("arm_depthwise_conv_wrapper_s8", ctx, dw_params, quant, in_dims, c.in_addr(0), f_dims,
                      c.in_addr(1), b_dims, c.in_addr(2), o_dims, c.out_addr())


def _fc_params(node, inp, flt, out):
    scales = np.asarray(flt.scales, np.float32)
    in_scale, out_scale = _scale(inp), _scale(out)
    per_channel = scales.size > 1
    if per_channel:
        mult = np.zeros(scales.size, np.int64)
        shift = np.zeros(scales.size, np.int64)
        for i, s in enumerate(scales):
            mult[i], shift[i] = quantize_multiplier(float(np.float32(in_scale)) * float(s) / float(np.float32(out_scale)))
    else:
        product = float(np.float32(in_scale) * np.float32(scales[0] if scales.size else 0.0))
        m, s = quantize_multiplier(product / float(np.float32(out_scale)))
        mult, shift = np.array([m], np.int64), np.array([s], np.int64)
    amin, amax = activation_range_quantized(_act(node), out_scale, _zp(out), np.int8)
    accum = int(flt.shape[-1])
    out_depth = int(out.shape[-1]) if len(out.shape) else 1
    batches = int(np.prod(inp.shape)) // accum
    filter_offset = 0 if per_channel else -_zp(flt)
    return dict(per_channel=per_channel, mult=mult, shift=shift, amin=int(amin), amax=int(amax),
                accum=accum, out_depth=out_depth, batches=batches, filter_offset=filter_offset,
                in_off=-_zp(inp), out_off=_zp(out))


def _run_fc(c: _Ctx, core: str):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    p = _params(node, "fc", lambda: _fc_params(node, inp, flt, out))
    ctx = c.args(_uwords(0, 0))
    fc_params = c.args(_words(p["in_off"], p["filter_offset"], p["out_off"], p["amin"], p["amax"]))
    in_dims = c.args(_dims(p["batches"], 1, 1, p["accum"]))
    f_dims = c.args(_dims(p["accum"], 1, 1, p["out_depth"]))
    b_dims = c.args(_dims(1, 1, 1, p["out_depth"]))
    o_dims = c.args(_dims(p["batches"], 1, 1, p["out_depth"]))
    bias = c.in_addr(2) if len(node.inputs) > 2 else 0
    if p["per_channel"]:
        quant = c.args(_uwords(c.const("mult", lambda: p["mult"].astype("<i4").tobytes()),
                               c.const("shift", lambda: p["shift"].astype("<i4").tobytes())))
        fn = "arm_fully_connected_per_channel_s8"
    else:
        quant = c.args(_words(int(p["mult"][0]), int(p["shift"][0])))
        fn = "arm_fully_connected_s8"
    return c.mcu.call(fn, ctx, fc_params, quant, in_dims, c.in_addr(0), f_dims, c.in_addr(1), b_dims, bias,
                      o_dims, c.out_addr())


def _bcast(shape_in, shape_out):
    """Element strides of `shape_in` broadcast to 6-D `shape_out` (0 on broadcast axes)."""
    so = [1] * (6 - len(shape_out)) + [int(d) for d in shape_out]
    si = [1] * (6 - len(shape_in)) + [int(d) for d in shape_in]
    strides, acc = [0] * 6, 1
    for d in range(5, -1, -1):
        strides[d] = 0 if (si[d] == 1 and so[d] != 1) else acc
        acc *= si[d]
    return so, strides


_OPCODE = {"ADD": 0, "SUB": 1, "MUL": 2, "MAXIMUM": 3, "MINIMUM": 4}


def _binary_params(node, in1, in2, out):
    from micro_rt.kernels.elementwise import add_sub_params, mul_params
    op = node.op_name
    act = _act(node)
    shape = tuple(np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape)))
    q = dict(left_shift=0, in1_off=0, m1=0, sh1=0, in2_off=0, m2=0, sh2=0, out_off=0, mo=0, sho=0,
             amin=-128, amax=127)
    if op in ("ADD", "SUB"):
        p = add_sub_params(in1, in2, out, act, op == "SUB")
        q.update({k: p[k] for k in q})
    elif op == "MUL":
        p = mul_params(in1, in2, out, act)
        q.update(in1_off=p["in1_off"], in2_off=p["in2_off"], out_off=p["out_off"], mo=p["m"], sho=p["sh"],
                 amin=p["amin"], amax=p["amax"])
    q = {k: int(v) for k, v in q.items()}
    same = tuple(in1.shape) == tuple(in2.shape)
    return shape, q, same


def _run_binary(c: _Ctx, core: str):
    node = c.node
    in1, in2, out = c.t(0), c.t(1), c.out()
    shape, q, same = _params(node, "bin", lambda: _binary_params(node, in1, in2, out))
    op = node.op_name
    size = int(np.prod(shape)) if len(shape) else 1
    a1, a2, ao = c.in_addr(0), c.in_addr(1), c.out_addr()
    if same and op == "ADD":
        return c.mcu.call("arm_elementwise_add_s8", a1, a2, q["in1_off"], q["m1"], q["sh1"], q["in2_off"], q["m2"],
                          q["sh2"], q["left_shift"], ao, q["out_off"], q["mo"], q["sho"], q["amin"], q["amax"], size)
    if same and op == "MUL":
        return c.mcu.call("arm_elementwise_mul_s8", a1, a2, q["in1_off"], q["in2_off"], ao, q["out_off"], q["mo"],
                          q["sho"], q["amin"], q["amax"], size)
    so, s1 = _bcast(in1.shape, shape)
    _, s2 = _bcast(in2.shape, shape)
    blob = _uwords(a1, a2, ao) + _words(_OPCODE[op], *so, *s1, *s2, q["left_shift"], q["in1_off"], q["m1"],
                                         q["sh1"], q["in2_off"], q["m2"], q["sh2"], q["out_off"], q["mo"],
                                         q["sho"], q["amin"], q["amax"])
    return c.mcu.call("mrt_binary_s8", c.args(blob))


def _run_pool(c: _Ctx, core: str):
    node = c.node
    inp, out = c.t(0), c.out()
    o = node.options
    n, ih, iw, ch = (int(d) for d in inp.shape)
    _, oh, ow, _ = (int(d) for d in out.shape)
    fh, fw = int(o.get("filter_height", 1)), int(o.get("filter_width", 1))
    sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    pad, _, _ = compute_padding_height_width(sh, sw, 1, 1, ih, iw, fh, fw, o.get("padding", "SAME"))
    amin, amax = activation_range_quantized(_act(node), _scale(out), _zp(out), np.int8)
    is_avg = node.op_name == "AVERAGE_POOL_2D"
    size = ch * 4 if (is_avg and _has_dsp(core)) else 0
    ctx = c.args(_uwords(c.scratch_addr() if size else 0, size))
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


def _nbytes(t) -> int:
    return int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize if len(t.shape) else np.dtype(t.dtype).itemsize


def _run_reshape(c: _Ctx, core: str):
    return c.mcu.call("arm_reshape_s8", c.in_addr(0), c.out_addr(), _nbytes(c.out()))


def _run_shape(c: _Ctx, core: str):
    inp = c.t(0)
    data = np.asarray(inp.shape, np.int32).astype("<i4").tobytes()
    src = c.const("shape", lambda: data)
    return c.mcu.call("mrt_copy", src, c.out_addr(), len(data))


def _copy_blob(src: int, dst: int, es: int, counts, sstr, dstr) -> bytes:
    counts = [1] * (6 - len(counts)) + list(counts)
    sstr = [0] * (6 - len(sstr)) + list(sstr)
    dstr = [0] * (6 - len(dstr)) + list(dstr)
    return _uwords(src, dst) + _words(es, *counts, *sstr, *dstr)


def _contig_strides(shape, es: int):
    st, acc = [], es
    for d in reversed(list(shape)):
        st.append(acc)
        acc *= int(d)
    return list(reversed(st))


def _combine(results):
    first = results[0]
    if len(results) == 1:
        return first
    total = dict(instructions=sum(r.instructions for r in results), cycles=sum(r.cycles for r in results),
                 stack_bytes=max(r.stack_bytes for r in results),
                 alignment_events=[e for r in results for e in r.alignment_events])
    try:
        return replace(first, **total)
    except Exception:                       # pragma: no cover - non-dataclass result
        for k, v in total.items():
            setattr(first, k, v)
        return first


def _run_concat_like(c: _Ctx, core: str):
    """CONCATENATION and PACK: one strided copy per input into its slot of the output."""
    node = c.node
    out = c.out()
    es = np.dtype(out.dtype).itemsize
    first = c.t(0)
    if node.op_name == "PACK":
        axis = int(node.options.get("axis", 0))
        if axis < 0:
            axis += len(first.shape) + 1
        in_shapes = [list(first.shape[:axis]) + [1] + list(first.shape[axis:])] * len(node.inputs)
    else:
        axis = int(node.options.get("axis", 0))
        if axis < 0:
            axis += len(out.shape)
        in_shapes = [list(c.t(k).shape) for k in range(len(node.inputs))]
    outer = int(np.prod(in_shapes[0][:axis])) if axis else 1
    inners = [int(np.prod(s[axis:])) for s in in_shapes]
    total_inner = sum(inners)
    results, off = [], 0
    for k, inner in enumerate(inners):
        blob = _copy_blob(c.in_addr(k), c.out_addr() + off * es, es, [outer, inner],
                          [inner * es, es], [total_inner * es, es])
        c.mcu.args_reset()
        results.append(c.mcu.call("mrt_strided_copy", c.args(blob)))
        off += inner
    return _combine(results)


def _run_transpose(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    es = np.dtype(inp.dtype).itemsize
    perm = [int(p) for p in np.asarray(c.t(1).data).reshape(-1)]
    rank = len(inp.shape)
    perm = [p + rank if p < 0 else p for p in perm]
    src_st = _contig_strides(inp.shape, es)
    counts = [int(inp.shape[p]) for p in perm]
    blob = _copy_blob(c.in_addr(0), c.out_addr(), es, counts, [src_st[p] for p in perm],
                      _contig_strides(counts, es))
    return c.mcu.call("mrt_strided_copy", c.args(blob))


def _run_pad(c: _Ctx, core: str):
    node = c.node
    inp, out = c.t(0), c.out()
    dt = np.dtype(inp.dtype)
    es = dt.itemsize
    pads = np.asarray(c.t(1).data).reshape(-1, 2).astype(np.int64)
    if len(node.inputs) == 3 and node.inputs[2] >= 0:
        value = np.asarray(c.t(2).data).reshape(-1)[:1].astype(dt)
    elif dt == np.int8:
        value = np.array([_zp(out)], np.int64).astype(np.uint8).view(np.int8)
    else:
        value = np.zeros(1, dt)
    raw = value.tobytes().ljust(4, b"\0")
    fill_word = struct.unpack("<I", raw[:4])[0]
    if es == 8:
        raise UnsupportedOnMcu("PAD of 8-byte elements")
    out_st = _contig_strides(out.shape, es)
    interior = c.out_addr() + sum(int(p0) * s for (p0, _), s in zip(pads, out_st))
    n_out = int(np.prod(out.shape))
    r1 = c.mcu.call("mrt_fill", c.out_addr(), fill_word, n_out, es)
    c.mcu.args_reset()
    blob = _copy_blob(c.in_addr(0), interior, es, [int(d) for d in inp.shape], _contig_strides(inp.shape, es),
                      out_st)
    r2 = c.mcu.call("mrt_strided_copy", c.args(blob))
    return _combine([r1, r2])


def _run_strided_slice(c: _Ctx, core: str):
    from micro_rt.kernels.shape_ops import strided_slice_plan
    node = c.node
    inp, out = c.t(0), c.out()
    es = np.dtype(inp.dtype).itemsize
    o = node.options
    begin = np.asarray(c.t(1).data).reshape(-1).astype(np.int64)
    end = np.asarray(c.t(2).data).reshape(-1).astype(np.int64)
    strides = np.asarray(c.t(3).data).reshape(-1).astype(np.int64)
    axes, _ = strided_slice_plan(inp.shape, begin, end, strides, int(o.get("begin_mask", 0)),
                                 int(o.get("end_mask", 0)), int(o.get("shrink_axis_mask", 0)))
    counts = [len(a) for a in axes]
    if int(np.prod(counts)) != int(np.prod(out.shape)):
        raise UnsupportedOnMcu("STRIDED_SLICE writing part of its output")
    src_st = _contig_strides(inp.shape, es)
    src = c.in_addr(0) + sum(int(a[0]) * s for a, s in zip(axes, src_st) if len(a))
    sst = [int(a[1] - a[0]) * s if len(a) > 1 else s for a, s in zip(axes, src_st)]
    blob = _copy_blob(src, c.out_addr(), es, counts, sst, _contig_strides(counts, es))
    return c.mcu.call("mrt_strided_copy", c.args(blob))


def _unary_blob(c: _Ctx, n: int, op: int, in_off=0, out_off=0, m0=0, s0=0, m1=0, s1=0, a0=0, a1=0) -> int:
    return c.args(_uwords(c.in_addr(0), c.out_addr()) + _words(n, op, in_off, out_off, m0, s0, m1, s1, a0, a1))


def _unary_params(node, inp, out):
    from micro_rt.kernels.activations import (float_to_quantized_type, hard_swish_params, leaky_relu_params,
                                              relu_params)
    from micro_rt.kernels.fixedpoint import calculate_input_radius as radius_fn
    from micro_rt.kernels.fixedpoint import frexp_multiplier
    op = node.op_name
    if op == "QUANTIZE":
        m, s = quantize_multiplier(float(_scale(inp)) / float(_scale(out)))
        return dict(op=0, in_off=_zp(inp), out_off=_zp(out), m0=m, s0=s, a0=-128, a1=127)
    if op == "RELU":
        p = relu_params(inp, out, np.int8)
        return dict(op=0, in_off=p["in_off"], out_off=p["out_off"], m0=p["m"], s0=p["s"], a0=p["qmin"], a1=p["qmax"])
    if op == "RELU6":
        zero = _zp(inp)
        six = float_to_quantized_type(6.0, _scale(inp), zero, np.int8)
        return dict(op=1, a0=zero, a1=six)
    if op == "LEAKY_RELU":
        p = leaky_relu_params(inp, out, float(np.float32(node.options.get("alpha", 0.0))))
        return dict(op=2, in_off=p["in_off"], out_off=p["out_off"], m0=p["mi"], s0=p["si"], m1=p["ma"], s1=p["sa"])
    if op in ("LOGISTIC", "TANH"):
        mult, shift = frexp_multiplier(float(_scale(inp)) * float(1 << 27))
        radius = radius_fn(4, shift, 31)
        return dict(op=3 if op == "LOGISTIC" else 4, in_off=_zp(inp), m0=mult, s0=shift, a0=radius)
    if op == "HARD_SWISH":
        p = hard_swish_params(_scale(inp), _zp(inp), _scale(out), _zp(out))
        return dict(op=5, in_off=p["input_zero_point"], out_off=p["output_zero_point"],
                    m0=p["output_multiplier_fixedpoint_int16"], s0=p["output_multiplier_exponent"],
                    m1=p["reluish_multiplier_fixedpoint_int16"], s1=p["reluish_multiplier_exponent"])
    raise UnsupportedOnMcu(op)


def _run_unary(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    p = _params(c.node, "unary", lambda: _unary_params(c.node, inp, out))
    n = int(np.prod(inp.shape)) if len(inp.shape) else 1
    return c.mcu.call("mrt_unary_s8", _unary_blob(c, n, **{k: int(v) for k, v in p.items()}))


def _run_quantize(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    n = int(np.prod(inp.shape)) if len(inp.shape) else 1
    if np.dtype(inp.dtype) == np.float32:
        fn = {np.dtype(np.int8): "mrt_quantize_f32_s8", np.dtype(np.int16): "mrt_quantize_f32_s16"}.get(
            np.dtype(out.dtype))
        if fn is None:
            raise UnsupportedOnMcu(f"QUANTIZE float32 to {np.dtype(out.dtype).name}")
        return c.mcu.call(fn, c.in_addr(0), c.out_addr(), n, _f32_bits(_scale(out)), _zp(out))
    if np.dtype(inp.dtype) == np.int8 and np.dtype(out.dtype) == np.int8:
        return _run_unary(c, core)
    return _run_unary_int(c, core)


def _run_dequantize(c: _Ctx, core: str):
    inp = c.t(0)
    n = int(np.prod(inp.shape)) if len(inp.shape) else 1
    if not _is_f32(c.out()):
        raise UnsupportedOnMcu("DEQUANTIZE to a non-float32 output")
    fn = "mrt_dequantize_s16_f32" if np.dtype(inp.dtype) == np.int16 else "mrt_dequantize_s8_f32"
    return c.mcu.call(fn, c.in_addr(0), c.out_addr(), n, _f32_bits(_scale(inp)), _zp(inp))


def _mean_axes(inp, axis_t) -> dict:
    """The input as 4-D and which of its axes are reduced (TFLM's ResolveAxis)."""
    rank = len(inp.shape)
    if rank > 4:
        raise UnsupportedOnMcu("MEAN over more than 4 dimensions")
    axes = []
    for a in np.asarray(axis_t.data).reshape(-1):
        a = int(a) + rank if a < 0 else int(a)
        if a not in axes:
            axes.append(a)
    shape = [1] * (4 - rank) + [int(d) for d in inp.shape]
    reduce = [0] * 4
    for a in axes:
        reduce[a + 4 - rank] = 1
    return dict(shape=shape, reduce=reduce)


def _mean_params(node, inp, axis_t, out):
    ax = _mean_axes(inp, axis_t)
    shape, reduce = ax["shape"], ax["reduce"]
    count = int(np.prod([shape[d] for d in range(4) if reduce[d]])) if any(reduce) else 1
    m, s = quantize_multiplier(float(np.float32(_scale(inp))) / float(np.float32(_scale(out))))
    shift_n = min(int(count).bit_length() - 1, 32, 31 + s)
    mult = (m << shift_n) // count
    return dict(shape=shape, reduce=reduce, mult=int(mult), shift=int(s - shift_n), in_zp=_zp(inp),
                out_zp=_zp(out))


def _run_mean(c: _Ctx, core: str):
    inp, axis_t, out = c.t(0), c.t(1), c.out()
    p = _params(c.node, "mean", lambda: _mean_params(c.node, inp, axis_t, out))
    blob = _uwords(c.in_addr(0), c.out_addr()) + _words(*p["shape"], *p["reduce"], p["in_zp"], p["out_zp"],
                                                        p["mult"], p["shift"], -128, 127)
    return c.mcu.call("mrt_mean_s8", c.args(blob))


# --------------------------------------------------------------------------- float32 runners

def _is_f32(t) -> bool:
    return t is not None and np.dtype(t.dtype) == np.float32


def _f32_act(node) -> tuple[int, int]:
    from micro_rt.kernels.quant import activation_range_float
    lo, hi = activation_range_float(_act(node))
    return _f32_bits(lo), _f32_bits(hi)


def _count(t) -> int:
    return int(np.prod(t.shape)) if len(t.shape) else 1


def _run_conv_f32(c: _Ctx, core: str, depthwise: bool):
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    if not _is_f32(flt) or not _is_f32(out):
        raise UnsupportedOnMcu(f"{node.op_name} float32 input with {np.dtype(flt.dtype).name} filter")

    def geom():
        o = node.options
        n, ih, iw, ic = (int(d) for d in inp.shape)
        _, oh, ow, oc = (int(d) for d in out.shape)
        _, fh, fw, fc = (int(d) for d in flt.shape)
        if depthwise:
            fc = oc // ic
        sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
        dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
        pad, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw, o.get("padding", "SAME"))
        return (n, ih, iw, ic, oh, ow, oc, fh, fw, fc, sh, sw, dh, dw, max(int(pad.height), 0),
                max(int(pad.width), 0), *_f32_act(node))
    g = _params(node, "geom_f32", geom)
    bias = c.in_addr(2) if len(node.inputs) > 2 else 0
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
    bias = c.in_addr(2) if len(node.inputs) > 2 else 0
    lo, hi = _params(node, "act_f32", lambda: _f32_act(node))
    blob = _uwords(c.in_addr(0), c.in_addr(1), bias, c.out_addr()) + _words(batches, accum, out_depth) + \
        _uwords(lo, hi)
    return c.mcu.call("mrt_fully_connected_f32", c.args(blob))


def _run_pool_f32(c: _Ctx, core: str):
    node = c.node
    inp, out = c.t(0), c.out()
    o = node.options
    n, ih, iw, ch = (int(d) for d in inp.shape)
    _, oh, ow, _ = (int(d) for d in out.shape)
    fh, fw = int(o.get("filter_height", 1)), int(o.get("filter_width", 1))
    sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
    pad, _, _ = compute_padding_height_width(sh, sw, 1, 1, ih, iw, fh, fw, o.get("padding", "SAME"))
    lo, hi = _f32_act(node)
    blob = _uwords(c.in_addr(0), c.out_addr()) + _words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw,
                                                         max(int(pad.height), 0), max(int(pad.width), 0)) + \
        _uwords(lo, hi)
    fn = "mrt_avgpool_f32" if node.op_name == "AVERAGE_POOL_2D" else "mrt_maxpool_f32"
    return c.mcu.call(fn, c.args(blob))


def _run_binary_f32(c: _Ctx, core: str):
    node = c.node
    in1, in2, out = c.t(0), c.t(1), c.out()
    if not (_is_f32(in2) and _is_f32(out)):
        raise UnsupportedOnMcu(f"{node.op_name} with mixed types")
    shape = tuple(np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape)))
    so, s1 = _bcast(in1.shape, shape)
    _, s2 = _bcast(in2.shape, shape)
    lo, hi = _f32_act(node) if node.op_name in ("ADD", "SUB", "MUL") else (_f32_bits(-np.inf), _f32_bits(np.inf))
    blob = _uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + _words(_OPCODE[node.op_name], *so, *s1, *s2) + \
        _uwords(lo, hi)
    return c.mcu.call("mrt_binary_f32", c.args(blob))


_UNARY_F32 = {"RELU": 0, "RELU6": 1, "LEAKY_RELU": 2, "LOGISTIC": 3, "TANH": 4, "HARD_SWISH": 5}


def _run_unary_f32(c: _Ctx, core: str):
    node = c.node
    if not _is_f32(c.out()):
        raise UnsupportedOnMcu(f"{node.op_name} float32 to {np.dtype(c.out().dtype).name}")
    alpha = _f32_bits(float(np.float32(node.options.get("alpha", 0.0)))) if node.op_name == "LEAKY_RELU" else 0
    blob = _uwords(c.in_addr(0), c.out_addr()) + _words(_count(c.t(0)), _UNARY_F32[node.op_name]) + _uwords(alpha)
    return c.mcu.call("mrt_unary_f32", c.args(blob))


def _run_softmax_f32(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    if not _is_f32(out):
        raise UnsupportedOnMcu("SOFTMAX float32 to a non-float32 output")
    depth = int(inp.shape[-1])
    rows = _count(inp) // depth if depth else 0
    beta = _f32_bits(float(np.float32(c.node.options.get("beta", 1.0))))
    return c.mcu.call("mrt_softmax_f32", c.in_addr(0), c.out_addr(), rows, depth, beta)


def _run_mean_f32(c: _Ctx, core: str):
    inp, axis_t, out = c.t(0), c.t(1), c.out()
    if axis_t is None or axis_t.data is None:
        raise UnsupportedOnMcu("MEAN with a non-constant axis")
    p = _params(c.node, "mean_f32", lambda: _mean_axes(inp, axis_t))
    blob = _uwords(c.in_addr(0), c.out_addr()) + _words(*p["shape"], *p["reduce"])
    return c.mcu.call("mrt_mean_f32", c.args(blob))


# --------------------------------------------------------------------------- int16 runners

def _is_i16(t) -> bool:
    return t is not None and np.dtype(t.dtype) == np.int16


def _conv_s16_params(node, inp, flt, bias, out, kind: str) -> dict:
    """Geometry and output stage of a 16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED."""
    if np.dtype(flt.dtype) != np.int8 or not _is_i16(out):
        raise UnsupportedOnMcu(f"{node.op_name} int16 input with {np.dtype(flt.dtype).name} filter")
    bias_size = 0 if bias is None else np.dtype(bias.dtype).itemsize
    if bias_size not in (0, 4, 8):
        raise UnsupportedOnMcu(f"{node.op_name} bias of {np.dtype(bias.dtype).name}")
    amin, amax = activation_range_quantized(_act(node), _scale(out), _zp(out), np.int16)
    if kind == "fc":
        p = _fc_params(node, inp, flt, out)
        if p["per_channel"]:
            raise UnsupportedOnMcu("per-channel FULLY_CONNECTED needs an int8 input")
        d = dict(n=p["batches"], ih=1, iw=1, ic=p["accum"], oh=1, ow=1, oc=p["out_depth"], fh=1, fw=1,
                 fc=p["accum"], sh=1, sw=1, dh=1, dw=1, ph=0, pw=0, depth_multiplier=0, filter_off=p["filter_offset"],
                 mult=p["mult"], shift=p["shift"], per_channel=0)
    else:
        depthwise = kind == "dw"
        o = node.options
        n, ih, iw, ic = (int(v) for v in inp.shape)
        _, oh, ow, oc = (int(v) for v in out.shape)
        _, fh, fw, fc = (int(v) for v in flt.shape)
        sh, sw = int(o.get("stride_h", 1)), int(o.get("stride_w", 1))
        dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
        pad, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw, o.get("padding", "SAME"))
        mult, shift = populate_per_channel_multipliers(_scale(inp), np.asarray(flt.scales, np.float32),
                                                       _scale(out), oc)
        d = dict(n=n, ih=ih, iw=iw, ic=ic, oh=oh, ow=ow, oc=oc, fh=fh, fw=fw, fc=fc, sh=sh, sw=sw, dh=dh, dw=dw,
                 ph=max(int(pad.height), 0), pw=max(int(pad.width), 0),
                 depth_multiplier=oc // ic if depthwise else 0, filter_off=0, mult=mult, shift=shift,
                 per_channel=1)
    d.update(in_off=-_zp(inp), out_off=_zp(out), act_min=int(amin), act_max=int(amax), bias_size=bias_size)
    d["mult_b"] = np.asarray(d.pop("mult"), np.int64).astype("<i4").tobytes()
    d["shift_b"] = np.asarray(d.pop("shift"), np.int64).astype("<i4").tobytes()
    return d


def _run_conv_s16(c: _Ctx, core: str, kind: str):
    node = c.node
    has_bias = len(node.inputs) > 2 and node.inputs[2] >= 0
    bias = c.t(2) if has_bias else None
    p = _params(node, "conv_s16", lambda: _conv_s16_params(node, c.t(0), c.t(1), bias, c.out(), kind))
    blob = _uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2) if has_bias else 0, c.out_addr(),
                   c.const("mult16", lambda: p["mult_b"]), c.const("shift16", lambda: p["shift_b"]))
    blob += _words(*(p[k] for k in ("n", "ih", "iw", "ic", "oh", "ow", "oc", "fh", "fw", "fc", "sh", "sw", "dh",
                                    "dw", "ph", "pw", "depth_multiplier", "in_off", "filter_off", "out_off",
                                    "act_min", "act_max", "bias_size", "per_channel")))
    return c.mcu.call("mrt_conv_s16", c.args(blob))


def _run_binary_s16(c: _Ctx, core: str):
    node = c.node
    in1, in2, out = c.t(0), c.t(1), c.out()
    if not (_is_i16(in2) and _is_i16(out)):
        raise UnsupportedOnMcu(f"{node.op_name} int16 with mixed types")
    if node.op_name in ("MAXIMUM", "MINIMUM"):
        shape = tuple(np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape)))
        q = dict(left_shift=0, in1_off=0, m1=0, sh1=0, in2_off=0, m2=0, sh2=0, out_off=0, mo=0, sho=0,
                 amin=-32768, amax=32767)
    else:
        shape, q, _ = _params(node, "bin16", lambda: _binary_params(node, in1, in2, out))
    so, s1 = _bcast(in1.shape, shape)
    _, s2 = _bcast(in2.shape, shape)
    blob = _uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + _words(
        _OPCODE[node.op_name], *so, *s1, *s2, q["left_shift"], q["in1_off"], q["m1"], q["sh1"], q["in2_off"],
        q["m2"], q["sh2"], q["out_off"], q["mo"], q["sho"], q["amin"], q["amax"])
    return c.mcu.call("mrt_binary_s16", c.args(blob))


_INT_RANGE = {1: (-128, 127), 2: (-32768, 32767), 4: (-(1 << 31), (1 << 31) - 1)}


def _unary_int_params(node, inp, out) -> dict:
    from micro_rt.kernels.activations import float_to_quantized_type, leaky_relu_params, relu_params
    op = node.op_name
    isz, osz = np.dtype(inp.dtype).itemsize, np.dtype(out.dtype).itemsize
    lo, hi = _INT_RANGE[osz]
    d = dict(op=0, in_size=isz, out_size=osz, in_off=0, out_off=0, m0=0, s0=0, m1=0, s1=0, a0=0, a1=0, lo=lo, hi=hi)
    if op == "QUANTIZE":
        m, s = quantize_multiplier(float(_scale(inp)) / float(_scale(out)))
        d.update(op=0, in_off=_zp(inp), out_off=_zp(out), m0=m, s0=s)
    elif op == "RELU":
        p = relu_params(inp, out, np.int16)
        d.update(op=0, in_off=p["in_off"], out_off=p["out_off"], m0=p["m"], s0=p["s"], lo=p["qmin"], hi=p["qmax"])
    elif op == "RELU6":
        zero = _zp(inp)
        d.update(op=1, a0=zero, a1=float_to_quantized_type(6.0, _scale(inp), zero, np.int16))
    elif op == "LEAKY_RELU":
        p = leaky_relu_params(inp, out, float(np.float32(node.options.get("alpha", 0.0))))
        d.update(op=2, in_off=p["in_off"], out_off=p["out_off"], m0=p["mi"], s0=p["si"], m1=p["ma"], s1=p["sa"])
    else:
        raise UnsupportedOnMcu(op)
    return {k: int(v) for k, v in d.items()}


def _run_unary_int(c: _Ctx, core: str):
    inp, out = c.t(0), c.out()
    if np.dtype(out.dtype) not in (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)):
        raise UnsupportedOnMcu(f"{c.node.op_name} to {np.dtype(out.dtype).name}")
    if c.node.op_name != "QUANTIZE" and np.dtype(out.dtype) != np.dtype(inp.dtype):
        raise UnsupportedOnMcu(f"{c.node.op_name} with mixed types")
    p = _params(c.node, "unary_int", lambda: _unary_int_params(c.node, inp, out))
    blob = _uwords(c.in_addr(0), c.out_addr()) + _words(
        _count(inp), *(p[k] for k in ("op", "in_size", "out_size", "in_off", "out_off", "m0", "s0", "m1", "s1",
                                      "a0", "a1", "lo", "hi")))
    return c.mcu.call("mrt_unary_int", c.args(blob))


def _float_dispatch(int_runner, float_runner, i16_runner=None):
    """The runner for the op's input type: float32, int16 (when given), else int8."""
    def run(c: _Ctx, core: str):
        first = c.t(0)
        if _is_f32(first):
            return float_runner(c, core)
        if i16_runner is not None and _is_i16(first):
            return i16_runner(c, core)
        return int_runner(c, core)
    return run


_RUNNERS: dict[str, Callable[[_Ctx, str], Any]] = {
    "CONV_2D": _float_dispatch(_run_conv, lambda c, core: _run_conv_f32(c, core, False),
                               lambda c, core: _run_conv_s16(c, core, "conv")),
    "DEPTHWISE_CONV_2D": _float_dispatch(_run_depthwise, lambda c, core: _run_conv_f32(c, core, True),
                                         lambda c, core: _run_conv_s16(c, core, "dw")),
    "FULLY_CONNECTED": _float_dispatch(_run_fc, _run_fc_f32, lambda c, core: _run_conv_s16(c, core, "fc")),
    **{op: _float_dispatch(_run_binary, _run_binary_f32, _run_binary_s16)
       for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")},
    "AVERAGE_POOL_2D": _float_dispatch(_run_pool, _run_pool_f32),
    "MAX_POOL_2D": _float_dispatch(_run_pool, _run_pool_f32),
    "SOFTMAX": _float_dispatch(_run_softmax, _run_softmax_f32),
    "RESHAPE": _run_reshape, "SQUEEZE": _run_reshape, "EXPAND_DIMS": _run_reshape, "SHAPE": _run_shape,
    "PACK": _run_concat_like, "CONCATENATION": _run_concat_like, "TRANSPOSE": _run_transpose,
    "PAD": _run_pad, "PADV2": _run_pad, "STRIDED_SLICE": _run_strided_slice,
    "QUANTIZE": _run_quantize, "DEQUANTIZE": _run_dequantize,
    **{op: _float_dispatch(_run_unary, _run_unary_f32, _run_unary_int) for op in _UNARY_F32},
    "MEAN": _float_dispatch(_run_mean, _run_mean_f32),
}


def run_op(mcu, node, tensors, arena_offsets, scratch_offset: Optional[int] = None,
           budget: Optional[int] = None):
    """Run `node` on `mcu` (its tensors already in the arena); returns the CallResult."""
    runner = _RUNNERS.get(node.op_name)
    first = tensors[node.inputs[0]] if node.inputs and node.inputs[0] >= 0 else None
    if runner is None or (first is not None and not supported(node.op_name, first.dtype)):
        raise UnsupportedOnMcu(f"op {node.index} {node.op_name}: no C kernel for "
                               f"{np.dtype(first.dtype).name if first is not None else '?'}")
    mcu.args_reset()
    if budget is not None:
        mcu.call_budget = budget
    return runner(_Ctx(mcu, node, tensors, arena_offsets, scratch_offset), _core_of(mcu))
