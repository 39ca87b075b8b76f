"""Element-wise runners for micro_rt.cortexm.ops: binary ADD / SUB / MUL / MAXIMUM / MINIMUM
(broadcasting), unary activations (RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH),
QUANTIZE / DEQUANTIZE and MEAN, for int8, int16 and float32.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.kernel_util import activation_of, activation_range_int, element_count, scale_of, zero_point_of
from micro_rt.kernels.quant import quantize_multiplier

from .context import (CallContext, KernelCall, UnsupportedOnMcu, f32_activation, f32_bits, is_f32, is_i16,
                          node_params, uwords, words)
from .registry import ANY, FLOAT32, INT16, INT8, KernelKey, OpKernel

_INT_RANGE = {1: (-128, 127), 2: (-32768, 32767), 4: (-(1 << 31), (1 << 31) - 1)}

# --------------------------------------------------------------------------- binary

_OPCODE = {"ADD": 0, "SUB": 1, "MUL": 2, "MAXIMUM": 3, "MINIMUM": 4}       # MRT_OP_*
# The quantized output stage of mrt_binary_s8 / mrt_binary_s16, in struct order.
_BINARY_QUANT_FIELDS = ("left_shift", "in1_off", "m1", "sh1", "in2_off", "m2", "sh2", "out_off", "mo", "sho",
                        "amin", "amax")


def broadcast_strides(shape_in, shape_out):
    """Element strides of `shape_in` broadcast to 6-D `shape_out` (0 on broadcast axes)."""
    so = [1] * (6 - len(shape_out)) + [int(d) for d in shape_out]
    si = [1] * (6 - len(shape_in)) + [int(d) for d in shape_in]
    strides, acc = [0] * 6, 1
    for d in range(5, -1, -1):
        strides[d] = 0 if (si[d] == 1 and so[d] != 1) else acc
        acc *= si[d]
    return so, strides


def _broadcast_shape(in1, in2) -> tuple:
    return tuple(np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape)))


def broadcast_words(in1, in2, shape) -> list:
    """The 6-D output shape and both inputs' element strides, as the binary kernels read them."""
    so, s1 = broadcast_strides(in1.shape, shape)
    _, s2 = broadcast_strides(in2.shape, shape)
    return [*so, *s1, *s2]


def _binary_params(node, in1, in2, out, value_range=_INT_RANGE[1]):
    """(broadcast shape, output stage, same input shapes); MAXIMUM / MINIMUM clamp to `value_range`."""
    from micro_rt.kernels.elementwise import add_sub_params, mul_params
    op = node.op_name
    act = activation_of(node)
    shape = _broadcast_shape(in1, in2)
    q = dict.fromkeys(_BINARY_QUANT_FIELDS, 0)
    q.update(amin=value_range[0], amax=value_range[1])
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


def _call_binary_int(c: CallContext, fn: str, shape, q: dict) -> list[KernelCall]:
    """mrt_binary_s8 / mrt_binary_s16: broadcasting binary op with a quantized output stage."""
    in1, in2 = c.t(0), c.t(1)
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(
        _OPCODE[c.node.op_name], *broadcast_words(in1, in2, shape), *(q[k] for k in _BINARY_QUANT_FIELDS))
    return [c.call(fn, c.args(blob))]


# Public for the reference flavour's runner (ops.reference), which computes the same parameters.
binary_params = _binary_params
INT_RANGE, BINARY_QUANT_FIELDS = _INT_RANGE, _BINARY_QUANT_FIELDS


