"""BATCH_MATMUL on the virtual MCU (cortexm/src/mrt_batch_matmul.c) vs its numpy twin
(micro_rt.kernels.batch_matmul), bit for bit: int8 (zero points on both operands), int16 and
float32 (soft-float M0+ and the three FPU builds), adj_x / adj_y, broadcast batch axes and
ranks that differ, a constant rhs (placed in flash transposed) and non-constant operands."""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_FAST, CORES_FLOAT, T, assert_same, run_both

SHAPES = [((2, 3, 4), (2, 4, 5)), ((3, 4), (4, 6)), ((2, 3, 4), (1, 4, 5)), ((1, 3, 4), (3, 4, 2)),
          ((3, 4), (2, 2, 4, 5)), ((2, 1, 2, 3, 4), (1, 2, 1, 4, 3)), ((1, 5, 17), (17, 3))]


def bmm_case(rng, dtype, lhs, rhs, adj_x, adj_y, const_rhs):
    lhs = (*lhs[:-2], lhs[-1], lhs[-2]) if adj_x else lhs
    rhs = (*rhs[:-2], rhs[-1], rhs[-2]) if adj_y else rhs
    a = (*lhs[:-2], lhs[-1], lhs[-2]) if adj_x else lhs
    b = (*rhs[:-2], rhs[-1], rhs[-2]) if adj_y else rhs
    out = (*np.broadcast_shapes(a[:-2], b[:-2]), a[-2], b[-1])

    def values(shape):
        if dtype == "float32":
            return rng.normal(0, 1, shape).astype(np.float32)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max + 1, shape)

    def quant(scale, zp):
        return {} if dtype == "float32" else dict(scales=[scale], zero_points=[0 if dtype == "int16" else zp])

    x = T(0, lhs, dtype, **quant(0.05, int(rng.integers(-10, 10))))
    y = T(1, rhs, dtype, data=values(rhs) if const_rhs else None, **quant(0.03, int(rng.integers(-10, 10))))
    o = T(2, out, dtype, **quant(0.5 if dtype == "int8" else 0.01, int(rng.integers(-10, 10))))
    seeds = {0: values(lhs)}
    if not const_rhs:
        seeds[1] = values(rhs)
    return "BATCH_MATMUL", {"adj_x": adj_x, "adj_y": adj_y}, [x, y], [o], seeds


CASES = ([("float32", core) for core in CORES_FLOAT] + [(dt, core) for dt in ("int8", "int16") for core in CORES_FAST])


@pytest.mark.parametrize("dtype,core", CASES)
def test_batch_matmul(dtype, core):
    rng = np.random.default_rng(51)
    for lhs, rhs in SHAPES:
        for adj_x in (False, True):
            for adj_y in (False, True):
                for const_rhs in (False, True):
                    h, m, result = run_both(core, *bmm_case(rng, dtype, lhs, rhs, adj_x, adj_y, const_rhs))
                    assert result.cycles > 0
                    assert_same(h, m, f"{dtype} {lhs} x {rhs} adj_x={adj_x} adj_y={adj_y} const={const_rhs} {core}")
