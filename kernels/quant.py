"""TFLM's integer-only arithmetic, vectorised over numpy arrays.

These are the primitives every quantized kernel is built from (TFLM's
`quantization_util.cc` and gemmlowp's fixed-point helpers), written so that each
element gets exactly the int32 result the C code computes. Intermediates are int64
so nothing overflows before the explicit saturation points.
"""
from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """TFLM's QuantizeMultiplier: real = q * 2^(shift - 31), q in [2^30, 2^31)."""
    if real_multiplier == 0.0:
        return 0, 0
    if not math.isfinite(real_multiplier):
        raise ValueError(f"requantization multiplier {real_multiplier} is not finite "
                         "(a quantization scale is 0 or not finite)")
    mantissa, shift = math.frexp(real_multiplier)
    q_fixed = _round_half_away(mantissa * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    return int(q_fixed), int(shift)


# MultiplyByQuantizedMultiplier computes x * (1 << shift) for a positive shift: from 32 bits
# on that is undefined in C++ (x86 masks the count to 5 bits, Arm's LSL gives 0), so TFLM's
# answer depends on the machine it was built for. The int64 (16x8) variant shifts right by
# 15 - shift: from shift 15 on that is undefined too.
MAX_LEFT_SHIFT = 31
MAX_LEFT_SHIFT_WIDE = 14


def check_left_shift(node, shift, what: str, limit: int = MAX_LEFT_SHIFT) -> None:
    """Refuse a requantization whose left shift TFLM's C++ leaves undefined (see above)."""
    worst = int(np.max(np.atleast_1d(np.asarray(shift, np.int64)), initial=-(1 << 31)))
    if worst > limit:
        from micro_rt.errors import KernelError
        raise KernelError(
            f"op {node.index} {node.op_name}: {what}: the requantization multiplier is 2^{worst - 1} or "
            f"more (left shift {worst}, at most {limit} is defined): TFLM's "
            "MultiplyByQuantizedMultiplier would shift past the integer width, undefined in C++ "
            "(TFLM built for x86 and for Arm give different outputs); a quantization scale is wrong")


def quantize_multiplier_array(real_multipliers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel QuantizeMultiplier: int64 multipliers and shifts, one per entry."""
    pairs = [quantize_multiplier(float(m)) for m in np.asarray(real_multipliers, np.float64).ravel()]
    mult = np.array([p[0] for p in pairs], dtype=np.int64)
    shift = np.array([p[1] for p in pairs], dtype=np.int64)
    return mult, shift


def quantize_multiplier_smaller_than_one_exp(real_multiplier: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: the shift returned is <= 0."""
    q, shift = quantize_multiplier(real_multiplier)
    if shift > 0:
        raise ValueError(f"multiplier {real_multiplier} is not smaller than one")
    return q, shift


def _round_half_away(x: float) -> int:
    """std::round: halves go away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of an int64 array to the int32 range (kept as int64)."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def saturating_rounding_doubling_high_mul(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values held in int64 arrays."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    total = ab + nudge
    # C++ integer division truncates toward zero.
    result = np.where(total >= 0, total >> 31, -((-total) >> 31))
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    return np.where(overflow, INT32_MAX, result)


def rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: divide by 2^exponent, rounding half away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x: np.ndarray, multiplier: np.ndarray | int,
                                     shift: np.ndarray | int) -> np.ndarray:
    """TFLM's MultiplyByQuantizedMultiplier (double rounding, the default build).

    `multiplier` and `shift` broadcast against `x` (per-channel on the last axis).
    """
    shift = np.asarray(shift, dtype=np.int64)
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    scaled = wrap_int32(np.asarray(x, dtype=np.int64) << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(scaled, multiplier), right)


def activation_range_quantized(activation: str, scale: float, zero_point: int,
                               dtype: np.dtype) -> tuple[int, int]:
    """CalculateActivationRangeQuantized: the clamp bounds of a fused activation."""
    info = np.iinfo(dtype)
    qmin, qmax = int(info.min), int(info.max)

    def quantize(value: float) -> int:
        # TFLM divides in float32 and rounds with roundf.
        return zero_point + _round_half_away(float(np.float32(value) / np.float32(scale)))

    if activation == "RELU":
        return max(qmin, quantize(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))
    return qmin, qmax


FLOAT32_MAX = float(np.finfo(np.float32).max)


def activation_range_float(activation: str) -> tuple[float, float]:
    """CalculateActivationRange for float kernels: "no bound" is std::numeric_limits<float>'s
    lowest() / max(), so an infinite result comes out as -+FLT_MAX."""
    if activation == "RELU":
        return 0.0, FLOAT32_MAX
    if activation == "RELU6":
        return 0.0, 6.0
    if activation == "RELU_N1_TO_1":
        return -1.0, 1.0
    return -FLOAT32_MAX, FLOAT32_MAX


# ---------------------------------------------------------------------------
# Fast requantization (the hot path of conv / depthwise / fully-connected).
# ---------------------------------------------------------------------------

def requantize(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """MultiplyByQuantizedMultiplier for int64 `acc` holding int32 values, in few cheap passes.

    Bit-identical to `multiply_by_quantized_multiplier` for multipliers in [0, 2^31)
    (QuantizeMultiplier never yields INT32_MIN, so the saturation case cannot occur).
    `multiplier`/`shift` broadcast against `acc` (per-channel on the last axis).

    SaturatingRoundingDoublingHighMul: the nudge (2^30 or 1 - 2^30) followed by C's
    truncating division by 2^31 equals floor((a*b + 2^30) / 2^31) for either sign.
    RoundingDivideByPOT(x, r) (halves away from zero) equals
    floor((x + 2^(r-1) - [x < 0 and r > 0]) / 2^r).
    The result is a new int64 array; `acc` is not modified.
    """
    acc = np.asarray(acc, dtype=np.int64)
    multiplier = np.asarray(multiplier, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    if np.any(shift > 0):
        acc = wrap_int32(acc << np.maximum(shift, 0))
    right = np.maximum(-shift, 0)
    half = (np.int64(1) << right) >> 1
    neg_mask = np.where(right > 0, np.int64(-1), np.int64(0))
    hi = acc * multiplier
    hi += np.int64(1 << 30)
    hi >>= 31
    t = hi >> 63
    t &= neg_mask
    t += half
    hi += t
    if right.ndim == 0 and int(right) == 0:
        return hi
    hi >>= right
    return hi


def c_div(a: np.ndarray, b) -> np.ndarray:
    """C integer division (truncates toward zero) on int64 arrays, b > 0."""
    a = np.asarray(a, dtype=np.int64)
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


# ---------------------------------------------------------------------------
# gemmlowp fixed-point helpers (softmax), on int64 arrays holding int32 raws.
# ---------------------------------------------------------------------------

def saturating_rounding_multiply_by_pot(x: np.ndarray, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT<exponent> on int32 raws."""
    x = np.asarray(x, dtype=np.int64)
    if exponent == 0:
        return x
    if exponent < 0:
        return rounding_divide_by_pot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    result = wrap_int32(x << exponent)
    result = np.where(x > threshold, INT32_MAX, result)
    return np.where(x < -threshold, INT32_MIN, result)


def rounding_half_sum(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp RoundingHalfSum for int32: (a + b + sign) / 2, truncating."""
    s = np.asarray(a, dtype=np.int64) + np.asarray(b, dtype=np.int64)
    return c_div(s + np.where(s >= 0, 1, -1), 2)


def exp_on_interval_between_negative_one_quarter_and_0_excl(a: np.ndarray) -> np.ndarray:
    """gemmlowp exp on [-1/4, 0), Q0.31 in and out."""
    srdhm = saturating_rounding_doubling_high_mul
    constant_term = 1895147668          # exp(-1/8)
    constant_1_over_3 = 715827883
    x = wrap_int32(np.asarray(a, dtype=np.int64) + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = wrap_int32(srdhm(wrap_int32(x4_over_4 + x3), constant_1_over_3) + x2)
    poly = saturating_rounding_multiply_by_pot(poly, -1)
    return wrap_int32(constant_term + srdhm(constant_term, wrap_int32(x + poly)))


def exp_on_negative_values(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp exp_on_negative_values: Q(integer_bits) raw in (<= 0), Q0.31 raw out."""
    a = np.asarray(a, dtype=np.int64)
    fractional_bits = 31 - integer_bits
    one_quarter = 1 << (fractional_bits - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = wrap_int32((a & mask) - one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_rounding_multiply_by_pot(a_mod_quarter_minus_one_quarter, integer_bits))
    remainder = wrap_int32(a_mod_quarter_minus_one_quarter - a)
    barrel = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
              (2, 39332535), (3, 720401), (4, 242))
    for exponent, multiplier in barrel:
        if integer_bits > exponent:
            bit = np.int64(1) << (fractional_bits + exponent)
            result = np.where((remainder & bit) != 0,
                              saturating_rounding_doubling_high_mul(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (fractional_bits + 5))     # -32 in Q(integer_bits)
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def newton_reciprocal_q2(a: np.ndarray) -> np.ndarray:
    """gemmlowp's Newton-Raphson core: 1 / ((1 + a) / 2) as a Q2.29 raw, for a in Q0.31 [0, 1)."""
    srdhm = saturating_rounding_doubling_high_mul
    half_denominator = rounding_half_sum(a, INT32_MAX)
    x = wrap_int32(1515870810 + srdhm(half_denominator, -1010580540))   # Q2.29
    one_q2 = 1 << 29
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = wrap_int32(one_q2 - half_denominator_times_x)
        x = wrap_int32(x + saturating_rounding_multiply_by_pot(srdhm(x, one_minus), 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """gemmlowp one_over_one_plus_x_for_x_in_0_1, Q0.31 in and out."""
    return saturating_rounding_multiply_by_pot(newton_reciprocal_q2(a), 1)


def count_leading_zeros_u32(x: np.ndarray) -> np.ndarray:
    """CLZ of uint32 values held in int64 (32 for zero)."""
    x = np.asarray(x, dtype=np.int64) & 0xFFFFFFFF
    _, exp = np.frexp(x.astype(np.float64))      # exact for x < 2^53: x = m * 2^exp
    return np.where(x == 0, 32, 32 - exp).astype(np.int64)


def get_reciprocal(x: np.ndarray, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite GetReciprocal: (Q0.31 raw of 1/x scaled, num_bits_over_unit)."""
    x = np.asarray(x, dtype=np.int64)
    headroom_plus_one = count_leading_zeros_u32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = wrap_int32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


def preprocess_softmax_scaling(beta: float, input_scale: float,
                               input_integer_bits: int) -> tuple[int, int]:
    """PreprocessSoftmaxScaling -> (quantized_multiplier, left_shift)."""
    real = min(beta * input_scale * float(1 << (31 - input_integer_bits)), float((1 << 31) - 1))
    if not real > 1.0:
        raise ValueError(f"softmax multiplier {real} is not greater than one")
    q, shift = quantize_multiplier(real)
    return q, shift


def calculate_input_radius(input_integer_bits: int, input_left_shift: int,
                           total_signed_bits: int = 31) -> int:
    """CalculateInputRadius (a negative left shift scales up)."""
    max_input_rescaled = (1.0 * ((1 << input_integer_bits) - 1)
                          * float(1 << (total_signed_bits - input_integer_bits))
                          * 2.0 ** -input_left_shift)
    return int(math.floor(max_input_rescaled))


def round_half_away_f32(x: np.ndarray) -> np.ndarray:
    """roundf on float32 arrays (halves away from zero), result float32."""
    x = np.asarray(x, dtype=np.float32)
    t = np.trunc(x)
    frac = x - t                       # exact in float32
    return (t + np.sign(x) * (np.abs(frac) >= np.float32(0.5))).astype(np.float32)


_C30, _C31 = np.asarray(1 << 30, np.int64), np.asarray(31, np.int64)
_C2_31, _MASK32 = np.asarray(1 << 31, np.int64), np.asarray(0xFFFFFFFF, np.int64)
_SMALL = 4096        # elements up to which Requantizer stores per-lane operands at full shape

# The clip ufunc itself: np.clip's Python wrapper costs several times a small clip.
_clip = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", None)
if not isinstance(_clip, np.ufunc):      # pragma: no cover - other numpy layouts
    def _clip(x, lo, hi, out):
        np.maximum(x, lo, out=out)
        return np.minimum(out, hi, out=out)


class Requantizer:
    """Preallocated int32-accumulator -> int8/int16 output stage of conv/depthwise/FC.

    Holds its buffers so an invoke allocates nothing (fresh large numpy allocations are
    expensive here: each one page-faults). `run(acc, out)`: acc (float64 holding exact
    integers, or int32/int64) of `shape`; adds bias, MultiplyByQuantizedMultiplier per
    channel (last axis), output zero point, activation clamp, and writes `out`.
    """

    def __init__(self, shape, multiplier, shift, bias, output_zero_point: int,
                 act_min: int, act_max: int, tile: int = 1, wide: bool = False,
                 acc_bound: int = 1 << 31):
        """`shape` is (rows, channels); `tile` consecutive rows are processed as one long row
        (per-channel parameters repeated) so numpy's inner loops are long, not `channels`.
        `wide`: int16 activations with int64 accumulators (16x8) use TFLM's int64
        MultiplyByQuantizedMultiplier. Otherwise the accumulator is TFLM's int32: `acc_bound`
        bounds |acc| (exact, before the bias); when acc + bias can leave int32, the sum wraps
        as the C addition does (mod 2^32 addition is associative, so wrapping the exact sum
        equals wrapping every partial sum)."""
        rows, channels = (int(d) for d in shape)
        if tile < 1 or rows % tile:
            tile = 1
        self.in_shape = (rows, channels)
        self.shape = (rows // tile, tile * channels)
        self.h = np.empty(self.shape, dtype=np.int64)
        self.t = np.empty(self.shape, dtype=bool)        # the "x < 0" lanes of the rounding

        def per_lane(v):
            v = np.asarray(v, dtype=np.int64)
            return np.tile(np.broadcast_to(v, (channels,)), tile) if v.ndim else v

        multiplier = per_lane(multiplier)
        shift = per_lane(shift)
        bias = None if bias is None else per_lane(bias)
        if self.shape[0] * self.shape[1] <= _SMALL:
            # Small outputs: per-lane operands of the full shape (numpy's broadcasting loop
            # costs more than the arithmetic here); large ones keep one row of each.
            full = lambda v: np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.int64), self.shape))  # noqa: E731
            multiplier, shift = full(multiplier), full(shift)
            bias = None if bias is None else full(bias)
        self.left = np.maximum(shift, 0)
        self.any_left = bool(np.any(self.left > 0))
        right = np.maximum(-shift, 0)
        self.multiplier = multiplier
        self.right = right
        half = (np.int64(1) << right) >> 1
        self.any_right = bool(np.any(right > 0))
        # SaturatingRoundingDoublingHighMul is floor((a*m + 2^30) / 2^31); RoundingDivideByPOT
        # (x, r > 0) is floor((x + 2^(r-1) - [x < 0]) / 2^r). The half joins the first shift
        # (half * 2^31 added before flooring adds exactly half), x < 0 iff a*m < -2^30 (read
        # before the additions; lanes with r = 0 get a limit below every product), and the
        # output zero point joins it too (zp * 2^(31 + r)) when the sum stays inside int64
        # (|a*m| < 2^62).
        self.lim = np.where(right > 0, np.int64(-(1 << 30)), np.iinfo(np.int64).min)
        add = (np.int64(1) << 30) + (half << 31)
        self.zp = np.asarray(output_zero_point, np.int64)        # 0-d arrays: the fastest operands
        self.zp_folded = False
        if not wide:
            r_max = int(np.max(right, initial=0))
            zp = int(output_zero_point)
            if (1 << 62) + (1 << 30) + (1 << (30 + r_max)) + abs(zp) * (1 << (31 + r_max)) < (1 << 63) - 1:
                add = add + (np.int64(zp) << (right + 31))
                self.zp_folded = True
        self.add = np.asarray(add, np.int64)
        self.bias = None if bias is None else np.asarray(bias, dtype=np.int64)
        bias_bound = 0 if bias is None else int(np.abs(self.bias).max(initial=0))
        self.wrap = not wide and int(acc_bound) + bias_bound > INT32_MAX
        self.act_min, self.act_max = np.asarray(act_min, np.int64), np.asarray(act_max, np.int64)
        self.wide = wide
        if wide:
            # The 16-bit multiplier and single rounding of the int64 overload.
            self.reduced = np.where(multiplier < 0x7FFF0000, (multiplier + (1 << 15)) >> 16, 0x7FFF)
            self.total_shift = 15 - shift
            self.round = np.int64(1) << (self.total_shift - 1)

    def run(self, acc: np.ndarray, out: np.ndarray) -> None:
        h, t = self.h, self.t
        np.copyto(h, acc.reshape(self.shape), casting="unsafe")
        if self.bias is not None:
            h += self.bias
        if self.wrap:
            h += _C2_31
            h &= _MASK32
            h -= _C2_31
        if self.wide:
            h *= self.reduced
            h += self.round
            h >>= self.total_shift
            h += self.zp
        else:
            self._narrow(h, t)
            if not self.zp_folded:
                h += self.zp
        _clip(h, self.act_min, self.act_max, out=h)
        np.copyto(out.reshape(self.shape), h, casting="unsafe")

    def _narrow(self, h: np.ndarray, t: np.ndarray) -> None:
        """MultiplyByQuantizedMultiplier (int32, double rounding), in place on h."""
        if self.any_left:
            h[...] = wrap_int32(h << self.left)
        h *= self.multiplier
        if self.any_right:
            np.less(h, self.lim, out=t)
            h += self.add
            h >>= _C31
            h -= t
            h >>= self.right
        else:
            h += self.add
            h >>= _C31


class InPlaceRequant:
    """MultiplyByQuantizedMultiplier (double rounding) in place on an int64 array of int32
    values, for multipliers fixed in prepare (scalars or arrays, broadcast here to the full
    `shape` once: numpy's broadcasting loops cost more than the arithmetic on short rows).
    `bound`: the largest |value| the array can hold.

    Equal to quant.requantize: a left shift that cannot leave int32 (bound << left < 2^31) is
    exact, so it joins the multiplier; SaturatingRoundingDoublingHighMul is floor((a*m +
    2^30) / 2^31); RoundingDivideByPOT(x, r > 0) is floor((x + 2^(r-1) - [x < 0]) / 2^r). The
    half is folded into the first shift (adding half * 2^31 before flooring adds exactly
    half), and x < 0 iff a*m < -2^30, read before the additions (where r = 0 the limit is
    below every product, so nothing is subtracted). Left shifts that could wrap take the
    general routine."""

    def __init__(self, mult, shift, shape, bound: int = 1 << 31, offset: int = 0):
        """`offset`: an integer added to the result (an output zero point), folded into the
        rounding constant (offset * 2^(31 + r) before the shifts) when that cannot overflow."""
        mult = np.asarray(mult, np.int64)
        shift = np.asarray(shift, np.int64)
        self.mult, self.shift = mult, shift
        left = np.maximum(shift, 0)
        right = np.maximum(-shift, 0)
        self.generic = int(bound) << int(left.max(initial=0)) > (1 << 31) - 1
        self.mult_eff = mult << left
        half = (np.int64(1) << right) >> 1
        full = lambda v: np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.int64), shape))  # noqa: E731
        self.full_mult = full(self.mult_eff)
        add = (np.int64(1) << 30) + (half << 31)
        self.offset = np.asarray(offset, np.int64) if offset else None   # added after, unless folded
        self.offset_folded = False
        if offset and not self.generic:
            r_max = int(np.max(right, initial=0))
            if (1 << 62) + (1 << (30 + r_max)) + (1 << 30) + abs(int(offset)) * (1 << (31 + r_max)) < (1 << 63) - 1:
                add = add + (np.int64(offset) << (right + 31))
                self.offset_folded = True
        self.add = full(add)
        self.right = full(right)
        self.lim = full(np.where(right > 0, np.int64(-(1 << 30)), np.iinfo(np.int64).min))
        self.neg = np.empty(shape, bool)
        self.c31 = np.asarray(31, np.int64)

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        if self.generic:
            acc[...] = requantize(acc, self.mult, self.shift)
            if self.offset is not None:
                acc += self.offset
            return acc
        acc *= self.full_mult
        np.less(acc, self.lim, out=self.neg)
        acc += self.add
        acc >>= self.c31
        acc -= self.neg
        acc >>= self.right
        if self.offset is not None and not self.offset_folded:
            acc += self.offset
        return acc
