"""LOGISTIC, TANH, RELU, RELU6, LEAKY_RELU, HARD_SWISH: TFLM's reference kernels in numpy.

int8 kernels evaluate TFLM's integer arithmetic (gemmlowp fixed point for logistic/tanh, the
int16 fixed-point path of hard swish, ...) on all 256 possible inputs in prepare and keep the
result as a lookup table; invoke is one gather.  float32 follows the reference float code.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .fixedpoint import (gemmlowp_logistic, gemmlowp_tanh, logistic_int16, multiply_by_quantized_multiplier,
                         round_half_away_array, rounding_divide_by_pot, saturating_doubling_high_mul_int16,
                         saturating_left_shift_int16, saturating_rounding_doubling_high_mul_int16, tanh_int16,
                         wrap_int16)
from .kernel_util import check_quantized, kernel_error, scale_of, tensor_desc, type_name, zero_point_of
from .libm import expf, tanhf
from .lookup_tables import int8_domain, int16_domain, unary_invoke
from .quant import (calculate_input_radius, check_left_shift, checked_log2_pot, downscale_int32_to_int16_multiplier,
                    frexp_multiplier, quantize_multiplier)


@dataclass
class UnaryData:
    kind: str = ""                        # "float", "int16" (fn), "lut8", "lut16" (lut)
    lut: Optional[np.ndarray] = None      # results indexed by the input's raw bits
    fn: Any = None                        # int16 / float element function
    params: Any = None


# --------------------------------------------------------------------------- pure math (int8)

def logistic_int8(x: np.ndarray, input_zero_point: int, input_scale: float) -> np.ndarray:
    """reference_integer_ops::Logistic (int8): output scale 1/256, zero point -128."""
    mult, shift = frexp_multiplier(float(input_scale) * float(1 << 27))
    radius = calculate_input_radius(4, shift, 31)
    v = np.asarray(x, np.int64) - input_zero_point
    q4 = multiply_by_quantized_multiplier(v, mult, shift)
    out = rounding_divide_by_pot(gemmlowp_logistic(q4, 4), 23) - 128
    out = np.clip(out, -128, 127)
    return np.where(v <= -radius, -128, np.where(v >= radius, 127, out))


def tanh_int8(x: np.ndarray, input_zero_point: int, input_scale: float) -> np.ndarray:
    """reference_integer_ops::Tanh (int8): output scale 1/128, zero point 0."""
    mult, shift = frexp_multiplier(float(input_scale) * float(1 << 27))
    radius = calculate_input_radius(4, shift, 31)
    v = np.asarray(x, np.int64) - input_zero_point
    q4 = multiply_by_quantized_multiplier(v, mult, shift)
    out = np.clip(rounding_divide_by_pot(gemmlowp_tanh(q4, 4), 24), -128, 127)
    return np.where(v <= -radius, -128, np.where(v >= radius, 127, out))


def hard_swish_params(input_scale: float, input_zp: int, output_scale: float, output_zp: int) -> dict:
    """HardSwishPrepare: float32 scale arithmetic, then QuantizeMultiplier + int16 downscale."""
    f32 = np.float32
    hires_input_scale = f32(1.0 / 128.0) * f32(input_scale)
    reluish_scale = f32(3.0) / f32(32768.0)
    out_m = float(f32(hires_input_scale / f32(output_scale)))
    m32, out_exp = quantize_multiplier(out_m)
    rel_m = float(f32(hires_input_scale / reluish_scale))
    r32, rel_exp = quantize_multiplier(rel_m)
    return dict(input_zero_point=input_zp, output_zero_point=output_zp,
                output_multiplier_fixedpoint_int16=downscale_int32_to_int16_multiplier(m32),
                output_multiplier_exponent=out_exp,
                reluish_multiplier_fixedpoint_int16=downscale_int32_to_int16_multiplier(r32),
                reluish_multiplier_exponent=rel_exp)


def hard_swish_int(x: np.ndarray, p: dict, qmin: int = -128, qmax: int = 127) -> np.ndarray:
    """reference_ops::HardSwish (quantized) with int16 fixed point."""
    v = wrap_int16(np.asarray(x, np.int64) - p["input_zero_point"])
    hires = wrap_int16(v * (1 << 7))
    preshift_out = saturating_rounding_doubling_high_mul_int16(hires, p["output_multiplier_fixedpoint_int16"])
    reluish = hires
    e = p["reluish_multiplier_exponent"]
    if e > 0:
        reluish = saturating_left_shift_int16(reluish, e - 1)
    reluish = saturating_rounding_doubling_high_mul_int16(reluish, p["reluish_multiplier_fixedpoint_int16"])
    if e > 0:
        reluish = saturating_left_shift_int16(reluish, 1)
    if e < 0:
        reluish = rounding_divide_by_pot(reluish, -e)
    reluish = wrap_int16((reluish + (1 << 15)) >> 1)
    pre = saturating_doubling_high_mul_int16(reluish, preshift_out)
    out = wrap_int16(rounding_divide_by_pot(pre, -p["output_multiplier_exponent"]) + p["output_zero_point"])
    return np.clip(out, qmin, qmax)


def relu_params(in_t, out_t, dtype) -> dict:
    m, s = quantize_multiplier(float(scale_of(in_t)) / float(scale_of(out_t)))
    info = np.iinfo(dtype)
    zp_out = zero_point_of(out_t)
    qmin = max(int(info.min), zp_out + int(round_half_away_array(np.float32(0.0) / np.float32(scale_of(out_t)))))
    return dict(m=m, s=s, in_off=zero_point_of(in_t), out_off=zp_out, qmin=qmin, qmax=int(info.max))


def relu_quantized(x: np.ndarray, p: dict) -> np.ndarray:
    v = multiply_by_quantized_multiplier(np.asarray(x, np.int64) - p["in_off"], p["m"], p["s"])
    return np.clip(p["out_off"] + v, p["qmin"], p["qmax"])


def float_to_quantized_type(value: float, scale: float, zero_point: int, dtype) -> int:
    """FloatToQuantizedType: round(value / scale) + zero_point, clamped to dtype."""
    q = float(round_half_away_array(np.float32(value) / np.float32(scale))) + zero_point
    info = np.iinfo(dtype)
    return int(min(max(int(q), int(info.min)), int(info.max)))


def leaky_relu_params(in_t, out_t, alpha: float) -> dict:
    # Both rescalings are computed in double in the oracle build (a float32 quotient differs
    # in the last bits of the multiplier and shows up as off-by-one outputs).
    alpha_m = float(scale_of(in_t)) * float(np.float32(alpha)) / float(scale_of(out_t))
    ident_m = float(scale_of(in_t)) / float(scale_of(out_t))
    ma, sa = quantize_multiplier(alpha_m)
    mi, si = quantize_multiplier(ident_m)
    return dict(in_off=zero_point_of(in_t), out_off=zero_point_of(out_t), ma=ma, sa=sa, mi=mi, si=si)


def leaky_relu_quantized(x: np.ndarray, p: dict, dtype) -> np.ndarray:
    v = np.asarray(x, np.int64) - p["in_off"]
    ident = multiply_by_quantized_multiplier(v, p["mi"], p["si"])
    # The multiplier is used as is, negative when alpha < 0 (what the oracle build does; newer
    # TFLM sources negate a positive product instead, which rounds ties the other way).
    scaled = multiply_by_quantized_multiplier(v, p["ma"], p["sa"])
    out = p["out_off"] + np.where(v >= 0, ident, scaled)
    info = np.iinfo(dtype)
    return np.clip(out, int(info.min), int(info.max))


# --------------------------------------------------------------------------- pure math (float)

def logistic_float(x: np.ndarray, exp: Callable[[np.ndarray], np.ndarray] = expf) -> np.ndarray:
    """reference_ops::Logistic (float): 1 above 16.619..., exp(x) below -9, 1 / (1 + exp(-x))
    between, in float32. `exp` is TFLM's std::exp(float), the C library's expf, unless the
    caller passes another (the LOGISTIC kernel: see its prepare)."""
    x = np.asarray(x, np.float32)
    one = np.float32(1.0)
    upper = x > np.float32(16.619047164916992188)
    lower = x < np.float32(-9.0)
    e = exp(np.where(lower, x, -x))
    mid = one / (one + e)
    return np.where(upper, one, np.where(lower, e, mid)).astype(np.float32)


def hard_swish_float(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32)
    f32 = np.float32
    return x * np.minimum(f32(6), np.maximum(f32(0), x + f32(3))) / f32(6)


# --------------------------------------------------------------------------- kernels

def _prepare_io(ctx: KernelContext, node: Node) -> tuple:
    """(op data, input, output, input type): input and output of one type and size, the
    output's quantization usable."""
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    if i.dtype != o.dtype:
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in type")
    if int(np.prod(i.shape)) != int(np.prod(o.shape)):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in size")
    if np.dtype(i.dtype) in (np.int8, np.int16):
        check_quantized(node, o, "output")
    return node.user_data, i, o, np.dtype(i.dtype)


