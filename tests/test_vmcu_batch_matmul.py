"""BATCH_MATMUL on the virtual MCU (cortexm/src/mrt_batch_matmul.c) vs its numpy twin
(micro_rt.kernels.batch_matmul), bit for bit: int8 (zero points on both operands), int16 and
float32 (soft-float M0+ and the three FPU builds), adj_x / adj_y, broadcast batch axes and
ranks that differ, a constant rhs (placed in flash transposed) and non-constant operands. The
transposing copies TFLM makes at every invoke (adj_x; a non-constant rhs without adj_y) run on
the MCU before the product, into TFLM's persistent buffers, and their instructions are counted;
a model whose transposed operands are inputs runs whole on the MCU with the arena unchanged."""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from vmcu_cases import CORES_FAST, CORES_FLOAT, T, assert_same, called, run_both  # noqa: F401 - called: fixture

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


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_transposes_run_on_the_mcu_and_are_counted(dtype, core, called):
    """A non-constant rhs without adj_y (and the lhs with adj_x) is transposed by
    mrt_strided_copy before the product; the same product with the rhs given transposed (adj_y)
    needs no copy, so the difference in instructions is the copy's: at least one per rhs element,
    growing with the rhs."""
    extra = {}
    for cols in (8, 32):
        for adj_x in (False, True):
            counts = {}
            for adj_y in (False, True):
                rng = np.random.default_rng(cols)
                called.clear()
                h, m, result = run_both(core, *bmm_case(rng, dtype, (2, 4, 16), (2, 16, cols), adj_x, adj_y, False))
                assert_same(h, m, f"{dtype} cols={cols} adj_x={adj_x} adj_y={adj_y}")
                copies = int(not adj_y) + int(adj_x)
                assert called[:copies] == ["mrt_strided_copy"] * copies and "mrt_strided_copy" not in called[copies:]
                counts[adj_y] = result.instructions
            extra[(cols, adj_x)] = counts[False] - counts[True]
            assert extra[(cols, adj_x)] >= 2 * 16 * cols, (cols, adj_x, counts)
    for adj_x in (False, True):
        assert extra[(32, adj_x)] > 3 * extra[(8, adj_x)], extra


def bmm_transposes_model(dtype: str) -> bytes:
    """lhs (2, 12, 5) and rhs (2, 12, 7) both inputs, adj_x: both transposed at every invoke."""
    b = ModelBuilder("bmm transposes")
    q = {} if dtype == "FLOAT32" else {"scale": 0.05, "zero_point": 3}
    x = b.add_tensor("lhs", (2, 12, 5), dtype, **q)
    y = b.add_tensor("rhs", (2, 12, 7), dtype, **q)
    out = b.add_tensor("out", (2, 5, 7), dtype, **({} if dtype == "FLOAT32" else {"scale": 0.2, "zero_point": -1}))
    b.add_operator("BATCH_MATMUL", [x, y], [out], options={"adj_x": True, "adj_y": False})
    b.inputs, b.outputs = [x, y], [out]
    return b.build()


@pytest.mark.parametrize("dtype", ["FLOAT32", "INT8"])
def test_model_with_transposed_inputs_runs_whole_on_the_mcu(dtype):
    """lhs and rhs both inputs, adj_x: both transposed at every invoke on the MCU; outputs equal
    the host's over several invokes, the planned arena is the host's."""
    data = bmm_transposes_model(dtype)
    for core in ("cortex-m0plus", "cortex-m4"):
        host = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=False)
        mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
        assert mcu.arena_required_bytes() == host.arena_required_bytes()
        rng = np.random.default_rng(3)
        for _ in range(3):
            for i, shape in enumerate(((2, 12, 5), (2, 12, 7))):
                v = (rng.normal(0, 1, shape).astype(np.float32) if dtype == "FLOAT32"
                     else rng.integers(-128, 128, shape).astype(np.int8))
                host.set_input(v, i)
                mcu.set_input(v, i)
            host.invoke()
            mcu.invoke()
            assert mcu.last_run and all(r.on_mcu for r in mcu.last_run)
            assert_same([host.get_output(0)], [mcu.get_output(0)], f"{dtype} {core}")
