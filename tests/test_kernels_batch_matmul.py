"""BATCH_MATMUL bit-exact against the tflite-micro oracle: float32, int8 (zero points on both
operands) and int16, adj_x / adj_y in all four combinations, ranks 2 to 5, broadcast batch
dimensions on either side and ranks that differ, constant and non-constant operands; 20 seeds
and the edge inputs each; the persistent bytes TFLM's Prepare takes (OpData, quantization
struct, transposed copies, the output's writable dims) and the arena against the oracle's
printout; the refusals (types, zero points, shapes)."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import assert_seeds_and_edges_match_oracle, f32, kernel_persistent, q8, q16, scratch_sizes, single_op
from micro_rt import Interpreter
from micro_rt.arena import align_up
from micro_rt.errors import KernelError


def bmm_shapes(lhs, rhs, adj_x, adj_y):
    a = (*lhs[:-2], lhs[-1], lhs[-2]) if adj_x else tuple(lhs)
    b = (*rhs[:-2], rhs[-1], rhs[-2]) if adj_y else tuple(rhs)
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    return (*batch, a[-2], b[-1])


def bmm_model(rng, dtype="int8", lhs=(2, 3, 4), rhs=(2, 4, 5), adj_x=False, adj_y=False, const_rhs=False,
              const_lhs=False, zero_points=None, out_shape=None, rhs_dtype=None) -> bytes:
    out = out_shape or bmm_shapes(lhs, rhs, adj_x, adj_y)

    def spec(shape, role, constant):
        t = rhs_dtype if role == "rhs" and rhs_dtype else dtype
        data = None
        if t == "float32":
            data = rng.normal(0, 1, shape).astype(np.float32) if constant else None
            return f32(shape, data=data)
        zp = 0 if t == "int16" else int(rng.integers(-10, 10)) if zero_points is None else zero_points[role]
        if constant:
            info = np.iinfo(t)
            data = rng.integers(info.min, info.max + 1, shape)
        scale = float(rng.uniform(0.01, 0.1)) if t == "int8" else float(rng.uniform(1e-4, 1e-3))
        return q8(shape, scale, zp, data=data) if t == "int8" else q16(shape, scale, data=data)

    y = spec(out, "out", False)
    if dtype == "int8":
        y.update(scale=float(rng.uniform(0.2, 1.0)))
    elif dtype == "int16":
        y.update(scale=float(rng.uniform(0.005, 0.02)))
    return single_op("BATCH_MATMUL", [spec(lhs, "lhs", const_lhs), spec(rhs, "rhs", const_rhs)], y,
                     {"adj_x": adj_x, "adj_y": adj_y})


SHAPES = [((2, 3, 4), (2, 4, 5)), ((3, 4), (4, 6)), ((2, 3, 4), (1, 4, 5)), ((1, 3, 4), (3, 4, 2)),
          ((3, 4), (2, 2, 4, 5)), ((2, 1, 3, 4), (1, 3, 4, 2)), ((2, 1, 2, 3, 4), (1, 2, 1, 4, 3)),
          ((1, 5, 17), (17, 3))]
CASES = []
for _dtype in ("float32", "int8", "int16"):
    for _lhs, _rhs in SHAPES:
        for _ax in (False, True):
            for _ay in (False, True):
                lhs = (*_lhs[:-2], _lhs[-1], _lhs[-2]) if _ax else _lhs
                rhs = (*_rhs[:-2], _rhs[-1], _rhs[-2]) if _ay else _rhs
                CASES.append(dict(dtype=_dtype, lhs=lhs, rhs=rhs, adj_x=_ax, adj_y=_ay))
    CASES += [dict(dtype=_dtype, const_rhs=True), dict(dtype=_dtype, const_rhs=True, adj_y=True, rhs=(2, 5, 4)),
              dict(dtype=_dtype, const_lhs=True)]


@pytest.mark.parametrize("number,kw", list(enumerate(CASES)),
                         ids=[f"{n}-" + "-".join(f"{a}={v}" for a, v in kw.items()) for n, kw in enumerate(CASES)])
def test_single_op_matches_tflm(number, kw, oracle):
    model = bmm_model(np.random.default_rng(700 + number), **kw)
    assert_seeds_and_edges_match_oracle(oracle, model, seeds=20, seed=number, any_nan=True)


@pytest.mark.parametrize("number,kw", list(enumerate(CASES))[::7])
def test_arena_equals_oracle(number, kw, oracle):
    data = bmm_model(np.random.default_rng(700 + number), **kw)
    plan = Interpreter.from_bytes(data, target="host64", plan_only=True).plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
@pytest.mark.parametrize("kernels,opdata", [("reference", "OpDataBatchMatmul"), ("cmsis-nn", "OpDataBatchMatmulCmsis")])
def test_persistent_requests(target, kernels, opdata):
    """OpData; int8 / int16 the quantization struct; adj_x a transposed lhs, unless adj_y a
    transposed rhs (TfLiteEvalTensor, dims, data each); the output's writable dims. No scratch."""
    rng = np.random.default_rng(0)
    a16 = lambda n: n                        # noqa: E731  (bytes requested, before alignment)
    for kw, dtype_size in ((dict(dtype="int8"), 1), (dict(dtype="int16", adj_x=True, lhs=(2, 4, 3)), 2),
                           (dict(dtype="float32", adj_y=True, rhs=(2, 5, 4)), 4)):
        it = Interpreter.from_bytes(bmm_model(rng, **kw), target=target, kernels=kernels)
        t = it.target
        transposed = lambda n: a16(t.sizeof("TfLiteEvalTensor")) + a16(4 + 4 * 3) + a16(n * dtype_size)  # noqa: E731
        expected = a16(t.sizeof(opdata)) + a16(4 + 4 * 3)
        if kw["dtype"] != "float32":
            expected += a16(t.sizeof("QuantizationOpDataBatchMatmul"))
        if kw.get("adj_x"):
            expected += transposed(24)
        if not kw.get("adj_y"):
            expected += transposed(40)
        count, nbytes = kernel_persistent(it)
        assert nbytes == expected, kw
        assert scratch_sizes(it) == [], kw