def run_binary_s8(c: CallContext) -> list[KernelCall]:
    node = c.node
    in1, in2, out = c.t(0), c.t(1), c.out()
    shape, q, same = node_params(node, "bin", lambda: _binary_params(node, in1, in2, out))
    op = node.op_name
    size = int(np.prod(shape)) if len(shape) else 1
    if same and op == "ADD":
        return [c.call("arm_elementwise_add_s8", c.in_addr(0), c.in_addr(1), q["in1_off"], q["m1"], q["sh1"],
                       q["in2_off"], q["m2"], q["sh2"], q["left_shift"], c.out_addr(), q["out_off"], q["mo"],
                       q["sho"], q["amin"], q["amax"], size)]
    if same and op == "MUL":
        return [c.call("arm_elementwise_mul_s8", c.in_addr(0), c.in_addr(1), q["in1_off"], q["in2_off"],
                       c.out_addr(), q["out_off"], q["mo"], q["sho"], q["amin"], q["amax"], size)]
    return _call_binary_int(c, "mrt_binary_s8", shape, q)


def _same_type_operands(c: CallContext, is_type, mixed_message: str):
    """(in1, in2, out) when the second input and the output pass `is_type`, else UnsupportedOnMcu."""
    in1, in2, out = c.t(0), c.t(1), c.out()
    if not (is_type(in2) and is_type(out)):
        raise UnsupportedOnMcu(mixed_message)
    return in1, in2, out


same_type_operands = _same_type_operands         # public for ops.reference


def run_binary_s16(c: CallContext) -> list[KernelCall]:
    """ADD / MUL of two int16 tensors of the same shape: arm_elementwise_add_s16 /
    arm_elementwise_mul_s16, as TFLM's CMSIS-NN glue (they read no offsets: TFLM requires zero
    points of 0); everything else (broadcasting, SUB, MAXIMUM, MINIMUM): mrt_binary_s16."""
    node = c.node
    in1, in2, out = _same_type_operands(c, is_i16, f"{node.op_name} int16 with mixed types")
    shape, q, same = node_params(node, "bin16", lambda: _binary_params(node, in1, in2, out, _INT_RANGE[2]))
    op = node.op_name
    if same and op in ("ADD", "MUL") and not (q["in1_off"] or q["in2_off"] or q["out_off"]):
        size = int(np.prod(shape)) if len(shape) else 1
        if op == "ADD":
            return [c.call("arm_elementwise_add_s16", c.in_addr(0), c.in_addr(1), 0, q["m1"], q["sh1"], 0, q["m2"],
                           q["sh2"], q["left_shift"], c.out_addr(), 0, q["mo"], q["sho"], q["amin"], q["amax"], size)]
        return [c.call("arm_elementwise_mul_s16", c.in_addr(0), c.in_addr(1), 0, 0, c.out_addr(), 0, q["mo"],
                       q["sho"], q["amin"], q["amax"], size)]
    return _call_binary_int(c, "mrt_binary_s16", shape, q)


def run_binary_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    in1, in2, _ = _same_type_operands(c, is_f32, f"{node.op_name} with mixed types")
    shape = _broadcast_shape(in1, in2)
    lo, hi = f32_activation(node) if node.op_name in ("ADD", "SUB", "MUL") else (f32_bits(-np.inf), f32_bits(np.inf))
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + \
        words(_OPCODE[node.op_name], *broadcast_words(in1, in2, shape)) + uwords(lo, hi)
    return [c.call("mrt_binary_f32", c.args(blob))]


def run_binary_wide(c: CallContext) -> list[KernelCall]:
    """int32 ADD / SUB / MUL / MAXIMUM / MINIMUM (mrt_binary_s32) and int64 MAXIMUM / MINIMUM
    (mrt_binary_s64); the clamp is the twin's: none for ADD (TFLM's int32 ADD ignores the
    activation), the fused activation's int32 range for SUB / MUL."""
    node = c.node
    in1, in2, out = c.t(0), c.t(1), c.out()
    kind = np.dtype(in1.dtype)
    if np.dtype(in2.dtype) != kind or np.dtype(out.dtype) != kind:
        raise UnsupportedOnMcu(f"{node.op_name} {kind.name} with mixed types")
    op = node.op_name
    if kind == np.int32:
        lo, hi = activation_range_int(activation_of(node), np.int32) if op in ("SUB", "MUL") else _INT_RANGE[4]
        symbol = "mrt_binary_s32"
    elif kind == np.int64 and op in ("MAXIMUM", "MINIMUM"):
        lo, hi, symbol = 0, 0, "mrt_binary_s64"
    else:
        raise UnsupportedOnMcu(f"{op} {kind.name}")
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + \
        words(_OPCODE[op], *broadcast_words(in1, in2, _broadcast_shape(in1, in2)), int(lo), int(hi))
    return [c.call(symbol, c.args(blob))]


