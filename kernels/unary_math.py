"""ABS, CEIL, COS, ELU, EXP, FLOOR, LOG, LOGICAL_NOT, NEG, ROUND, RSQRT, SIN, SQRT, SQUARE,
ZEROS_LIKE: TFLM's element-wise math kernels (elementwise.cc, ceil.cc, elu.cc, exp.cc,
floor.cc, neg.cc, round.cc, zeros_like.cc) in numpy.

float32 follows the reference code operation by operation in float32, with the C library's
functions where TFLM calls std:: ones (sinf, cosf, logf, expf, expm1f from kernels/libm.py;
sqrtf, fabsf, floorf, ceilf are exact in numpy too), so results are bit-identical.
Quantized ABS / RSQRT (int8, int16) and ELU (int8) evaluate TFLM's integer (or float LUT)
arithmetic on every possible input in prepare and keep a lookup table; invoke is one gather.

TFLM refuses most wrong types only at invoke (elementwise.cc's prepare check never fires: it
casts the type to a function pointer); micro_rt refuses them in prepare with TFLM's words.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .activations import UnaryData
from .fixedpoint import (f32_to_int32_cast, inv_sqrt_quantized_multiplier_exp, multiply_by_quantized_multiplier,
                         round_half_away_array)
from .kernel_util import (check_quantized, is_quantized, kernel_error, require_inputs, scale_of, tensor_desc,
                          type_code, type_label, type_name, zero_point_of)
from .libm import cosf, expf, expm1f, logf, sinf
from .lookup_tables import apply_lut, int8_domain, int16_domain, unary_invoke
from .quant import check_left_shift, quantize_multiplier

F32, I8, I16, I32, I64, BOOL = (np.dtype(t) for t in (np.float32, np.int8, np.int16, np.int32, np.int64, np.bool_))

# GetInvSqrtQuantizedMultiplierExp's result is scaled up by 2^20 before the output rescale.
_RSQRT_SHIFT = 20


# --------------------------------------------------------------------------- pure math (float32)

def round_to_nearest_f32(x: np.ndarray) -> np.ndarray:
    """reference_ops::RoundToNearest: halves to even, from floorf and a float32 difference."""
    x = np.asarray(x, np.float32)
    with np.errstate(invalid="ignore"):       # inf - inf: NaN, which rounds up to NaN as in C
        floor = np.floor(x)
        diff = x - floor
        even = np.fmod(floor, np.float32(2)) == 0
    keep = (diff < np.float32(0.5)) | ((diff == np.float32(0.5)) & even)
    return np.where(keep, floor, floor + np.float32(1)).astype(np.float32)


def elu_f32(x: np.ndarray) -> np.ndarray:
    """reference_ops::Elu: expm1f(x) below 0, x otherwise."""
    x = np.asarray(x, np.float32)
    return np.where(x < np.float32(0), expm1f(x), x).astype(np.float32)


def rsqrt_f32(x: np.ndarray) -> np.ndarray:
    """1.f / std::sqrt(f) in float32 (sqrtf is correctly rounded, as numpy's)."""
    x = np.asarray(x, np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.float32(1) / np.sqrt(x)).astype(np.float32)


def _float_op(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """fn on a float32 array without numpy's warnings (NaN and inf are values here)."""
    def apply(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(fn(np.asarray(x, np.float32)), np.float32)
    return apply


FLOAT_FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "ABS": _float_op(np.abs), "CEIL": _float_op(np.ceil), "FLOOR": _float_op(np.floor),
    "COS": cosf, "SIN": sinf, "LOG": logf, "EXP": _float_op(expf), "ELU": elu_f32,
    "NEG": _float_op(np.negative), "ROUND": round_to_nearest_f32, "RSQRT": rsqrt_f32,
    "SQRT": _float_op(np.sqrt), "SQUARE": _float_op(lambda x: x * x),
}


# --------------------------------------------------------------------------- pure math (quantized)

def abs_quantized(x: np.ndarray, p: dict, dtype) -> np.ndarray:
    """AbsEvalQuantized: |x - input offset|, rescaled when the scales differ, plus the output
    offset, clamped to the type."""
    value = np.abs(np.asarray(x, np.int64) - p["input_offset"])
    if p["needs_rescale"]:
        value = multiply_by_quantized_multiplier(value, p["multiplier"], p["shift"])
    info = np.iinfo(dtype)
    return np.clip(value + p["output_offset"], int(info.min), int(info.max))


def rsqrt_quantized(x: np.ndarray, p: dict, dtype) -> np.ndarray:
    """RsqrtEvalQuantized for inputs at or above the input offset (TFLM refuses the others):
    1/sqrt(x - offset) via GetInvSqrtQuantizedMultiplierExp, scaled by 2^20, rescaled to the
    output; x == offset gives the type's maximum."""
    value = np.asarray(x, np.int64) - p["input_offset"]
    inv, inv_shift = inv_sqrt_quantized_multiplier_exp(np.maximum(value, 0), -1)
    data = multiply_by_quantized_multiplier(np.ones_like(value), inv, inv_shift + _RSQRT_SHIFT)
    out = multiply_by_quantized_multiplier(data, p["multiplier"], p["shift"] - _RSQRT_SHIFT) + p["output_offset"]
    info = np.iinfo(dtype)
    return np.where(value == 0, int(info.max), np.clip(out, int(info.min), int(info.max)))


def elu_int8_table(input_scale: float, input_zero_point: int, output_scale: float,
                   output_zero_point: int) -> np.ndarray:
    """elu.cc's PopulateLookupTable<int8_t>, in its float32 steps: dequantize, expf(v) - 1
    below 0, times 1 / output scale, roundf, plus the zero point, cast, clamp. Indexed by
    the input's raw byte."""
    f32 = np.float32
    val = int8_domain()
    with np.errstate(all="ignore"):
        inverse_scale = f32(1) / f32(output_scale)
        dequantized = f32(input_scale) * (val - input_zero_point).astype(np.float32)
        transformed = np.where(dequantized < f32(0), expf(dequantized) - f32(1), dequantized).astype(np.float32)
        rescaled = round_half_away_array((transformed * inverse_scale).astype(np.float32)).astype(np.float32)
        quantized = f32_to_int32_cast((rescaled + f32(output_zero_point)).astype(np.float32))
    return np.clip(quantized, -128, 127).astype(np.int8)


# --------------------------------------------------------------------------- prepare helpers

def _in_out(ctx: KernelContext, node: Node) -> tuple:
    """(input, output) of a one-input op; refuses other counts, differing types or sizes
    (TFLM's kernels index the output with the input's element count)."""
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, needs 1 and 1")
    i = require_inputs(ctx, node, 1)[0]
    o = ctx.output(node, 0)
    if np.dtype(i.dtype) != np.dtype(o.dtype):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in type "
                                 f"(input->type != output->type ({type_name(i.dtype)} != {type_name(o.dtype)}))")
    if int(np.prod(i.shape)) != int(np.prod(o.shape)):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in size")
    return i, o


def _same_dims(node, i, o) -> None:
    """CEIL / EXP / ROUND's prepare: output bytes and dims equal to the input's."""
    if tuple(i.shape) != tuple(o.shape):
        raise kernel_error(node, f"output {tensor_desc(o)} must have the input's shape {list(i.shape)} "
                                 "(output->dims->data[i] != input->dims->data[i])")


def _float_only(op: str, source: str, eval_check: bool) -> Callable:
    """Prepare of an op TFLM runs on float32 only. `eval_check`: TFLM's check is
    elementwise.cc's Eval (`input->type != expected_type`), else `source`'s Prepare."""
    fn = FLOAT_FUNCTIONS[op]

    def prepare(ctx: KernelContext, node: Node):
        data: UnaryData = node.user_data
        i, o = _in_out(ctx, node)
        dt = np.dtype(i.dtype)
        if op in ("CEIL", "EXP", "ROUND"):
            _same_dims(node, i, o)
        if dt != F32:
            check = "input->type != expected_type" if eval_check else "input->type != kTfLiteFloat32"
            raise kernel_error(node, f"input {tensor_desc(i)}: {source} {check} ({type_name(dt)} != FLOAT32): "
                                     f"{op} runs on float32 only")
        data.kind, data.fn = "float", fn
    return prepare


def _prepare_neg(ctx: KernelContext, node: Node):
    data: UnaryData = node.user_data
    i, _ = _in_out(ctx, node)
    if np.dtype(i.dtype) != F32:
        raise kernel_error(node, f"input {tensor_desc(i)}: Type {type_label(i.dtype)} not supported.")
    data.kind, data.fn = "float", FLOAT_FUNCTIONS["NEG"]


def _prepare_logical_not(ctx: KernelContext, node: Node):
    data: UnaryData = node.user_data
    i, _ = _in_out(ctx, node)
    if np.dtype(i.dtype) != BOOL:
        raise kernel_error(node, f"input {tensor_desc(i)}: elementwise.cc input->type != expected_type "
                                 f"({type_name(i.dtype)} != BOOL): LOGICAL_NOT runs on bool only")
    data.kind, data.fn = "float", np.logical_not


def _prepare_zeros_like(ctx: KernelContext, node: Node):
    data: UnaryData = node.user_data
    i, _ = _in_out(ctx, node)
    dt = np.dtype(i.dtype)
    if dt not in (I64, I32, I8, F32):
        raise kernel_error(node, f"input {tensor_desc(i)}: ZerosLike only currently supports int64, int32, and "
                                 f"float32, got {type_code(dt)}.")
    data.kind, data.fn = "float", lambda x: np.zeros_like(x)


def _check_quantized_offsets(node, i, o, dt) -> None:
    """PrepareAbsRsqrt's quantization checks: both tensors quantized, int16 zero points 0."""
    for t, role in ((i, "input"), (o, "output")):
        if not is_quantized(t):
            raise kernel_error(node, f"{role} {tensor_desc(t)} has no quantization parameters "
                                     f"({role}->quantization.type != kTfLiteAffineQuantization)")
    zi, zo = zero_point_of(i), zero_point_of(o)
    if dt == I16 and (zi != 0 or zo != 0):
        raise kernel_error(node, f"int16 input {tensor_desc(i)} and output {tensor_desc(o)} need zero points "
                                 f"of 0, have {zi} and {zo}")


def abs_rsqrt_params(op: str, i, o) -> dict:
    """OpDataAbsRsqrt of quantized ABS / RSQRT: offsets, needs_rescale, multiplier, shift.
    Both in double, as the oracle build computes them (the float32 quotient, sqrt and product
    of older TFLM sources are off by one on some inputs): ABS input / output scale (when they
    differ), RSQRT 1 / (sqrt(input scale) * output scale)."""
    in_scale, out_scale = scale_of(i), scale_of(o)
    p = dict(input_offset=zero_point_of(i), output_offset=zero_point_of(o), needs_rescale=in_scale != out_scale,
             multiplier=0, shift=0)
    if op == "RSQRT":
        p["multiplier"], p["shift"] = quantize_multiplier(1.0 / (math.sqrt(in_scale) * out_scale))
    elif p["needs_rescale"]:
        p["multiplier"], p["shift"] = quantize_multiplier(in_scale / out_scale)
    return p


def _set_table(data: UnaryData, dt, fn) -> None:
    """fn tabulated over every int8 (int16) value: invoke looks the result up by the raw bits."""
    if dt == I8:
        data.kind, data.lut = "lut8", np.asarray(fn(int8_domain())).astype(np.int8)
    else:
        data.kind, data.lut = "lut16", np.ascontiguousarray(np.asarray(fn(int16_domain())).astype(np.int16))


def _prepare_abs_rsqrt(op: str) -> Callable:
    """PrepareAbsRsqrt: float32 as is; int8 / int16 quantized (int16: zero points 0) with
    OpDataAbsRsqrt's rescale; ABS also takes a plain int16 input (std::abs, wrapping at -32768)."""
    quantized_fn = abs_quantized if op == "ABS" else rsqrt_quantized

    def prepare(ctx: KernelContext, node: Node):
        data: UnaryData = node.user_data
        i, o = _in_out(ctx, node)
        dt = np.dtype(i.dtype)
        if dt == F32:
            data.kind, data.fn = "float", FLOAT_FUNCTIONS[op]
            return
        if dt not in (I8, I16):
            raise kernel_error(node, f"input {tensor_desc(i)}: Current data type {type_name(dt)} is not supported.")
        if dt == I16 and not is_quantized(i):
            if op == "RSQRT":
                raise kernel_error(node, f"input {tensor_desc(i)}: int16 RSQRT needs a quantized input (TFLM's "
                                         "prepare leaves the output rescale unset for a plain int16 input and "
                                         "reads it anyway)")
            data.params = None
            _set_table(data, dt, lambda v: np.abs(v))
            return
        _check_quantized_offsets(node, i, o, dt)
        if op == "RSQRT":
            check_quantized(node, i, "input")
        check_quantized(node, o, "output")
        p = abs_rsqrt_params(op, i, o)
        check_left_shift(node, p["shift"] - (_RSQRT_SHIFT if op == "RSQRT" else 0), "input / output scale")
        data.params = p
        _set_table(data, dt, lambda v: quantized_fn(v, p, dt))
    return prepare


def check_rsqrt_input(node, x: np.ndarray, input_offset: int) -> None:
    """TFLM checks every quantized RSQRT input before it computes it: values below the input's
    zero point stand for negative reals, and TFLM fails the invoke on them (so do the host
    kernel and the MCU glue)."""
    flat = np.asarray(x).reshape(-1)
    bad = np.flatnonzero(flat < input_offset)
    if bad.size:
        k = int(bad[0])
        raise kernel_error(node, f"Rsqrt is only defined for positive values (input element {k} is "
                                 f"{int(flat[k])}, below the zero point {input_offset})")


def _invoke_rsqrt(ctx: KernelContext, node: Node) -> None:
    data: UnaryData = node.user_data
    if data.kind in ("lut8", "lut16"):
        x = ctx.required_input(node, 0).data
        check_rsqrt_input(node, x, data.params["input_offset"])
        assert data.lut is not None                 # prepare made it for these kinds
        apply_lut(data.lut, x, ctx.output(node, 0).data)
        return
    unary_invoke(ctx, node)


def _prepare_elu(ctx: KernelContext, node: Node):
    data: UnaryData = node.user_data
    i, o = _in_out(ctx, node)
    dt = np.dtype(i.dtype)
    if dt == F32:
        data.kind, data.fn = "float", FLOAT_FUNCTIONS["ELU"]
    elif dt == I8:
        check_quantized(node, o, "output")      # TFLM divides 1 by it
        data.kind, data.lut = "lut8", elu_int8_table(scale_of(i), zero_point_of(i), scale_of(o), zero_point_of(o))
    else:
        raise kernel_error(node, f"input {tensor_desc(i)}: ELU only supports float32 and int8 currently, got "
                                 f"{type_name(dt)}.")


def _reg(name: str, prepare, struct_name=None, invoke=unary_invoke, *, temps: TempRule) -> Registration:
    return Registration(invoke=invoke, prepare=prepare, init=op_data_init(struct_name, UnaryData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("ABS", _reg("ABS", _prepare_abs_rsqrt("ABS"), "OpDataAbsRsqrt", temps="i0 o0"), 5),
    ("RSQRT", _reg("RSQRT", _prepare_abs_rsqrt("RSQRT"), "OpDataAbsRsqrt", _invoke_rsqrt, temps="i0 o0"), 3),
    ("ELU", _reg("ELU", _prepare_elu, "OpDataElu", temps="i0 o0"), 2),
    ("CEIL", _reg("CEIL", _float_only("CEIL", "ceil.cc", False), temps="i0 o0"), 1),
    ("EXP", _reg("EXP", _float_only("EXP", "exp.cc", False), temps="i0 o0"), 2),
    ("ROUND", _reg("ROUND", _float_only("ROUND", "round.cc", False), temps="i0 o0"), 1),
    ("FLOOR", _reg("FLOOR", _float_only("FLOOR", "floor.cc", False), temps=""), 2),
    ("COS", _reg("COS", _float_only("COS", "elementwise.cc", True), temps="i0 o0"), 1),
    ("SIN", _reg("SIN", _float_only("SIN", "elementwise.cc", True), temps="i0 o0"), 1),
    ("LOG", _reg("LOG", _float_only("LOG", "elementwise.cc", True), temps="i0 o0"), 2),
    ("SQRT", _reg("SQRT", _float_only("SQRT", "elementwise.cc", True), temps="i0 o0"), 2),
    ("SQUARE", _reg("SQUARE", _float_only("SQUARE", "elementwise.cc", True), temps="i0 o0"), 1),
    ("NEG", _reg("NEG", _prepare_neg, temps=""), 1),
    ("LOGICAL_NOT", _reg("LOGICAL_NOT", _prepare_logical_not, temps="i0 o0"), 1),
    ("ZEROS_LIKE", _reg("ZEROS_LIKE", _prepare_zeros_like, temps="i0 o0"), 1),
]
