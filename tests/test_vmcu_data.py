"""Data movement on the virtual MCU (cortexm/src/mrt_data.c: RESHAPE, TRANSPOSE, PAD, CONCATENATION,
PACK, STRIDED_SLICE) vs the numpy twins, byte for byte, for 1, 2 and 4-byte elements.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, T, q16_tensor, q8_tensor, rand_i16, rand_i8, assert_same, run_both)


@pytest.mark.parametrize("core", CORES_FAST)
def test_data_movement(core):
    rng = np.random.default_rng(9)
    x = q8_tensor(rng, 0, (2, 3, 4, 5))
    # reshape
    y = T(1, (6, 20), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "RESHAPE", {}, [x], [y], {0: rand_i8(rng, x.shape)})
    assert_same(h, m, "reshape")
    # transpose
    perm = T(1, (4,), np.int32, data=[2, 0, 3, 1])
    y = T(2, (4, 2, 5, 3), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "TRANSPOSE", {}, [x, perm], [y], {0: rand_i8(rng, x.shape)})
    assert_same(h, m, "transpose")
    # pad
    pads = T(1, (4, 2), np.int32, data=[[0, 0], [1, 2], [0, 1], [2, 0]])
    y = T(2, (2, 6, 5, 7), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "PAD", {}, [x, pads], [y], {0: rand_i8(rng, x.shape)})
    assert_same(h, m, "pad")
    # concatenation along axis 2 and pack along axis 1
    a = q8_tensor(rng, 0, (2, 3, 4, 5))
    b = T(1, (2, 3, 2, 5), np.int8, scales=a.scales, zero_points=a.zero_points)
    y = T(2, (2, 3, 6, 5), np.int8, scales=a.scales, zero_points=a.zero_points)
    h, m, _ = run_both(core, "CONCATENATION", {"axis": 2}, [a, b], [y],
                       {0: rand_i8(rng, a.shape), 1: rand_i8(rng, b.shape)})
    assert_same(h, m, "concat")
    a = T(0, (3, 4), np.float32)
    b = T(1, (3, 4), np.float32)
    y = T(2, (3, 2, 4), np.float32)
    h, m, _ = run_both(core, "PACK", {"axis": 1, "values_count": 2}, [a, b], [y],
                       {0: rng.normal(size=(3, 4)), 1: rng.normal(size=(3, 4))})
    assert_same(h, m, "pack")
    # strided slice
    x = q8_tensor(rng, 0, (1, 8, 6, 4))
    begin = T(1, (4,), np.int32, data=[0, 1, 5, 0])
    end = T(2, (4,), np.int32, data=[1, 7, 0, 4])
    strides = T(3, (4,), np.int32, data=[1, 2, -2, 1])
    y = T(4, (1, 3, 3, 4), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "STRIDED_SLICE", {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0},
                       [x, begin, end, strides], [y], {0: rand_i8(rng, x.shape)})
    assert_same(h, m, "strided_slice")


@pytest.mark.parametrize("core", CORES_FAST)
def test_data_movement_int16(core):
    rng = np.random.default_rng(34)
    x = q16_tensor(rng, 0, (2, 3, 4, 5))
    pads = T(1, (4, 2), np.int32, data=[[0, 0], [1, 2], [0, 1], [2, 0]])
    y = T(2, (2, 6, 5, 7), np.int16, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "PAD", {}, [x, pads], [y], {0: rand_i16(rng, x.shape)})
    assert_same(h, m, "pad int16")
    x = q16_tensor(rng, 0, (1, 8, 6, 4))
    begin = T(1, (4,), np.int32, data=[0, 1, 5, 0])
    end = T(2, (4,), np.int32, data=[1, 7, 0, 4])
    strides = T(3, (4,), np.int32, data=[1, 2, -2, 1])
    y = T(4, (1, 3, 3, 4), np.int16, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "STRIDED_SLICE", {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0},
                       [x, begin, end, strides], [y], {0: rand_i16(rng, x.shape)})
    assert_same(h, m, "strided_slice int16")
