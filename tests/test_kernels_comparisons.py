"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_OR, SELECT_V2
(kernels/comparisons.py) bit-exact against the tflite-micro oracle: single-op models in every
type TFLM's kernels take, broadcasting up to 6-D, on 20 seeded input sets plus edge values
(zero points, type limits; floats: +-0, +-inf, NaN); int8 comparisons of differently scaled
inputs on all 65,536 input pairs; LOGICAL_AND / OR on int8 bytes other than 0 and 1 as TFLM's
x86 build combines them; refusals with TFLM's words; op data, head / tail and the true minimum
arena as the oracle's.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_arena_matches_oracle, assert_matches_oracle_on,
                          assert_seeds_and_edges_match_oracle, f32, i32, kernel_persistent, named_case_params,
                          q8, q16, random_scale, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from oracle_verdicts import oracle_verdicts

S = (1, 3, 4, 5)
COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")


def b8(shape) -> dict:
    return dict(shape=shape, type="BOOL")


def i64(shape) -> dict:
    return dict(shape=shape, type="INT64")


def u8(shape) -> dict:
    return dict(shape=shape, type="UINT8", scale=0.1, zp=128)


def _q8r(rng, shape) -> dict:
    return q8(shape, random_scale(rng, 1e-3, 0.9), int(rng.integers(-128, 128)))


def _cases() -> list:
    rng = np.random.default_rng(77)
    cases = []
    for op in COMPARISONS:
        cases.append((f"{op}-f32", single_op(op, [f32(S), f32((4, 1))], b8(S))))
        cases.append((f"{op}-i32", single_op(op, [i32(S), i32(S)], b8(S))))
        cases.append((f"{op}-i64", single_op(op, [i64((5,)), i64(S)], b8(S))))
        cases.append((f"{op}-i8", single_op(op, [_q8r(rng, S), _q8r(rng, (1, 1, 5))], b8(S))))
        cases.append((f"{op}-i8-same-scale", single_op(op, [q8(S, 0.05, 3), q8(S, 0.05, 3)], b8(S))))
        if op in ("EQUAL", "NOT_EQUAL"):
            cases.append((f"{op}-bool", single_op(op, [b8(S), b8((4, 1))], b8(S))))
    cases.append(("LESS-f32-6d", single_op("LESS", [f32((2, 1, 2, 1, 3, 2)), f32((2, 1, 1, 2))],
                                           b8((2, 1, 2, 1, 3, 2)))))
    cases.append(("EQUAL-i8-6d", single_op("EQUAL", [_q8r(rng, (2, 2, 1, 1, 3, 1)), _q8r(rng, (2, 1, 3, 2))],
                                           b8((2, 2, 2, 1, 3, 2)))))
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        cases.append((f"{op}-bool", single_op(op, [b8(S), b8(S)], b8(S))))
        cases.append((f"{op}-bool-bcast", single_op(op, [b8((4, 1)), b8(S)], b8(S))))
        cases.append((f"{op}-bool-6d", single_op(op, [b8((2, 1, 2, 1, 3, 2)), b8((2, 2, 1, 1))],
                                                 b8((2, 1, 2, 2, 3, 2)))))
        cases.append((f"{op}-int8-bytes", single_op(op, [q8(S, 0.1, 0), q8((5,), 0.1, 0)], q8(S, 0.1, 0))))
        cases.append((f"{op}-uint8-bytes", single_op(op, [u8(S), u8(S)], u8(S))))
    for t, mk in (("f32", f32), ("i8", lambda s: q8(s, 0.1, 2)), ("i16", lambda s: q16(s, 0.01))):
        cases.append((f"SELECT_V2-{t}-same", single_op("SELECT_V2", [b8(S), mk(S), mk(S)], mk(S))))
        cases.append((f"SELECT_V2-{t}-y", single_op("SELECT_V2", [b8(S), mk(S), mk((1, 1, 5))], mk(S))))
        cases.append((f"SELECT_V2-{t}-all", single_op("SELECT_V2", [b8((4, 1)), mk((3, 1, 1)), mk((1, 5))],
                                                      mk((3, 4, 5)))))
        cases.append((f"SELECT_V2-{t}-scalars", single_op("SELECT_V2", [b8(()), mk((1,)), mk((1, 1))], mk((1,)))))
        cases.append((f"SELECT_V2-{t}-6d", single_op("SELECT_V2", [b8((2, 1, 2, 1, 1, 2)), mk((1, 3, 1, 2)),
                                                                   mk((2, 1, 1, 1, 1, 1))], mk((2, 1, 2, 3, 1, 2)))))
    return cases


CASES = _cases()


@pytest.mark.parametrize("name,data", named_case_params(CASES))
def test_single_op_matches_tflm(name, data, oracle):
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


@pytest.mark.parametrize("op", COMPARISONS)
def test_int8_every_input_pair(op, oracle):
    """All 65,536 int8 pairs for random scales and zero points (and one shared scale)."""
    rng = np.random.default_rng(len(op))
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(256, 256)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(256, 256)
    for k in range(4):
        first = _q8r(rng, (256, 256))
        second = dict(first) if k == 3 else _q8r(rng, (256, 256))
        data = single_op(op, [first, second], b8((256, 256)))
        assert assert_matches_oracle_on(oracle, data, [[a, b]], f"{op} {k}") == 1


