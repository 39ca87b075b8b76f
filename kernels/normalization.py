"""LOG_SOFTMAX and L2_NORMALIZATION: TFLM's reference kernels (log_softmax.cc, l2norm.cc;
reference_ops LogSoftmax / LogSoftmaxQuantized, L2Normalization and
reference_integer_ops::L2Normalization), over the last dimension.

LOG_SOFTMAX float32: the row's max (NaN never wins: std::max(max, x) from the lowest float),
the float32 sum of expf(x - max) from 0.0f in order (the C library's expf), then
(x - max) - logf(sum). int8 (output scale 16/256, zero point 127): gemmlowp fixed point as
TFLM: differences from the row's max rescaled to Q5.26, exp summed in Q12.19,
log_x_for_x_greater_than_or_equal_to_1 into Q5.26, (diff - log_sum) / 2^22 + 127; differences
at or below max(diff_min - 1, log_sum - 32 in input units) give -128.
L2_NORMALIZATION float32: x / max(sqrtf(sum of squares from 0.0f), 1e-6f). int8: the int32
sum of (x - zp)^2, GetInvSqrtQuantizedMultiplierExp, each (x - zp) requantized by it with 7
more bits (output scale 1/128, zero point 0, whatever the output tensor says).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .fixedpoint import (INT32_MAX, INT32_MIN, count_leading_zeros_u32, exp_on_negative_values,
                         multiply_by_quantized_multiplier, one_over_one_plus_x_for_x_in_0_1, rounding_divide_by_pot,
                         rounding_half_sum, saturating_rounding_doubling_high_mul, saturating_rounding_multiply_by_pot,
                         wrap_int32)
from .kernel_util import activation_of, kernel_error, scale_of, tensor_name, type_name, zero_point_of
from .libm import expf, logf
from .quant import calculate_input_radius, preprocess_softmax_scaling, quantize_multiplier_smaller_than_one_exp
from .reduce import first_zero_sign

LOG_SOFTMAX_OUTPUT_SCALE = np.float32(16.0 / 256)
LOG_SOFTMAX_OUTPUT_ZERO_POINT = 127
_SCALED_DIFF_INTEGER_BITS = 5
_ACCUMULATION_INTEGER_BITS = 12
_OUTPUT_INTEGER_BITS = 4
L2NORM_EPSILON = np.float32(1e-6)
_F32_LOWEST = np.float32(np.finfo(np.float32).min)


def _rows(node, inp, out):
    """(outer, depth) of a last-axis op, the output checked to have the input's shape and type."""
    if np.dtype(inp.dtype) != np.dtype(out.dtype):
        raise kernel_error(node, f"input {tensor_name(inp)} is {type_name(inp.dtype)} but output "
                                 f"{tensor_name(out)} is {type_name(out.dtype)}")
    if tuple(inp.shape) != tuple(out.shape):
        raise kernel_error(node, f"output {tensor_name(out)} shape {list(out.shape)} differs from input "
                                 f"{tensor_name(inp)} shape {list(inp.shape)}")
    if len(inp.shape) < 1:
        raise kernel_error(node, f"input {tensor_name(inp)} must have at least one dimension")
    depth = int(inp.shape[-1])
    return (int(np.prod(inp.shape)) // depth if depth else 0), depth


def _one_in_one_out(ctx: KernelContext, node: Node):
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 1 input and 1 output")
    inp = ctx.input(node, 0)
    if inp is None:
        raise kernel_error(node, "input 0 is absent")
    return inp, ctx.output(node, 0)


# --------------------------------------------------------------------------- gemmlowp pieces

def sat_mul_pot_param(x: np.ndarray, exponent) -> np.ndarray:
    """TFLM's SaturatingRoundingMultiplyByPOTParam for exponents >= 0 (per element)."""
    x = np.asarray(x, np.int64)
    exponent = np.asarray(exponent, np.int64)
    threshold = (np.int64(1) << (31 - exponent)) - 1
    shifted = wrap_int32(x << exponent)
    res = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))
    return np.where(exponent == 0, x, res)


def _saturating(v: np.ndarray) -> np.ndarray:
    return np.clip(v, INT32_MIN, INT32_MAX)


