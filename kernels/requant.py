"""The fast requantization stages: TFLM's MultiplyByQuantizedMultiplier (fixedpoint.py) in
few in-place passes over preallocated buffers, bit-identical to it, for the hot paths
(conv, depthwise conv and fully connected output stages, the LSTM and SVDF steps, MEAN).

Fresh large numpy allocations are expensive (each one page-faults) and numpy's per-call cost
dominates on short rows, so the classes here hold their buffers and their operands broadcast
once, in prepare.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .fixedpoint import INT32_MAX, wrap_int32


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


_C31 = np.asarray(31, np.int64)
_C2_31, _MASK32 = np.asarray(1 << 31, np.int64), np.asarray(0xFFFFFFFF, np.int64)
_SMALL = 4096        # elements up to which Requantizer stores per-lane operands at full shape

# The clip ufunc itself (clip(x, lo, hi, out=...)): np.clip's Python wrapper costs several
# times a small clip.
def _clip_two_ufuncs(x: np.ndarray, lo: Any, hi: Any, out: np.ndarray) -> np.ndarray:
    np.maximum(x, lo, out=out)
    return np.minimum(out, hi, out=out)


_clip_ufunc = getattr(getattr(getattr(np, "_core", None), "umath", None), "clip", None)
clip: Callable[..., Any] = (_clip_ufunc if isinstance(_clip_ufunc, np.ufunc)    # other numpy layouts:
                            else _clip_two_ufuncs)                              # two ufuncs


def rounding_constants(right: np.ndarray, offset: int, fold: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """The operands of `round_and_shift` for right shifts `right` (per lane): (add, lim,
    offset folded). SaturatingRoundingDoublingHighMul is floor((a*m + 2^30) / 2^31);
    RoundingDivideByPOT(x, r > 0) is floor((x + 2^(r-1) - [x < 0]) / 2^r). The half joins the
    first shift (half * 2^31 added before flooring adds exactly half), x < 0 iff a*m < -2^30
    (read before the additions; lanes with r = 0 get a limit below every product), and with
    `fold` an integer `offset` added to the result (an output zero point) joins it too
    (offset * 2^(31 + r)) when the sum stays inside int64 (|a*m| < 2^62)."""
    half = (np.int64(1) << right) >> 1
    add = (np.int64(1) << 30) + (half << 31)
    lim = np.where(right > 0, np.int64(-(1 << 30)), np.iinfo(np.int64).min)
    folded = False
    if fold:
        r_max = int(np.max(right, initial=0))
        if (1 << 62) + (1 << 30) + (1 << (30 + r_max)) + abs(int(offset)) * (1 << (31 + r_max)) < (1 << 63) - 1:
            add = add + (np.int64(offset) << (right + 31))
            folded = True
    return add, lim, folded


def round_and_shift(x: np.ndarray, lim, neg: np.ndarray, add, right) -> None:
    """The two roundings of MultiplyByQuantizedMultiplier after its multiply, in place on x
    (the products a*m), with `rounding_constants`' add and lim; `neg` is a bool buffer."""
    np.less(x, lim, out=neg)
    x += add
    x >>= _C31
    x -= neg
    x >>= right


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
        self.any_right = bool(np.any(right > 0))
        add, self.lim, self.zp_folded = rounding_constants(right, int(output_zero_point), fold=not wide)
        self.zp = np.asarray(output_zero_point, np.int64)        # 0-d arrays: the fastest operands
        self.add = np.asarray(add, np.int64)
        self.bias = None if bias is None else np.asarray(bias, dtype=np.int64)
        bias_bound = 0 if self.bias is None else int(np.abs(self.bias).max(initial=0))
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
        clip(h, self.act_min, self.act_max, out=h)
        np.copyto(out.reshape(self.shape), h, casting="unsafe")

    def _narrow(self, h: np.ndarray, t: np.ndarray) -> None:
        """MultiplyByQuantizedMultiplier (int32, double rounding), in place on h."""
        if self.any_left:
            h[...] = wrap_int32(h << self.left)
        h *= self.multiplier
        if self.any_right:
            round_and_shift(h, self.lim, t, self.add, self.right)
        else:
            h += self.add
            h >>= _C31


class InPlaceRequant:
    """MultiplyByQuantizedMultiplier (double rounding) in place on an int64 array of int32
    values, for multipliers fixed in prepare (scalars or arrays, broadcast here to the full
    `shape` once: numpy's broadcasting loops cost more than the arithmetic on short rows).
    `bound`: the largest |value| the array can hold.

    Equal to requantize: a left shift that cannot leave int32 (bound << left < 2^31) is
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
        full = lambda v: np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.int64), shape))  # noqa: E731
        self.full_mult = full(self.mult_eff)
        add, lim, self.offset_folded = rounding_constants(right, offset, fold=bool(offset) and not self.generic)
        self.offset = np.asarray(offset, np.int64) if offset else None   # added after, unless folded
        self.add = full(add)
        self.right = full(right)
        self.lim = full(lim)
        self.neg = np.empty(shape, bool)

    def __call__(self, acc: np.ndarray) -> np.ndarray:
        if self.generic:
            acc[...] = requantize(acc, self.mult, self.shift)
            if self.offset is not None:
                acc += self.offset
            return acc
        acc *= self.full_mult
        round_and_shift(acc, self.lim, self.neg, self.add, self.right)
        if self.offset is not None and not self.offset_folded:
            acc += self.offset
        return acc


def requantize_wide(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int) -> np.ndarray:
    """TFLM's MultiplyByQuantizedMultiplier(int64_t x, ...) of the 16x8 kernels: the 16-bit
    reduced multiplier and one rounding, as int64 (TFLM then casts to int32)."""
    m = np.asarray(multiplier, np.int64)
    total = 15 - np.asarray(shift, np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    return (np.asarray(acc, np.int64) * reduced + (np.int64(1) << (total - 1))) >> total
