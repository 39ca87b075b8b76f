"""RESIZE_NEAREST_NEIGHBOR (float32, int8, int16) and RESIZE_BILINEAR (float32, int8) bit-exact
against the tflite-micro oracle: upscaling and downscaling by integer and fractional factors,
to and from size 1, align_corners, half_pixel_centers (both together for nearest; bilinear
refuses the pair as TFLM does), 20 seeds and the edge inputs each; no op data, no scratch; the
arena against the oracle's printout; TFLM's refusals with its wording."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_seeds_and_edges_match_oracle, f32, i32, kernel_persistent, q8, q16,
                          scratch_sizes, single_op)
from micro_rt import Interpreter
from micro_rt.arena import align_up
from micro_rt.errors import KernelError

OPS = ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR")


def resize_model(op: str, dtype: str = "int8", in_shape=(1, 3, 4, 2), size=(6, 8), align=False, half=False,
                 constant_size=True, out_shape=None) -> bytes:
    n, _, _, c = in_shape
    out_shape = out_shape or (n, *size, c)
    make = {"float32": lambda s: f32(s), "int8": lambda s: q8(s, 0.05, -3), "int16": lambda s: q16(s, 0.001)}[dtype]
    sz = i32((2,), data=np.array(size)) if constant_size else i32((2,))
    return single_op(op, [make(in_shape), sz], make(out_shape),
                     {"align_corners": align, "half_pixel_centers": half})


GEOMETRIES = [((1, 3, 4, 2), (6, 8)), ((1, 3, 4, 2), (5, 7)), ((2, 5, 7, 3), (3, 2)), ((1, 4, 4, 1), (1, 1)),
              ((1, 1, 1, 3), (4, 5)), ((1, 6, 5, 2), (6, 5)), ((1, 7, 3, 4), (16, 9)), ((1, 8, 8, 1), (3, 5))]
FLAGS = [(False, False), (True, False), (False, True), (True, True)]
CASES = [(op, dt, ins, size, align, half)
         for op in OPS for dt in (("float32", "int8", "int16") if op == OPS[0] else ("float32", "int8"))
         for ins, size in GEOMETRIES for align, half in FLAGS
         if not (op == "RESIZE_BILINEAR" and align and half)]


@pytest.mark.parametrize("number,case", list(enumerate(CASES)),
                         ids=[f"{n}-{c[0][7:11]}-{c[1]}-{c[3]}-a{int(c[4])}h{int(c[5])}" for n, c in enumerate(CASES)])
def test_single_op_matches_tflm(number, case, oracle):
    op, dt, ins, size, align, half = case
    assert_seeds_and_edges_match_oracle(oracle, resize_model(op, dt, ins, size, align, half),
                                        seeds=20, seed=number, any_nan=True)


@pytest.mark.parametrize("op,dtype", [(OPS[0], "float32"), (OPS[0], "int16"), (OPS[1], "int8"), (OPS[1], "float32")])
def test_arena_equals_oracle_and_no_op_data(op, dtype, oracle):
    data = resize_model(op, dtype, (1, 5, 6, 3), (9, 13))
    it = Interpreter.from_bytes(data, target="host64", plan_only=True)
    plan = it.plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])
    it = Interpreter.from_bytes(data, target="cortex-m4")
    assert kernel_persistent(it) == (0, 0) and scratch_sizes(it) == []


@pytest.mark.parametrize("op,kw,words", [
    (OPS[0], dict(constant_size=False), "Non-constant >size< tensor is not supported"),
    (OPS[1], dict(constant_size=False), "Non constant size tensor not supported"),
    (OPS[1], dict(align=True, half=True), "If half_pixel_centers is True, align_corners must be False."),
    (OPS[1], dict(dtype="int16"), "Output type is 7, requires float or int8."),
    (OPS[0], dict(in_shape=(1, 3, 4, 2), out_shape=(1, 6, 8, 3)), "must be \\[1, 6, 8, 2\\]"),
    (OPS[1], dict(in_shape=(1, 3, 4, 2), out_shape=(1, 6, 7, 2)), "must be \\[1, 6, 8, 2\\]"),
])
def test_refusals(op, kw, words):
    with pytest.raises(KernelError, match=words):
        Interpreter.from_bytes(resize_model(op, **kw))


def test_refuses_a_size_tensor_of_other_shape():
    data = single_op(OPS[0], [q8((1, 3, 4, 2), 0.05, 0), i32((3,), data=np.array([6, 8, 1]))],
                     q8((1, 6, 8, 2), 0.05, 0))
    with pytest.raises(KernelError, match="must hold 2 values"):
        Interpreter.from_bytes(data)
