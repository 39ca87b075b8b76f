"""ADD, SUB, MUL, MAXIMUM, MINIMUM bit-exact against the tflite-micro oracle: single-op models
(ModelBuilder, kernel_cases.single_op) run through micro_rt.Interpreter and the oracle on the
same inputs; a model TFLM rejects must be rejected by our prepare as well."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_named_case_matches_oracle, assert_single_op_matches_oracle, f32, i32,
                          kernel_persistent, named_case_params, q16, q8, random_scale, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from micro_rt.kernels import elementwise


def _binary_cases():
    rng = np.random.default_rng(1234)
    cases = []
    S = (1, 3, 4, 5)
    for op in ("ADD", "SUB", "MUL"):
        for k, act in enumerate(("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "NONE", "NONE")):
            shape2 = S if k % 2 == 0 else (1, 1, 4, 1) if k == 1 else (5,)
            a = q8(S, random_scale(rng), int(rng.integers(-128, 128)))
            b = q8(shape2, random_scale(rng), int(rng.integers(-128, 128)))
            o = q8(S, random_scale(rng, 1e-2, 0.5), int(rng.integers(-128, 128)))
            cases.append((f"{op}-i8-{k}-{act}", single_op(op, [a, b], o, {"fused_activation_function": act})))
        cases.append((f"{op}-f32", single_op(op, [f32(S), f32((4, 1))], f32(S),
                                             {"fused_activation_function": "RELU_N1_TO_1"})))
        cases.append((f"{op}-i32", single_op(op, [i32(S), i32(S)], i32(S))))
        for k in range(2):
            a, b = q16(S, random_scale(rng, 1e-5, 1e-2)), q16((1, 3, 1, 5), random_scale(rng, 1e-5, 1e-2))
            cases.append((f"{op}-i16-{k}", single_op(op, [a, b], q16(S, random_scale(rng, 1e-4, 1e-2)))))
    for op in ("MAXIMUM", "MINIMUM"):
        for typ, mk in (("i8", lambda s: q8(s, 0.1, 3)), ("i16", lambda s: q16(s, 0.01)),
                        ("f32", f32), ("i32", i32)):
            cases.append((f"{op}-{typ}", single_op(op, [mk(S), mk((1, 3, 1, 1))], mk(S))))
    return cases


@pytest.mark.parametrize("name,data", named_case_params(_binary_cases()))
def test_single_op_matches_tflm(name, data, oracle):
    assert_named_case_matches_oracle(oracle, name, data)


def test_add_sub_multipliers():
    # ADD and SUB compute their rescaling multipliers in double (seanet sub0/1/3 need it).
    it = Interpreter.from_bytes(single_op("ADD", [q8((4,), 0.0123, 3), q8((4,), 0.0456, -7)],
                                          q8((4,), 0.0789, 1)))
    a, b, o = it.tensors[:3]
    pa = elementwise.add_sub_params(a, b, o, "NONE", is_sub=False)
    ps = elementwise.add_sub_params(a, b, o, "NONE", is_sub=True)
    assert pa["left_shift"] == ps["left_shift"] == 20
    assert pa["sh2"] == 0 and pa["m2"] == 1 << 30  # input2 has the larger scale: 1/2


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_allocations_follow_tflm(target):
    it = Interpreter.from_bytes(single_op("ADD", [q8((4,), 0.1, 0), q8((4,), 0.2, 0)], q8((4,), 0.3, 0)),
                                target=target)
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataAdd"))


@pytest.mark.parametrize("op", ["ADD", "MUL", "SUB", "MINIMUM", "MAXIMUM"])
def test_broadcast_output_shape_follows_tflm(op, oracle):
    """TFLM broadcasts by walking the output's shape with the inputs' strides: an output whose
    shape is the broadcast shape up to leading 1s gets the usual result; one that only holds as
    many elements (fuzzing: a MINIMUM output reshaped to [1, 6, 6, 4, 1]) reads the inputs out
    of place, so micro_rt refuses it. Inputs of one shape need no broadcast (any output of
    their size)."""
    x, c = f32((1, 6, 6, 4)), f32((), data=np.float32(0.25))
    for shape in ((1, 1, 6, 6, 4), (6, 6, 4)):
        assert_single_op_matches_oracle(oracle, single_op(op, [x, c], f32(shape)), trials=2)
    assert_single_op_matches_oracle(oracle, single_op(op, [f32((2, 3)), f32((2, 3))], f32((3, 2))), trials=2)
    with pytest.raises(KernelError, match=rf"op 0 {op}: output 'out0' \(float32\[1, 6, 6, 4, 1\]\) is "
                                          r"not the broadcast shape \[1, 6, 6, 4\]") as info:
        Interpreter.from_bytes(single_op(op, [x, c], f32((1, 6, 6, 4, 1))))
    assert info.value.__cause__ is None