def test_logical_ops_combine_bytes_as_tflms_x86_build():
    """TFLM's bool && / || on int8 bytes: 2 AND 1 is 0, 2 OR 4 is 6 (the oracle's answers)."""
    out = {}
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        it = Interpreter.from_bytes(single_op(op, [q8((4,), 0.1, 0), q8((4,), 0.1, 0)], q8((4,), 0.1, 0)))
        it.set_input(np.array([2, 1, 2, 5], np.int8), 0)
        it.set_input(np.array([1, 1, 4, 5], np.int8), 1)
        it.invoke()
        out[op] = list(it.get_output(0))
    assert out == {"LOGICAL_AND": [0, 1, 0, 5], "LOGICAL_OR": [3, 1, 6, 5]}


# ---- refusals ---------------------------------------------------------------------------------

REFUSED = [
    ("EQUAL int16", single_op("EQUAL", [q16(S, 0.01), q16(S, 0.01)], b8(S)), "Type INT16 (7) not supported."),
    ("GREATER bool", single_op("GREATER", [b8(S), b8(S)], b8(S)), "Type BOOL (6) not supported."),
    ("LESS_EQUAL uint8", single_op("LESS_EQUAL", [u8(S), u8(S)], b8(S)), "Type UINT8 (3) not supported."),
    ("SELECT_V2 int32", single_op("SELECT_V2", [b8(S), i32(S), i32(S)], i32(S)),
     "Does not support type other than int8|int16|float32, but got INT32"),
    ("SELECT_V2 int8 condition", single_op("SELECT_V2", [q8(S, 0.1, 0), f32(S), f32(S)], f32(S)), "must be BOOL"),
    ("SELECT_V2 shapes", single_op("SELECT_V2", [b8((2, 3)), f32((3, 3)), f32((2, 3))], f32((2, 3))),
     "Given shapes are not broadcastable."),
    ("LESS int8 scale 2", single_op("LESS", [q8(S, 2.0, 0), q8(S, 0.1, 0)], b8(S)), "aborts"),
]


@pytest.mark.parametrize("name,data,words", REFUSED, ids=[r[0] for r in REFUSED])
def test_refuses_what_tflm_refuses(name, data, words, tmp_path):
    """Refused when loaded, with TFLM's words where it has any; TFLM refuses (or, for an int8
    scale of 1 or more, aborts in QuantizeMultiplierSmallerThanOneExp)."""
    with pytest.raises(KernelError) as info:
        Interpreter.from_bytes(data)
    assert words in str(info.value) and f"op 0 {name.split()[0]}" in str(info.value)
    accepted, log = oracle_verdicts([data], tmp_path)[0]
    assert not accepted, f"{name}: the oracle accepted it ({log})"


DELIBERATE = [
    ("GREATER int16", single_op("GREATER", [q16(S, 0.01), q16(S, 0.01)], b8(S)), "uninitialised op data"),
    ("LOGICAL_AND float32", single_op("LOGICAL_AND", [f32(S), f32(S)], f32(S)), "leave the rest of the output"),
    ("LOGICAL_OR int16", single_op("LOGICAL_OR", [q16(S, 0.01), q16(S, 0.01)], q16(S, 0.01)), "bool bytes"),
]


@pytest.mark.parametrize("name,data,words", DELIBERATE, ids=[r[0] for r in DELIBERATE])
def test_refuses_what_tflm_runs_on_undefined_data(name, data, words, tmp_path, oracle):
    """TFLM runs these, but its answer is not the inputs' (int16 GREATER compares op data it
    never set: all false; LOGICAL_AND / OR on wider types write one byte per element and leave
    the rest of the output unwritten): micro_rt refuses, saying why."""
    with pytest.raises(KernelError, match=words):
        Interpreter.from_bytes(data)
    # (what TFLM's int16 GREATER answers depends on memory it never wrote: all false in fresh
    # zero pages, anything in reused memory, so it is not compared)
    assert oracle_verdicts([data], tmp_path)[0][0]


# ---- arena ------------------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_op_data_follows_tflm(target):
    for op, ins, out, struct in [("LESS", [q8(S, 0.1, 0), q8(S, 0.2, 0)], b8(S), "OpDataComparison"),
                                 ("EQUAL", [f32(S), f32(S)], b8(S), "OpDataComparison"),
                                 ("SELECT_V2", [b8(S), f32(S), f32(S)], f32(S), "OpDataSelect"),
                                 ("LOGICAL_OR", [b8(S), b8(S)], b8(S), None)]:
        it = Interpreter.from_bytes(single_op(op, ins, out), target=target)
        assert kernel_persistent(it) == ((1, it.target.sizeof(struct)) if struct else (0, 0)), op


def test_arena_equals_oracle(oracle):
    """head, tail and total as TFLM prints them, and TFLM's true minimum, for one model per kernel
    and type."""
    assert_arena_matches_oracle(oracle, {name: data for name, data in CASES if not name.endswith("6d")})
