"""SOFTMAX: TFLM's reference kernel (softmax.cc / softmax_common.cc, reference_ops::Softmax).

int8 input (int8 or int16 output): gemmlowp fixed point, as TFLM does: input_diff = x - max,
rescaled by PreprocessSoftmaxScaling's multiplier into Q5.26, exp_on_negative_values, sums
in Q12.19, GetReciprocal, and a rounding shift into the output type. Differences below
diff_min give the output minimum. An int8 difference takes only 256 values, so prepare
evaluates the gemmlowp exp once per difference and invoke only looks them up.
int16 input: TFLM's LUT path (exp and 1/(1+x) tables, 513 entries each) — implemented.
float32: max, std::exp((x - max) * beta) in float32, sequential float32 sum, divide.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .fixedpoint import (count_leading_zeros_u32, exp_on_negative_values, get_reciprocal,
                         multiply_by_quantized_multiplier, round_half_away, rounding_divide_by_pot,
                         saturating_rounding_doubling_high_mul, wrap_int32)
from .kernel_util import check_quantized, kernel_error, scale_of, tensor_name, zero_point_of
from .libm import expf
from .quant import calculate_input_radius, preprocess_softmax_scaling, quantize_multiplier

K_SCALED_DIFF_INTEGER_BITS = 5
K_ACCUMULATION_INTEGER_BITS = 12
K_INT16_LUT_ARRAY_SIZE = 513


@dataclass
class SoftmaxParams:
    kind: str = ""
    out_kind: str = ""
    beta: float = 1.0
    input_multiplier: int = 0
    input_left_shift: int = 0
    diff_min: int = 0
    exp_table: Any = None      # int8: Q0.31 exp per -diff (0..255), -1 where diff < diff_min
    sum_table: Any = None      # int8: Rescale<12>(exp) per -diff, 0 where diff < diff_min
    exp_list: Any = None       # the two tables as Python lists (the small-row path)
    exp_clamped: Any = None    # max(exp_table, 0)
    sum_list: Any = None
    exp_lut: Any = None        # int16 LUTs
    one_over_one_plus_x_lut: Any = None
    zero_point: int = 0
    scale: float = 0.0


softmax_init = op_data_init("SoftmaxParams", SoftmaxParams)


def softmax_prepare(ctx: KernelContext, node: Node) -> None:
    data: SoftmaxParams = node.user_data
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 1 input and 1 output")
    inp = ctx.required_input(node, 0)
    out = ctx.output(node, 0)
    if len(inp.shape) < 1:
        raise kernel_error(node, f"input {tensor_name(inp)} must have at least 1 dimension")
    if tuple(inp.shape) != tuple(out.shape):
        raise kernel_error(node, f"output {tensor_name(out)} shape {list(out.shape)} differs from input "
                                 f"{tensor_name(inp)} shape {list(inp.shape)}")
    it, ot = np.dtype(inp.dtype), np.dtype(out.dtype)
    beta = float(np.float32(node.options.get("beta", 1.0)))
    if it == np.int16:
        ctx.allocate_persistent(2 * K_INT16_LUT_ARRAY_SIZE)
        ctx.allocate_persistent(2 * K_INT16_LUT_ARRAY_SIZE)
    if ot == np.int16:
        if it not in (np.int8, np.int16):
            raise kernel_error(node, f"int16 output {tensor_name(out)} needs int8 or int16 input")
    elif it != ot:
        raise kernel_error(node, f"input {tensor_name(inp)} is {it.name} but output {tensor_name(out)} is {ot.name}")
    data.kind, data.out_kind, data.beta = it.name, ot.name, beta
    if it == np.int16:
        _prepare_int16(node, data, inp, out, beta)
    elif it == np.int8:
        _prepare_int8(node, data, inp, out, beta)
    elif it != np.float32:
        raise kernel_error(node, f"input {tensor_name(inp)} has unsupported type {it.name}")


def _check_quantized_output(node, out, beta: float) -> None:
    check_quantized(node, out, "output")
    if not math.isfinite(beta) or beta <= 0:
        raise kernel_error(node, f"beta {beta!r} must be positive and finite for a quantized softmax")


def _prepare_int16(node, data: SoftmaxParams, inp, out, beta: float) -> None:
    """SoftmaxPrepare for int16: the exp and 1/(1+x) tables, the input multiplier."""
    if zero_point_of(out) != 0:
        raise kernel_error(node, f"int16 output {tensor_name(out)} needs zero point 0")
    data.exp_lut, data.one_over_one_plus_x_lut = int16_softmax_luts()
    data.zero_point, data.scale = zero_point_of(out), scale_of(out)
    _check_quantized_output(node, out, beta)
    if abs(scale_of(out) - 1.0 / 32768) > 0.001 / 32768:
        raise kernel_error(node, f"int16 output {tensor_name(out)} scale must be 1/32768")
    data.input_multiplier, data.input_left_shift = int16_softmax_multiplier(scale_of(inp), beta)


def int16_softmax_luts() -> tuple[np.ndarray, np.ndarray]:
    """The int16 softmax's two 513-entry tables (TFLM's gen_lut): exp on [-10, 0] and
    1 / (1 + x) on [0, 1]; the C kernel's glue places the same bytes."""
    return (_gen_lut(lambda v: np.float32(math.exp(float(np.float32(v)))), -10.0, 0.0),
            _gen_lut(lambda v: np.float32(1.0) / (np.float32(1.0) + v), 0.0, 1.0))


