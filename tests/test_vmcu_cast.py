"""CAST on the virtual MCU (cortexm/src/mrt_cast.c) vs its numpy twin (kernels/shape_ops.cast_values),
bit for bit, every pair of int8, int16, int32, uint32, float32 and bool, on the soft-float M0+ and
the three FPU builds (float -> integer saturation, NaN, -0, halves, uint32 above 2^31)."""
from __future__ import annotations

import numpy as np
import pytest

from test_kernels_cast import TYPES, cast_inputs
from vmcu_cases import CORES_FLOAT, T, assert_same, run_both


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
def test_cast_every_type_pair(core):
    rng = np.random.default_rng(11)
    for src, sdt in TYPES.items():
        x = cast_inputs(sdt, rng)
        for dst, ddt in TYPES.items():
            host, mcu, _ = run_both(core, "CAST", {}, [T(0, x.shape, sdt)], [T(1, x.shape, ddt)], {0: x})
            assert_same(host, mcu, f"CAST {src} -> {dst}")
