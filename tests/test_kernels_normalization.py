"""LOG_SOFTMAX, L2_NORMALIZATION, L2_POOL_2D and the int16 SOFTMAX / AVERAGE_POOL_2D /
MAX_POOL_2D (and int8 -> int16 SOFTMAX) bit-exact against the tflite-micro oracle on 20 seeded
inputs and the edge values, with their arena (head, tail, true minimum) and refusals."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_arena_matches_oracle, assert_seeds_and_edges_match_oracle,
                          f32, kernel_persistent, named_case_params, q8, q16, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError

LOG_OUT = (16 / 256, 127)


def log_softmax_model(dtype: str, shape=(3, 9), in_q=(0.1, 3)) -> bytes:
    if dtype == "float32":
        return single_op("LOG_SOFTMAX", [f32(shape)], f32(shape))
    return single_op("LOG_SOFTMAX", [q8(shape, *in_q)], q8(shape, *LOG_OUT))


def l2norm_model(dtype: str, shape=(3, 9), in_q=(0.1, 3), act="NONE") -> bytes:
    opts = {"fused_activation_function": act}
    if dtype == "float32":
        return single_op("L2_NORMALIZATION", [f32(shape)], f32(shape), opts)
    return single_op("L2_NORMALIZATION", [q8(shape, *in_q)], q8(shape, 1 / 128, 0), opts)


def pool_model(op: str, dtype: str, in_shape=(1, 9, 8, 3), k=(3, 2), stride=(2, 2), padding="SAME",
               act="NONE", q=(0.05, 0)) -> bytes:
    from micro_rt.kernels.padding import compute_out_size
    oh = compute_out_size(padding, in_shape[1], k[0], stride[0], 1)
    ow = compute_out_size(padding, in_shape[2], k[1], stride[1], 1)
    out_shape = (in_shape[0], oh, ow, in_shape[3])
    opts = {"padding": padding, "stride_h": stride[0], "stride_w": stride[1], "filter_height": k[0],
            "filter_width": k[1], "fused_activation_function": act}
    spec = {"float32": lambda s: f32(s), "int8": lambda s: q8(s, *q), "int16": lambda s: q16(s, q[0])}[dtype]
    return single_op(op, [spec(in_shape)], spec(out_shape), opts)


def softmax_model(in_dtype: str, out_dtype: str, shape=(4, 11), in_scale=0.01, beta=1.0) -> bytes:
    x = q16(shape, in_scale) if in_dtype == "int16" else q8(shape, in_scale, -3)
    y = q16(shape, 1 / 32768) if in_dtype == "int16" else dict(shape=shape, type="INT16", scale=1 / 65536,
                                                               zp=-32768)
    return single_op("SOFTMAX", [x], y, {"beta": beta})


CASES = [
    *[(f"LOG_SOFTMAX-float32-{s}", log_softmax_model("float32", s)) for s in ((3, 9), (1, 1), (2, 3, 40))],
    *[(f"LOG_SOFTMAX-int8-{s}-{q}", log_softmax_model("int8", s, q))
      for s, q in (((3, 9), (0.1, 3)), ((2, 1), (0.05, -10)), ((4, 33), (0.5, 0)), ((2, 16), (0.0025, 100)),
                   ((1, 300), (0.2, -128)))],
    *[(f"L2_NORMALIZATION-float32-{s}", l2norm_model("float32", s)) for s in ((3, 9), (1, 2, 3, 4), (5,))],
    *[(f"L2_NORMALIZATION-int8-{s}-{q}", l2norm_model("int8", s, q))
      for s, q in (((3, 9), (0.1, 3)), ((1, 2, 3, 40), (0.02, -128)), ((6,), (0.3, 127)), ((2, 300), (0.01, 0)))],
    *[(f"L2_POOL_2D-{kw}", pool_model("L2_POOL_2D", "float32", **kw))
      for kw in (dict(), dict(padding="VALID"), dict(k=(1, 1), stride=(1, 1)), dict(act="RELU6"),
                 dict(in_shape=(2, 5, 7, 4), k=(5, 3), stride=(1, 2), act="RELU_N1_TO_1"))],
    *[(f"{op}-int16-{kw}", pool_model(op, "int16", **kw))
      for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D")
      for kw in (dict(), dict(padding="VALID", k=(2, 2)), dict(act="RELU6", q=(0.001, 0)),
                 dict(in_shape=(2, 6, 5, 17), k=(3, 3), stride=(1, 1)), dict(act="RELU", k=(4, 4), stride=(3, 1)))],
    *[(f"SOFTMAX-int16-{s}-{sc}-{b}", softmax_model("int16", "int16", s, sc, b))
      for s, sc, b in (((4, 11), 0.01, 1.0), ((2, 3, 40), 0.0005, 1.0), ((1, 1), 0.01, 1.0), ((3, 7), 0.003, 0.5),
                       ((2, 64), 1 / 4096, 2.0))],
    *[(f"SOFTMAX-int8-int16-{s}-{sc}", softmax_model("int8", "int16", s, sc)) for s, sc in (((4, 11), 0.1),
                                                                                           ((2, 50), 0.02))],
]


@pytest.mark.parametrize("name,data", named_case_params(CASES))
def test_matches_tflm(name, data, oracle):
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


ARENA_CASES = CASES[::3] + [c for c in CASES if c[0].startswith(("LOG_SOFTMAX-int8", "L2_POOL_2D"))][:4]


def test_arena_is_tflms(oracle):
    """Head, tail and total as TFLM prints them, and its true minimum. LOG_SOFTMAX int8 and
    L2_POOL_2D allocate persistent data after their temporary tensors (which it may partly
    overwrite), the others before."""
    assert_arena_matches_oracle(oracle, dict(ARENA_CASES))


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_requests(target):
    """LOG_SOFTMAX: its op data for int8 only; L2_NORMALIZATION: its params in init; L2_POOL_2D:
    the output's dims (a TfLiteIntArray of 4)."""
    def persistent(data):
        it = Interpreter.from_bytes(data, target=target)
        return kernel_persistent(it)
    assert persistent(log_softmax_model("int8")) == (1, Interpreter.from_bytes(
        log_softmax_model("int8"), target=target).target.sizeof("LogSoftmaxOpData"))
    assert persistent(log_softmax_model("float32")) == (0, 0)
    assert persistent(l2norm_model("float32")) == (1, 4)
    assert persistent(pool_model("L2_POOL_2D", "float32")) == (1, 20)


