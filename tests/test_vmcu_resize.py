"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR on the virtual MCU (cortexm/src/mrt_resize.c) vs
their numpy twin (micro_rt.kernels.resize), bit for bit: nearest for float32 (every bit pattern,
NaN and infinities included, copied as words), int8 and int16; bilinear float32 (soft-float M0+
and the three FPU builds) and int8; upscaling, downscaling, size 1, align_corners and
half_pixel_centers. The code has no DSP path: M0+ and M4 cover integer, every core float."""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_FAST, CORES_FLOAT, T, assert_same, run_both

GEOMETRIES = [((1, 3, 4, 2), (6, 8)), ((1, 3, 4, 2), (5, 7)), ((2, 5, 7, 3), (3, 2)), ((1, 4, 4, 1), (1, 1)),
              ((1, 7, 3, 5), (16, 9))]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]


def resize_case(rng, op, dtype, in_shape, size, align, half):
    n, _, _, c = in_shape
    quant = {} if dtype == "float32" else dict(scales=[0.05], zero_points=[0])
    x = T(0, in_shape, dtype, **quant)
    sz = T(1, (2,), np.int32, data=np.array(size))
    y = T(2, (n, *size, c), dtype, **quant)
    if dtype == "float32":
        seed = rng.normal(0, 10, in_shape).astype(np.float32)
        seed.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, -0.0][:seed.size]
    else:
        info = np.iinfo(dtype)
        seed = rng.integers(info.min, info.max + 1, in_shape)
    return op, {"align_corners": align, "half_pixel_centers": half}, [x, sz], [y], {0: seed}


CASES = ([(op, "float32", core) for op in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR") for core in CORES_FLOAT]
         + [(op, dt, core) for op, dt in (("RESIZE_NEAREST_NEIGHBOR", "int8"), ("RESIZE_NEAREST_NEIGHBOR", "int16"),
                                          ("RESIZE_BILINEAR", "int8")) for core in CORES_FAST])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op,dtype,core", CASES)
def test_resize(op, dtype, core):
    rng = np.random.default_rng(41)
    for in_shape, size in GEOMETRIES:
        for align, half in FLAGS:
            if op == "RESIZE_BILINEAR" and align and half:
                continue
            h, m, result = run_both(core, *resize_case(rng, op, dtype, in_shape, size, align, half))
            assert result.cycles > 0
            what = f"{op} {dtype} {in_shape}->{size} align={align} half={half} on {core}"
            if op == "RESIZE_BILINEAR" and dtype == "float32":
                # inf * 0 and inf - inf give a NaN whose sign bit is the FPU's choice (x86's
                # default NaN is negative, ARM's positive): NaN where the host has NaN, the
                # same bits everywhere else.
                nan = np.isnan(h[0])
                assert np.array_equal(nan, np.isnan(m[0])), what
                assert_same([h[0][~nan]], [m[0][~nan]], what)
            elif dtype == "float32":
                assert np.array_equal(h[0].view(np.uint32), m[0].view(np.uint32)), what
            else:
                assert_same(h, m, what)
