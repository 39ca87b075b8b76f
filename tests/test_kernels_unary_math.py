"""ABS, CEIL, COS, ELU, EXP, FLOOR, LOG, LOGICAL_NOT, NEG, ROUND, RSQRT, SIN, SQRT, SQUARE,
ZEROS_LIKE bit-exact against the tflite-micro oracle (20 seeded inputs and the edge values:
zero point, type minimum and maximum, float32 0, -0, +-inf, NaN, +-FLT_MAX), with their arena
(head, tail, true minimum), op data and refusals. float32 is bit-identical: the kernels call
the C library's sinf / cosf / logf / expf / expm1f, as TFLM's std:: calls do."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import PROJECT_MODELS
from kernel_cases import (assert_bits_equal, assert_seeds_and_edges_match_oracle, f32,
                          kernel_persistent, named_case_params, q8, q16, random_scale, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from micro_rt.oracle import invoke_both
from oracle_minimum import minimum_mismatches

FLOAT_OPS = ("ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIN", "SQRT", "SQUARE")
S = (2, 3, 40)


def unary_model(op: str, x: dict, y: dict = None) -> bytes:
    return single_op(op, [x], y if y is not None else dict(x))


def _cases():
    rng = np.random.default_rng(12)
    cases = [(f"{op}-f32", unary_model(op, f32(S))) for op in FLOAT_OPS]
    cases += [("LOGICAL_NOT-bool", unary_model("LOGICAL_NOT", dict(shape=S, type="BOOL")))]
    for t in ("FLOAT32", "INT8", "INT32", "INT64"):
        x = dict(shape=S, type=t, **(dict(scale=0.1, zp=3) if t == "INT8" else {}))
        cases.append((f"ZEROS_LIKE-{t}", unary_model("ZEROS_LIKE", x)))
    for k in range(4):
        si, so = random_scale(rng, 0.005, 0.2), random_scale(rng, 0.005, 0.2)
        zi, zo = int(rng.integers(-100, 100)), int(rng.integers(-128, 0))
        cases.append((f"ABS-i8-{k}", unary_model("ABS", q8(S, si, zi), q8(S, so, zo))))
        cases.append((f"ABS-i16-{k}", unary_model("ABS", q16(S, si / 100), q16(S, so / 100))))
        cases.append((f"ELU-i8-{k}", unary_model("ELU", q8(S, si * 0.5, zi), q8(S, so * 0.3, zo))))
    cases.append(("ABS-i8-same-scale", unary_model("ABS", q8(S, 0.05, -7), q8(S, 0.05, -128))))
    cases.append(("ABS-i16-same-scale", unary_model("ABS", q16(S, 0.001), q16(S, 0.001))))
    cases.append(("ABS-i16-plain", unary_model("ABS", dict(shape=S, type="INT16"))))
    return cases


CASES = _cases()


@pytest.mark.parametrize("name,data", named_case_params(CASES))
def test_matches_tflm(name, data, oracle):
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


def _rsqrt_cases():
    rng = np.random.default_rng(5)
    cases = []
    for k in range(4):
        si, so = random_scale(rng, 0.002, 0.5), random_scale(rng, 0.002, 0.5)
        zi, zo = int(rng.integers(-128, 100)), int(rng.integers(-128, 0))
        cases.append((f"RSQRT-i8-{k}", unary_model("RSQRT", q8(S, si, zi), q8(S, so, zo))))
        cases.append((f"RSQRT-i16-{k}", unary_model("RSQRT", q16(S, si / 300), q16(S, so / 30))))
    return cases


RSQRT_CASES = _rsqrt_cases()


@pytest.mark.parametrize("name,data", named_case_params(RSQRT_CASES))
def test_quantized_rsqrt_matches_tflm(name, data, oracle):
    """RSQRT's quantized inputs must lie at or above the zero point (TFLM refuses the others
    at invoke): 20 seeded inputs in that range, plus the zero point alone and the maximum."""
    ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 16)
    t = ours.model.main.tensors[ours.model.main.inputs[0]]
    info, zp = np.iinfo(t.dtype), int(t.quantization.zero_points[0])
    rng = np.random.default_rng(len(name))
    sets = [rng.integers(zp, int(info.max) + 1, size=t.shape) for _ in range(20)]
    sets[0] = np.resize(np.arange(zp, int(info.max) + 1), t.shape)      # every valid value (int8)
    sets += [np.full(t.shape, zp), np.full(t.shape, int(info.max))]
    for k, x in enumerate(sets):
        invoke_both(ours, theirs, [x.astype(t.dtype)])
        assert_bits_equal(ours.get_output(0), theirs.get_output(0), f"{name} input set {k}")


def test_every_int16_rsqrt_and_abs_input(oracle):
    """All 32,768 valid int16 RSQRT inputs and all 65,536 ABS inputs in one invoke each."""
    for op, x in (("RSQRT", np.arange(0, 32768)), ("ABS", np.arange(-32768, 32768))):
        x = x.astype(np.int16).reshape(1, -1)
        data = unary_model(op, q16(x.shape, 0.0007), q16(x.shape, 0.003))
        ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 20)
        invoke_both(ours, theirs, [x])
        assert_bits_equal(ours.get_output(0), theirs.get_output(0), f"{op} int16 every input")


def test_rsqrt_below_the_zero_point_fails_at_invoke_as_tflm(oracle):
    data = unary_model("RSQRT", q8((1, 4), 0.1, 10), q8((1, 4), 0.05, -128))
    x = np.array([[12, 30, 9, 11]], np.int8)
    theirs = oracle.interpreter(data, 1 << 16)
    theirs.set_input(x, 0)
    with pytest.raises(RuntimeError):
        theirs.invoke()
    ours = Interpreter.from_bytes(data)
    ours.set_input(x, 0)
    with pytest.raises(KernelError, match="Rsqrt is only defined for positive values.*element 2 is 9"):
        ours.invoke()


def test_float_functions_agree_with_tflm_on_many_inputs(oracle):
    """glibc's sinf / cosf / logf / expm1f are not correctly rounded: 100,000 inputs over
    wide ranges per op, bit for bit."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-10, 10, 50_000), rng.standard_normal(30_000) * 1e3,
                        np.exp(rng.uniform(-80, 80, 20_000))]).astype(np.float32).reshape(1, -1)
    for op in ("SIN", "COS", "LOG", "EXP", "ELU", "ROUND", "RSQRT", "SQRT"):
        data = unary_model(op, f32(x.shape))
        ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 22)
        xin = np.abs(x) if op in ("LOG", "RSQRT", "SQRT") else x
        invoke_both(ours, theirs, [xin])
        assert_bits_equal(ours.get_output(0), theirs.get_output(0), f"{op} float32")


