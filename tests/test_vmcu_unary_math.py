"""The unary math family on the virtual MCU (cortexm/src/mrt_unary_math.c; also int16 LOGISTIC /
TANH, mrt_unary.c, and QUANTIZE int8 <-> uint8, mrt_quantize.c) vs the numpy twins
(kernels/unary_math.py, fixedpoint.py, quantize.py): quantized ABS / RSQRT, ELU int8, LOGICAL_NOT, ZEROS_LIKE and the float32
ops without libm bit for bit; COS, SIN, LOG, EXP, ELU float32 call newlib's cosf / sinf / logf /
expf / expm1f where the host calls glibc's: within LIBM_MAX_ULP of the host and bit-equal to the
formula evaluated with the firmware's own libm.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_FAST, CORES_FLOAT, T, assert_close_ulp, assert_same, device_libm, run_both

# newlib's and glibc's cosf / sinf / logf / expf / expm1f: measured at most 1 ulp apart (8,000
# inputs each, M0+ and M4), except newlib's sinf / cosf on arguments beyond 10^4, whose range
# reduction differs: up to 92 ulp of a small result there, an absolute difference below 1e-7.
LIBM_MAX_ULP = 1
TRIG_LARGE_ARGUMENT, TRIG_MAX_ABS = 1e4, 1e-7
LIBM_OPS = {"COS": "cosf", "SIN": "sinf", "LOG": "logf", "EXP": "expf", "ELU": "expm1f"}
# sqrt of a negative number is the FPU's default NaN: x86 sets its sign bit, Arm does not (the
# host and TFLM on x86 give 0xffc00000, the M4 0x7fc00000); every other bit is equal.
INVALID_NAN_OPS = ("SQRT", "RSQRT")
FLOAT_OPS = ("ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIN", "SQRT", "SQUARE")


def _float_inputs(rng) -> np.ndarray:
    special = np.array([0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.5, 1e-40, -1e-40, 88.0, -104.0, 1e30, -1e30,
                        np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 8388607.5, -8388607.5, 2.0 ** 31, 1e10],
                       np.float32)
    wide = np.exp(rng.uniform(-80, 80, 300)) * np.sign(rng.normal(size=300))
    return np.concatenate([special, rng.normal(0, 3, 300), rng.normal(0, 100, 100), rng.uniform(-0.01, 0.01, 60),
                           (rng.integers(-50, 50, 40) + 0.5), wide]).astype(np.float32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float32(core, op):
    x_vals = _float_inputs(np.random.default_rng(len(op)))
    if op in ("LOG", "SQRT", "RSQRT"):
        x_vals = np.concatenate([np.abs(x_vals), x_vals[:30]])
    x, y = T(0, x_vals.shape, np.float32), T(1, x_vals.shape, np.float32)
    host, mcu, _ = run_both(core, op, {}, [x], [y], {0: x_vals})
    h, m = host[0], mcu[0]
    nan = np.isnan(h)
    if op not in LIBM_OPS and op not in INVALID_NAN_OPS:
        assert_same(host, mcu, f"{op} float32")
        return
    assert np.array_equal(nan, np.isnan(m)), f"{op}: NaN in different places"
    if op in INVALID_NAN_OPS:
        assert_same([h[~nan]], [m[~nan]], f"{op} float32")
        return
    near = ~nan & ((np.abs(x_vals) < TRIG_LARGE_ARGUMENT) | (op not in ("SIN", "COS")))
    assert_close_ulp([h[near]], [m[near]], f"{op} float32 vs glibc", LIBM_MAX_ULP)
    far = ~nan & ~near
    assert np.all(np.abs(h[far].astype(np.float64) - m[far]) < TRIG_MAX_ABS), f"{op} float32, large arguments"
    device = device_libm(core, LIBM_OPS[op], x_vals)
    if op == "ELU":
        device = np.where(x_vals < np.float32(0), device, x_vals)
    assert_same([device], mcu, f"{op} with newlib")


def _q(idx, dtype, shape, scale, zp):
    return T(idx, shape, dtype, scales=[scale], zero_points=[zp])


@pytest.mark.parametrize("core", CORES_FAST)
def test_quantized_abs_and_rsqrt(core):
    rng = np.random.default_rng(4)
    shape = (3, 85)
    for k in range(6):
        for op in ("ABS", "RSQRT"):
            for dtype in (np.int8, np.int16):
                i16 = dtype == np.int16
                si, so = rng.uniform(0.002, 0.2) / (300 if i16 else 1), rng.uniform(0.002, 0.2) / (30 if i16 else 1)
                if op == "ABS" and k == 0:
                    so = si                                   # no rescale
                zi = 0 if i16 else int(rng.integers(-128, 100))
                zo = 0 if i16 else int(rng.integers(-128, 0))
                info = np.iinfo(dtype)
                lo = zi if op == "RSQRT" else int(info.min)
                x = rng.integers(lo, int(info.max) + 1, size=shape)
                x.flat[:3] = [lo, int(info.max), zi]
                host, mcu, _ = run_both(core, op, {}, [_q(0, dtype, shape, si, zi)], [_q(1, dtype, shape, so, zo)],
                                        {0: x})
                assert_same(host, mcu, f"{op} {np.dtype(dtype).name} case {k}")
    x = np.arange(-32768, 32768).astype(np.int16)
    host, mcu, _ = run_both(core, "ABS", {}, [T(0, x.shape, np.int16)], [T(1, x.shape, np.int16)], {0: x})
    assert_same(host, mcu, "ABS int16 unquantized, every input")


@pytest.mark.parametrize("core", CORES_FAST)
def test_every_int16_rsqrt_input(core):
    x = np.arange(0, 32768).astype(np.int16)
    host, mcu, _ = run_both(core, "RSQRT", {}, [_q(0, np.int16, x.shape, 0.0007, 0)],
                            [_q(1, np.int16, x.shape, 0.003, 0)], {0: x})
    assert_same(host, mcu, "RSQRT int16, every valid input")


@pytest.mark.parametrize("core", CORES_FAST)
def test_elu_int8_logical_not_zeros_like(core):
    rng = np.random.default_rng(9)
    x = np.arange(-128, 128).astype(np.int8)
    for k in range(3):
        xi = _q(0, np.int8, x.shape, rng.uniform(0.01, 0.1), int(rng.integers(-50, 50)))
        yo = _q(1, np.int8, x.shape, rng.uniform(0.005, 0.05), int(rng.integers(-128, -60)))
        host, mcu, _ = run_both(core, "ELU", {}, [xi], [yo], {0: x})
        assert_same(host, mcu, f"ELU int8 case {k}")
    b = rng.integers(0, 2, 77).astype(np.bool_)
    host, mcu, _ = run_both(core, "LOGICAL_NOT", {}, [T(0, b.shape, np.bool_)], [T(1, b.shape, np.bool_)], {0: b})
    assert_same(host, mcu, "LOGICAL_NOT")
    for dtype in (np.int8, np.int32, np.int64, np.float32):
        v = (rng.normal(0, 50, 37)).astype(dtype)
        host, mcu, _ = run_both(core, "ZEROS_LIKE", {}, [T(0, v.shape, dtype)], [T(1, v.shape, dtype)], {0: v})
        assert_same(host, mcu, f"ZEROS_LIKE {np.dtype(dtype).name}")
        assert not np.any(mcu[0])


@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_int16_logistic_tanh_every_input(core, op):
    """mrt_sigmoid_s16 on all 65,536 inputs: power-of-two input scales (the exact path) and
    general ones (the 1/(3*4096) rescale)."""
    x = np.arange(-32768, 32768).astype(np.int16)
    for scale in (2.0 ** -12, 2.0 ** -11, 1 / 3000, 3e-5, 0.001):
        if op == "LOGISTIC" and scale == 2.0 ** -11:
            scale = 2.0 ** -13
        host, mcu, _ = run_both(core, op, {}, [_q(0, np.int16, x.shape, scale, 0)],
                                [_q(1, np.int16, x.shape, 2.0 ** -15, 0)], {0: x})
        assert_same(host, mcu, f"{op} int16 scale {scale}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_quantize_int8_uint8(core):
    """QUANTIZE int8 <-> uint8 (mrt_requantize_u8): general rescales and TFLM's XOR fast path,
    every input value."""
    cases = [(np.int8, np.uint8, 0.05, -5, 0.05, 123), (np.uint8, np.int8, 0.02, 130, 0.05, -3),
             (np.int8, np.uint8, 0.1, 0, 0.1, 128), (np.uint8, np.int8, 0.1, 128, 0.1, 0),   # x ^ 0x80
             (np.int8, np.uint8, 0.01, 3, 0.3, 200), (np.uint8, np.int8, 0.5, 7, 0.004, 100)]
    for idt, odt, si, zi, so, zo in cases:
        x = np.arange(256).astype(np.uint8).view(idt) if idt == np.int8 else np.arange(256).astype(np.uint8)
        host, mcu, _ = run_both(core, "QUANTIZE", {}, [_q(0, idt, x.shape, si, zi)], [_q(1, odt, x.shape, so, zo)],
                                {0: x})
        assert_same(host, mcu, f"QUANTIZE {np.dtype(idt).name} -> {np.dtype(odt).name} ({si}, {zi}) -> ({so}, {zo})")
