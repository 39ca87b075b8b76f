"""FULLY_CONNECTED on the virtual MCU (cortexm/src/mrt_fully_connected.c) vs the numpy twin, bit for
bit: int8 (per tensor and per channel) and float32. 16x8: test_vmcu_conv.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_ALL, CORES_FLOAT, T, rand_f32, assert_same, fc_case, run_both)


@pytest.mark.parametrize("core", CORES_ALL)
def test_fully_connected(core):
    rng = np.random.default_rng(3)
    for args in [(1, 16, 10, False, "NONE"), (3, 37, 9, False, "RELU"), (2, 64, 5, True, "NONE"),
                 (1, 7, 1, False, "RELU6"), (4, 250, 12, True, "NONE")]:
        h, m, _ = run_both(core, *fc_case(rng, *args))
        assert_same(h, m, f"fc {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_fully_connected_f32(core):
    rng = np.random.default_rng(23)
    for in_shape, out_depth, act, bias, keep in [((1, 16), 10, "NONE", True, False), ((3, 37), 9, "RELU", False, False),
                                                 ((2, 3, 8), 5, "RELU6", True, True), ((4, 250), 12, "NONE", True, False),
                                                 ((1, 7), 1, "RELU_N1_TO_1", False, False)]:
        depth = in_shape[-1]
        x = T(0, in_shape, np.float32)
        w = T(1, (out_depth, depth), np.float32, data=rand_f32(rng, (out_depth, depth), 0.3))
        b = T(2, (out_depth,), np.float32, data=rand_f32(rng, out_depth))
        out_shape = tuple(in_shape[:-1]) + (out_depth,) if keep else (int(np.prod(in_shape)) // depth, out_depth)
        y = T(3, out_shape, np.float32)
        h, m, _ = run_both(core, "FULLY_CONNECTED", dict(fused_activation_function=act, keep_num_dims=keep),
                           [x, w] + ([b] if bias else []), [y], {0: rand_f32(rng, in_shape)})
        assert_same(h, m, f"fc f32 {in_shape} {out_depth}")