# --------------------------------------------------------------------------- unary

# MRT_UNARY_* of mrt_unary_s8 / mrt_unary_int (cortexm/src/mrt_nn_types.h)
_REQUANT, _RELU6, _LEAKY, _LOGISTIC, _TANH, _HARD_SWISH = range(6)
# MRT_UNARY_F32_* of mrt_unary_f32
_UNARY_F32 = {"RELU": 0, "RELU6": 1, "LEAKY_RELU": 2, "LOGISTIC": 3, "TANH": 4, "HARD_SWISH": 5}


def _requant_params(node, inp, out, qtype):
    """QUANTIZE / RELU / RELU6 / LEAKY_RELU as the int8 and the int16 kernels share them:
    (fields, clamp) where clamp is RELU's (qmin, qmax), else None; (None, None) for other ops."""
    from micro_rt.kernels.activations import float_to_quantized_type, leaky_relu_params, relu_params
    op = node.op_name
    if op == "QUANTIZE":
        m, s = quantize_multiplier(float(scale_of(inp)) / float(scale_of(out)))
        return dict(op=_REQUANT, in_off=zero_point_of(inp), out_off=zero_point_of(out), m0=m, s0=s), None
    if op == "RELU":
        p = relu_params(inp, out, qtype)
        return dict(op=_REQUANT, in_off=p["in_off"], out_off=p["out_off"], m0=p["m"], s0=p["s"]), \
            (p["qmin"], p["qmax"])
    if op == "RELU6":
        zero = zero_point_of(inp)
        return dict(op=_RELU6, a0=zero, a1=float_to_quantized_type(6.0, scale_of(inp), zero, qtype)), None
    if op == "LEAKY_RELU":
        p = leaky_relu_params(inp, out, float(np.float32(node.options.get("alpha", 0.0))))
        return dict(op=_LEAKY, in_off=p["in_off"], out_off=p["out_off"], m0=p["mi"], s0=p["si"], m1=p["ma"],
                    s1=p["sa"]), None
    return None, None


def _unary_params(node, inp, out):
    """mrt_unary_s8's fields (op, in_off, out_off, m0, s0, m1, s1, a0, a1; absent ones are 0)."""
    from micro_rt.kernels.activations import hard_swish_params
    from micro_rt.kernels.quant import calculate_input_radius as radius_fn
    from micro_rt.kernels.quant import frexp_multiplier
    op = node.op_name
    fields, clamp = _requant_params(node, inp, out, np.int8)
    if fields is not None:
        if fields["op"] == _REQUANT:                 # the requantizing ops clamp to [a0, a1]
            fields["a0"], fields["a1"] = clamp or _INT_RANGE[1]
        return fields
    if op in ("LOGISTIC", "TANH"):
        mult, shift = frexp_multiplier(float(scale_of(inp)) * float(1 << 27))
        radius = radius_fn(4, shift, 31)
        return dict(op=_LOGISTIC if op == "LOGISTIC" else _TANH, in_off=zero_point_of(inp), m0=mult, s0=shift,
                    a0=radius)
    if op == "HARD_SWISH":
        p = hard_swish_params(scale_of(inp), zero_point_of(inp), scale_of(out), zero_point_of(out))
        return dict(op=_HARD_SWISH, in_off=p["input_zero_point"], out_off=p["output_zero_point"],
                    m0=p["output_multiplier_fixedpoint_int16"], s0=p["output_multiplier_exponent"],
                    m1=p["reluish_multiplier_fixedpoint_int16"], s1=p["reluish_multiplier_exponent"])
    raise UnsupportedOnMcu(op)


