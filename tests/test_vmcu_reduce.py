"""MEAN on the virtual MCU (cortexm/src/mrt_reduce.c) vs the numpy twin, bit for bit: int8 and float32.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, CORES_FLOAT, T, rand_f32, q8_tensor, rand_i8, assert_same, run_both)


@pytest.mark.parametrize("core", CORES_FAST)
def test_mean(core):
    rng = np.random.default_rng(10)
    for shape, axes, keep in [((1, 5, 7, 16), [1, 2], True), ((2, 3, 4, 5), [3], False), ((3, 10), [0], False)]:
        x = q8_tensor(rng, 0, shape)
        ax = T(1, (len(axes),), np.int32, data=axes)
        out_shape = tuple(1 if (d in axes and keep) else s for d, s in enumerate(shape) if keep or d not in axes)
        y = T(2, out_shape, np.int8, scales=[rng.uniform(0.01, 0.1)], zero_points=[int(rng.integers(-10, 10))])
        h, m, _ = run_both(core, "MEAN", {"keep_dims": keep}, [x, ax], [y], {0: rand_i8(rng, shape)})
        assert_same(h, m, f"mean {shape} {axes}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_mean_f32(core):
    rng = np.random.default_rng(28)
    for shape, axes, keep in [((1, 5, 7, 16), [1, 2], True), ((2, 3, 4, 5), [3], False), ((3, 10), [0], False),
                              ((2, 3, 4, 5), [-1, 0, 3], False), ((4, 6), [0, 1], True)]:
        x = T(0, shape, np.float32)
        ax = T(1, (len(axes),), np.int32, data=axes)
        norm = {a % len(shape) for a in axes}
        out_shape = tuple(1 if (d in norm and keep) else s for d, s in enumerate(shape) if keep or d not in norm)
        y = T(2, out_shape, np.float32)
        h, m, _ = run_both(core, "MEAN", {"keep_dims": keep}, [x, ax], [y], {0: rand_f32(rng, shape, 3.0)})
        assert_same(h, m, f"mean f32 {shape} {axes}")