@pytest.mark.parametrize("make,words", [
    (lambda: single_op("LOG_SOFTMAX", [q8((2, 3), 0.1, 0)], q8((2, 3), 0.1, 127)),
     "scale 16/256 and zero point 127"),
    (lambda: single_op("LOG_SOFTMAX", [q16((2, 3), 0.1)], q16((2, 3), 0.1)),
     "LOG_SOFTMAX only supports float32, int8, got INT16."),
    (lambda: l2norm_model("float32", act="RELU"), "fused activation RELU"),
    (lambda: l2norm_model("float32", shape=(1, 2, 3, 4, 5)), "at most 4"),
    (lambda: single_op("L2_NORMALIZATION", [q16((2, 3), 0.1)], q16((2, 3), 0.1)),
     "output->type == kTfLiteFloat32 || output->type == kTfLiteInt8 was not true."),
    (lambda: pool_model("L2_POOL_2D", "int8"), "(INT8 != FLOAT32)"),
])
def test_refusals_name_the_problem(make, words):
    with pytest.raises(KernelError) as e:
        Interpreter.from_bytes(make())
    assert words in str(e.value)


def test_int16_softmax_saturates_at_the_wrap_edge(oracle):
    """A row whose sum of exps is 2^18 - 1 (recentred mantissa 32768): TFLM's reference saturates
    it to 32767, where CMSIS-NN's int16 cast would wrap; micro_rt agrees with TFLM."""
    from micro_rt.oracle import invoke_both
    from kernel_cases import softmax_s16_wrap_edge_row
    row = softmax_s16_wrap_edge_row(0.001)[None]
    data = softmax_model("int16", "int16", row.shape, 0.001)
    ours = Interpreter.from_bytes(data)
    theirs = oracle.interpreter(data, 1 << 16)
    invoke_both(ours, theirs, [row])
    assert ours.get_output(0).tobytes() == np.array(theirs.get_output(0)).tobytes()
