"""Runners of the unary math family for micro_rt.cortexm.ops (cortexm/src/mrt_unary_math.c):
ABS CEIL COS ELU EXP FLOOR LOG NEG ROUND RSQRT SIN SQRT SQUARE on float32, quantized ABS /
RSQRT (int8, int16), ELU int8 (its lookup table), LOGICAL_NOT (bool) and ZEROS_LIKE (any type,
mrt_fill). Parameters come from the numpy twins' own helpers (kernels/unary_math.py).
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.fixedpoint import SIGMOID_TABLE_UINT16
from micro_rt.kernels.kernel_util import element_count, is_quantized, scale_of, zero_point_of
from micro_rt.kernels.unary_math import abs_rsqrt_params, elu_int8_table

from .context import CallContext, KernelCall, UnsupportedOnMcu, is_f32, node_params, uwords, words
from .registry import ANY, FLOAT32, INT16, INT8, KernelKey, OpKernel

# MRT_MATH_F32_* of mrt_unary_math_f32 (cortexm/src/mrt_nn_types.h)
MATH_F32_OPS = ("ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIN", "SQRT", "SQUARE")
_MATH_F32 = {op: k for k, op in enumerate(MATH_F32_OPS)}
# The float32 ops whose results come from newlib's libm (OpKernel.libm).
LIBM_F32_OPS = ("COS", "ELU", "EXP", "LOG", "SIN")
# MRT_MATH_INT_* of mrt_abs_rsqrt_int
_INT_ABS, _INT_ABS_PLAIN, _INT_RSQRT = range(3)


def run_unary_math_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    if not is_f32(c.out()):
        raise UnsupportedOnMcu(f"{node.op_name} float32 to {np.dtype(c.out().dtype).name}")
    blob = uwords(c.in_addr(0), c.out_addr()) + words(element_count(c.t(0)), _MATH_F32[node.op_name])
    return [c.call("mrt_unary_math_f32", c.args(blob))]


def _abs_rsqrt_fields(node, inp, out) -> tuple:
    """mrt_abs_rsqrt_int's fields after the two pointers and the count."""
    if node.op_name == "ABS" and not is_quantized(inp):
        return _INT_ABS_PLAIN, 0, 0, 0, 0, 0
    p = abs_rsqrt_params(node.op_name, inp, out)
    op = _INT_ABS if node.op_name == "ABS" else _INT_RSQRT
    return op, p["input_offset"], p["output_offset"], int(p["needs_rescale"]), p["multiplier"], p["shift"]


def run_abs_rsqrt_int(c: CallContext) -> list[KernelCall]:
    node, inp, out = c.node, c.t(0), c.out()
    if np.dtype(out.dtype) != np.dtype(inp.dtype):
        raise UnsupportedOnMcu(f"{node.op_name} with mixed types")
    op, in_off, out_off, rescale, mult, shift = node_params(node, "abs_rsqrt", lambda: _abs_rsqrt_fields(node, inp, out))
    blob = c.args(uwords(c.in_addr(0), c.out_addr()) + words(element_count(inp), op, np.dtype(inp.dtype).itemsize,
                                                             in_off, out_off, rescale, mult, shift))
    # TFLM fails the invoke on an input below the zero point, so does the host twin
    # (kernels/unary_math.check_rsqrt_input): the firmware checks the values it reads first
    checks = [c.call("mrt_check_rsqrt_int", blob,
                     refusal=f"op {node.index} {node.op_name}: Rsqrt is only defined for positive values (an "
                             f"input element is below the zero point {in_off}; the check returns its index "
                             "+ 1)")] if op == _INT_RSQRT else []
    return checks + [c.call("mrt_abs_rsqrt_int", blob)]


def run_elu_s8(c: CallContext) -> list[KernelCall]:
    """elu.cc's int8 lookup. TFLM keeps the table in its op data (arena RAM): it goes to SRAM
    with the call's arguments, so its reads cost what RAM reads cost."""
    inp, out = c.t(0), c.out()
    table = node_params(c.node, "elu_table", lambda: elu_int8_table(scale_of(inp), zero_point_of(inp), scale_of(out),
                                                                    zero_point_of(out)).tobytes())
    return [c.call("mrt_lut_s8", c.in_addr(0), c.out_addr(), element_count(inp), c.args(table))]


def run_logical_not(c: CallContext) -> list[KernelCall]:
    if np.dtype(c.t(0).dtype) != np.bool_:
        raise UnsupportedOnMcu(f"LOGICAL_NOT on {np.dtype(c.t(0).dtype).name}")
    return [c.call("mrt_logical_not", c.in_addr(0), c.out_addr(), element_count(c.t(0)))]


