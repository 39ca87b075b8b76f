"""Integer arithmetic exactly as TFLM's C code does it: gemmlowp's fixedpoint.h and TFLM's
kernels/internal/common.h (MultiplyByQuantizedMultiplier, the int16 sigmoid table), plus the C
semantics numpy does not share (rounding halves away from zero, division truncating toward
zero, int32 wrap-around, float-to-int casts).

The array functions work on numpy int64 arrays holding int32 (or int16) values and give each
element exactly the C result: intermediates are int64, so nothing overflows before the
explicit saturation points.
"""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT16_MIN = -(1 << 15)
INT16_MAX = (1 << 15) - 1


# --------------------------------------------------------------------------- C semantics

def round_half_away(x: float) -> int:
    """std::round on one value: halves go away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def round_half_away_array(x: npt.ArrayLike) -> np.ndarray:
    """round_half_away element-wise (std::round / roundf on float arrays), float64 out, exact
    for float32 input."""
    x = np.asarray(x, dtype=np.float64)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def c_div(a, b):
    """C's integer division a / b (the quotient truncated toward zero; Python's // floors).
    Python ints give an int; an array `a` gives an int64 array (b > 0 then)."""
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        q = abs(int(a)) // abs(int(b))
        return q if (a >= 0) == (b >= 0) else -q
    a = np.asarray(a, dtype=np.int64)
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of an int64 array to the int32 range (kept as int64)."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def wrap_int16(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of an int64 array to the int16 range (kept as int64)."""
    return ((np.asarray(x, dtype=np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def f32_to_int32_cast(x: np.ndarray) -> np.ndarray:
    """static_cast<int32_t>(float) as x86-64 does it (cvttss2si): NaN/out of range -> INT32_MIN."""
    x = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(x) | (x >= 2.0 ** 31) | (x < -(2.0 ** 31))
    out = np.where(bad, 0.0, np.trunc(x)).astype(np.int64)
    return np.where(bad, INT32_MIN, out)


# --------------------------------------------------------------------------- doubling high multiply

def _doubling_high_mul(a, b, bits: int, rounding: bool) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul (`rounding`) or TFLM's
    SaturatingDoublingHighMul for int`bits` values held in int64 arrays: (a * b [+ nudge]) /
    2^(bits - 1), truncated toward zero as C divides; the one overflowing case (both operands
    the type's minimum) saturates to its maximum."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    shift = bits - 1
    total = a * b
    if rounding:
        total = total + np.where(total >= 0, 1 << (shift - 1), 1 - (1 << (shift - 1)))
    result = np.where(total >= 0, total >> shift, -((-total) >> shift))
    lowest = -(1 << shift)
    return np.where((a == lowest) & (b == lowest), (1 << shift) - 1, result)


def saturating_rounding_doubling_high_mul(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int32 values held in int64 arrays."""
    return _doubling_high_mul(a, b, 32, rounding=True)


def saturating_rounding_doubling_high_mul_int16(a: np.ndarray, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul for int16."""
    return _doubling_high_mul(a, b, 16, rounding=True)


def saturating_doubling_high_mul_int16(a: np.ndarray, b) -> np.ndarray:
    """TFLM's SaturatingDoublingHighMul (int16, truncating division)."""
    return _doubling_high_mul(a, b, 16, rounding=False)


def saturating_left_shift_int16(x: np.ndarray, amount: int) -> np.ndarray:
    """x * 2^amount saturated to int16."""
    r = np.asarray(x, dtype=np.int64) * (1 << amount)
    return np.clip(r, INT16_MIN, INT16_MAX)


# --------------------------------------------------------------------------- requantization (common.h)

def rounding_divide_by_pot(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT: divide by 2^exponent, rounding half away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)

def rounding_divide_by_pot_x86(x: np.ndarray, exponent: np.ndarray | int) -> np.ndarray:
    """RoundingDivideByPOT for exponents up to 63 as TFLM's x86 build computes them (the oracle):
    gemmlowp takes the mask from a 64-bit shift cut to 32 bits (all ones from 32 on) and shifts
    the int32 by `exponent`, which x86 masks to 5 bits (an Arm build shifts the sign in instead).
    Below 32 it is rounding_divide_by_pot."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = wrap_int32((np.int64(1) << exponent) - 1)
    remainder = wrap_int32(x & mask)
    threshold = (mask >> 1) + (x < 0)
    return (x >> (exponent & 31)) + (remainder > threshold)


def count_leading_sign_bits(x: np.ndarray) -> np.ndarray:
    """TFLM's CountLeadingSignBits on int32 values held in int64 (31 for 0 and -1)."""
    x = np.asarray(x, dtype=np.int64)
    return count_leading_zeros_u32(np.where(x < 0, ~x, x)) - 1


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


# --------------------------------------------------------------------------- gemmlowp fixed point (exp, reciprocal, logistic, tanh)

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


def one_minus_x_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    """gemmlowp one_minus_x_over_one_plus_x_for_x_in_0_1, Q0.31 in and out."""
    return saturating_rounding_multiply_by_pot(wrap_int32(newton_reciprocal_q2(a) - (1 << 29)), 2)


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


def gemmlowp_logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::logistic: F<integer_bits> -> F0 raw."""
    a = np.asarray(a, dtype=np.int64)
    positive = a > 0
    abs_input = np.where(positive, a, wrap_int32(-a))
    r_pos = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(wrap_int32(-abs_input), integer_bits))
    r_neg = wrap_int32(INT32_MAX - r_pos)
    return np.where(a == 0, 1 << 30, np.where(positive, r_pos, r_neg))

def gemmlowp_tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh: F<integer_bits> -> F0 raw."""
    a = np.asarray(a, dtype=np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap_int32(-a))
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, wrap_int32(-t), t))


# --------------------------------------------------------------------------- int16 sigmoid table (common.h)
# reference_integer_ops::Logistic / Tanh on int16: TFLM's 256-entry sigmoid table, linearly
# interpolated (LOGISTIC, TANH and the LSTM's gates use them).

SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], dtype=np.int64)

def _scaled_input(x: np.ndarray, input_multiplier: int, input_left_shift: int) -> np.ndarray:
    """The int16 activations' input rescale (3 << shift when no multiplier is given)."""
    x = np.asarray(x, dtype=np.int64)
    if input_multiplier == 0:
        input_multiplier, input_left_shift = 3 << input_left_shift, 0
    rnd = (1 << (input_left_shift - 1)) if input_left_shift > 0 else 0
    return (x * input_multiplier + rnd) >> input_left_shift

def _sigmoid_lut(magnitude: np.ndarray, frac_bits: int, saturated: int) -> np.ndarray:
    """TFLM's 256-entry sigmoid table, linearly interpolated on the low `frac_bits` bits."""
    upper = magnitude >> frac_bits
    idx = np.minimum(upper, 254)
    ua = SIGMOID_TABLE_UINT16[idx]
    ub = SIGMOID_TABLE_UINT16[idx + 1]
    mask = (1 << frac_bits) - 1
    return np.where(upper >= 255, saturated, (ua << frac_bits) + (magnitude & mask) * (ub - ua))

def logistic_int16(x: np.ndarray, input_multiplier: int = 0, input_left_shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 (LUT with linear interpolation), int64 out."""
    v = _scaled_input(x, input_multiplier, input_left_shift)
    r = _sigmoid_lut(np.abs(v), 9, 0x7FFF << 10)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return r >> 10

def tanh_int16(x: np.ndarray, input_multiplier: int = 0, input_left_shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Tanh on int16 (the sigmoid LUT, tanh(x) = 2 sigmoid(2x) - 1)."""
    v = _scaled_input(x, input_multiplier, input_left_shift)
    r = _sigmoid_lut(np.abs(v), 8, 0xFFFF << 8)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    return r >> 8


# --------------------------------------------------------------------------- inverse square root (common.h)

def inv_sqrt_quantized_multiplier_exp(x: np.ndarray, reverse_shift: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's GetInvSqrtQuantizedMultiplierExp element-wise on non-negative int32 values:
    (multiplier, shift) with 1/sqrt(x) = multiplier * 2^(shift - 31) for reverse_shift -1
    (gemmlowp Newton-Raphson in Q3.28, five iterations). 0 and 1 give (INT32_MAX, 0)."""
    x = np.asarray(x, dtype=np.int64)
    small = x <= 1
    v = np.where(small, 2, x)
    big = v >= (1 << 29)                         # at most once for an int32
    v = np.where(big, v // 4, v)
    shift = 11 + big.astype(np.int64)
    pairs = (count_leading_zeros_u32(v) - 1) // 2 - 1
    shift = shift - pairs
    v = v << (2 * pairs)
    srdhm, pot = saturating_rounding_doubling_high_mul, saturating_rounding_multiply_by_pot
    half_input = pot(v >> 1, -1)                 # F3
    half_three = (1 << 28) + (1 << 27)           # 1.5 in F3
    r = np.full(v.shape, 1 << 28, dtype=np.int64)   # F3 one
    for _ in range(5):
        r3 = pot(srdhm(srdhm(r, r), r), 6)       # F9 -> F3
        r = pot(wrap_int32(srdhm(half_three, r) - srdhm(half_input, r3)), 3)   # F6 -> F3
    r = srdhm(r, 1518500250)                     # * sqrt(2) / 2
    r = np.where(shift < 0, wrap_int32(r << np.maximum(-shift, 0)), r)
    shift = np.maximum(shift, 0)
    return np.where(small, INT32_MAX, r), np.where(small, 0, shift * reverse_shift)
