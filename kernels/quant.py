"""TFLM's quantization utilities (kernels/internal/quantization_util.cc): real multipliers
turned into an int32 fixed-point multiplier and a shift, the limits TFLM's C++ leaves
defined, and the scale helpers of softmax, logistic / tanh and the LSTM."""
from __future__ import annotations

import math

import numpy as np

from .fixedpoint import INT16_MAX, INT32_MAX, round_half_away
from .kernel_util import kernel_error


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """TFLM's QuantizeMultiplier: real = q * 2^(shift - 31), q in [2^30, 2^31)."""
    if real_multiplier == 0.0:
        return 0, 0
    if not math.isfinite(real_multiplier):
        raise ValueError(f"requantization multiplier {real_multiplier} is not finite "
                         "(a quantization scale is 0 or not finite)")
    mantissa, shift = math.frexp(real_multiplier)
    q_fixed = round_half_away(mantissa * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift, q_fixed = 0, 0
    return int(q_fixed), int(shift)


def quantize_multiplier_smaller_than_one_exp(real_multiplier: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: the shift returned is <= 0."""
    q, shift = quantize_multiplier(real_multiplier)
    if shift > 0:
        raise ValueError(f"multiplier {real_multiplier} is not smaller than one")
    return q, shift


def checked_smaller_than_one_multiplier(node, real_multiplier: float, what: str) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp as a kernel's prepare calls it: its TFLITE_CHECKs
    (0 < multiplier < 1) abort TFLM, so anything else is refused, naming `what` it is."""
    if not 0.0 < real_multiplier < 1.0:
        raise kernel_error(node, f"{what} = {real_multiplier:g} is not in (0, 1): TFLM's "
                                 "QuantizeMultiplierSmallerThanOneExp aborts (TFLITE_CHECK)")
    return quantize_multiplier(real_multiplier)


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
        raise kernel_error(
            node, f"{what}: the requantization multiplier is 2^{worst - 1} or "
            f"more (left shift {worst}, at most {limit} is defined): TFLM's "
            "MultiplyByQuantizedMultiplier would shift past the integer width, undefined in C++ "
            "(TFLM built for x86 and for Arm give different outputs); a quantization scale is wrong")


def frexp_multiplier(real: float) -> tuple[int, int]:
    """q, exponent = frexp(real); multiplier = round(q * 2^31) (logistic/tanh prepare)."""
    q, exp = math.frexp(real)
    return round_half_away(q * float(1 << 31)), exp


def downscale_int32_to_int16_multiplier(m: int) -> int:
    """TFLM's DownScaleInt32ToInt16Multiplier."""
    if m >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (m + (1 << 15)) >> 16


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


def checked_log2_pot(x: float) -> tuple[int, bool]:
    """tflite::CheckedLog2 in float32: the rounded exponent (TfLiteRound: halves away from
    zero) and whether x is a power of two (fractional part of log2 below 1e-3)."""
    with np.errstate(all="ignore"):
        x_log2 = np.float32(np.log(np.float32(x))) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    if not np.isfinite(x_log2):
        return 0, False
    rounded = np.float32(np.copysign(np.floor(np.abs(x_log2) + np.float32(0.5)), x_log2))
    return int(rounded), bool(np.abs(np.float32(x_log2 - rounded)) < np.float32(1e-3))

def checked_log2(x: float) -> int:
    """tflite::CheckedLog2's rounded exponent (its 'is a power of two' verdict is ignored)."""
    return checked_log2_pot(x)[0]