def _lut(fn) -> np.ndarray:
    """fn evaluated on every int8 value once; invoke looks the result up by the raw byte."""
    return np.asarray(fn(int8_domain())).astype(np.int8)


def int16_sigmoid_params(node, i, o, tanh: bool) -> tuple[int, int]:
    """LogisticPrepare / TanhPrepare for int16: (input multiplier, input left shift). Zero
    points 0 and an output scale of 2^-15 are required; a power-of-two input scale of 2^-12
    (tanh: or 2^-11) takes the exact path (multiplier 0), any other is rescaled to 1/(3*4096)."""
    if zero_point_of(i) != 0 or zero_point_of(o) != 0:
        raise kernel_error(node, f"int16 input {tensor_desc(i)} and output {tensor_desc(o)} need zero point 0 "
                         "(TFLM: params.zero_point == 0 was not true)")
    out_log2, out_pot = checked_log2_pot(scale_of(o))
    if not out_pot or out_log2 != -15:
        raise kernel_error(node, f"int16 output {tensor_desc(o)} needs scale 2^-15, got {scale_of(o)!r} (TFLM: "
                         "output_scale_log2_rounded != -kOutputFractionalBits)")
    in_log2, pot = checked_log2_pot(scale_of(i))
    left_shift = 12 + in_log2
    if pot and left_shift in ((0, 1) if tanh else (0,)):
        return 0, left_shift
    multiplier = float(np.float32(scale_of(i))) * 4096.0 * 3.0
    left_shift = 0
    while multiplier <= 32767.0 / 2.0 and left_shift <= 30:
        left_shift += 1
        multiplier *= 2.0
    if not multiplier <= 32767.0:
        raise kernel_error(node, f"int16 input {tensor_desc(i)} scale {scale_of(i)!r} is too large: the input "
                         f"multiplier {multiplier:g} does not fit 15 bits (TFLM only DCHECKs it)")
    return int(multiplier), left_shift


