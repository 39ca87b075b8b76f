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


@pytest.mark.parametrize("core", CORES_FAST)
def test_quantize_int32_to_int8_int16(core):
    """QUANTIZE int32 -> int8 / int16 (TFLM's Requantize: MultiplyByQuantizedMultiplier of the input
    minus its zero point, plus the output's, clamped; mrt_unary_int): 20 seeds of scales, zero points
    and values over the whole int32 range with its edges."""
    for seed in range(20):
        rng = np.random.default_rng(300 + seed)
        for out_dtype in (np.int8, np.int16):
            info = np.iinfo(out_dtype)
            in_scale = float(rng.uniform(1e-4, 0.5))
            out_scale = in_scale * float(rng.choice([rng.uniform(0.05, 1.0), rng.uniform(1.0, 3e4)]))
            out_zp = int(rng.integers(info.min, info.max + 1)) if out_dtype == np.int8 else 0
            x = T(0, (4, 33), np.int32, scales=[in_scale], zero_points=[int(rng.integers(-1000, 1000))])
            y = T(1, (4, 33), out_dtype, scales=[out_scale], zero_points=[out_zp])
            vals = np.where(rng.random((4, 33)) < 0.5, rng.integers(-(1 << 31), 1 << 31, size=(4, 33)),
                            rng.integers(-40000, 40000, size=(4, 33))).astype(np.int32)
            vals.reshape(-1)[:5] = [-(1 << 31), (1 << 31) - 1, 0, -1, 1]
            h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y], {0: vals})
            assert_same(h, m, f"quantize int32->{np.dtype(out_dtype).name} seed {seed}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_dequantize_uint8(core):
    """DEQUANTIZE uint8 -> float32 on every byte value (mrt_dequantize_u8_f32), 20 seeds of scale and
    zero point."""
    for seed in range(20):
        rng = np.random.default_rng(400 + seed)
        x = T(0, (2, 128), np.uint8, scales=[float(rng.uniform(1e-4, 2.0))], zero_points=[int(rng.integers(0, 256))])
        y = T(1, (2, 128), np.float32)
        vals = rng.permutation(256).astype(np.uint8).reshape(2, 128)
        h, m, _ = run_both(core, "DEQUANTIZE", {}, [x], [y], {0: vals})
        assert_same(h, m, f"dequantize uint8 seed {seed}")