def int16_softmax_multiplier(input_scale: float, beta: float) -> tuple[int, int]:
    """QuantizeMultiplier(input scale * beta / (10 / 65535)): the int16 softmax's input scaling."""
    return quantize_multiplier(float(np.float32(input_scale)) * beta / (10.0 / 65535.0))


def _prepare_int8(node, data: SoftmaxParams, inp, out, beta: float) -> None:
    """SoftmaxPrepare for int8 input (int8 or int16 output): the output's fixed quantization,
    the input multiplier (PreprocessSoftmaxScaling), diff_min and the exp tables."""
    ot = np.dtype(out.dtype)
    _check_quantized_output(node, out, beta)
    if ot == np.int16:
        if zero_point_of(out) != -32768 or abs(scale_of(out) - 1.0 / 65536) > 0.001 / 65536:
            raise kernel_error(node, f"output {tensor_name(out)} must have zero point -32768 and scale 1/65536")
    elif ot == np.int8:
        if zero_point_of(out) != -128 or np.float32(scale_of(out)) != np.float32(1.0 / 256):
            raise kernel_error(node, f"output {tensor_name(out)} must have zero point -128 and scale 1/256")
    else:
        raise kernel_error(node, f"output {tensor_name(out)} has unsupported type {ot.name}")
    real = beta * float(np.float32(scale_of(inp))) * float(1 << (31 - K_SCALED_DIFF_INTEGER_BITS))
    if not real > 1.0:
        raise kernel_error(node, f"input {tensor_name(inp)} scale x beta is too small: the softmax input "
                                 f"multiplier {real:g} is not above 1 (TFLM's "
                                 "QuantizeMultiplierGreaterThanOne aborts: "
                                 "TFLITE_CHECK_GT(double_multiplier, 1.))")
    m, s = preprocess_softmax_scaling(beta, float(np.float32(scale_of(inp))),
                                      K_SCALED_DIFF_INTEGER_BITS)
    data.input_multiplier, data.input_left_shift = m, s
    data.diff_min = -calculate_input_radius(K_SCALED_DIFF_INTEGER_BITS, s)
    _build_int8_tables(data)


def _build_int8_tables(data: SoftmaxParams) -> None:
    diffs = -np.arange(256, dtype=np.int64)                    # input_diff = x - max
    valid = diffs >= data.diff_min
    scaled = wrap_int32(diffs << data.input_left_shift)
    rescaled = saturating_rounding_doubling_high_mul(scaled, data.input_multiplier)
    exp_q0 = exp_on_negative_values(rescaled, K_SCALED_DIFF_INTEGER_BITS)
    # Rescale<kAccumulationIntegerBits>: Q0.31 -> Q12.19, a rounding shift right by 12.
    sum_term = rounding_divide_by_pot(exp_q0, K_ACCUMULATION_INTEGER_BITS)
    data.exp_table = np.where(valid, exp_q0, -1).astype(np.int64)
    data.sum_table = np.where(valid, sum_term, 0).astype(np.int64)
    data.exp_list, data.sum_list = data.exp_table.tolist(), data.sum_table.tolist()
    data.exp_clamped = np.maximum(data.exp_table, 0)


def softmax_invoke(ctx: KernelContext, node: Node) -> None:
    data: SoftmaxParams = node.user_data
    x = ctx.required_input(node, 0).data
    out = ctx.output(node, 0)
    depth = x.shape[-1]
    x2 = x.reshape(-1, depth)
    if data.kind == "float32":
        mx = x2.max(axis=1, keepdims=True)
        arg = (x2 - mx) * np.float32(data.beta)                    # float32 ops
        e = expf(arg)                                              # std::exp(float)
        total = np.add.accumulate(e, axis=1, dtype=np.float32)[:, -1:]
        out.data[...] = (e / total).reshape(out.data.shape)
        return
    if data.kind == "int8":
        out.data[...] = _softmax_int8(data, x2).reshape(out.data.shape)
        return
    out.data[...] = _softmax_int16(data, x2).reshape(out.data.shape)