def _int16_lut(fn) -> np.ndarray:
    """fn evaluated on every int16 value once; invoke looks the result up by the raw 16 bits."""
    return np.ascontiguousarray(np.asarray(fn(int16_domain())).astype(np.int16))


def _sigmoid_like_prepare(tanh: bool):
    """LogisticPrepare (LOGISTIC) or TanhPrepare (TANH, `tanh`)."""
    if tanh:
        float_fn, int8_fn, int16_fn = tanhf, tanh_int8, tanh_int16
    else:
        float_fn = logistic_float              # with the C library's expf, as TFLM
        int8_fn, int16_fn = logistic_int8, logistic_int16

    def prepare(ctx: KernelContext, node: Node):
        data, i, o, dt = _prepare_io(ctx, node)
        if dt == np.float32:
            data.kind, data.fn = "float", float_fn
        elif dt == np.int8:
            if not tanh and zero_point_of(o) != -128:
                raise kernel_error(node, f"output {tensor_desc(o)} zero point is {zero_point_of(o)}, must be -128")
            zp, sc = zero_point_of(i), scale_of(i)
            data.kind, data.lut = "lut8", _lut(lambda v: int8_fn(v, zp, sc))
        elif dt == np.int16:
            m, s = int16_sigmoid_params(node, i, o, tanh=tanh)
            data.kind, data.lut = "lut16", _int16_lut(lambda v: int16_fn(v, m, s))
        else:
            raise kernel_error(node, f"input {tensor_desc(i)}: Input {type_name(dt)}, output {type_name(o.dtype)} "
                                     "not supported.")
    return prepare


def _set_integer_fn(data: UnaryData, dt: np.dtype, fn) -> None:
    """int8: `fn` tabulated over the 256 inputs (invoke looks it up); int16: `fn` itself."""
    if dt == np.int8:
        data.kind, data.lut = "lut8", _lut(fn)
    else:
        data.kind, data.fn = "int16", fn


def _prepare_relu(ctx: KernelContext, node: Node):
    data, i, o, dt = _prepare_io(ctx, node)
    if dt == np.float32:
        data.kind, data.fn = "float", lambda x: np.maximum(x, np.float32(0))
    elif dt in (np.int8, np.int16):
        if dt == np.int16 and (zero_point_of(i) != 0 or zero_point_of(o) != 0):
            raise kernel_error(node, "int16 RELU needs zero points of 0")
        p = relu_params(i, o, dt)
        check_left_shift(node, p["s"], "input / output scale")
        _set_integer_fn(data, dt, lambda x: relu_quantized(x, p))
    else:
        raise kernel_error(node, f"input {tensor_desc(i)}: Only float32/int8/int16 is supported currently, got {type_name(dt)}")


