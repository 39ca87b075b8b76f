"""DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, ADD_N, PRELU: TFLM's reference kernels (div.cc,
floor_div.cc, floor_mod.cc, squared_difference.cc, add_n.cc, prelu.cc), bit-exact, in numpy.

The types TFLM's kernels take, and nothing more:

    DIV                   float32; int32 (not quantized); int8 (quantized)
    FLOOR_DIV, FLOOR_MOD  float32
    SQUARED_DIFFERENCE    float32, int32; int8, int16 (int16: zero points 0)
    ADD_N                 float32, int8 (every input one scale and zero point), equal shapes
    PRELU                 float32 (at most 4-D), int8 (int8 alpha), int16 (int8 alpha)

Broadcasting follows numpy's rules, as TFLM's BroadcastBinaryOpSimple does, up to the 6
dimensions of TFLM's RuntimeShape. int8 DIV / SQUARED_DIFFERENCE / PRELU are precomputed in
prepare as a 256 x 256 table of every input pair (elementwise.pair_table), so invoke is one
gather. float32 results are TFLM's float32 operations in its order (FLOOR_DIV divides in
double, as TFLM's FloorDiv does; FLOOR_MOD is fmodf, exact): bit-identical.

Where TFLM's C++ is undefined, the oracle (TFLM built for x86-64) decides, as elsewhere in
micro_rt:
- int8 DIV rounds the quotient with RoundingDivideByPOT by up to 63 bits; from 32 bits on x86
  masks the shift count (fixedpoint.rounding_divide_by_pot_x86: a quotient that should round
  to about 0 comes out saturated, e.g. 1 / 255 gives 127), which the twin and the C kernel
  reproduce; an Arm build of TFLM would give 0 or 1 there. Scales that would need more than
  63 bits, or a negative count, are refused.
- int8 DIV by input 2's zero point (a real 0) runs TFLM's GetReciprocal(0): deterministic, kept.
- int32 DIV by 0 fails in TFLM when invoked, and so it does here; INT32_MIN / -1 (the x86
  build traps: SIGFPE) is refused when invoked too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .elementwise import check_broadcast, pair_index, pair_table
from .fixedpoint import (INT32_MIN, count_leading_sign_bits, get_reciprocal, multiply_by_quantized_multiplier,
                         rounding_divide_by_pot_x86,
                         saturating_rounding_doubling_high_mul, wrap_int32)
from .kernel_util import (activation_of, activation_range_float, activation_range_int, activation_range_quantized,
                          activation_with_min_max, check_quantized, element_count, is_quantized, kernel_error, require_inputs, scale_of,
                          tensor_desc, type_label, type_name, zero_point_of)
from .quant import check_left_shift, checked_smaller_than_one_multiplier, quantize_multiplier

MAX_RANK = 6            # TFLM's RuntimeShape
PRELU_FLOAT_MAX_RANK = 4  # BroadcastPrelu4DSlowFloat extends to 4-D with a TFLITE_CHECK (abort)


@dataclass
class BinaryOpData:
    """What prepare leaves for invoke (and for the virtual MCU's glue)."""
    kind: str = ""                      # "float32", "int32", "int8", "int16"
    out_shape: tuple = ()
    params: dict = field(default_factory=dict)
    lut: Optional[np.ndarray] = None    # int8: 65536 results indexed by pair_index
    lo: float | np.floating = float("-inf")   # DIV's fused activation (float32 / int32)
    hi: float | np.floating = float("inf")
    scratch_index: int = -1             # ADD_N: TFLM's array of input pointers


    def looked_up(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """int8: each element pair's result, from the table prepare made."""
        assert self.lut is not None
        return np.take(self.lut, pair_index(a, b))

# --------------------------------------------------------------------------- shared checks

def _op_tensors(ctx: KernelContext, node: Node, inputs: int = 2):
    if len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.outputs)} outputs, needs 1")
    return (*require_inputs(ctx, node, inputs), ctx.output(node, 0))


def _same_types(node, *tensors) -> np.dtype:
    """TF_LITE_ENSURE_TYPES_EQ over the tensors: their common type."""
    first = tensors[0]
    for t in tensors[1:]:
        if np.dtype(t.dtype) != np.dtype(first.dtype):
            raise kernel_error(node, f"{tensor_desc(t)} and {tensor_desc(first)} differ in type "
                                     f"({type_name(t.dtype)} != {type_name(first.dtype)})")
    return np.dtype(first.dtype)


