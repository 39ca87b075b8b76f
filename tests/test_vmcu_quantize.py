"""QUANTIZE / DEQUANTIZE between float32 and int8 / int16 on the virtual MCU
(cortexm/src/mrt_quantize.c) vs the numpy twins, bit for bit. Integer to integer QUANTIZE:
test_vmcu_unary.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, CORES_FLOAT, T, rand_i8, assert_same, run_both)


@pytest.mark.parametrize("core", CORES_FAST)
def test_quantize_dequantize(core):
    rng = np.random.default_rng(8)
    x = T(0, (3, 50), np.float32)
    y = T(1, (3, 50), np.int8, scales=[0.05], zero_points=[3])
    vals = np.concatenate([rng.normal(0, 4, 140), [0.025, -0.025, 0.075, 1e10, -1e10, 6.4, -6.45, 0.0, 2.5, -2.5]])
    h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y], {0: vals.astype(np.float32)})
    assert_same(h, m, "quantize")
    x = T(0, (4, 33), np.int8, scales=[0.0371], zero_points=[-7])
    y = T(1, (4, 33), np.float32)
    h, m, _ = run_both(core, "DEQUANTIZE", {}, [x], [y], {0: rand_i8(rng, (4, 33))})
    assert_same(h, m, "dequantize")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_quantize_dequantize_int16_float(core):
    rng = np.random.default_rng(29)
    x = T(0, (3, 50), np.float32)
    y = T(1, (3, 50), np.int16, scales=[0.001], zero_points=[0])
    vals = np.concatenate([rng.normal(0, 10, 140), [0.0005, -0.0005, 0.0015, 1e10, -1e10, 32.7675, -32.7685,
                                                   0.0, 2.5, -2.5]])
    h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y], {0: vals.astype(np.float32)})
    assert_same(h, m, "quantize f32->i16")
    x = T(0, (4, 33), np.int16, scales=[0.000371], zero_points=[0])
    y = T(1, (4, 33), np.float32)
    h, m, _ = run_both(core, "DEQUANTIZE", {}, [x], [y], {0: rng.integers(-32768, 32768, size=(4, 33))})
    assert_same(h, m, "dequantize i16->f32")
