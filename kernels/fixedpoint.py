"""Extra fixed-point primitives for the element-wise / activation kernels (helper "kernels-B").

gemmlowp's FixedPoint<int32, IntegerBits> arithmetic (exp_on_negative_values, logistic, tanh)
and the int16 helpers of TFLM's hard swish, vectorised over numpy int64 arrays holding int32
(or int16) values, each element getting exactly the C result.  Also small shared helpers of the
kernels in this family (errors, per-tensor quantisation parameters, int8 lookup tables).
"""
from __future__ import annotations

import math

import numpy as np

from micro_rt.errors import KernelError

from .quant import (INT32_MAX, INT32_MIN, calculate_input_radius,  # noqa: F401 (re-exported)
                    exp_on_negative_values, newton_reciprocal_q2,
                    one_over_one_plus_x_for_x_in_0_1, rounding_divide_by_pot,
                    saturating_rounding_doubling_high_mul, saturating_rounding_multiply_by_pot,
                    wrap_int32)

INT16_MIN = -(1 << 15)
INT16_MAX = (1 << 15) - 1

srdhm = saturating_rounding_doubling_high_mul
rdbpot = rounding_divide_by_pot
wrap32 = wrap_int32
sat_rounding_mul_by_pot = saturating_rounding_multiply_by_pot


# --------------------------------------------------------------------------- helpers

def fail(node, message: str) -> "KernelError":
    """An error naming the op index and op name (raise the result)."""
    return KernelError(f"op {node.index} {node.op_name}: {message}")


def tensor_desc(t) -> str:
    return f"'{t.name}' ({np.dtype(t.dtype).name}{list(t.shape)})"


def scale_of(t) -> float:
    """params.scale of a tensor: the first scale, 0.0 when not quantised (float32 value)."""
    s = getattr(t, "scales", None)
    if s is None or len(s) == 0:
        return 0.0
    return float(np.float32(s[0]))


def zero_point_of(t) -> int:
    z = getattr(t, "zero_points", None)
    if z is None or len(z) == 0:
        return 0
    return int(z[0])


def is_quantized(t) -> bool:
    s = getattr(t, "scales", None)
    return s is not None and len(s) > 0


def round_half_away(x: np.ndarray) -> np.ndarray:
    """std::round / roundf on float arrays (halves away from zero), exact for float32 input."""
    x = np.asarray(x, dtype=np.float64)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def f32_to_int32_cast(x: np.ndarray) -> np.ndarray:
    """static_cast<int32_t>(float) as x86-64 does it (cvttss2si): NaN/out of range -> INT32_MIN."""
    x = np.asarray(x, dtype=np.float64)
    bad = ~np.isfinite(x) | (x >= 2.0 ** 31) | (x < -(2.0 ** 31))
    out = np.where(bad, 0.0, np.trunc(x)).astype(np.int64)
    return np.where(bad, INT32_MIN, out)


def int8_domain() -> np.ndarray:
    """All int8 values in uint8 byte order (0..127, -128..-1): index a table with x.view(uint8)."""
    return np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)


def apply_lut_u8(lut_u8: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """out[...] = lut[x] for int8 x, with lut indexed by the byte value."""
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    # Every byte indexes the 256 entries: mode "clip" only skips numpy's buffered bounds check.
    lut_u8.take(x.view(np.uint8), out=out, mode="clip")


def run_elementwise(data, x: np.ndarray, dst: np.ndarray) -> None:
    """Invoke of a one-input elementwise op prepared as an int8 lookup table (`data.kind ==
    "lut8"`, `data.lut`) or as a numpy function (`data.fn`)."""
    if data.kind == "lut8":
        apply_lut_u8(data.lut, x, dst if dst.shape == x.shape else dst.reshape(x.shape))
    else:
        dst[...] = np.asarray(data.fn(x)).reshape(dst.shape)


def frexp_multiplier(real: float) -> tuple[int, int]:
    """q, exponent = frexp(real); multiplier = round(q * 2^31) (logistic/tanh prepare)."""
    q, exp = math.frexp(real)
    m = q * float(1 << 31)
    mult = int(math.floor(m + 0.5)) if m >= 0 else -int(math.floor(-m + 0.5))
    return mult, exp


def downscale_int32_to_int16_multiplier(m: int) -> int:
    """TFLM's DownScaleInt32ToInt16Multiplier."""
    if m >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (m + (1 << 15)) >> 16


# --------------------------------------------------------------------------- gemmlowp int32

def one_minus_x_over_one_plus_x_for_x_in_0_1(a: np.ndarray) -> np.ndarray:
    return sat_rounding_mul_by_pot(wrap32(newton_reciprocal_q2(a) - (1 << 29)), 2)


def gemmlowp_logistic(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::logistic: F<integer_bits> -> F0 raw."""
    a = np.asarray(a, dtype=np.int64)
    positive = a > 0
    abs_input = np.where(positive, a, wrap32(-a))
    r_pos = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(wrap32(-abs_input), integer_bits))
    r_neg = wrap32(INT32_MAX - r_pos)
    return np.where(a == 0, 1 << 30, np.where(positive, r_pos, r_neg))


def gemmlowp_tanh(a: np.ndarray, integer_bits: int) -> np.ndarray:
    """gemmlowp::tanh: F<integer_bits> -> F0 raw."""
    a = np.asarray(a, dtype=np.int64)
    negative = a < 0
    n = np.where(negative, a, wrap32(-a))
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, wrap32(-t), t))


# --------------------------------------------------------------------------- int16 helpers

def wrap16(x: np.ndarray) -> np.ndarray:
    return ((np.asarray(x, dtype=np.int64) + (1 << 15)) & 0xFFFF) - (1 << 15)


def srdhm16(a: np.ndarray, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul for int16."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    total = ab + nudge
    q = np.where(total >= 0, total >> 15, -((-total) >> 15))
    overflow = (a == b) & (a == INT16_MIN)
    return np.where(overflow, INT16_MAX, wrap16(q))


def sdhm16(a: np.ndarray, b) -> np.ndarray:
    """TFLM's SaturatingDoublingHighMul (int16, truncating division)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    q = np.where(ab >= 0, ab >> 15, -((-ab) >> 15))
    overflow = (a == b) & (a == INT16_MIN)
    return np.where(overflow, INT16_MAX, wrap16(q))


def saturating_left_shift16(x: np.ndarray, amount: int) -> np.ndarray:
    r = np.asarray(x, dtype=np.int64) * (1 << amount)
    return np.clip(r, INT16_MIN, INT16_MAX)