def run_unary_s8(c: CallContext) -> list[KernelCall]:
    inp, out = c.t(0), c.out()
    p = node_params(c.node, "unary", lambda: _unary_params(c.node, inp, out))
    f = dict(in_off=0, out_off=0, m0=0, s0=0, m1=0, s1=0, a0=0, a1=0)
    f.update({k: int(v) for k, v in p.items() if k != "op"})
    blob = uwords(c.in_addr(0), c.out_addr()) + words(element_count(inp), int(p["op"]), *f.values())
    return [c.call("mrt_unary_s8", c.args(blob))]


_UNARY_INT_FIELDS = ("op", "in_size", "out_size", "in_off", "out_off", "m0", "s0", "m1", "s1", "a0", "a1", "lo", "hi")


def _unary_int_params(node, inp, out) -> dict:
    """mrt_unary_int's fields: int8 / int16 / int32 in and out, clamped to [lo, hi]."""
    isz, osz = np.dtype(inp.dtype).itemsize, np.dtype(out.dtype).itemsize
    fields, clamp = _requant_params(node, inp, out, np.int16)
    if fields is None:
        raise UnsupportedOnMcu(node.op_name)
    d = dict.fromkeys(_UNARY_INT_FIELDS, 0)
    d.update(fields, in_size=isz, out_size=osz)
    d["lo"], d["hi"] = clamp or _INT_RANGE[osz]
    return {k: int(v) for k, v in d.items()}


def run_unary_int(c: CallContext) -> list[KernelCall]:
    inp, out = c.t(0), c.out()
    if np.dtype(out.dtype) not in (np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)):
        raise UnsupportedOnMcu(f"{c.node.op_name} to {np.dtype(out.dtype).name}")
    if c.node.op_name != "QUANTIZE" and np.dtype(out.dtype) != np.dtype(inp.dtype):
        raise UnsupportedOnMcu(f"{c.node.op_name} with mixed types")
    p = node_params(c.node, "unary_int", lambda: _unary_int_params(c.node, inp, out))
    blob = uwords(c.in_addr(0), c.out_addr()) + words(element_count(inp), *(p[k] for k in _UNARY_INT_FIELDS))
    return [c.call("mrt_unary_int", c.args(blob))]


def run_unary_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    if not is_f32(c.out()):
        raise UnsupportedOnMcu(f"{node.op_name} float32 to {np.dtype(c.out().dtype).name}")
    alpha = f32_bits(node.options.get("alpha", 0.0)) if node.op_name == "LEAKY_RELU" else 0
    blob = uwords(c.in_addr(0), c.out_addr()) + words(element_count(c.t(0)), _UNARY_F32[node.op_name]) + \
        uwords(alpha)
    return [c.call("mrt_unary_f32", c.args(blob))]


# --------------------------------------------------------------------------- (de)quantize

def run_quantize(c: CallContext) -> list[KernelCall]:
    inp, out = c.t(0), c.out()
    if np.dtype(inp.dtype) == np.float32:
        fn = {np.dtype(np.int8): "mrt_quantize_f32_s8", np.dtype(np.int16): "mrt_quantize_f32_s16"}.get(
            np.dtype(out.dtype))
        if fn is None:
            raise UnsupportedOnMcu(f"QUANTIZE float32 to {np.dtype(out.dtype).name}")
        return [c.call(fn, c.in_addr(0), c.out_addr(), element_count(inp), f32_bits(scale_of(out)),
                       zero_point_of(out))]
    if np.dtype(inp.dtype) == np.int8 and np.dtype(out.dtype) == np.int8:
        return run_unary_s8(c)
    if np.dtype(out.dtype) == np.uint8 or np.dtype(inp.dtype) == np.uint8:
        from .unary import run_quantize_u8
        return run_quantize_u8(c)
    return run_unary_int(c)             # int8 / int16 / int32 in (TFLM's Requantize), int8 / int16 / int32 out


