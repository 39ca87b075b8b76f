"""DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, ADD_N, PRELU (kernels/binary_ops.py) bit-exact
against the tflite-micro oracle: single-op models (ModelBuilder) in every type TFLM's kernels
take, with fused activations and broadcasting up to 6-D, on 20 seeded input sets plus edge
values (zero points, type limits; floats: +-0, +-inf, NaN, subnormals); the int8 kernels on all
65,536 input pairs; what TFLM refuses refused with its words; op data and scratch as TFLM
allocates them, head / tail and the true minimum arena as the oracle's.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_arena_matches_oracle, assert_matches_oracle_on,
                          assert_seeds_and_edges_match_oracle, f32, i32, kernel_persistent, named_case_params,
                          q8, q16, random_scale, scratch_sizes, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from oracle_verdicts import oracle_verdicts

S = (1, 3, 4, 5)
ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def i64(shape, **kw) -> dict:
    return dict(shape=shape, type="INT64", **kw)


def _q8r(rng, shape) -> dict:
    return q8(shape, random_scale(rng), int(rng.integers(-128, 128)))


def _cases() -> list:
    rng = np.random.default_rng(2024)
    cases = []
    for k, act in enumerate(ACTS):
        opts = {"fused_activation_function": act}
        cases.append((f"DIV-f32-{act}", single_op("DIV", [f32(S), f32((4, 1))], f32(S), opts)))
        cases.append((f"DIV-i32-{act}", single_op("DIV", [i32(S), i32((5,))], i32(S), opts)))
        cases.append((f"DIV-i8-{act}", single_op("DIV", [_q8r(rng, S), _q8r(rng, (4, 1) if k % 2 else S)],
                                                 q8(S, random_scale(rng, 0.01, 1.0), int(rng.integers(-128, 128))),
                                                 opts)))
    cases.append(("DIV-f32-same", single_op("DIV", [f32(S), f32(S)], f32(S))))
    cases.append(("DIV-i8-6d", single_op("DIV", [_q8r(rng, (2, 1, 2, 3, 1, 2)), _q8r(rng, (3, 2, 1))],
                                         _q8r(rng, (2, 1, 2, 3, 2, 2)))))
    cases.append(("DIV-f32-5d", single_op("DIV", [f32((2, 1, 3, 1, 2)), f32((2, 1, 4, 1))], f32((2, 2, 3, 4, 2)))))
    for op in ("FLOOR_DIV", "FLOOR_MOD"):
        cases.append((f"{op}-same", single_op(op, [f32(S), f32(S)], f32(S))))
        cases.append((f"{op}-bcast", single_op(op, [f32((4, 1)), f32(S)], f32(S))))
        cases.append((f"{op}-6d", single_op(op, [f32((2, 1, 1, 2, 3, 1)), f32((1, 2, 1, 1, 1, 4))],
                                            f32((2, 2, 1, 2, 3, 4)))))
    op = "SQUARED_DIFFERENCE"
    cases.append((f"{op}-f32", single_op(op, [f32(S), f32((4, 1))], f32(S))))
    cases.append((f"{op}-i32", single_op(op, [i32(S), i32(S)], i32(S))))
    cases.append((f"{op}-i32-bcast", single_op(op, [i32((5,)), i32(S)], i32(S))))
    for k in range(3):
        cases.append((f"{op}-i8-{k}", single_op(op, [_q8r(rng, S), _q8r(rng, (1, 1, 5) if k else S)],
                                                q8(S, random_scale(rng, 0.01, 1.0), int(rng.integers(-128, 128))))))
        cases.append((f"{op}-i16-{k}", single_op(op, [q16(S, random_scale(rng, 1e-5, 1e-2)),
                                                      q16((4, 1) if k else S, random_scale(rng, 1e-5, 1e-2))],
                                                 q16(S, random_scale(rng, 1e-5, 1e-2)))))
    cases.append((f"{op}-i8-6d", single_op(op, [_q8r(rng, (2, 1, 2, 1, 3, 2)), _q8r(rng, (2, 1, 1, 2))],
                                           _q8r(rng, (2, 1, 2, 1, 3, 2)))))
    for n in (2, 3, 5):
        cases.append((f"ADD_N-f32-{n}", single_op("ADD_N", [f32(S)] * n, f32(S))))
        scale, zp = random_scale(rng), int(rng.integers(-128, 128))
        cases.append((f"ADD_N-i8-{n}", single_op("ADD_N", [q8(S, scale, zp)] * n,
                                                 q8(S, scale * n * rng.uniform(0.3, 1.0), int(rng.integers(-128, 128))))))
    cases.append(("ADD_N-f32-6d", single_op("ADD_N", [f32((1, 2, 1, 3, 2, 2))] * 3, f32((1, 2, 1, 3, 2, 2)))))
    alpha8 = dict(shape=(5,), type="INT8", scale=0.01, zp=3, data=np.arange(-60, 40, 20))
    cases.append(("PRELU-f32", single_op("PRELU", [f32(S), dict(shape=(1, 1, 5), type="FLOAT32",
                                                               data=np.linspace(-0.5, 1.5, 5))], f32(S))))
    cases.append(("PRELU-f32-input-alpha", single_op("PRELU", [f32((2, 3)), f32((2, 3))], f32((2, 3)))))
    for k in range(3):
        cases.append((f"PRELU-i8-{k}", single_op("PRELU", [_q8r(rng, S), _q8r(rng, S) if k == 2 else alpha8],
                                                 _q8r(rng, S))))
        cases.append((f"PRELU-i16-{k}", single_op("PRELU", [q16(S, random_scale(rng, 1e-5, 1e-2)), alpha8],
                                                  q16(S, random_scale(rng, 1e-5, 1e-2)))))
    cases.append(("PRELU-i8-6d", single_op("PRELU", [_q8r(rng, (2, 1, 2, 1, 3, 2)), _q8r(rng, (3, 2))],
                                           _q8r(rng, (2, 1, 2, 1, 3, 2)))))
    return cases


CASES = _cases()


@pytest.mark.parametrize("name,data", named_case_params(CASES))
def test_single_op_matches_tflm(name, data, oracle):
    """20 seeded input sets and the edge values, bit for bit (both refuse FLOOR_DIV and int32
    DIV by zero when invoked)."""
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


def _every_pair_inputs(shape=(256, 256)):
    a = np.repeat(np.arange(-128, 128), 256).astype(np.int8).reshape(shape)
    b = np.tile(np.arange(-128, 128), 256).astype(np.int8).reshape(shape)
    return [a, b]


@pytest.mark.parametrize("op", ["DIV", "SQUARED_DIFFERENCE", "PRELU"])
def test_int8_every_input_pair(op, oracle):
    """All 65,536 int8 input pairs for random scales and zero points (DIV: with divisors at
    input 2's zero point, and quotients whose rounding TFLM's x86 build shifts by 32 or more)."""
    rng = np.random.default_rng(len(op))
    for k in range(6):
        act = {"fused_activation_function": ACTS[k % 4]} if op == "DIV" else {}
        data = single_op(op, [_q8r(rng, (256, 256)), _q8r(rng, (256, 256))],
                         q8((256, 256), random_scale(rng, 1e-3, 1.0), int(rng.integers(-128, 128))), act)
        assert assert_matches_oracle_on(oracle, data, [_every_pair_inputs()], f"{op} {k}") == 1


def test_div_int8_x86_rounding_of_tiny_quotients(oracle):
    """1 / 255 with scales making the quotient about 0.04: TFLM's x86 build gives 127 (its
    RoundingDivideByPOT shifts by 33, which x86 masks to 1), and micro_rt follows the oracle."""
    data = single_op("DIV", [q8((4,), 0.05, 0), q8((4,), 0.05, -128)], q8((4,), 0.1, 0))
    it = Interpreter.from_bytes(data)
    it.set_input(np.array([1, 2, 0, -1], np.int8), 0)
    it.set_input(np.array([127] * 4, np.int8), 1)
    it.invoke()
    assert list(it.get_output(0)) == [127, 127, 1, -128]          # 0 / 255 too: the mask is all ones
    assert assert_matches_oracle_on(oracle, data, [[np.array([1, 2, 0, -1], np.int8),
                                                    np.array([127] * 4, np.int8)]]) == 1


# ---- refusals ---------------------------------------------------------------------------------

REFUSED = [
    ("DIV int16", single_op("DIV", [q16(S, 0.01), q16(S, 0.01)], q16(S, 0.01)),
     "DIV only supports FLOAT32, INT32, quantized INT8 now, got type INT16 (7)."),
    ("FLOOR_DIV int32", single_op("FLOOR_DIV", [i32(S), i32(S)], i32(S)), "Type 'INT32' is not supported by FLOOR_DIV."),
    ("FLOOR_MOD int8", single_op("FLOOR_MOD", [q8(S, 0.1, 0), q8(S, 0.1, 0)], q8(S, 0.1, 0)),
     "Type 'INT8' is not supported by FLOOR_MOD."),
    ("SQUARED_DIFFERENCE int64", single_op("SQUARED_DIFFERENCE", [i64(S), i64(S)], i64(S)),
     "SquaredDifference only supports FLOAT32, INT32 , INT16 and INT8 now, got 4."),
    ("ADD_N int16", single_op("ADD_N", [q16(S, 0.01)] * 3, q16(S, 0.01)), "ADD_N only supports FLOAT32 and INT8, got INT16."),
    ("PRELU int32", single_op("PRELU", [i32(S), i32((5,))], i32(S)), "Input type 'INT32' is not supported."),
    ("DIV int32 quantized", single_op("DIV", [i32(S, scale=0.5, zp=0), i32(S)], i32(S)), "unquantized int32"),
    ("ADD_N int8 scales differ", single_op("ADD_N", [q8(S, 0.1, 0), q8(S, 0.2, 0)], q8(S, 0.3, 0)),
     "scale or zero point"),
    ("SQUARED_DIFFERENCE int16 zero point", single_op("SQUARED_DIFFERENCE", [q16(S, 0.01, 3), q16(S, 0.01)],
                                                      q16(S, 0.01)), "needs 0"),
    ("PRELU int16 alpha int16", single_op("PRELU", [q16(S, 0.01), q16((5,), 0.01)], q16(S, 0.01)), "alpha"),
    ("PRELU float32 5-D", single_op("PRELU", [f32((2,) * 5), f32((2,))], f32((2,) * 5)), "at most 4"),
    ("ADD_N int8 output scale", single_op("ADD_N", [q8(S, 0.5, 0)] * 2, q8(S, 1e-9, 0)), "aborts"),
    ("DIV int8 absurd scales", single_op("DIV", [q8(S, 1.0, 0), q8(S, 1e-6, 0)], q8(S, 1e-3, 0)),
     "outside the 0 .. 63 bits"),
]


@pytest.mark.parametrize("name,data,words", REFUSED, ids=[r[0] for r in REFUSED])
def test_refuses_what_tflm_refuses(name, data, words, tmp_path):
    """micro_rt refuses when the model is loaded, with TFLM's words where TFLM has any; TFLM
    refuses it too (when loaded or invoked) or crashes on it (a TFLITE_CHECK abort)."""
    with pytest.raises(KernelError) as info:
        Interpreter.from_bytes(data)
    assert words in str(info.value) and f"op 0 {name.split()[0]}" in str(info.value)
    if name != "DIV int8 absurd scales":      # TFLM runs that one, rounding by shifts its C++ leaves undefined
        accepted, log = oracle_verdicts([data], tmp_path)[0]
        assert not accepted, f"{name}: the oracle accepted it ({log})"


def test_seven_dimensions_are_refused():
    """TFLM's RuntimeShape holds 6 dimensions; a 7-D tensor overruns it (undefined behaviour)."""
    data = single_op("DIV", [f32((1,) * 6 + (3,)), f32((3,))], f32((1,) * 6 + (3,)))
    with pytest.raises(KernelError, match="at most 6"):
        Interpreter.from_bytes(data)


