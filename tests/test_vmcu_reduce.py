"""The reduce family on the virtual MCU (cortexm/src/mrt_reduce.c) vs the numpy twins, bit for bit:
MEAN (int8, int16, float32), SUM (int8, int16, float32), REDUCE_MAX / REDUCE_MIN (int8,
float32), REDUCE_ALL (bool), ARG_MAX / ARG_MIN (int8, float32), CUMSUM (int8, float32).
The generic int8 / int16 kernels have one path on every core (M0+ and M4 checked); the float32 ones run
soft-float on the M0+ and on three FPUs (all four checked).
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_FAST, CORES_FLOAT, T, assert_same, q8_tensor, rand_f32, rand_i8, run_both


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


# (input shape, axes, keep_dims): merged and unmerged axis groups, negative and repeated axes,
# everything reduced, nothing left to merge
SHAPES = [((1, 5, 7, 16), [1, 2], True), ((2, 3, 4, 5), [3], False), ((3, 10), [0], False),
          ((2, 3, 4, 5), [-1, 0, 3], False), ((4, 6), [0, 1], True), ((2, 3, 4, 5, 2), [1, 3], False),
          ((7,), [0], False)]


def _same(host, mcu, what: str) -> None:
    """assert_same on flattened outputs (a full reduction's output is 0-D)."""
    assert_same([a.reshape(-1) for a in host], [a.reshape(-1) for a in mcu], what)


def _out_shape(shape, axes, keep):
    norm = {a % len(shape) for a in axes}
    return tuple(1 if (d in norm and keep) else s for d, s in enumerate(shape) if keep or d not in norm)


def _reduce(core, op, dtype, rng, shape, axes, keep, same_quant=False, edges=False):
    info = np.iinfo(dtype) if dtype not in (np.float32, np.bool_) else None
    if info is not None:
        x = T(0, shape, dtype, scales=[rng.uniform(0.01, 0.1)],
              zero_points=[int(rng.integers(-20, 20)) if dtype == np.int8 else 0])
        y = T(2, _out_shape(shape, axes, keep), dtype,
              scales=x.scales if same_quant else [rng.uniform(0.01, 0.5)],
              zero_points=x.zero_points if same_quant or dtype == np.int16 else [int(rng.integers(-10, 10))])
        data = rng.integers(info.min, info.max + 1, size=shape)
        if edges:
            data = rng.choice([info.min, info.max, int(x.zero_points[0])], size=shape)
    elif dtype == np.bool_:
        x, y = T(0, shape, np.bool_), T(2, _out_shape(shape, axes, keep), np.bool_)
        data = rng.random(size=shape) < (0.9 if edges else 0.5)
    else:
        x, y = T(0, shape, np.float32), T(2, _out_shape(shape, axes, keep), np.float32)
        data = rand_f32(rng, shape, 3.0)
        if edges:
            data.ravel()[:4] = [np.nan, -0.0, np.inf, -np.inf][:data.size]
    ax = T(1, (len(axes),), np.int32, data=axes)
    h, m, _ = run_both(core, op, {"keep_dims": keep}, [x, ax], [y], {0: data})
    _same(h, m, f"{op} {np.dtype(dtype).name} {shape} {axes}")


@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("op, dtype", [("SUM", np.int8), ("SUM", np.int16), ("MEAN", np.int16),
                                       ("REDUCE_MAX", np.int8), ("REDUCE_MIN", np.int8), ("REDUCE_ALL", np.bool_)])
def test_reduce_int(core, op, dtype):
    rng = np.random.default_rng(41)
    same = op in ("REDUCE_MAX", "REDUCE_MIN")
    for edges in (False, True):
        for shape, axes, keep in SHAPES:
            _reduce(core, op, dtype, rng, shape, axes, keep, same_quant=same, edges=edges)


@pytest.mark.parametrize("core", CORES_FAST)
def test_mean_above_4d(core):
    """MEAN int8 / float32 beyond mrt_mean_s8 / _f32's four dimensions take the reduce walk."""
    rng = np.random.default_rng(45)
    for dtype in (np.int8, np.float32):
        for shape, axes, keep in [((2, 3, 4, 5, 2), [1, 3], False), ((2, 2, 3, 2, 2, 3), [0, 2, 5], True)]:
            _reduce(core, "MEAN", dtype, rng, shape, axes, keep)


@pytest.mark.parametrize("core", CORES_FLOAT)
@pytest.mark.parametrize("op", ["SUM", "REDUCE_MAX", "REDUCE_MIN"])
def test_reduce_f32(core, op):
    rng = np.random.default_rng(42)
    for edges in (False, True):
        for shape, axes, keep in SHAPES:
            _reduce(core, op, np.float32, rng, shape, axes, keep, edges=edges)


def test_reduce_walk_merges_and_refuses():
    from micro_rt.cortexm.ops.reduce import reduce_walk
    from micro_rt.cortexm.ops.context import UnsupportedOnMcu
    assert reduce_walk((1, 5, 7, 16), [1, 2]) == ([1, 1, 16], [0, 0, 1], [1, 1, 35], [0, 0, 16])
    assert reduce_walk((2, 3, 4, 5), [0, 3]) == ([1, 1, 12], [0, 0, 5], [1, 2, 5], [0, 60, 1])
    with pytest.raises(UnsupportedOnMcu, match="walks 4 kept axis groups"):
        reduce_walk((2, 2, 2, 2, 2, 2, 2, 2), [0, 2, 4, 6])


@pytest.mark.parametrize("core", CORES_FAST + ["cortex-m7"])
@pytest.mark.parametrize("dtype", [np.int8, np.float32])
def test_arg_min_max(core, dtype):
    rng = np.random.default_rng(43)
    for shape, axis in [((1, 4, 5), 1), ((1, 4, 5), 2), ((1, 4, 5), -1), ((3, 7), 0), ((2, 3, 4, 6), 2), ((9,), 0)]:
        for op in ("ARG_MAX", "ARG_MIN"):
            x = T(0, shape, dtype, scales=[0.05] if dtype == np.int8 else (), zero_points=[3] if dtype == np.int8 else ())
            a = axis % len(shape)
            y = T(2, tuple(s for d, s in enumerate(shape) if d != a), np.int32)
            if dtype == np.int8:       # few distinct values: ties (the first index wins)
                data = rng.integers(-3, 3, size=shape)
            else:
                data = rand_f32(rng, shape)
                data.ravel()[::5] = np.nan
                data.ravel()[1::7] = data.ravel()[2::7][:data.ravel()[1::7].size]
            h, m, _ = run_both(core, op, {}, [x, T(1, (1,), np.int32, data=[axis])], [y], {0: data})
            _same(h, m, f"{op} {shape} {axis}")


@pytest.mark.parametrize("core", CORES_FAST + ["cortex-m7"])
@pytest.mark.parametrize("dtype", [np.int8, np.float32])
def test_cumsum(core, dtype):
    rng = np.random.default_rng(44)
    for shape, axis in [((1, 4, 5), 1), ((1, 4, 5), -1), ((2, 3, 4, 5), 0), ((33,), 0)]:
        for exclusive in (False, True):
            for reverse in (False, True):
                if dtype == np.int8:
                    x = T(0, shape, np.int8, scales=[rng.uniform(0.01, 0.1)], zero_points=[int(rng.integers(-20, 20))])
                    y = T(2, shape, np.int8, scales=[rng.uniform(0.2, 1.0)], zero_points=[int(rng.integers(-10, 10))])
                    data = rng.integers(-128, 128, size=shape)
                else:
                    x, y = T(0, shape, np.float32), T(2, shape, np.float32)
                    data = rand_f32(rng, shape, 10.0)
                h, m, _ = run_both(core, "CUMSUM", {"exclusive": exclusive, "reverse": reverse},
                                   [x, T(1, (), np.int32, data=axis)], [y], {0: data})
                _same(h, m, f"cumsum {shape} {axis} {exclusive} {reverse}")