@pytest.mark.parametrize("kw,words", [
    (dict(dtype="int8", rhs_dtype="int16"), "differ in type"),
    (dict(dtype="float32", rhs_dtype="int8"), "differ in type"),
    (dict(dtype="int8", lhs=(2, 3, 4), rhs=(2, 5, 5)), "summed dimension"),
    (dict(dtype="int8", lhs=(2, 3, 4), rhs=(3, 4, 5), out_shape=(3, 3, 5)), "do not broadcast"),
    (dict(dtype="int8", lhs=(2, 3, 4), rhs=(2, 4, 5), out_shape=(2, 3, 6)), "must hold"),
    (dict(dtype="int8", lhs=(1, 1, 1, 1, 1, 3, 4), rhs=(4, 5)), "2 to 5 dimensions"),
])
def test_refusals(kw, words):       # the reference kernel's (TFLM's batch_matmul.cc) refusals
    with pytest.raises(KernelError, match=words):
        Interpreter.from_bytes(bmm_model(np.random.default_rng(1), **kw), kernels="reference")


def test_cmsis_nn_glue_takes_ranks_up_to_4():
    data = bmm_model(np.random.default_rng(2), dtype="int8", lhs=(1, 2, 1, 3, 4), rhs=(4, 5))
    Interpreter.from_bytes(data, target="cortex-m4", kernels="reference")
    with pytest.raises(KernelError, match="2 to 4 dimensions"):
        Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn")
    with pytest.raises(KernelError, match="2 to 4 dimensions"):     # the target's default
        Interpreter.from_bytes(data, target="cortex-m4")