def rescaled(x: np.ndarray, offset: int, left_shift: int, mult: int, shift: int) -> np.ndarray:
    """(x + offset) * 2^left_shift, then MultiplyByQuantizedMultiplierSmallerThanOneExp: how
    TFLM's quantized SQUARED_DIFFERENCE, ADD_N and comparisons bring inputs to one scale."""
    shifted = wrap_int32((np.asarray(x, np.int64) + offset) << left_shift)
    return multiply_by_quantized_multiplier(shifted, mult, shift)


def _result_shape(node, in1, in2, out, max_rank: int = MAX_RANK) -> tuple:
    return check_broadcast(node, in1, in2, out, max_rank)


def _store(out, shape: tuple, values: np.ndarray) -> None:
    out.data.reshape(shape)[...] = np.reshape(values, shape)


# --------------------------------------------------------------------------- DIV

def div_params(in1, in2, out, activation: str) -> dict:
    """CalculateOpDataDiv for int8: the multiplier of input1 / (input2 * output) scales, then
    QuantizeMultiplier. In double: TFLM's source divides the float32 scales in float32, but the
    oracle's results match the double quotient (every int8 pair, 12 random scale triples) and
    not the float32 one."""
    real = scale_of(in1) / (scale_of(in2) * scale_of(out))
    m, sh = quantize_multiplier(real)
    amin, amax = activation_range_quantized(activation, scale_of(out), zero_point_of(out), np.int8)
    return dict(in1_off=-zero_point_of(in1), in2_off=-zero_point_of(in2), out_off=zero_point_of(out),
                mult=m, shift=sh, amin=amin, amax=amax, real=real)


def _div_exponents(a: np.ndarray, b: np.ndarray, p: dict):
    """DivElementwise up to the final rounding: (SRDHM(quotient, multiplier), exponent)."""
    n = np.asarray(a, np.int64) + p["in1_off"]
    d = np.asarray(b, np.int64) + p["in2_off"]
    n = np.where(d < 0, -n, n)
    d = np.abs(d)
    inv, recip_shift = get_reciprocal(d, 31)
    headroom = count_leading_sign_bits(n)
    quotient = saturating_rounding_doubling_high_mul(wrap_int32(n << headroom), inv)
    exponent = -(p["shift"] - recip_shift - headroom)
    return saturating_rounding_doubling_high_mul(quotient, p["mult"]), exponent


def div_quantized(a: np.ndarray, b: np.ndarray, p: dict) -> np.ndarray:
    """reference_ops::DivElementwise on int8 values (x86 rounding: see the module docstring)."""
    raw, exponent = _div_exponents(a, b, p)
    return np.clip(rounding_divide_by_pot_x86(raw, exponent) + p["out_off"], p["amin"], p["amax"])


def _check_div_exponents(node, p: dict) -> None:
    d = np.arange(-128, 128)
    _, exponent = _div_exponents(np.repeat(d, 256), np.tile(d, 256), p)
    if exponent.min() < 0 or exponent.max() > 63:
        raise kernel_error(node, f"input 1 / (input 2 * output) scales = {p['real']:g}: TFLM's int8 DIV would "
                                 f"round its quotients by 2^{int(exponent.min())} .. 2^{int(exponent.max())}, "
                                 "outside the 0 .. 63 bits its C++ defines (a quantization scale is wrong)")


def check_int_division(node, a: np.ndarray, b: np.ndarray) -> None:
    """int32 DIV at invoke: refuse what TFLM's C++ division leaves undefined."""
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    if np.any(b == 0):
        raise kernel_error(node, "input 2 holds 0: TFLM's int32 DIV fails to invoke on a zero divisor")
    if np.any((a == INT32_MIN) & (b == -1)):
        raise kernel_error(node, "INT32_MIN / -1 overflows int32: TFLM's int32 DIV does not check it (the "
                                 "x86 build the oracle is stops with SIGFPE)")


