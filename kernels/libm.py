"""The C library's float functions, as TFLM's float kernels call them (std::exp(float) is
expf, std::tanh(float) is tanhf): glibc's are not correctly rounded, and numpy's exp / tanh
differ from them in the last bit, so the kernels use the C library's own, loaded with ctypes.
Where no C math library can be loaded, numpy's float64 functions rounded to float32 stand in.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Callable, Optional

import numpy as np


def _c_float_function(name: str) -> Optional[Callable[[float], float]]:
    """The C library's `float name(float)` (None when it cannot be loaded)."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = getattr(libm, name)
    except (OSError, AttributeError):  # pragma: no cover - no C math library reachable
        return None
    fn.restype = ctypes.c_float
    fn.argtypes = [ctypes.c_float]
    return fn


_EXPF = _c_float_function("expf")
_TANHF = _c_float_function("tanhf")
_TANHF_UFUNC = None if _TANHF is None else np.frompyfunc(_TANHF, 1, 1)
_LOGF = _c_float_function("logf")


def expf(x: np.ndarray) -> np.ndarray:
    """The C library's expf, element-wise, vectorised.

    exp in float64 rounded to float32 is correctly rounded; glibc's expf (< 0.502 ulp) can
    only differ where the exact value is within a hair of a rounding midpoint, so only those
    elements are recomputed by calling expf itself (measured over every float32 input: the
    same bits as glibc's expf for each).
    """
    x = np.asarray(x, dtype=np.float32)
    e64 = np.exp(x.astype(np.float64))
    f = e64.astype(np.float32)
    if _EXPF is not None:
        spacing = np.spacing(np.abs(f)).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.abs(e64 - f.astype(np.float64)) / spacing
        for i in np.flatnonzero(frac > 0.45):
            f.flat[i] = _EXPF(float(x.flat[i]))
    return f


def tanhf(x: np.ndarray) -> np.ndarray:
    """The C library's tanhf, element-wise (one C call per element)."""
    x = np.asarray(x, np.float32)
    if _TANHF_UFUNC is None:  # pragma: no cover - no C math library reachable
        return np.tanh(x.astype(np.float64)).astype(np.float32)
    return np.asarray(_TANHF_UFUNC(x), dtype=np.float32).reshape(x.shape)


def logf(x: np.ndarray) -> np.ndarray:
    """The C library's logf, element-wise (one C call per element: glibc's logf is not
    correctly rounded, so float64 log rounded to float32 can differ in the last bit)."""
    x = np.asarray(x, np.float32)
    if _LOGF is None:  # pragma: no cover - no C math library reachable
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x.astype(np.float64)).astype(np.float32)
    return np.array([_LOGF(float(v)) for v in x.ravel()], np.float32).reshape(x.shape)


def _c_elementwise(name: str, fallback: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """The C library's `float name(float)` element-wise (one C call per element: glibc's
    sinf / cosf / expm1f are not correctly rounded); numpy's float64 `fallback` rounded to
    float32 where no C math library can be loaded."""
    fn = _c_float_function(name)
    ufunc = None if fn is None else np.frompyfunc(fn, 1, 1)

    def apply(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float32)
        if ufunc is None:  # pragma: no cover - no C math library reachable
            with np.errstate(all="ignore"):
                return fallback(x.astype(np.float64)).astype(np.float32)
        if x.size == 0:
            return x.copy()
        with np.errstate(all="ignore"):       # NaN results are values here, not errors
            return np.asarray(ufunc(x), dtype=np.float32).reshape(x.shape)
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"The C library's {name}, element-wise."
    return apply


sinf = _c_elementwise("sinf", np.sin)
cosf = _c_elementwise("cosf", np.cos)
expm1f = _c_elementwise("expm1f", np.expm1)
