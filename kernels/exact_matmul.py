"""Exact matrix products, shared by CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, SVDF and the LSTM.

float32 kernels: TFLM's reference loops add `total += x * w` in float32, in depth order;
`sequential_matmul_f32` gives those sums bit for bit. Integer kernels: products of integers
summed in float32 or float64 by BLAS are exact while every partial sum stays an exactly
representable integer, whatever order BLAS adds in (`exact_float_type`).
"""
from __future__ import annotations

import numpy as np

_ACCUMULATE_LIMIT = 1 << 18      # elements of the (B, D, O) products array of the fast path


def sequential_matmul_f32(x: np.ndarray, w: np.ndarray, out: np.ndarray | None = None,
                          products_at_once: bool = True) -> np.ndarray:
    """(B, D) x (D, O) with float32 accumulation in d order, like the reference loop (into
    `out` when given). `products_at_once`: up to 2^18 products are made in one array and
    summed by one accumulate (few numpy calls: fast for the short rows of FULLY_CONNECTED,
    the LSTM and SVDF); without it, or beyond, one multiply-add per depth step (faster for
    CONV_2D's tall im2col matrices). Both give the same sums."""
    b, d_total = x.shape
    if products_at_once and 0 < b * d_total * w.shape[1] <= _ACCUMULATE_LIMIT:
        # All float32 products at once, then ufunc.accumulate along d: by definition each
        # partial sum is the previous one plus the next product, in float32, the loop's
        # order. Adding 0.0f last gives the loop's start at +0.0 (only the sign of an all
        # -0.0 sum could differ; every other value is unchanged by + 0.0).
        prod = np.multiply(np.asarray(x, np.float32)[:, :, None], w[None, :, :], dtype=np.float32)
        np.add.accumulate(prod, axis=1, out=prod)
        if out is None:
            return prod[:, -1, :] + np.float32(0.0)
        np.add(prod[:, -1, :], np.float32(0.0), out=out)
        return out
    if out is None:
        out = np.empty((b, w.shape[1]), dtype=np.float32)
    out[...] = 0
    tmp = np.empty_like(out)
    xt = np.ascontiguousarray(x.T, dtype=np.float32)
    for d in range(d_total):
        np.multiply(xt[d][:, None], w[d][None, :], out=tmp)
        out += tmp
    return out


def accumulator_bound(w_groups: np.ndarray, max_abs_x: int) -> int:
    """The largest |sum_k x*w| any output channel can reach. w_groups: (..., K, OC)."""
    return int(np.abs(np.asarray(w_groups, dtype=np.int64)).sum(axis=-2).max(initial=0)) * int(max_abs_x)

def exact_float_type(w_groups: np.ndarray, max_abs_x: int):
    """float32 when every partial sum of x*w over K stays below 2^24 (then any summation
    order, BLAS included, is exact), else float64 (exact below 2^53).

    w_groups: (..., K, OC) integer weights.
    """
    return np.float32 if accumulator_bound(w_groups, max_abs_x) < (1 << 24) else np.float64


def max_abs_offset(dtype, zero_point: int) -> int:
    """The largest |x - zero_point| a value x of the integer type can give: the input
    operand's bound in the accumulator bounds."""
    info = np.iinfo(dtype)
    return max(abs(int(info.min) - zero_point), abs(int(info.max) - zero_point))
