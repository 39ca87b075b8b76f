"""SOFTMAX on the virtual MCU (cortexm/src/mrt_softmax.c) vs the numpy twin: int8 -> int8 / int16 bit
for bit; float32 within SOFTMAX_MAX_ULP (newlib's expf on the device, glibc's on the host) and
bit-equal to TFLM's formula evaluated with the firmware's own expf.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, CORES_FLOAT, SOFTMAX_MAX_ULP, T, rand_f32, assert_close_ulp, assert_same,
                        device_libm, run_both, softmax_case)


@pytest.mark.parametrize("core", CORES_FAST)
def test_softmax(core):
    rng = np.random.default_rng(6)
    for args in [(1, 10, 1.0, False), (4, 37, 1.0, False), (2, 12, 0.5, True), (3, 300, 1.0, False)]:
        h, m, _ = run_both(core, *softmax_case(rng, *args))
        assert_same(h, m, f"softmax {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_softmax_f32(core):
    rng = np.random.default_rng(27)
    for rows, depth, beta, scale in [(1, 10, 1.0, 1.0), (4, 37, 1.0, 5.0), (2, 12, 0.5, 20.0), (3, 300, 1.0, 2.0),
                                     (2, 1, 1.0, 1.0)]:
        x, y = T(0, (rows, depth), np.float32), T(1, (rows, depth), np.float32)
        xv = rand_f32(rng, (rows, depth), scale)
        h, m, _ = run_both(core, "SOFTMAX", dict(beta=beta), [x], [y], {0: xv})
        assert_close_ulp(h, m, f"softmax f32 {(rows, depth, beta)}", SOFTMAX_MAX_ULP)
        if rows * depth <= 100:
            # TFLM's float softmax with the device's expf: bit-equal.
            arg = (xv - xv.max(axis=1, keepdims=True)) * np.float32(beta)
            e = device_libm(core, "expf", arg)
            total = np.add.accumulate(e, axis=1, dtype=np.float32)[:, -1:]
            assert_same([e / total], m, f"softmax f32 {(rows, depth, beta)} with newlib expf")