# --------------------------------------------------------------------------- small int8 rows
# The same gemmlowp arithmetic on Python ints, for a few values (numpy's per-call cost is
# far above the arithmetic there): each helper is the scalar form of its fixedpoint.py namesake.

_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1
_SMALL_SOFTMAX = 64          # elements up to which invoke uses the Python-int path


def _wrap32(v: int) -> int:
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _srdhm(a: int, b: int) -> int:
    if a == b == _I32_MIN:
        return _I32_MAX
    total = a * b + ((1 << 30) if a * b >= 0 else 1 - (1 << 30))
    return total >> 31 if total >= 0 else -((-total) >> 31)


def _rdbpot(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    return (x >> exponent) + ((x & mask) > (mask >> 1) + (x < 0))


def _srmbpot(x: int, exponent: int) -> int:
    if exponent == 0:
        return x
    if exponent < 0:
        return _rdbpot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    if x > threshold:
        return _I32_MAX
    if x < -threshold:
        return _I32_MIN
    return _wrap32(x << exponent)


def _reciprocal(x: int, x_integer_digits: int) -> tuple[int, int]:
    """quant.get_reciprocal for one value."""
    xu = x & 0xFFFFFFFF
    headroom_plus_one = 32 - xu.bit_length()
    a = _wrap32(((xu << headroom_plus_one) & 0xFFFFFFFF) - (1 << 31))
    s = a + _I32_MAX                                  # rounding_half_sum(a, INT32_MAX)
    s += 1 if s >= 0 else -1
    half_denominator = s // 2 if s >= 0 else -((-s) // 2)
    r = _wrap32(1515870810 + _srdhm(half_denominator, -1010580540))
    for _ in range(3):
        one_minus = _wrap32((1 << 29) - _srdhm(half_denominator, r))
        r = _wrap32(r + _srmbpot(_srdhm(r, one_minus), 2))
    return _srmbpot(r, 1), x_integer_digits - headroom_plus_one


def _softmax_int8_small(data: SoftmaxParams, x2: np.ndarray, out_bits: int):
    """_softmax_int8 on Python ints; None where a shift would be negative (numpy path)."""
    lo, hi = (-128, 127) if out_bits == 8 else (-32768, 32767)
    exp_t, sum_t = data.exp_list, data.sum_list
    res = []
    for row in x2.tolist():
        mx = max(row)
        idx = [mx - v for v in row]
        scale, bits = _reciprocal(_wrap32(sum(sum_t[i] for i in idx)), K_ACCUMULATION_INTEGER_BITS)
        shift = bits + 31 - out_bits
        if shift < 0:
            return None
        for i in idx:
            e = exp_t[i]
            if e < 0:
                res.append(lo)
            else:
                res.append(min(max(_rdbpot(_srdhm(scale, e), shift) + lo, lo), hi))
    return res


def _softmax_int8(data: SoftmaxParams, x2: np.ndarray) -> np.ndarray:
    if x2.size <= _SMALL_SOFTMAX:
        res = _softmax_int8_small(data, x2, 8 if data.out_kind == "int8" else 16)
        if res is not None:
            return np.array(res, np.int64).reshape(x2.shape)
    return _softmax_int8_numpy(data, x2)


def _softmax_int8_numpy(data: SoftmaxParams, x2: np.ndarray) -> np.ndarray:
    xi = x2.astype(np.int64)
    mx = xi.max(axis=1, keepdims=True)
    idx = mx - xi                                               # 0..255
    sums = data.sum_table[idx].sum(axis=1, keepdims=True)
    sums = wrap_int32(sums)
    if sums.shape[0] <= 256:        # one reciprocal per row: Python ints beat numpy here
        pairs = [_reciprocal(v, K_ACCUMULATION_INTEGER_BITS) for v in sums.ravel().tolist()]
        shifted_scale = np.array([p[0] for p in pairs], np.int64).reshape(sums.shape)
        num_bits_over_unit = np.array([p[1] for p in pairs], np.int64).reshape(sums.shape)
    else:
        shifted_scale, num_bits_over_unit = get_reciprocal(sums, K_ACCUMULATION_INTEGER_BITS)
    out_bits = 8 if data.out_kind == "int8" else 16
    shift = num_bits_over_unit + (31 - out_bits)
    if int(shifted_scale.min(initial=0)) >= 0 and int(shift.min(initial=0)) >= 0:
        # Both factors are >= 0 (the table holds max(exp, 0); its -1 entries give 0 and then
        # the output minimum, as the where below): SaturatingRoundingDoublingHighMul is
        # (a*b + 2^30) >> 31 and RoundingDivideByPOT(x >= 0, e) is (x + 2^(e-1)) >> e.
        lo = -128 if out_bits == 8 else -32768
        prod = data.exp_clamped[idx]
        prod *= shifted_scale
        prod += 1 << 30
        prod >>= 31
        prod += (np.int64(1) << shift) >> 1
        prod >>= shift
        prod += lo
        return np.minimum(prod, -lo - 1, out=prod)
    exp = data.exp_table[idx]
    info = np.iinfo(np.int8 if out_bits == 8 else np.int16)
    prod = saturating_rounding_doubling_high_mul(shifted_scale, np.maximum(exp, 0))
    unsat = rounding_divide_by_pot(prod, num_bits_over_unit + 31 - out_bits)
    res = np.clip(unsat + info.min, info.min, info.max)
    return np.where(exp < 0, info.min, res)


# ----------------------------------------------------------------------------- int16 (LUT)

def _gen_lut(func, input_min: float, input_max: float) -> np.ndarray:
    """gen_lut<float, int16_t, int16_t>(func, min, max, -1.0, 1.0, table), num = 513."""
    f32 = np.float32
    num = K_INT16_LUT_ARRAY_SIZE
    step = (f32(input_max) - f32(input_min)) / f32(num - 1)
    half_step = step / f32(2.0)
    table = np.zeros(num, dtype=np.float32)
    for i in range(num - 1):
        sample_val = _round_f32(f32(func(f32(input_min) + f32(i) * step)) * f32(32768.0))
        midpoint_interp_val = _round_f32(
            (f32(func(f32(input_min) + f32(i + 1) * step)) * f32(32768.0)
             + _round_f32(f32(func(f32(input_min) + f32(i) * step)) * f32(32768.0))) / f32(2.0))
        midpoint_val = _round_f32(f32(func(f32(input_min) + f32(i) * step + half_step)) * f32(32768.0))
        midpoint_err = midpoint_interp_val - midpoint_val
        bias = _round_f32(midpoint_err / f32(2.0))
        table[i] = min(max(sample_val - bias, f32(-32768.0)), f32(32767.0))
    table[num - 1] = min(max(_round_f32(f32(func(f32(input_max))) * f32(32768.0)), f32(-32768.0)),
                         f32(32767.0))
    return table.astype(np.int16)


def _round_f32(v) -> np.float32:
    """roundf on one float32 value."""
    return np.float32(round_half_away(float(np.float32(v))))


def _lut_lookup(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """generic_int16_table_lookup on int16 values (held in int64): linear interpolation."""
    value = np.asarray(value, dtype=np.int64)
    index = 256 + (value >> 7)
    offset = value & 0x7F
    base = lut[index].astype(np.int64)
    slope = ((lut[index + 1].astype(np.int64) - base + 32768) & 0xFFFF) - 32768   # int16
    delta = (slope * offset + 64) >> 7
    return ((base + delta + 32768) & 0xFFFF) - 32768                               # int16


def _softmax_int16(data: SoftmaxParams, x2: np.ndarray) -> np.ndarray:
    """reference_ops::SoftmaxInt16 (LUT based)."""
    xi = x2.astype(np.int64)
    mx = xi.max(axis=1, keepdims=True)
    scaled = multiply_by_quantized_multiplier(xi - mx, data.input_multiplier, data.input_left_shift)
    sym = np.clip(scaled + 32767, -32768, 32767)
    exp_results = _lut_lookup(sym, data.exp_lut)
    sum_of_exps = wrap_int32(exp_results.sum(axis=1, keepdims=True))
    headroom_plus_one = count_leading_zeros_u32(sum_of_exps)
    shifted_sum = ((sum_of_exps << (headroom_plus_one - 1)) + (1 << 13)) >> 14
    sym_shifted_sum = np.clip(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767)
    reciprocal_scale_q015 = _lut_lookup(sym_shifted_sum, data.one_over_one_plus_x_lut)
    right_shift = 31 - headroom_plus_one
    result = (exp_results * reciprocal_scale_q015 + (np.int64(1) << (right_shift - 1))) >> right_shift
    return np.clip(result, -32768, 32767)


SOFTMAX = Registration(invoke=softmax_invoke, prepare=softmax_prepare, init=softmax_init,
                       name="SOFTMAX",
                       temps="i0 o0", persistent_after_temps=True)

BUILTINS = [("SOFTMAX", SOFTMAX, 3)]