def test_round_ties_go_to_even(oracle):
    x = (np.arange(-40, 40, dtype=np.float32) + np.float32(0.5)).reshape(1, -1)
    data = unary_model("ROUND", f32(x.shape))
    ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 16)
    invoke_both(ours, theirs, [x])
    assert_bits_equal(ours.get_output(0), theirs.get_output(0), "ROUND ties")
    assert ours.get_output(0)[0, :4].tolist() == [-40.0, -38.0, -38.0, -36.0]


ARENA_CASES = CASES[::2] + RSQRT_CASES[:2]


@pytest.mark.parametrize("name,data", named_case_params(ARENA_CASES))
def test_head_and_tail_equal_tflm(name, data, oracle):
    plan = Interpreter.from_bytes(data, target="host64", plan_only=True).plan
    theirs = oracle.allocations(data, 1 << 16)
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])


def test_minimum_arena_is_tflms(oracle):
    cases = [(name, data, Interpreter.from_bytes(data, target="host64", plan_only=True).arena_required_bytes())
             for name, data in ARENA_CASES]
    assert minimum_mismatches(cases) == []


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_op_data(target):
    """ABS / RSQRT: OpDataAbsRsqrt in init (every type); ELU: its 256-byte table in init
    (float32 too); the others allocate nothing."""
    def persistent(data):
        return kernel_persistent(Interpreter.from_bytes(data, target=target))
    size = Interpreter.from_bytes(unary_model("ABS", f32(S)), target=target).target.sizeof("OpDataAbsRsqrt")
    assert size == (28 if target == "host64" else 20)
    assert persistent(unary_model("ABS", f32(S))) == (1, size)
    assert persistent(unary_model("RSQRT", q8(S, 0.1, 0), q8(S, 0.1, 0))) == (1, size)
    assert persistent(unary_model("ELU", f32(S))) == (1, 256)
    for op in ("SIN", "FLOOR", "NEG", "SQUARE", "EXP"):
        assert persistent(unary_model(op, f32(S))) == (0, 0)


@pytest.mark.parametrize("make,words", [
    (lambda: unary_model("NEG", q8(S, 0.1, 0)), "Type INT8 (9) not supported."),
    (lambda: unary_model("ABS", dict(shape=S, type="INT32")), "Current data type INT32 is not supported."),
    (lambda: unary_model("RSQRT", dict(shape=S, type="INT64")), "Current data type INT64 is not supported."),
    (lambda: unary_model("ELU", q16(S, 0.01)), "ELU only supports float32 and int8 currently, got INT16."),
    (lambda: unary_model("ZEROS_LIKE", q16(S, 0.01)),
     "ZerosLike only currently supports int64, int32, and float32, got 7."),
    (lambda: unary_model("SIN", q8(S, 0.1, 0)), "input->type != expected_type (INT8 != FLOAT32)"),
    (lambda: unary_model("LOGICAL_NOT", f32(S)), "input->type != expected_type (FLOAT32 != BOOL)"),
    (lambda: unary_model("EXP", q8(S, 0.1, 0)), "input->type != kTfLiteFloat32 (INT8 != FLOAT32)"),
    (lambda: unary_model("CEIL", f32(S), f32((2, 120))), "must have the input's shape"),
    (lambda: unary_model("SQRT", f32(S), q8(S, 0.1, 0)), "differ in type"),
    (lambda: unary_model("ABS", q16(S, 0.1), q16(S, 0.1, 3)), "need zero points of 0"),
    (lambda: unary_model("ABS", dict(shape=S, type="INT8"), q8(S, 0.1, 0)), "no quantization parameters"),
    (lambda: unary_model("RSQRT", dict(shape=S, type="INT16")), "int16 RSQRT needs a quantized input"),
    (lambda: unary_model("ABS", q8(S, 100.0, 0), q8(S, 1e-9, 0)), "left shift"),
])
def test_refusals_name_the_problem(make, words):
    with pytest.raises(KernelError) as e:
        Interpreter.from_bytes(make())
    assert words in str(e.value)


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_random_inputs_respect_rsqrts_domain(distribution):
    """run / fit / profile feed seeded inputs: one that a quantized RSQRT reads directly is drawn
    at or above its zero point (below it TFLM fails the invoke), the others over their range."""
    from micro_rt.inputs import random_inputs
    it = Interpreter.from_bytes((PROJECT_MODELS / "ops" / "unary_int16x8.tflite").read_bytes())
    for seed in range(5):
        x, p = random_inputs(it, seed, distribution)
        assert p.min() >= 0 and p.max() > 1000 and x.min() < 0
        it.set_input(x, 0)
        it.set_input(p, 1)
        it.invoke()