def log_x_for_x_greater_than_or_equal_to_1(raw: np.ndarray, input_integer_bits: int,
                                           output_integer_bits: int) -> np.ndarray:
    """TFLM's log_x_for_x_greater_than_or_equal_to_1_impl: ln of FixedPoint<input_integer_bits>
    raws, as FixedPoint<output_integer_bits> raws (Q0.31 polynomial on a power-of-two split)."""
    mul = saturating_rounding_doubling_high_mul
    accum_bits = output_integer_bits + 1
    log_2, sqrt_sqrt_half, sqrt_half = 1488522236, 1805811301, 1518500250
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    shifted_quarter = int(saturating_rounding_multiply_by_pot(np.asarray(536870912, np.int64), -accum_bits))
    z_a = np.asarray(raw, np.int64)
    z_a_headroom_plus_1 = count_leading_zeros_u32(z_a)
    r_a_tmp = sat_mul_pot_param(z_a, z_a_headroom_plus_1 - 1)
    r_a_raw = sat_mul_pot_param(mul(r_a_tmp, sqrt_half), 1)
    z_a_pow_2_adj = _saturating(sat_mul_pot_param(input_integer_bits - z_a_headroom_plus_1, 31 - accum_bits)
                                + shifted_quarter)
    z_b = mul(z_a, sqrt_half)
    z_b_headroom = count_leading_zeros_u32(z_b) - 1
    r_b_raw = sat_mul_pot_param(z_a, z_b_headroom)
    z_b_pow_2_adj = _saturating(sat_mul_pot_param(input_integer_bits - z_b_headroom, 31 - accum_bits)
                                - shifted_quarter)
    r = np.minimum(r_a_raw, r_b_raw)
    z_pow_2_adj = np.maximum(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, sqrt_sqrt_half)
    q = wrap_int32(r - sqrt_sqrt_half)
    q = wrap_int32(q + q)
    common_sq = mul(q, q)
    num = wrap_int32(mul(q, r) + mul(mul(q, common_sq), alpha_n))
    denom_minus_one_0 = wrap_int32(mul(p, wrap_int32(wrap_int32(alpha_i + q) + mul(alpha_d, common_sq)))
                                   + mul(alpha_f, q))
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one_0)
    num_scaled = saturating_rounding_multiply_by_pot(num, -accum_bits)
    total = wrap_int32(mul(z_pow_2_adj, log_2) + mul(num_scaled, recip_denom))
    return saturating_rounding_multiply_by_pot(total, accum_bits - output_integer_bits)