def test_int_min_over_minus_one_is_refused_when_invoked(tmp_path):
    """INT32_MIN / -1 overflows: the oracle's x86 build dies of SIGFPE; micro_rt refuses."""
    data = single_op("DIV", [i32((2,)), i32((2,))], i32((2,)))
    it = Interpreter.from_bytes(data)
    it.set_input(np.array([-(1 << 31), 5], np.int32), 0)
    it.set_input(np.array([-1, 1], np.int32), 1)
    with pytest.raises(KernelError, match="INT32_MIN / -1"):
        it.invoke()
    constant = single_op("DIV", [i32((2,), data=np.array([-(1 << 31), 5])), i32((2,), data=np.array([-1, 1]))],
                         i32((2,)))
    assert not oracle_verdicts([constant], tmp_path)[0][0]


# ---- arena ------------------------------------------------------------------------------------

PERSISTENT = [("DIV", [q8(S, 0.1, 0), q8(S, 0.2, 0)], q8(S, 0.3, 0), "OpDataDiv"),
              ("SQUARED_DIFFERENCE", [f32(S), f32(S)], f32(S), "OpDataSquaredDifference"),
              ("PRELU", [f32(S), f32(S)], f32(S), "PreluParams"),
              ("ADD_N", [q8(S, 0.1, 0)] * 3, q8(S, 0.3, 0), "OpDataAddN"),
              ("ADD_N", [f32(S)] * 3, f32(S), None),
              ("FLOOR_DIV", [f32(S), f32(S)], f32(S), None), ("FLOOR_MOD", [f32(S), f32(S)], f32(S), None)]


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
@pytest.mark.parametrize("op,ins,out,struct", PERSISTENT, ids=[f"{p[0]}-{p[3]}" for p in PERSISTENT])
def test_op_data_and_scratch_follow_tflm(op, ins, out, struct, target):
    it = Interpreter.from_bytes(single_op(op, ins, out), target=target)
    assert kernel_persistent(it) == ((1, it.target.sizeof(struct)) if struct else (0, 0))
    # ADD_N: TFLM's scratch holds one pointer per input
    assert scratch_sizes(it) == ([it.target.pointer_size * len(ins)] if op == "ADD_N" else [])


def test_arena_equals_oracle(oracle):
    """head, tail and total as TFLM prints them, and TFLM's true minimum, for one model per kernel
    and type."""
    assert_arena_matches_oracle(oracle, {name: data for name, data in CASES if not name.endswith(("6d", "5d"))})