def run_dequantize(c: CallContext) -> list[KernelCall]:
    inp = c.t(0)
    if not is_f32(c.out()):
        raise UnsupportedOnMcu("DEQUANTIZE to a non-float32 output")
    fn = {np.dtype(np.int8): "mrt_dequantize_s8_f32", np.dtype(np.int16): "mrt_dequantize_s16_f32",
          np.dtype(np.uint8): "mrt_dequantize_u8_f32"}.get(np.dtype(inp.dtype))
    if fn is None:
        raise UnsupportedOnMcu(f"DEQUANTIZE from {np.dtype(inp.dtype).name}")
    return [c.call(fn, c.in_addr(0), c.out_addr(), element_count(inp), f32_bits(scale_of(inp)),
                   zero_point_of(inp))]


# --------------------------------------------------------------------------- mean

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
    m, s = quantize_multiplier(float(np.float32(scale_of(inp))) / float(np.float32(scale_of(out))))
    shift_n = min(int(count).bit_length() - 1, 32, 31 + s)
    mult = (m << shift_n) // count
    return dict(shape=shape, reduce=reduce, mult=int(mult), shift=int(s - shift_n), in_zp=zero_point_of(inp),
                out_zp=zero_point_of(out))


def run_mean_s8(c: CallContext) -> list[KernelCall]:
    inp, axis_t, out = c.t(0), c.t(1), c.out()
    p = node_params(c.node, "mean", lambda: _mean_params(c.node, inp, axis_t, out))
    blob = uwords(c.in_addr(0), c.out_addr()) + words(*p["shape"], *p["reduce"], p["in_zp"], p["out_zp"],
                                                      p["mult"], p["shift"], *_INT_RANGE[1])
    return [c.call("mrt_mean_s8", c.args(blob))]


def run_mean_f32(c: CallContext) -> list[KernelCall]:
    inp, axis_t = c.t(0), c.t(1)
    if axis_t is None or axis_t.data is None:
        raise UnsupportedOnMcu("MEAN with a non-constant axis")
    p = node_params(c.node, "mean_f32", lambda: _mean_axes(inp, axis_t))
    blob = uwords(c.in_addr(0), c.out_addr()) + words(*p["shape"], *p["reduce"])
    return [c.call("mrt_mean_f32", c.args(blob))]


_BINARY = ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")
_UNARY = ("RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH")
_UNARY_I16 = ("RELU", "RELU6", "LEAKY_RELU")

KERNELS: dict[KernelKey, OpKernel] = {
    **{(op, INT8): OpKernel(run_binary_s8) for op in _BINARY},
    **{(op, FLOAT32): OpKernel(run_binary_f32) for op in _BINARY},
    **{(op, INT16): OpKernel(run_binary_s16) for op in _BINARY},
    **{(op, ANY): OpKernel(run_binary_wide) for op in _BINARY},                 # int32; int64 MAXIMUM / MINIMUM
    **{(op, INT8): OpKernel(run_unary_s8) for op in _UNARY},
    **{(op, FLOAT32): OpKernel(run_unary_f32, libm=op in ("LOGISTIC", "TANH")) for op in _UNARY},
    **{(op, INT16): OpKernel(run_unary_int) for op in _UNARY_I16},
    **{("QUANTIZE", t): OpKernel(run_quantize) for t in (INT8, INT16, FLOAT32)},
    ("QUANTIZE", ANY): OpKernel(run_quantize),           # uint8 / int32 in (other 1-byte types: int8's entry)
    **{("DEQUANTIZE", t): OpKernel(run_dequantize) for t in (INT8, INT16)},
    ("DEQUANTIZE", ANY): OpKernel(run_dequantize),                              # uint8 in
}