def inv_sqrt_quantized_multiplier_exp(value: int, reverse_shift: int) -> tuple[int, int]:
    """TFLM's GetInvSqrtQuantizedMultiplierExp for one non-negative int32: (multiplier, shift)
    with 1/sqrt(value) = multiplier * 2^(shift - 31) for reverse_shift -1."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= (1 << 29):
        value //= 4
        shift += 1
    left_shift_bit_pairs = (int(count_leading_zeros_u32(np.asarray(value, np.int64))) - 1) // 2 - 1
    shift -= left_shift_bit_pairs
    value <<= 2 * left_shift_bit_pairs
    mul = saturating_rounding_doubling_high_mul
    fixedpoint_input = np.asarray(value >> 1, np.int64)                       # F3
    half_input = saturating_rounding_multiply_by_pot(fixedpoint_input, -1)
    half_three = np.asarray((1 << 28) + (1 << 27), np.int64)
    x = np.asarray(1 << 28, np.int64)                                         # F3 one
    for _ in range(5):
        x3 = saturating_rounding_multiply_by_pot(mul(mul(x, x), x), 6)       # F9 -> F3
        x = saturating_rounding_multiply_by_pot(wrap_int32(mul(half_three, x) - mul(half_input, x3)), 3)
    inv_sqrt = int(mul(x, 1518500250))                                        # * sqrt(2) / 2
    if shift < 0:
        inv_sqrt = int(wrap_int32(np.asarray(inv_sqrt, np.int64) << -shift))
        shift = 0
    return inv_sqrt, shift * reverse_shift


# --------------------------------------------------------------------------- LOG_SOFTMAX

@dataclass
class LogSoftmaxOpData:
    kind: str = ""
    input_multiplier: int = 0
    input_left_shift: int = 0
    reverse_scaling_divisor: int = 0
    reverse_scaling_right_shift: int = 0
    diff_min: int = 0


def log_softmax_prepare(ctx: KernelContext, node: Node) -> None:
    """CalculateOpData: int8 allocates LogSoftmaxOpData here (persistent), not in init."""
    data: LogSoftmaxOpData = node.user_data
    inp, out = _one_in_one_out(ctx, node)
    _rows(node, inp, out)
    it = np.dtype(inp.dtype)
    if it not in (np.float32, np.int8):
        raise kernel_error(node, f"input {tensor_name(inp)}: LOG_SOFTMAX only supports float32, int8, got "
                                 f"{type_name(it)}.")
    data.kind = it.name
    if it != np.int8:
        return
    ctx.allocate_persistent(ctx.target.sizeof("LogSoftmaxOpData"))
    if np.float32(scale_of(out)) != LOG_SOFTMAX_OUTPUT_SCALE or zero_point_of(out) != LOG_SOFTMAX_OUTPUT_ZERO_POINT:
        raise kernel_error(node, f"output {tensor_name(out)} must have scale 16/256 and zero point 127, has "
                                 f"{scale_of(out)!r} and {zero_point_of(out)} (output->params.scale == "
                                 "kOutputScale was not true)")
    in_scale = float(np.float32(scale_of(inp)))
    scaling = log_softmax_scaling(in_scale)
    if scaling is None:
        raise kernel_error(node, f"input {tensor_name(inp)} scale {in_scale!r} is too small for TFLM's "
                                 "PreprocessLogSoftmaxScalingExp (the input multiplier must exceed 2: "
                                 "TFLITE_CHECK_GT(double_multiplier, 1.) and 1 << (31 - left_shift))")
    (data.input_multiplier, data.input_left_shift, data.reverse_scaling_divisor,
     data.reverse_scaling_right_shift, data.diff_min) = scaling


def log_softmax_scaling(in_scale: float):
    """The int8 LogSoftmaxOpData of an input scale (float32 value): (input multiplier, left
    shift, reverse scaling divisor, its right shift, diff_min), None when TFLM's
    PreprocessLogSoftmaxScalingExp check fails (the C kernel's glue packs the same)."""
    try:
        mult, left_shift = preprocess_softmax_scaling(1.0, in_scale, _SCALED_DIFF_INTEGER_BITS)
    except ValueError:
        return None
    if mult == 0 or left_shift < 1:
        return None
    divisor, reverse_left_shift = quantize_multiplier_smaller_than_one_exp((1 << (31 - left_shift)) / mult)
    return (mult, left_shift, divisor, -reverse_left_shift,
            -calculate_input_radius(_SCALED_DIFF_INTEGER_BITS, left_shift))


def log_softmax_f32(x2: np.ndarray) -> np.ndarray:
    """reference_ops::LogSoftmax (float) on (rows, depth)."""
    mx = first_zero_sign(x2, np.fmax.reduce(x2, axis=1, initial=_F32_LOWEST))[:, None]
    diff = x2 - mx
    total = np.add.accumulate(expf(diff), axis=1, dtype=np.float32)[:, -1:] + np.float32(0.0)
    return diff - logf(total)


def log_softmax_int8(data: LogSoftmaxOpData, x2: np.ndarray) -> np.ndarray:
    """reference_ops::LogSoftmaxQuantized<int8_t> on (rows, depth)."""
    diff = x2.astype(np.int64) - x2.max(axis=1, keepdims=True)
    diff_q5 = multiply_by_quantized_multiplier(diff, data.input_multiplier, data.input_left_shift)
    exps = saturating_rounding_multiply_by_pot(exp_on_negative_values(diff_q5, _SCALED_DIFF_INTEGER_BITS),
                                               -_ACCUMULATION_INTEGER_BITS)
    sums = wrap_int32(np.where(diff >= data.diff_min, exps, 0).sum(axis=1, keepdims=True))
    log_sum = log_x_for_x_greater_than_or_equal_to_1(sums, _ACCUMULATION_INTEGER_BITS, _SCALED_DIFF_INTEGER_BITS)
    adjusted = np.maximum(data.diff_min - 1, multiply_by_quantized_multiplier(
        wrap_int32(log_sum + INT32_MIN), data.reverse_scaling_divisor, -data.reverse_scaling_right_shift))
    res = rounding_divide_by_pot(wrap_int32(diff_q5 - log_sum),
                                 31 - _SCALED_DIFF_INTEGER_BITS - _OUTPUT_INTEGER_BITS) + 127
    return np.where(diff > adjusted, np.clip(res, -128, 127), -128)


def log_softmax_invoke(ctx: KernelContext, node: Node) -> None:
    data: LogSoftmaxOpData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    x = np.asarray(inp.data)
    x2 = x.reshape(-1, x.shape[-1]) if x.size else x.reshape(0, 1)
    res = log_softmax_int8(data, x2) if data.kind == "int8" else log_softmax_f32(x2)
    out.data[...] = res.reshape(out.data.shape)


# --------------------------------------------------------------------------- L2_NORMALIZATION

@dataclass
class L2NormData:
    kind: str = ""
    input_zero_point: int = 0


def l2norm_prepare(ctx: KernelContext, node: Node) -> None:
    data: L2NormData = node.user_data
    inp, out = _one_in_one_out(ctx, node)
    if len(inp.shape) > 4:
        raise kernel_error(node, f"input {tensor_name(inp)} has {len(inp.shape)} dimensions, at most 4 "
                                 "(NumDimensions(input) <= 4 was not true)")
    if np.dtype(out.dtype) not in (np.float32, np.int8):
        raise kernel_error(node, f"output {tensor_name(out)} has type {type_name(out.dtype)}: output->type == "
                                 "kTfLiteFloat32 || output->type == kTfLiteInt8 was not true.")
    _rows(node, inp, out)
    if activation_of(node) != "NONE":
        raise kernel_error(node, f"fused activation {activation_of(node)} is not supported "
                                 "(params->activation != kTfLiteActNone)")
    data.kind = np.dtype(inp.dtype).name
    data.input_zero_point = zero_point_of(inp) if data.kind == "int8" else 0


def l2norm_f32(x2: np.ndarray) -> np.ndarray:
    """reference_ops::L2Normalization (float) on (rows, depth)."""
    squares = x2 * x2
    total = np.add.accumulate(squares, axis=1, dtype=np.float32)[:, -1:] + np.float32(0.0) if x2.shape[1] else \
        np.zeros((x2.shape[0], 1), np.float32)
    norm = np.sqrt(total)
    norm = np.where(norm < L2NORM_EPSILON, L2NORM_EPSILON, norm)
    return x2 / norm


def l2norm_int8(zero_point: int, x2: np.ndarray) -> np.ndarray:
    """reference_integer_ops::L2Normalization on (rows, depth)."""
    diff = x2.astype(np.int64) - zero_point
    acc = wrap_int32((diff * diff).sum(axis=1))
    res = np.empty(diff.shape, np.int64)
    for r, value in enumerate(acc.tolist()):
        mult, shift = inv_sqrt_quantized_multiplier_exp(value, -1)
        res[r] = multiply_by_quantized_multiplier(diff[r], mult, shift + 7)
    return np.clip(res, -128, 127)


def l2norm_invoke(ctx: KernelContext, node: Node) -> None:
    data: L2NormData = node.user_data
    inp, out = ctx.required_input(node, 0), ctx.output(node, 0)
    x = np.asarray(inp.data)
    x2 = x.reshape(-1, x.shape[-1]) if x.size else x.reshape(0, 1)
    res = l2norm_int8(data.input_zero_point, x2) if data.kind == "int8" else l2norm_f32(x2)
    out.data[...] = res.reshape(out.data.shape)


LOG_SOFTMAX = Registration(invoke=log_softmax_invoke, prepare=log_softmax_prepare,
                           init=op_data_init(None, LogSoftmaxOpData), name="LOG_SOFTMAX",
                           temps="i0 o0", persistent_after_temps=True)
L2_NORMALIZATION = Registration(invoke=l2norm_invoke, prepare=l2norm_prepare,
                                init=op_data_init("L2NormalizationParams", L2NormData), name="L2_NORMALIZATION",
                                temps="i0 o0")

BUILTINS = [("LOG_SOFTMAX", LOG_SOFTMAX, 2), ("L2_NORMALIZATION", L2_NORMALIZATION, 2)]
