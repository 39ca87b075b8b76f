"""DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, PRELU, ADD_N (cortexm/src/mrt_binary_ops.c) and
the comparisons, LOGICAL_AND / OR, SELECT_V2 (cortexm/src/mrt_compare.c) on the virtual MCU vs
their numpy twins (kernels/binary_ops.py, kernels/comparisons.py), bit for bit, with
broadcasting, on every core: the M0+ runs soft float and libgcc's division, the others the FPU
and SDIV. Float32 is bit-equal (FLOOR_DIV's double quotient and floor, FLOOR_MOD's fmodf are
exact), except a NaN made from non-NaN operands (inf - inf, 0 * inf): its sign is the
machine's default NaN (x86: negative, Arm: positive), so NaNs count equal whatever their bits.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_ALL, T, assert_same_any_nan, run_both

SHAPES = [((2, 3, 5), (2, 3, 5)), ((2, 3, 5), (1, 1, 5)), ((1, 4, 1, 3), (1, 1, 6, 1)), ((37,), (37,)),
          ((2, 1, 2, 1, 3, 2), (2, 1, 1, 2))]


def _f32(rng, shape, edges: bool = True) -> np.ndarray:
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    if edges and x.size >= 8:
        flat = x.reshape(-1)
        flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, np.finfo(np.float32).max, -3.0]
        rng.shuffle(flat)
    return x


def _q(rng, index, shape, dtype, zp=True):
    info = np.iinfo(dtype)
    scale = [rng.uniform(1e-3, 0.5) if dtype == np.int8 else rng.uniform(1e-5, 1e-2)]
    zero = [int(rng.integers(-128, 128)) if zp and dtype == np.int8 else 0]
    return T(index, shape, dtype, scales=scale, zero_points=zero), \
        rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_ALL)
def test_binary_ops_f32(core):
    rng = np.random.default_rng(5)
    for op in ("DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE", "PRELU"):
        for k, (s1, s2) in enumerate(SHAPES[:4] if op == "PRELU" else SHAPES):     # float PRELU: at most 4-D
            out = np.broadcast_shapes(s1, s2)
            a, b = _f32(rng, s1), _f32(rng, s2, edges=op != "FLOOR_DIV")
            if op == "FLOOR_DIV":
                b[b == 0] = 0.5                 # TFLM refuses a zero divisor (tested below)
            act = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "NONE")[k] if op == "DIV" else "NONE"
            h, m, _ = run_both(core, op, dict(fused_activation_function=act),
                               [T(0, s1, np.float32), T(1, s2, np.float32)], [T(2, out, np.float32)], {0: a, 1: b})
            assert_same_any_nan(h, m, f"{op} {s1} {s2} {act}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_binary_ops_int32(core):
    rng = np.random.default_rng(6)
    for op in ("DIV", "SQUARED_DIFFERENCE"):
        for k, (s1, s2) in enumerate(SHAPES):
            out = np.broadcast_shapes(s1, s2)
            a = rng.integers(-(1 << 31), 1 << 31, size=s1).astype(np.int32)
            b = rng.integers(-(1 << 31), 1 << 31, size=s2).astype(np.int32)
            if op == "DIV":
                b = np.where(rng.random(s2) < 0.5, b >> rng.integers(0, 31, size=s2), b).astype(np.int32)
                b[b == 0] = 3
                b[b == -1] = 7
            act = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "NONE")[k] if op == "DIV" else "NONE"
            h, m, _ = run_both(core, op, dict(fused_activation_function=act),
                               [T(0, s1, np.int32), T(1, s2, np.int32)], [T(2, out, np.int32)], {0: a, 1: b})
            assert_same_any_nan(h, m, f"{op} int32 {s1} {s2}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_binary_ops_quantized(core):
    """int8 DIV (every input pair, including divisors at the zero point and TFLM's x86 rounding
    of shifts from 32 bits on), SQUARED_DIFFERENCE and PRELU; int16 SQUARED_DIFFERENCE and PRELU
    (int8 alpha)."""
    rng = np.random.default_rng(7)
    pairs = (np.repeat(np.arange(-128, 128), 256).astype(np.int8), np.tile(np.arange(-128, 128), 256).astype(np.int8))
    for op, dtype in (("DIV", np.int8), ("SQUARED_DIFFERENCE", np.int8), ("PRELU", np.int8),
                      ("SQUARED_DIFFERENCE", np.int16), ("PRELU", np.int16)):
        for k, (s1, s2) in enumerate(SHAPES + [((65536,), (65536,))] * (dtype == np.int8)):
            out = np.broadcast_shapes(s1, s2)
            a, va = _q(rng, 0, s1, dtype, zp=op != "SQUARED_DIFFERENCE" or dtype == np.int8)
            b, vb = _q(rng, 1, s2, np.int8 if op == "PRELU" else dtype, zp=dtype == np.int8 or op == "PRELU")
            y, _ = _q(rng, 2, out, dtype, zp=op != "SQUARED_DIFFERENCE" or dtype == np.int8)
            if op == "DIV":
                y.scales = np.asarray([rng.uniform(0.02, 1.0)], np.float32)
            if s1 == (65536,):
                va, vb = pairs
            act = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "NONE", "RELU")[k] if op == "DIV" else "NONE"
            h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y], {0: va, 1: vb})
            assert_same_any_nan(h, m, f"{op} {np.dtype(dtype).name} {s1} {s2}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_ALL)
def test_add_n(core):
    rng = np.random.default_rng(8)
    for n in (2, 3, 5):
        shape = (2, 3, 7)
        xs = [_f32(rng, shape) for _ in range(n)]
        h, m, _ = run_both(core, "ADD_N", {}, [T(i, shape, np.float32) for i in range(n)],
                           [T(n, shape, np.float32)], dict(enumerate(xs)))
        assert_same_any_nan(h, m, f"ADD_N f32 {n}")
        scale, zp = rng.uniform(1e-3, 0.5), int(rng.integers(-128, 128))
        ins = [T(i, shape, np.int8, scales=[scale], zero_points=[zp]) for i in range(n)]
        y = T(n, shape, np.int8, scales=[scale * n * rng.uniform(0.3, 1.0)], zero_points=[int(rng.integers(-128, 128))])
        h, m, _ = run_both(core, "ADD_N", {}, ins, [y],
                           {i: rng.integers(-128, 128, size=shape).astype(np.int8) for i in range(n)})
        assert_same_any_nan(h, m, f"ADD_N int8 {n}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_ALL)
def test_comparisons(core):
    rng = np.random.default_rng(9)
    for op in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"):
        types = [np.float32, np.int32, np.int64, np.int8] + ([np.bool_] if op in ("EQUAL", "NOT_EQUAL") else [])
        for dtype in types:
            for s1, s2 in SHAPES[:4]:
                out = T(2, np.broadcast_shapes(s1, s2), np.bool_)
                if dtype == np.int8:
                    (a, va), (b, vb) = _q(rng, 0, s1, np.int8), _q(rng, 1, s2, np.int8)
                elif dtype == np.float32:
                    a, b, va, vb = T(0, s1, dtype), T(1, s2, dtype), _f32(rng, s1), _f32(rng, s2)
                    vb.reshape(-1)[: min(vb.size, va.size)] = va.reshape(-1)[: min(vb.size, va.size)]   # ties
                elif dtype == np.bool_:
                    a, b, va, vb = T(0, s1, dtype), T(1, s2, dtype), rng.random(s1) < 0.5, rng.random(s2) < 0.5
                else:
                    a, b = T(0, s1, dtype), T(1, s2, dtype)
                    va, vb = rng.integers(-3, 3, size=s1).astype(dtype), rng.integers(-3, 3, size=s2).astype(dtype)
                    va.reshape(-1)[:2] = np.iinfo(dtype).min, np.iinfo(dtype).max
                h, m, _ = run_both(core, op, {}, [a, b], [out], {0: va, 1: vb})
                assert_same_any_nan(h, m, f"{op} {np.dtype(dtype).name} {s1} {s2}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_logical_and_select(core):
    rng = np.random.default_rng(10)
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        for s1, s2 in SHAPES:
            out = T(2, np.broadcast_shapes(s1, s2), np.bool_)
            h, m, _ = run_both(core, op, {}, [T(0, s1, np.bool_), T(1, s2, np.bool_)], [out],
                               {0: rng.random(s1) < 0.5, 1: rng.random(s2) < 0.5})
            assert_same_any_nan(h, m, f"{op} {s1} {s2}")
        s = (3, 4, 5)       # int8 bytes other than 0 / 1: combined bitwise, as TFLM's x86 build
        h, m, _ = run_both(core, op, {}, [T(0, s, np.int8, scales=[0.1], zero_points=[0]),
                                          T(1, (5,), np.int8, scales=[0.1], zero_points=[0])],
                           [T(2, s, np.int8, scales=[0.1], zero_points=[0])],
                           {0: rng.integers(-128, 128, size=s).astype(np.int8),
                            1: rng.integers(-128, 128, size=(5,)).astype(np.int8)})
        assert_same_any_nan(h, m, f"{op} int8 bytes")
    for dtype in (np.float32, np.int8, np.int16):
        for sc, sx, sy, so in [((3, 4, 5),) * 4, ((4, 1), (3, 1, 1), (1, 5), (3, 4, 5)), ((), (1,), (1, 1), (1,)),
                               ((3, 4, 5), (3, 4, 5), (1, 1, 5), (3, 4, 5)),
                               ((2, 1, 2, 1, 1, 2), (1, 3, 1, 2), (2, 1, 1, 1, 1, 1), (2, 1, 2, 3, 1, 2))]:
            q = dict(scales=[0.1], zero_points=[2]) if dtype != np.float32 else {}
            vals = {0: rng.random(sc) < 0.5}
            for i, s in ((1, sx), (2, sy)):
                vals[i] = _f32(rng, s) if dtype == np.float32 else \
                    rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, size=s).astype(dtype)
            h, m, _ = run_both(core, "SELECT_V2", {}, [T(0, sc, np.bool_), T(1, sx, dtype, **q), T(2, sy, dtype, **q)],
                               [T(3, so, dtype, **q)], vals)
            assert_same_any_nan(h, m, f"SELECT_V2 {np.dtype(dtype).name} {sc} {sx} {sy}")


def test_zero_divisors_are_refused_on_the_mcu_too():
    """TFLM refuses FLOOR_DIV and int32 DIV by zero when invoked: so does the MCU's glue."""
    from micro_rt.errors import KernelError
    for op, dtype in (("FLOOR_DIV", np.float32), ("DIV", np.int32)):
        with pytest.raises(KernelError):
            run_both("cortex-m4", op, {}, [T(0, (4,), dtype), T(1, (4,), dtype, data=np.array([1, 0, 2, 3]))],
                     [T(2, (4,), dtype)], {0: np.arange(4)})


