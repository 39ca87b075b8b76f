"""Data movement (RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE, PACK, CONCATENATION, TRANSPOSE, PAD,
PADV2, STRIDED_SLICE, CAST) bit-exact against the tflite-micro oracle: single-op models
(ModelBuilder, kernel_cases.single_op); a model TFLM rejects must be rejected by our prepare as
well. And the persistent bytes the kernels ask for."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernel_cases import (assert_named_case_matches_oracle, f32, i32, kernel_persistent, named_case_params, q8, q16,
                          single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from micro_rt.kernels import shape_ops


def _shape_cases():
    rng = np.random.default_rng(5)
    cases = []
    S = (2, 3, 4, 5)
    for typ, mk in (("i8", lambda s: q8(s, 0.1, 3)), ("f32", f32), ("i16", lambda s: q16(s, 0.01)),
                    ("i32", i32)):
        cases.append((f"RESHAPE-{typ}", single_op("RESHAPE", [mk(S), i32((2,), data=np.array([6, 20]))],
                                                  mk((6, 20)), {"new_shape": [6, 20]})))
        cases.append((f"SQUEEZE-{typ}", single_op("SQUEEZE", [mk((1, 3, 1, 5))], mk((3, 5)),
                                                  {"squeeze_dims": [0, 2]})))
        cases.append((f"EXPAND_DIMS-{typ}", single_op("EXPAND_DIMS", [mk((3, 5)), i32((1,), data=np.array([-1]))],
                                                      mk((3, 5, 1)))))
        if typ != "i32":
            cases.append((f"TRANSPOSE-{typ}", single_op("TRANSPOSE", [mk(S), i32((4,), data=np.array([2, 0, 3, 1]))],
                                                        mk((4, 2, 5, 3)))))
            cases.append((f"TRANSPOSE3-{typ}", single_op("TRANSPOSE", [mk((3, 4, 5)), i32((3,), data=np.array([2, 1, 0]))],
                                                         mk((5, 4, 3)))))
        pads = np.array([[0, 1], [2, 0], [1, 1], [0, 2]])
        cases.append((f"PAD-{typ}", single_op("PAD", [mk(S), i32((4, 2), data=pads)], mk((3, 5, 6, 7)))))
        cases.append((f"PAD-img-{typ}", single_op("PAD", [mk(S), i32((4, 2), data=np.array([[0, 0], [1, 2], [3, 0], [0, 0]]))],
                                                  mk((2, 6, 7, 5)))))
        cv = mk((1,))
        cv["data"] = np.array([7])
        cases.append((f"PADV2-{typ}", single_op("PADV2", [mk(S), i32((4, 2), data=pads), cv], mk((3, 5, 6, 7)))))
        cases.append((f"CONCAT-{typ}", single_op("CONCATENATION", [mk((2, 3, 1)), mk((2, 3, 4)), mk((2, 3, 2))],
                                                 mk((2, 3, 7)), {"axis": -1})))
        cases.append((f"PACK-{typ}", single_op("PACK", [mk((3, 4)), mk((3, 4))], mk((3, 2, 4)),
                                               {"values_count": 2, "axis": 1})))
    # int8 CONCATENATION with differing input scales: TFLM copies raw values.
    cases.append(("CONCAT-i8-scales", single_op("CONCATENATION", [q8((2, 3), 0.1, 3), q8((2, 5), 0.7, -20)],
                                                q8((2, 8), 0.3, 0), {"axis": 1})))
    cases.append(("SHAPE", single_op("SHAPE", [f32(S)], i32((4,)), {"out_type": "INT32"})))
    for src, dst in (("f32", "i32"), ("i8", "f32"), ("i32", "f32"), ("i16", "i32"), ("i8", "i32"),
                     ("f32", "i16"), ("i32", "i8")):
        mk = {"f32": f32, "i32": i32, "i8": lambda s: dict(shape=s, type="INT8"),
              "i16": lambda s: dict(shape=s, type="INT16")}
        cases.append((f"CAST-{src}-{dst}", single_op("CAST", [mk[src]((3, 7))], mk[dst]((3, 7)))))
    # STRIDED_SLICE: random begin/end/strides/masks, including negative strides; oracle decides
    # which are valid (our prepare must then reject the same ones).
    for k in range(40):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 7, size=rank))
        begin = [int(rng.integers(-d - 1, d + 2)) for d in shape]
        end = [int(rng.integers(-d - 1, d + 2)) for d in shape]
        strides = [int(rng.choice([-3, -2, -1, 1, 1, 2, 3])) for _ in shape]
        bm, em = int(rng.integers(0, 1 << rank)), int(rng.integers(0, 1 << rank))
        sm = int(rng.integers(0, 1 << rank)) if k % 3 == 0 else 0
        strides = [1 if sm >> ax & 1 else s for ax, s in enumerate(strides)]
        axes, out_shape = shape_ops.strided_slice_plan(shape, begin, end, strides, bm, em, sm)
        if 0 in out_shape:
            continue  # zero-size tensors are dynamic for TFLM: the interpreter rejects them
        if math.prod(len(a) for a in axes) != math.prod(out_shape):
            continue  # shrink index out of range: TFLM leaves the output unwritten (garbage)
        typ = ["INT8", "FLOAT32", "INT16", "INT32"][k % 4]
        mk = lambda s: dict(shape=s, type=typ, **({"scale": 0.1, "zp": 1} if typ in ("INT8", "INT16") else {}))  # noqa: E731
        cases.append((f"STRIDED_SLICE-{k}", single_op(
            "STRIDED_SLICE", [mk(shape), i32((rank,), data=np.array(begin)), i32((rank,), data=np.array(end)),
                              i32((rank,), data=np.array(strides))],
            mk(tuple(out_shape)), {"begin_mask": bm, "end_mask": em, "shrink_axis_mask": sm})))
    return cases


@pytest.mark.parametrize("name,data", named_case_params(_shape_cases()))
def test_single_op_matches_tflm(name, data, oracle):
    assert_named_case_matches_oracle(oracle, name, data)


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_allocations_follow_tflm(target):
    data = single_op("CONCATENATION", [q8((2, 3), 0.1, 3), q8((2, 5), 0.1, 3), q8((2, 1), 0.1, 3)],
                     q8((2, 9), 0.1, 3), {"axis": 1})
    it = Interpreter.from_bytes(data, target=target)
    # measured: only the OpData, no per-input arrays in the oracle's TFLM
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataConcatenation"))
    it = Interpreter.from_bytes(single_op("RESHAPE", [q8((4,), 0.1, 0), i32((1,), data=np.array([4]))],
                                          q8((4,), 0.1, 0)), target=target)
    assert kernel_persistent(it) == (0, 0)


def test_prepare_errors_name_op_and_tensor():
    data = single_op("STRIDED_SLICE", [f32((4, 4)), i32((2,), data=np.array([0, 0])),
                                       i32((2,), data=np.array([4, 4])), i32((2,), data=np.array([1, 1]))],
                     f32((4, 3)))
    with pytest.raises(KernelError, match="STRIDED_SLICE"):
        Interpreter.from_bytes(data)


@pytest.mark.parametrize("axis", [2, 5, -3, -1000])
def test_concatenation_axis_out_of_range_is_refused(axis):
    """An axis outside the output's rank: TFLM's prepare does not check it and its reference
    kernel then indexes the shapes out of bounds (only a debug-build DCHECK guards it), so
    its answer is undefined; prepare refuses, naming the axis (a forged axis once reached
    the shape lookup: IndexError)."""
    data = single_op("CONCATENATION", [q8((2, 3), 0.1, 3), q8((2, 3), 0.1, 3)], q8((2, 6), 0.1, 3),
                     {"axis": axis})
    with pytest.raises(KernelError, match=rf"op 0 CONCATENATION: axis {axis} is out of range for "
                                          r"output 'out0'.*2 dimensions") as info:
        Interpreter.from_bytes(data)
    assert info.value.__cause__ is None


@pytest.mark.parametrize("options, out_shape, message", [
    ({"values_count": 0, "axis": 1}, (3, 2, 4), r"values_count option 0 differs from the 2 inputs"),
    ({"values_count": 3, "axis": 1}, (3, 2, 4), r"values_count option 3 differs from the 2 inputs"),
    ({"values_count": 2, "axis": 1}, (3, 8), r"output 'out0' \(float32\[3, 8\]\) with axis 1"),
    ({"values_count": 2, "axis": -1}, (3, 2, 4), r"output 'out0' \(float32\[3, 2, 4\]\) with axis -1"),
])
def test_pack_options_that_tflm_loops_cannot_follow_are_refused(options, out_shape, message):
    """TFLM's PACK has no prepare: its loop copies `values_count` inputs (too few leave the
    output partly unwritten, too many read inputs that are not there) and lays them out by the
    output's dimensions around `axis` (fuzzing: a PACK whose options table was dropped packed
    on micro_rt and wrote nothing on TFLM). Refused unless both agree with the inputs."""
    data = single_op("PACK", [f32((3, 4)), f32((3, 4))], f32(out_shape), options)
    with pytest.raises(KernelError, match=r"op 0 PACK: " + message) as info:
        Interpreter.from_bytes(data)
    assert info.value.__cause__ is None