def run_zeros_like(c: CallContext) -> list[KernelCall]:
    """zeros_like.cc's resetZeros as mrt_fill: int8 bytes, int32 / float32 words, int64 two words each."""
    out = c.out()
    size = np.dtype(out.dtype).itemsize
    count = element_count(out) * (2 if size == 8 else 1)
    return [c.call("mrt_fill", c.out_addr(), 0, count, min(size, 4))]


# --------------------------------------------------------------------------- CAST (mrt_cast.c)

# MRT_TYPE_* of mrt_cast
_CAST_TYPES = {np.dtype(t): k for k, t in enumerate((np.int8, np.int16, np.int32, np.uint32, np.float32, np.bool_))}


def run_cast(c: CallContext) -> list[KernelCall]:
    inp, out = c.t(0), c.out()
    codes = [_CAST_TYPES.get(np.dtype(t.dtype)) for t in (inp, out)]
    known = [code for code in codes if code is not None]
    if len(known) != len(codes):
        raise UnsupportedOnMcu(f"CAST {np.dtype(inp.dtype).name} to {np.dtype(out.dtype).name}")
    return [c.call("mrt_cast", c.in_addr(0), c.out_addr(), element_count(inp), *known)]


# --------------------------------------------------------------------------- int16 LOGISTIC / TANH (mrt_unary.c)

def run_sigmoid_s16(c: CallContext) -> list[KernelCall]:
    from micro_rt.kernels.activations import int16_sigmoid_params
    node, inp, out = c.node, c.t(0), c.out()
    if np.dtype(out.dtype) != np.int16:
        raise UnsupportedOnMcu(f"{node.op_name} int16 to {np.dtype(out.dtype).name}")
    tanh = node.op_name == "TANH"
    mult, shift = node_params(node, "sigmoid16", lambda: int16_sigmoid_params(node, inp, out, tanh=tanh))
    table = c.const("sigmoid_table", lambda: SIGMOID_TABLE_UINT16.astype("<u2").tobytes())
    return [c.call("mrt_sigmoid_s16", c.in_addr(0), c.out_addr(), element_count(inp), mult, shift, int(tanh), table)]


# --------------------------------------------------------------------------- QUANTIZE int8 <-> uint8 (mrt_quantize.c)

def _requantize_u8_fields(inp, out) -> tuple:
    from micro_rt.kernels.quant import quantize_multiplier
    mult, shift = quantize_multiplier(float(scale_of(inp)) / float(scale_of(out)))
    in_off, out_off = zero_point_of(inp), zero_point_of(out)
    in_unsigned = int(np.dtype(inp.dtype) == np.uint8)
    xor = int(mult == (1 << 30) and shift == 1 and in_off - out_off == (128 if in_unsigned else -128))
    return in_unsigned, xor, in_off, out_off, mult, shift


def run_quantize_u8(c: CallContext) -> list[KernelCall]:
    """QUANTIZE uint8 -> int8 and int8 -> uint8 (reference_ops::Requantize)."""
    inp, out = c.t(0), c.out()
    pair = (np.dtype(inp.dtype), np.dtype(out.dtype))
    if pair not in ((np.dtype(np.uint8), np.dtype(np.int8)), (np.dtype(np.int8), np.dtype(np.uint8))):
        raise UnsupportedOnMcu(f"QUANTIZE {pair[0].name} to {pair[1].name}")
    fields = node_params(c.node, "requant_u8", lambda: _requantize_u8_fields(inp, out))
    blob = uwords(c.in_addr(0), c.out_addr()) + words(element_count(inp), *fields)
    return [c.call("mrt_requantize_u8", c.args(blob))]


KERNELS: dict[KernelKey, OpKernel] = {
    **{(op, FLOAT32): OpKernel(run_unary_math_f32, libm=op in LIBM_F32_OPS) for op in MATH_F32_OPS},
    **{(op, t): OpKernel(run_abs_rsqrt_int) for op in ("ABS", "RSQRT") for t in (INT8, INT16)},
    ("ELU", INT8): OpKernel(run_elu_s8),
    ("LOGICAL_NOT", ANY): OpKernel(run_logical_not),
    ("ZEROS_LIKE", ANY): OpKernel(run_zeros_like),
    **{("CAST", t): OpKernel(run_cast) for t in (INT8, INT16, FLOAT32, ANY)},
    ("LOGISTIC", INT16): OpKernel(run_sigmoid_s16),
    ("TANH", INT16): OpKernel(run_sigmoid_s16),
}