def _prepare_relu6(ctx: KernelContext, node: Node):
    data, i, o, dt = _prepare_io(ctx, node)
    if dt == np.float32:
        f0, f6 = np.float32(0), np.float32(6)
        data.kind, data.fn = "float", lambda x: np.where(x > f6, f6, np.where(x < f0, f0, x))
    elif dt in (np.int8, np.int16):
        zero = zero_point_of(i)
        check_quantized(node, i, "input")        # 6.0 is quantized with the input's scale
        if abs(6.0 / scale_of(i)) >= 2.0 ** 31:
            raise kernel_error(node, f"input {tensor_desc(i)} scale {scale_of(i)!r} puts 6.0 outside int32: TFLM's "
                             "FloatToQuantizedType would convert an out-of-range float (undefined in C++)")
        six = float_to_quantized_type(6.0, scale_of(i), zero, dt)
        _set_integer_fn(data, dt, lambda x: np.where(x > six, six, np.where(x < zero, zero, x)))
    else:
        raise kernel_error(node, f"input {tensor_desc(i)}: Only float32/int8/int16 is supported currently, got {type_name(dt)}")


def _prepare_leaky_relu(ctx: KernelContext, node: Node):
    data, i, o, dt = _prepare_io(ctx, node)
    alpha = float(np.float32(node.options.get("alpha", 0.0)))
    if dt == np.float32:
        a = np.float32(alpha)
        data.kind, data.fn = "float", lambda x: np.where(x > 0, x, x * a)
    elif dt in (np.int8, np.int16):
        if not np.isfinite(np.float32(alpha)):
            raise kernel_error(node, f"alpha {alpha!r} is not finite")
        p = leaky_relu_params(i, o, alpha)
        check_left_shift(node, [p["sa"], p["si"]], "input / output scale")
        _set_integer_fn(data, dt, lambda x: leaky_relu_quantized(x, p, dt))
    else:
        raise kernel_error(node, f"input {tensor_desc(i)}: Only float32, int8 are supported by LEAKY_RELU, got {type_name(dt)}.")


def _prepare_hard_swish(ctx: KernelContext, node: Node):
    data, i, o, dt = _prepare_io(ctx, node)
    if dt == np.float32:
        data.kind, data.fn = "float", hard_swish_float
    elif dt == np.int8:
        with np.errstate(all="ignore"):       # the float32 ratios of HardSwishPrepare
            hires = np.float32(1.0 / 128.0) * np.float32(scale_of(i))
            ratios = (hires / np.float32(scale_of(o)), hires / (np.float32(3.0) / np.float32(32768.0)))
        if not all(np.isfinite(r) for r in ratios):
            raise kernel_error(node, f"input {tensor_desc(i)} / output {tensor_desc(o)} scales give the float32 "
                             f"multipliers {ratios[0]!r} and {ratios[1]!r}: TFLM's HardSwishPrepare would "
                             "convert an infinite or zero multiplier (undefined)")
        p = hard_swish_params(scale_of(i), zero_point_of(i), scale_of(o), zero_point_of(o))
        check_left_shift(node, p["reluish_multiplier_exponent"], "input scale")
        if p["output_multiplier_exponent"] > 0:
            raise kernel_error(node, f"output {tensor_desc(o)}: output multiplier exponent "
                             f"{p['output_multiplier_exponent']} > 0")
        data.params = p
        data.kind, data.lut = "lut8", _lut(lambda v: hard_swish_int(v, p))
    else:
        raise kernel_error(node, f"input {tensor_desc(i)}: Unsupported type {type_name(dt)}")


def _reg(name, prepare, struct_name, *, temps: TempRule) -> Registration:
    return Registration(invoke=unary_invoke, prepare=prepare, init=op_data_init(struct_name, UnaryData), name=name,
                        temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("LOGISTIC", _reg("LOGISTIC", _sigmoid_like_prepare(tanh=False), "OpDataLogistic", temps="i0 o0"), 3),
    ("TANH", _reg("TANH", _sigmoid_like_prepare(tanh=True), "OpDataTanh", temps="i0 | i0 o0"), 3),
    ("RELU", _reg("RELU", _prepare_relu, "ReluOpData", temps="i0 o0"), 3),
    ("RELU6", _reg("RELU6", _prepare_relu6, "Relu6OpData", temps="i0"), 3),
    ("LEAKY_RELU", _reg("LEAKY_RELU", _prepare_leaky_relu, "LeakyReluOpData", temps="i0 o0"), 2),
    ("HARD_SWISH", _reg("HARD_SWISH", _prepare_hard_swish, "HardSwishParams", temps="i0 o0"), 1),
]
