"""Activations and integer requantization on the virtual MCU (cortexm/src/mrt_unary.c) vs the numpy
twins: int8 and int16 bit for bit; float32 bit for bit except LOGISTIC / TANH (within MAX_ULP,
and bit-equal to TFLM's formula evaluated with the firmware's own expf / tanhf).
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, CORES_FLOAT, T, rand_f32, q16_tensor, rand_i16, assert_close_ulp, assert_same,
                        device_libm, run_both, unary_case)


@pytest.mark.parametrize("core", CORES_FAST)
def test_unary(core):
    rng = np.random.default_rng(7)
    for _ in range(3):
        for op, opts in [("RELU", {}), ("RELU6", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("LOGISTIC", {}),
                         ("TANH", {}), ("HARD_SWISH", {}), ("QUANTIZE", {})]:
            h, m, _ = run_both(core, *unary_case(rng, op, (2, 129), opts))
            assert_same(h, m, op)
        # every int8 value once
        op, opts, ins, outs, _ = unary_case(rng, "LOGISTIC", (256,))
        h, m, _ = run_both(core, op, opts, ins, outs, {0: np.arange(-128, 128)})
        assert_same(h, m, "logistic all")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
def test_unary_f32(core):
    rng = np.random.default_rng(26)
    special = np.array([0.0, -0.0, 3.0, -3.0, 6.0, -6.0, 1e-40, -1e-40, 16.619047, 16.62, -9.0, -9.0001, 30.0,
                        -30.0, 1e30, -1e30, 88.0, -104.0, 0.5, -0.5], np.float32)
    x_vals = np.concatenate([special, rand_f32(rng, 400, 3.0), rand_f32(rng, 200, 12.0), rand_f32(rng, 100, 0.01)])
    for op, opts in [("RELU", {}), ("RELU6", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("LEAKY_RELU", {"alpha": -1.5}),
                     ("HARD_SWISH", {}), ("LOGISTIC", {}), ("TANH", {})]:
        x, y = T(0, x_vals.shape, np.float32), T(1, x_vals.shape, np.float32)
        h, m, _ = run_both(core, op, opts, [x], [y], {0: x_vals})
        if op in ("LOGISTIC", "TANH"):
            assert_close_ulp(h, m, op)
            # ... and bit-equal to TFLM's formula evaluated with the device's own libm.
            xs = x_vals[:120]
            if op == "TANH":
                ref = device_libm(core, "tanhf", xs)
            else:
                f1 = np.float32(1.0)
                e_neg = device_libm(core, "expf", -xs)
                e_pos = device_libm(core, "expf", xs)
                ref = np.where(xs > np.float32(16.619047164916992188), f1,
                               np.where(xs < np.float32(-9.0), e_pos, f1 / (f1 + e_neg)))
            assert_same([ref], [m[0][:120]], f"{op} with newlib")
        else:
            assert_same(h, m, f"{op} f32")


@pytest.mark.parametrize("core", CORES_FAST)
def test_unary_and_requantize_int16(core):
    rng = np.random.default_rng(33)
    for op, opts in [("RELU", {}), ("RELU6", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("LEAKY_RELU", {"alpha": -0.7})]:
        x = q16_tensor(rng, 0, (3, 100))
        y = (q16_tensor(rng, 1, (3, 100)) if op != "RELU6" else
             T(1, (3, 100), np.int16, scales=x.scales, zero_points=[0]))
        h, m, _ = run_both(core, op, opts, [x], [y], {0: rand_i16(rng, x.shape)})
        assert_same(h, m, f"{op} int16")
    for idt, odt, ozp, ratio in [(np.int16, np.int8, 5, 200.0), (np.int8, np.int16, 0, 0.01), (np.int16, np.int16, 0, 0.7),
                                 (np.int16, np.int16, 0, 3.0), (np.int16, np.int32, 0, 0.3), (np.int8, np.int32, 0, 0.05)]:
        sc = rng.uniform(0.0005, 0.05)
        x = T(0, (2, 77), idt, scales=[sc], zero_points=[3 if idt == np.int8 else 0])
        y = T(1, (2, 77), odt, scales=[sc * ratio * rng.uniform(0.8, 1.2)], zero_points=[ozp])
        info = np.iinfo(idt)
        h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y],
                           {0: rng.integers(info.min, int(info.max) + 1, size=x.shape)})
        assert_same(h, m, f"requantize {np.dtype(idt).name}->{np.dtype(odt).name}")
