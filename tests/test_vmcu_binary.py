"""ADD / SUB / MUL / MAXIMUM / MINIMUM on the virtual MCU (cortexm/src/mrt_binary.c, mrt_binary_s8.c)
vs the numpy twins, bit for bit: int8, int16 and float32 (IEEE denormals included), with
broadcasting.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, CORES_FLOAT, T, rand_f32, q16_tensor, rand_i16, assert_same, binary_case, run_both)
from vmcu_cases import called  # noqa: F401 - the fixture


@pytest.mark.parametrize("core", CORES_FAST)
def test_binary(core):
    rng = np.random.default_rng(4)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        for s1, s2, act in [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                            ((1, 4, 1, 3), (1, 1, 6, 1), "NONE"), ((37,), (37,), "RELU")]:
            h, m, _ = run_both(core, *binary_case(rng, op, s1, s2, act))
            assert_same(h, m, f"{op} {s1} {s2}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_binary_f32(core):
    rng = np.random.default_rng(25)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        for s1, s2, act in [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                            ((1, 4, 1, 3), (1, 1, 6, 1), "RELU_N1_TO_1"), ((37,), (37,), "RELU"), ((), (7,), "NONE")]:
            shape = np.broadcast_shapes(s1, s2)
            a, b, y = T(0, s1, np.float32), T(1, s2, np.float32), T(2, shape, np.float32)
            h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y],
                               {0: rand_f32(rng, s1, 4.0), 1: rand_f32(rng, s2, 4.0)})
            assert_same(h, m, f"{op} f32 {s1} {s2}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
def test_float_denormals_f32(core):
    """Denormal products, sums and operands come out as numpy's (IEEE, no flush to zero) on the
    FPU cores as on the soft-float M0+."""
    tiny = np.array([1e-20, -1e-20, 1e-40, 1e-45, 3e-39, -2e-39, 2.0 ** -126, 1.5e-38, 0.0, 1e-22], np.float32)
    other = np.array([1e-20, 3e-19, 2.0, 0.5, -1.0, 1e-39, 0.75, 0.5, 1e-40, 1e-22], np.float32)
    for op in ("MUL", "ADD", "SUB"):
        a, b, y = T(0, tiny.shape, np.float32), T(1, tiny.shape, np.float32), T(2, tiny.shape, np.float32)
        h, m, _ = run_both(core, op, dict(fused_activation_function="NONE"), [a, b], [y], {0: tiny, 1: other})
        assert_same(h, m, f"{op} denormals")
        if op == "MUL":
            assert np.count_nonzero((m[0] != 0) & (np.abs(m[0]) < np.finfo(np.float32).tiny)) >= 4   # denormal results


@pytest.mark.parametrize("core", CORES_FAST)
def test_binary_int16(core):
    rng = np.random.default_rng(32)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        for s1, s2, act in [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                            ((1, 4, 1, 3), (1, 1, 6, 1), "RELU"), ((37,), (37,), "NONE")]:
            a, b = q16_tensor(rng, 0, s1), q16_tensor(rng, 1, s2)
            if op in ("MAXIMUM", "MINIMUM"):
                b.scales = a.scales
            y = q16_tensor(rng, 2, np.broadcast_shapes(s1, s2))
            if op == "MUL":
                y.scales = np.asarray([rng.uniform(0.2, 1.0)], np.float32)
            h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y],
                               {0: rand_i16(rng, s1), 1: rand_i16(rng, s2)})
            assert_same(h, m, f"{op} int16 {s1} {s2}")


def _int16_edges(rng, shape):
    """Random int16 values, then all min, all max, and min / max alternating against each other."""
    n = int(np.prod(shape))
    alternating = np.resize(np.array([-32768, 32767], np.int16), n).reshape(shape)
    yield rand_i16(rng, shape), rand_i16(rng, shape)
    yield np.full(shape, -32768, np.int16), np.full(shape, -32768, np.int16)
    yield np.full(shape, 32767, np.int16), np.full(shape, 32767, np.int16)
    yield alternating, alternating[..., ::-1].copy()
    yield np.zeros(shape, np.int16), rand_i16(rng, shape)


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_elementwise_s16_cmsis(core, called):
    """Same-shape int16 ADD / MUL run CMSIS-NN's arm_elementwise_add_s16 / _mul_s16 (pairs of
    halfwords, an odd element last; SMULBB / SMULTT on the DSP cores), bit-equal with the numpy
    twin over 20 seeds of scales and the edge values; broadcasting stays on mrt_binary_s16."""
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        for op in ("ADD", "MUL"):
            shape = [(1, 4, 4, 8), (37,), (1,), (3, 5, 7)][seed % 4]
            act = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"][seed // 4 % 4]
            a, b, y = q16_tensor(rng, 0, shape), q16_tensor(rng, 1, shape), q16_tensor(rng, 2, shape)
            y.scales = np.asarray([rng.uniform(0.0005, 0.004) if op == "ADD" else rng.uniform(0.05, 1.5)], np.float32)
            for x1, x2 in _int16_edges(rng, shape):
                called.clear()
                h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y], {0: x1, 1: x2})
                assert called == [f"arm_elementwise_{op.lower()}_s16"], called
                assert_same(h, m, f"{op} int16 {shape} seed {seed}")
    called.clear()
    a, b = q16_tensor(rng, 0, (2, 3, 5)), q16_tensor(rng, 1, (1, 1, 5))
    run_both(core, "ADD", dict(fused_activation_function="NONE"), [a, b], [q16_tensor(rng, 2, (2, 3, 5))],
             {0: rand_i16(rng, (2, 3, 5)), 1: rand_i16(rng, (1, 1, 5))})
    assert called == ["mrt_binary_s16"]
def _wide(rng, shape, dtype) -> np.ndarray:
    """Random values over the whole range with the edges (min, max, 0, -1, 1) mixed in."""
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    small = rng.random(flat.size) < 0.3                     # products that do not overflow too
    flat[small] = rng.integers(-3000, 3000, size=int(small.sum()))
    edges = np.array([info.min, info.max, 0, -1, 1], dtype)[:flat.size]
    flat[:edges.size] = edges
    rng.shuffle(flat)
    return x


_WIDE_SHAPES = [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                ((1, 4, 1, 3), (1, 1, 6, 1), "RELU"), ((37,), (37,), "RELU_N1_TO_1"), ((), (7,), "NONE"),
                ((2, 1, 2, 1, 3, 2), (2, 1, 1, 2), "RELU")]


@pytest.mark.parametrize("core", CORES_FAST)
def test_binary_int32(core):
    """int32 ADD / SUB / MUL wrap and clamp as the twin (ADD unclamped), MAXIMUM / MINIMUM; edge values
    and broadcasting, 20 seeds for the plain shapes."""
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
            for s1, s2, act in (_WIDE_SHAPES if seed < 2 else _WIDE_SHAPES[:1]):
                shape = np.broadcast_shapes(s1, s2)
                a, b, y = T(0, s1, np.int32), T(1, s2, np.int32), T(2, shape, np.int32)
                h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y],
                                   {0: _wide(rng, s1, np.int32), 1: _wide(rng, s2, np.int32)})
                assert_same(h, m, f"{op} int32 {s1} {s2} {act} seed {seed}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_min_max_int64(core):
    for seed in range(20):
        rng = np.random.default_rng(200 + seed)
        for op in ("MAXIMUM", "MINIMUM"):
            for s1, s2, _ in (_WIDE_SHAPES if seed < 2 else _WIDE_SHAPES[:1]):
                shape = np.broadcast_shapes(s1, s2)
                a, b, y = T(0, s1, np.int64), T(1, s2, np.int64), T(2, shape, np.int64)
                h, m, _ = run_both(core, op, {}, [a, b], [y],
                                   {0: _wide(rng, s1, np.int64), 1: _wide(rng, s2, np.int64)})
                assert_same(h, m, f"{op} int64 {s1} {s2} seed {seed}")


def test_int8_audio_preprocessor_profiles_complete():
    """TFLM's int8 audio preprocessor ends in int32 MUL / ADD / MINIMUM / MAXIMUM: every operator
    now runs as a C kernel on the M4 (none falls back to the host) and the MCU's outputs equal the
    host's frame after frame."""
    from conftest import shared_model
    from devtools.op_models.signal import audio_frames
    from test_vmcu_signal import assert_stream_equal
    data = shared_model("audio_preprocessor_int8.tflite").read_bytes()
    records = assert_stream_equal(data, "cortex-m4", [[x] for x in audio_frames(6)])
    assert {"MUL", "ADD", "MINIMUM", "MAXIMUM"} <= {r.op for r in records}
    missing = [f"{r.index} {r.op}" for r in records if not (r.on_mcu and r.cycles > 0)]
    assert not missing, f"on the host: {missing}"
