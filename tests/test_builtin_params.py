"""Builtin option structs: TFLM allocates one for every operator that has options, whether
micro_rt has a kernel for it or not (micro_rt/builtin_params.py, sizes in targets.py).

The oracle's printout breaks the tail into the kinds RecordingMicroAllocator records; what
it does not record is the allocator objects, the scratch buffer handles and the builtin
option structs. So on a one-operator model that remainder must equal micro_rt's bytes for
those three, for every operator, including ones micro_rt has no kernel for (planned with
plan_only=True).
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import f32, i32, single_op
from micro_rt import Interpreter
from micro_rt.builtin_params import BUILTIN_PARAMS, builtin_params_struct
from micro_rt.resolver import MutableOpResolver
from micro_rt.targets import STRUCTS

UNRECORDED = ("allocator objects", "builtin data", "scratch buffer handles")
# Scratch buffers TFLM's kernels request in prepare for operators micro_rt has no kernel for:
# their handles (8 bytes each on host64) are in the oracle's unrecorded tail, not in ours.
TFLM_KERNEL_SCRATCH_REQUESTS = {"MIRROR_PAD": 2, "REDUCE_MAX": 2, "REDUCE_MIN": 2, "SUM": 2}


def _w(shape) -> np.ndarray:
    return np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)


X4 = f32([1, 4, 4, 2])
X8 = f32([1, 8])
POOL = {"padding": "VALID", "stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2}
REDUCE = ([X4, i32([2], data=np.array([1, 2]))], f32([1, 2]), {"keep_dims": False})

# op -> (inputs, output(s), options): one small float model TFLM prepares successfully.
CASES = {
    "ADD": ([X8, X8], X8, {}), "SUB": ([X8, X8], X8, {}), "MUL": ([X8, X8], X8, {}),
    "DIV": ([X8, X8], X8, {}),
    "CONV_2D": ([X4, f32([3, 3, 3, 2], data=_w([3, 3, 3, 2])), f32([3], data=_w([3]))],
                f32([1, 4, 4, 3]), {"padding": "SAME", "stride_w": 1, "stride_h": 1}),
    "DEPTHWISE_CONV_2D": ([X4, f32([1, 3, 3, 2], data=_w([1, 3, 3, 2])), f32([2], data=_w([2]))],
                          X4, {"padding": "SAME", "stride_w": 1, "stride_h": 1,
                               "depth_multiplier": 1}),
    "TRANSPOSE_CONV": ([i32([4], data=np.array([1, 4, 4, 2])), f32([2, 3, 3, 2], data=_w([2, 3, 3, 2])),
                        X4], X4, {"padding": "SAME", "stride_w": 1, "stride_h": 1}),
    "FULLY_CONNECTED": ([X8, f32([4, 8], data=_w([4, 8])), f32([4], data=_w([4]))], f32([1, 4]), {}),
    "BATCH_MATMUL": ([f32([1, 2, 3]), f32([1, 3, 4])], f32([1, 2, 4]), {}),
    "AVERAGE_POOL_2D": ([X4], f32([1, 2, 2, 2]), POOL), "MAX_POOL_2D": ([X4], f32([1, 2, 2, 2]), POOL),
    "L2_POOL_2D": ([X4], f32([1, 2, 2, 2]), POOL),
    "SOFTMAX": ([X8], X8, {"beta": 1.0}), "LEAKY_RELU": ([X8], X8, {"alpha": 0.2}),
    "L2_NORMALIZATION": ([X8], X8, {}),
    "RESHAPE": ([X8, i32([2], data=np.array([2, 4]))], f32([2, 4]), {"new_shape": [2, 4]}),
    "SQUEEZE": ([f32([1, 8, 1])], f32([8]), {}),
    "CONCATENATION": ([f32([1, 4]), f32([1, 4])], X8, {"axis": 1}),
    "STRIDED_SLICE": ([X8, i32([2], data=np.array([0, 0])), i32([2], data=np.array([1, 4])),
                       i32([2], data=np.array([1, 1]))], f32([1, 4]), {}),
    "PACK": ([f32([4]), f32([4])], f32([2, 4]), {"values_count": 2, "axis": 0}),
    "UNPACK": ([f32([2, 4])], [f32([4]), f32([4])], {"num": 2, "axis": 0}),
    "SPLIT": ([i32([], data=np.array(1)), X8], [f32([1, 4]), f32([1, 4])], {"num_splits": 2}),
    "SPLIT_V": ([X8, i32([2], data=np.array([3, 5])), i32([], data=np.array(1))],
                [f32([1, 3]), f32([1, 5])], {"num_splits": 2}),
    "GATHER": ([f32([4, 3]), i32([2], data=np.array([3, 1]))], f32([2, 3]), {"axis": 0}),
    "SHAPE": ([X8], i32([2]), {"out_type": "INT32"}),
    "CAST": ([X8], i32([1, 8]), {}),
    "ARG_MAX": ([X8, i32([1], data=np.array([1]))], i32([1]), {"output_type": "INT32"}),
    "ARG_MIN": ([X8, i32([1], data=np.array([1]))], i32([1]), {"output_type": "INT32"}),
    "MEAN": REDUCE, "SUM": REDUCE, "REDUCE_MAX": REDUCE, "REDUCE_MIN": REDUCE,
    "MIRROR_PAD": ([X4, i32([4, 2], data=np.array([[0, 0], [1, 1], [1, 1], [0, 0]]))],
                   f32([1, 6, 6, 2]), {"mode": 0}),
    "SPACE_TO_DEPTH": ([X4], f32([1, 2, 2, 8]), {"block_size": 2}),
    "DEPTH_TO_SPACE": ([f32([1, 2, 2, 8])], X4, {"block_size": 2}),
    "RESIZE_BILINEAR": ([f32([1, 2, 2, 2]), i32([2], data=np.array([4, 4]))], X4, {}),
    "RESIZE_NEAREST_NEIGHBOR": ([f32([1, 2, 2, 2]), i32([2], data=np.array([4, 4]))], X4, {}),
    "CUMSUM": ([X8, i32([], data=np.array(1))], X8, {}),
    # operators without options: nothing is allocated for them
    "RELU": ([X8], X8, {}), "TANH": ([X8], X8, {}), "EXP": ([X8], X8, {}), "ABS": ([X8], X8, {}),
    "PAD": ([X8, i32([2, 2], data=np.array([[0, 0], [1, 1]]))], f32([1, 10]), {}),
    "TRANSPOSE": ([f32([2, 4]), i32([2], data=np.array([1, 0]))], f32([4, 2]), {}),
    "LOG_SOFTMAX": ([X8], X8, {}), "SQUARED_DIFFERENCE": ([X8, X8], X8, {}),
}


def _model(op: str) -> bytes:
    inputs, out, options = CASES[op]
    outs = out if isinstance(out, list) else None
    return single_op(op, inputs, None if outs else out, options, outputs=outs)


def test_every_parsed_struct_has_a_layout():
    """Each struct in the table, and so in structs/tflm_structs.h (test_struct_layouts.py
    compiles it for both targets)."""
    assert set(BUILTIN_PARAMS.values()) <= set(STRUCTS)


@pytest.mark.parametrize("op", sorted(CASES))
def test_unrecorded_tail_equals_tflm(op, oracle):
    data = _model(op)
    it = Interpreter.from_bytes(data, target="host64", plan_only=True)
    ours = it.plan
    theirs = oracle.allocations(data, 1 << 16)
    unrecorded = theirs["tail"] - sum(theirs["categories"].values())
    handles = 8 * TFLM_KERNEL_SCRATCH_REQUESTS.get(op, 0) if it.unresolved else 0
    assert sum(ours.tail_breakdown.get(k, 0) for k in UNRECORDED) + handles == unrecorded
    struct = builtin_params_struct(op, False)
    assert (ours.tail_breakdown.get("builtin data", 0) > 0) == (struct is not None)


def test_operators_without_kernels_count_their_params():
    """RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, ARG_MAX and TRANSPOSE_CONV had no micro_rt
    kernel and added nothing to the tail (a detection model's tail came out 16 B short).
    An empty resolver keeps them kernel-less whatever micro_rt implements since."""
    for op in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "ARG_MAX", "TRANSPOSE_CONV"):
        for target in ("host64", "cortex-m4"):
            it = Interpreter.from_bytes(_model(op), target=target, plan_only=True, op_resolver=MutableOpResolver())
            assert it.unresolved
            assert it.plan.tail_breakdown["builtin data"] > 0, (op, target)