def _div_prepare(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    in1, in2, out = _op_tensors(ctx, node)
    dt = _same_types(node, in1, in2, out)
    act = activation_of(node)
    if dt == np.float32:
        data.kind = "float32"
        data.lo, data.hi = (np.float32(v) for v in activation_range_float(act))
    elif dt == np.int32:
        for t, role in ((in1, "input 1"), (in2, "input 2")):
            if is_quantized(t):
                raise kernel_error(node, f"{role} {tensor_desc(t)} is quantized: TFLM's DIV supports only "
                                         "unquantized int32")
        data.kind = "int32"
        data.lo, data.hi = activation_range_int(act, np.int32)
    elif dt == np.int8:
        for t, role in ((in1, "input 1"), (in2, "input 2"), (out, "output")):
            check_quantized(node, t, role)
        p = div_params(in1, in2, out, act)
        _check_div_exponents(node, p)
        data.kind, data.params = "int8", p
        data.lut = pair_table(lambda a, b: div_quantized(a, b, p))
    else:
        raise kernel_error(node, f"DIV only supports FLOAT32, INT32, quantized INT8 now, got type "
                                 f"{type_label(out.dtype)}.")
    data.out_shape = _result_shape(node, in1, in2, out)


def _div_invoke(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    a, b, out = ctx.required_input(node, 0).data, ctx.required_input(node, 1).data, ctx.output(node, 0)
    if data.kind == "int8":
        _store(out, data.out_shape, data.looked_up(a, b))
    elif data.kind == "float32":
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            q = np.divide(a, b)
        _store(out, data.out_shape, activation_with_min_max(q, data.lo, data.hi))
    else:
        check_int_division(node, a, b)
        a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
        q = np.abs(a64) // np.abs(b64) * np.where((a64 < 0) != (b64 < 0), -1, 1)     # C's truncation
        _store(out, data.out_shape, np.clip(wrap_int32(q), data.lo, data.hi))


# --------------------------------------------------------------------------- FLOOR_DIV, FLOOR_MOD

def floor_div_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """reference_ops::FloorDiv<float>: std::floor of the double quotient, stored as float."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor(np.asarray(a, np.float64) / np.asarray(b, np.float64)).astype(np.float32)


def floor_mod_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """reference_ops::FloorMod<float>: fmodf, moved into the divisor's sign (float32 add)."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        trunc_mod = np.fmod(a, b)
        moved = (trunc_mod != 0) & ((b < 0) != (trunc_mod < 0))
        return np.where(moved, trunc_mod + b, trunc_mod).astype(np.float32)


def _floor_prepare(op: str):
    def prepare(ctx: KernelContext, node: Node) -> None:
        data: BinaryOpData = node.user_data
        if len(node.inputs) != 2:
            raise kernel_error(node, f"has {len(node.inputs)} inputs, needs 2")
        in1, in2, out = _op_tensors(ctx, node)
        dt = _same_types(node, in1, in2, out)
        if dt != np.float32:
            raise kernel_error(node, f"Type '{type_name(dt)}' is not supported by {op}.")
        data.kind = "float32"
        data.out_shape = _result_shape(node, in1, in2, out)
    return prepare


def _floor_invoke(fn: Callable, checks_zero: bool):
    def invoke(ctx: KernelContext, node: Node) -> None:
        data: BinaryOpData = node.user_data
        a, b = ctx.required_input(node, 0).data, ctx.required_input(node, 1).data
        if checks_zero and np.any(b == 0):
            raise kernel_error(node, "Division by 0")
        _store(ctx.output(node, 0), data.out_shape, fn(a, b))
    return invoke


# --------------------------------------------------------------------------- SQUARED_DIFFERENCE

SQD_LEFT_SHIFT = {np.dtype(np.int8): 7, np.dtype(np.int16): 0}


def squared_difference_params(node, in1, in2, out, left_shift: int) -> dict:
    """PrepareQuantized of squared_difference.cc: each input over twice the larger input scale,
    the squared difference over 2^(2 left_shift) times the output scale."""
    twice = 2.0 * float(max(np.float32(scale_of(in1)), np.float32(scale_of(in2))))
    m1, sh1 = checked_smaller_than_one_multiplier(node, scale_of(in1) / twice, "input 1 scale / (2 * max input scale)")
    m2, sh2 = checked_smaller_than_one_multiplier(node, scale_of(in2) / twice, "input 2 scale / (2 * max input scale)")
    denominator = float(np.float32(1 << (2 * left_shift)) * np.float32(scale_of(out)))
    mo, sho = quantize_multiplier(twice * twice / denominator)
    check_left_shift(node, sho, "squared difference / output scale")
    info = np.iinfo(np.dtype(out.dtype))
    return dict(left_shift=left_shift, in1_off=-zero_point_of(in1), in2_off=-zero_point_of(in2),
                out_off=zero_point_of(out), m1=m1, sh1=sh1, m2=m2, sh2=sh2, mo=mo, sho=sho,
                amin=int(info.min), amax=int(info.max))


def squared_difference_quantized(a: np.ndarray, b: np.ndarray, p: dict) -> np.ndarray:
    """The SquaredDifference of squared_difference.cc on int8 / int16 values."""
    s1 = rescaled(a, p["in1_off"], p["left_shift"], p["m1"], p["sh1"])
    s2 = rescaled(b, p["in2_off"], p["left_shift"], p["m2"], p["sh2"])
    diff = s1 - s2
    raw = multiply_by_quantized_multiplier(wrap_int32(diff * diff), p["mo"], p["sho"]) + p["out_off"]
    return np.clip(raw, p["amin"], p["amax"])


def _sqd_prepare(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    if len(node.inputs) != 2:
        raise kernel_error(node, f"has {len(node.inputs)} inputs, needs 2")
    in1, in2, out = _op_tensors(ctx, node)
    dt = _same_types(node, in1, in2)
    if np.dtype(out.dtype) != dt and dt in (np.float32, np.int32, np.int8, np.int16):
        raise kernel_error(node, f"output {tensor_desc(out)} differs in type from the inputs: TFLM computes in "
                                 "the output's type, reading the inputs as that type")
    if dt in (np.int8, np.int16):
        for t, role in ((in1, "input 1"), (in2, "input 2"), (out, "output")):
            check_quantized(node, t, role)
            zp = zero_point_of(t)
            if dt == np.int16 and zp != 0:
                raise kernel_error(node, f"{role} {tensor_desc(t)} has zero point {zp}: TFLM's int16 "
                                         "SQUARED_DIFFERENCE needs 0 (TF_LITE_ENSURE)")
            if not -128 <= zp <= 127:
                raise kernel_error(node, f"{role} {tensor_desc(t)} has zero point {zp}, outside int8")
        p = squared_difference_params(node, in1, in2, out, SQD_LEFT_SHIFT[dt])
        data.params = p
        if dt == np.int8:
            data.lut = pair_table(lambda a, b: squared_difference_quantized(a, b, p))
    elif dt not in (np.float32, np.int32):
        raise kernel_error(node, "SquaredDifference only supports FLOAT32, INT32 , INT16 and INT8 now, got "
                                 f"{_tflite_code(out.dtype)}.")
    data.kind = dt.name
    data.out_shape = _result_shape(node, in1, in2, out)


def _tflite_code(dtype) -> int:
    """TfLiteType's number of a type (the "%d" of TFLM's messages)."""
    return int(type_label(dtype).split("(")[1].rstrip(")"))


def _sqd_invoke(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    a, b, out = ctx.required_input(node, 0).data, ctx.required_input(node, 1).data, ctx.output(node, 0)
    if data.kind == "int8":
        result = data.looked_up(a, b)
    elif data.kind == "int16":
        result = squared_difference_quantized(a, b, data.params)
    elif data.kind == "int32":
        d = wrap_int32(np.asarray(a, np.int64) - np.asarray(b, np.int64))
        result = wrap_int32(d * d)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            d = np.subtract(a, b)
            result = d * d
    _store(out, data.out_shape, result)


# --------------------------------------------------------------------------- ADD_N

ADD_N_LEFT_SHIFT = 20


def add_n_params(node, first, out) -> dict:
    """CalculateOpData of add_n.cc for int8: every input over twice its scale, the sum over
    2^20 times the output scale."""
    twice = 2.0 * scale_of(first)
    m_in, sh_in = checked_smaller_than_one_multiplier(node, scale_of(first) / twice, "input scale / (2 * input scale)")
    mo, sho = checked_smaller_than_one_multiplier(node, twice / (float(1 << ADD_N_LEFT_SHIFT) * scale_of(out)),
                                "2 * input scale / (2^20 * output scale)")
    amin, amax = activation_range_quantized("NONE", scale_of(out), zero_point_of(out), np.int8)
    return dict(in_off=-zero_point_of(first), out_off=zero_point_of(out), m_in=m_in, sh_in=sh_in, mo=mo,
                sho=sho, amin=amin, amax=amax)


def add_n_quantized(inputs: list, p: dict) -> np.ndarray:
    """reference_ops::AddN for int8: the sum starts from the scaled input offset (TFLM's
    `x = input1_offset`), then adds each scaled input, int32."""
    acc = rescaled(np.zeros(np.shape(inputs[0]), np.int64), p["in_off"], ADD_N_LEFT_SHIFT, p["m_in"], p["sh_in"])
    for x in inputs:
        acc = wrap_int32(acc + rescaled(x, p["in_off"], ADD_N_LEFT_SHIFT, p["m_in"], p["sh_in"]))
    raw = multiply_by_quantized_multiplier(acc, p["mo"], p["sho"]) + p["out_off"]
    return np.clip(raw, p["amin"], p["amax"])


def add_n_f32(inputs: list) -> np.ndarray:
    """reference_ops::AddN<float>: 0, then each input added in order (float32)."""
    acc = np.zeros(np.shape(inputs[0]), np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for x in inputs:
            acc = acc + x
    return acc


def _add_n_prepare(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    if len(node.inputs) < 2:
        raise kernel_error(node, f"has {len(node.inputs)} inputs, needs at least 2")
    inputs = require_inputs(ctx, node)
    first = inputs[0]
    out = _op_tensors(ctx, node, 1)[-1]
    _same_types(node, first, out)
    for t in inputs[1:]:
        if tuple(t.shape) != tuple(first.shape):
            raise kernel_error(node, f"input {tensor_desc(t)} differs in shape from {tensor_desc(first)} "
                                     "(ADD_N does not broadcast)")
        _same_types(node, first, t)
        if np.dtype(first.dtype) == np.int8 and (zero_point_of(t) != zero_point_of(first)
                                                 or np.float32(scale_of(t)) != np.float32(scale_of(first))):
            raise kernel_error(node, f"input {tensor_desc(t)} differs in scale or zero point from "
                                     f"{tensor_desc(first)}: TFLM's int8 ADD_N needs them equal")
    if element_count(out) != element_count(first):
        raise kernel_error(node, f"output {tensor_desc(out)} does not hold the {element_count(first)} elements "
                                 "of each input")
    dt = np.dtype(out.dtype)
    pointer_array = ctx.target.pointer_size * len(inputs)       # TFLM's scratch: one pointer per input
    if dt == np.float32:
        data.scratch_index = ctx.request_scratch(pointer_array)
    elif dt == np.int8:
        for t, role in ((first, "input 1"), (out, "output")):
            check_quantized(node, t, role)
        ctx.allocate_persistent(ctx.target.sizeof("OpDataAddN"))
        data.scratch_index = ctx.request_scratch(pointer_array)
        data.params = add_n_params(node, first, out)
    else:
        raise kernel_error(node, f"ADD_N only supports FLOAT32 and INT8, got {type_name(dt)}.")
    data.kind = dt.name
    data.out_shape = tuple(first.shape)


def _add_n_invoke(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    inputs = [ctx.required_input(node, i).data for i in range(len(node.inputs))]
    result = add_n_quantized(inputs, data.params) if data.kind == "int8" else add_n_f32(inputs)
    _store(ctx.output(node, 0), data.out_shape, result)


# --------------------------------------------------------------------------- PRELU

def prelu_params(node, inp, alpha, out) -> dict:
    """CalculatePreluParams: input / output (x >= 0) and input * alpha / output (x < 0), in
    double."""
    s_in, s_alpha, s_out = scale_of(inp), scale_of(alpha), scale_of(out)
    m1, sh1 = quantize_multiplier(s_in / s_out)
    m2, sh2 = quantize_multiplier(s_in * s_alpha / s_out)
    check_left_shift(node, sh1, "input / output scale")
    check_left_shift(node, sh2, "input x alpha / output scale")
    info = np.iinfo(np.dtype(out.dtype))
    return dict(in_off=-zero_point_of(inp), alpha_off=-zero_point_of(alpha), out_off=zero_point_of(out),
                m1=m1, sh1=sh1, m2=m2, sh2=sh2, amin=int(info.min), amax=int(info.max))


def prelu_quantized(x: np.ndarray, alpha: np.ndarray, p: dict) -> np.ndarray:
    """reference_ops::BroadcastPrelu4DSlow's element function (int8 / int16 input, int8 alpha)."""
    v = np.asarray(x, np.int64) + p["in_off"]
    av = np.asarray(alpha, np.int64) + p["alpha_off"]
    positive = multiply_by_quantized_multiplier(v, p["m1"], p["sh1"])
    negative = multiply_by_quantized_multiplier(wrap_int32(v * av), p["m2"], p["sh2"])
    return np.clip(np.where(v >= 0, positive, negative) + p["out_off"], p["amin"], p["amax"])


def prelu_f32(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """x >= 0 ? x : x * alpha, in float32."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        return np.where(x >= 0, x, x * alpha).astype(np.float32)


def _prelu_prepare(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    inp, alpha, out = _op_tensors(ctx, node)
    dt = np.dtype(inp.dtype)
    if dt not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"Input type '{type_name(dt)}' is not supported.")
    _same_types(node, inp, out)
    want_alpha = np.dtype(np.float32) if dt == np.float32 else np.dtype(np.int8)
    if np.dtype(alpha.dtype) != want_alpha:
        raise kernel_error(node, f"alpha {tensor_desc(alpha)} must be {want_alpha.name} for a {dt.name} input "
                                 f"(TFLM reads it as {want_alpha.name}; int16 input: alpha->type == kTfLiteInt8)")
    if dt == np.float32:
        data.out_shape = _result_shape(node, inp, alpha, out, PRELU_FLOAT_MAX_RANK)
    else:
        check_quantized(node, out, "output")
        p = prelu_params(node, inp, alpha, out)
        data.params = p
        if dt == np.int8:
            data.lut = pair_table(lambda a, b: prelu_quantized(a, b, p))
        data.out_shape = _result_shape(node, inp, alpha, out)
    data.kind = dt.name


def _prelu_invoke(ctx: KernelContext, node: Node) -> None:
    data: BinaryOpData = node.user_data
    x, alpha, out = ctx.required_input(node, 0).data, ctx.required_input(node, 1).data, ctx.output(node, 0)
    if data.kind == "int8":
        result = data.looked_up(x, alpha)
    elif data.kind == "int16":
        result = prelu_quantized(x, alpha, data.params)
    else:
        result = prelu_f32(x, alpha)
    _store(out, data.out_shape, result)


# --------------------------------------------------------------------------- registration

def _add_n_temps(op, tensors) -> str:
    # The first input and the output, then every other input in turn.
    return "i0 o0 " + " ".join(f"i{k}" for k in range(1, len(op.inputs)))


def _registration(name: str, prepare, invoke, struct: Optional[str], *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(struct, BinaryOpData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("DIV", _registration("DIV", _div_prepare, _div_invoke, "OpDataDiv", temps="i0 i1 o0"), 2),
    ("FLOOR_DIV", _registration("FLOOR_DIV", _floor_prepare("FLOOR_DIV"),
                                _floor_invoke(floor_div_f32, checks_zero=True), None, temps="i0 i1 o0"), 3),
    ("FLOOR_MOD", _registration("FLOOR_MOD", _floor_prepare("FLOOR_MOD"),
                                _floor_invoke(floor_mod_f32, checks_zero=False), None, temps="i0 i1 o0"), 2),
    ("SQUARED_DIFFERENCE", _registration("SQUARED_DIFFERENCE", _sqd_prepare, _sqd_invoke,
                                         "OpDataSquaredDifference", temps="i0 i1 o0"), 2),
    ("ADD_N", _registration("ADD_N", _add_n_prepare, _add_n_invoke, None, temps=_add_n_temps), 1),
    ("PRELU", _registration("PRELU", _prelu_prepare, _prelu_invoke, "PreluParams", temps="i0 i1 o0"), 1),
]