@pytest.mark.parametrize("core", ["cortex-m4"])
def test_output_of_another_shape(core):
    """Inputs of one shape need no broadcast: TFLM writes an output of as many elements in any
    shape, element by element (the glue walks the inputs' shape, not the output's)."""
    rng = np.random.default_rng(11)
    a, b = _f32(rng, (2, 3), edges=False), _f32(rng, (2, 3), edges=False)
    for op, out_dtype in (("SQUARED_DIFFERENCE", np.float32), ("LESS", np.bool_)):
        h, m, _ = run_both(core, op, {}, [T(0, (2, 3), np.float32), T(1, (2, 3), np.float32)],
                           [T(2, (3, 2), out_dtype)], {0: a, 1: b})
        assert_same_any_nan(h, m, op)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_every_accepted_type_runs_on_the_mcu():
    """Every type case of the family (devtools/op_models/type_cases.py) that micro_rt accepts
    runs whole on the virtual MCU (no host fallback: the profile is complete) with the host's
    outputs."""
    from micro_rt.errors import KernelError
    from micro_rt.inputs import random_inputs
    from micro_rt import Interpreter
    from devtools.op_models.type_cases import binary_ops_and_comparison_cases
    ran = []
    for name, _, data in binary_ops_and_comparison_cases():
        try:
            host = Interpreter.from_bytes(data, target="cortex-m4")
        except KernelError:
            continue
        mcu = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True)
        for it in (host, mcu):
            for i, x in enumerate(random_inputs(host, 3)):
                it.set_input(x, i)
            it.invoke()
        assert all(r.on_mcu for r in mcu.last_run), f"{name}: ran on the host"
        assert_same_any_nan([host.get_output(0)], [mcu.get_output(0)], name)
        ran.append(name)
    assert len(ran) >= 49, ran         # every type TFLM takes for the 15 operators
