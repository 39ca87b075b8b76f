"""LOG_SOFTMAX, L2_NORMALIZATION (cortexm/src/mrt_normalization.c) and int16 SOFTMAX (CMSIS-NN's
arm_softmax_s16, cortexm/src/mrt_softmax.c) on the virtual MCU vs the numpy twins: the integer
kernels bit for bit (one path on every core: M0+ and M4 checked), L2_NORMALIZATION float32 bit for
bit (sqrtf is correctly rounded in newlib and glibc), LOG_SOFTMAX float32 within LOG_SOFTMAX_BOUND
(newlib's expf / logf against the host's C library, all four cores).
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import softmax_s16_wrap_edge_row
from vmcu_cases import CORES_FAST, CORES_FLOAT, T, assert_close_ulp_or_abs, assert_same, rand_f32, run_both

# LOG_SOFTMAX float32 = (x - max) - logf(sum of expf): the sum is within a few ulp of the host's,
# so logf(sum) is within a few ulp(1.0) absolutely (sum >= 1), however small log(sum) is.
# Bound: 4 ulp of the output or 4 ulp of 1.0, whichever is larger (measured over 480 rows of
# 1-200 elements, scales 0.03-30, M0+ and M4: at most 2).
LOG_SOFTMAX_ULP = 4


SHAPES = [(3, 9), (1, 1), (2, 3, 40), (4, 130)]


@pytest.mark.parametrize("core", CORES_FAST)
def test_log_softmax_s8(core):
    rng = np.random.default_rng(51)
    for shape in SHAPES:
        for scale in (0.01, 0.1, 0.7):
            x = T(0, shape, np.int8, scales=[scale], zero_points=[int(rng.integers(-20, 20))])
            y = T(1, shape, np.int8, scales=[16 / 256], zero_points=[127])
            for data in (rng.integers(-128, 128, size=shape), rng.choice([-128, 127, 0], size=shape)):
                h, m, _ = run_both(core, "LOG_SOFTMAX", {}, [x], [y], {0: data})
                assert_same(h, m, f"log_softmax s8 {shape} {scale}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_log_softmax_f32(core):
    rng = np.random.default_rng(52)
    for shape in SHAPES:
        for scale in (0.5, 3.0, 30.0):
            x, y = T(0, shape, np.float32), T(1, shape, np.float32)
            h, m, _ = run_both(core, "LOG_SOFTMAX", {}, [x], [y], {0: rand_f32(rng, shape, scale)})
            assert_close_ulp_or_abs(h, m, f"log_softmax f32 {shape} {scale}", LOG_SOFTMAX_ULP)


@pytest.mark.parametrize("core", CORES_FAST)
def test_l2norm_s8(core):
    rng = np.random.default_rng(53)
    for shape in SHAPES + [(2, 2, 2, 5)]:
        x = T(0, shape, np.int8, scales=[0.05], zero_points=[int(rng.integers(-20, 20))])
        y = T(1, shape, np.int8, scales=[1 / 128], zero_points=[0])
        for data in (rng.integers(-128, 128, size=shape), np.full(shape, int(x.zero_points[0])),
                     rng.choice([-128, 127], size=shape)):
            h, m, _ = run_both(core, "L2_NORMALIZATION", {}, [x], [y], {0: data})
            assert_same(h, m, f"l2norm s8 {shape}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_l2norm_f32(core):
    rng = np.random.default_rng(54)
    for shape in SHAPES:
        x, y = T(0, shape, np.float32), T(1, shape, np.float32)
        for data in (rand_f32(rng, shape, 2.0), np.zeros(shape, np.float32), rand_f32(rng, shape, 1e-8)):
            h, m, _ = run_both(core, "L2_NORMALIZATION", {}, [x], [y], {0: data})
            assert_same(h, m, f"l2norm f32 {shape}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_softmax_s16(core):
    rng = np.random.default_rng(55)
    for shape in SHAPES:
        for scale, beta in ((0.001, 1.0), (3e-4, 0.5), (1 / 32768, 2.0)):
            x = T(0, shape, np.int16, scales=[scale], zero_points=[0])
            y = T(1, shape, np.int16, scales=[1 / 32768], zero_points=[0])
            for data in (rng.integers(-32768, 32768, size=shape), rng.choice([-32768, 32767, 0], size=shape),
                         rng.integers(-40, 40, size=shape)):
                h, m, _ = run_both(core, "SOFTMAX", {"beta": beta}, [x], [y], {0: data})
                assert_same(h, m, f"softmax s16 {shape} {scale} {beta}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_softmax_s16_saturates_as_tflm(core):
    row = softmax_s16_wrap_edge_row(0.001)
    x = T(0, (1, row.size), np.int16, scales=[0.001], zero_points=[0])
    y = T(1, (1, row.size), np.int16, scales=[1 / 32768], zero_points=[0])
    h, m, _ = run_both(core, "SOFTMAX", {"beta": 1.0}, [x], [y], {0: row[None]})
    assert_same(h, m, "softmax s16 at the wrap edge")
