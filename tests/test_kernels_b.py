"""Kernels-B: element-wise, activation, quantize and data-movement kernels.

Single-op models (ModelBuilder, kernel_cases.single_op) run through micro_rt.Interpreter and
the tflite-micro oracle on the same inputs; outputs must be bit-identical, and a model TFLM
rejects must be rejected by our prepare as well. The seanet integration models run when
../shared/models is present (simple_add_model's agreement is test_oracle_models.py's).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import SHARED_MODELS, missing
from kernel_cases import (assert_bits_equal, assert_single_op_matches_oracle, f32, i32,
                          kernel_persistent, q8, q16, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError, UnsupportedOpError
from micro_rt.kernels import activations, elementwise, fixedpoint, quantize, shape_ops
from micro_rt.model import read_model

SEANET = SHARED_MODELS / "integration_tests" / "seanet"
KERNELS_B_OPS = {name for module in (elementwise, activations, quantize, shape_ops)
                 for name, _, _ in module.BUILTINS}


# --------------------------------------------------------------------------- case lists

def _rscale(rng, lo=1e-3, hi=0.5):
    return float(np.float32(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


# --------------------------------------------------------------------------- case lists

def _binary_cases():
    rng = np.random.default_rng(1234)
    cases = []
    S = (1, 3, 4, 5)
    for op in ("ADD", "SUB", "MUL"):
        for k, act in enumerate(("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "NONE", "NONE")):
            shape2 = S if k % 2 == 0 else (1, 1, 4, 1) if k == 1 else (5,)
            a = q8(S, _rscale(rng), int(rng.integers(-128, 128)))
            b = q8(shape2, _rscale(rng), int(rng.integers(-128, 128)))
            o = q8(S, _rscale(rng, 1e-2, 0.5), int(rng.integers(-128, 128)))
            cases.append((f"{op}-i8-{k}-{act}", single_op(op, [a, b], o, {"fused_activation_function": act})))
        cases.append((f"{op}-f32", single_op(op, [f32(S), f32((4, 1))], f32(S),
                                             {"fused_activation_function": "RELU_N1_TO_1"})))
        cases.append((f"{op}-i32", single_op(op, [i32(S), i32(S)], i32(S))))
        for k in range(2):
            a, b = q16(S, _rscale(rng, 1e-5, 1e-2)), q16((1, 3, 1, 5), _rscale(rng, 1e-5, 1e-2))
            cases.append((f"{op}-i16-{k}", single_op(op, [a, b], q16(S, _rscale(rng, 1e-4, 1e-2)))))
    for op in ("MAXIMUM", "MINIMUM"):
        for typ, mk in (("i8", lambda s: q8(s, 0.1, 3)), ("i16", lambda s: q16(s, 0.01)),
                        ("f32", f32), ("i32", i32)):
            cases.append((f"{op}-{typ}", single_op(op, [mk(S), mk((1, 3, 1, 1))], mk(S))))
    return cases


def _unary_cases():
    rng = np.random.default_rng(99)
    cases = []
    S = (2, 3, 50)
    for k in range(4):
        si, zi = _rscale(rng, 0.005, 0.2), int(rng.integers(-100, 100))
        cases.append((f"LOGISTIC-i8-{k}", single_op("LOGISTIC", [q8(S, si, zi)], q8(S, 1 / 256, -128))))
        cases.append((f"TANH-i8-{k}", single_op("TANH", [q8(S, si, zi)], q8(S, 1 / 128, 0))))
        cases.append((f"RELU-i8-{k}", single_op("RELU", [q8(S, si, zi)],
                                                q8(S, _rscale(rng, 0.005, 0.2), int(rng.integers(-128, 0))))))
        cases.append((f"RELU6-i8-{k}", single_op("RELU6", [q8(S, si, zi)], q8(S, si, zi))))
        alpha = [0.2, 0.01, 1.7, -0.3][k]
        cases.append((f"LEAKY_RELU-i8-{k}", single_op("LEAKY_RELU", [q8(S, si, zi)],
                                                      q8(S, _rscale(rng, 0.005, 0.2), int(rng.integers(-50, 50))),
                                                      {"alpha": alpha})))
        cases.append((f"LEAKY_RELU-i16-{k}", single_op("LEAKY_RELU", [q16(S, si / 256)],
                                                       q16(S, _rscale(rng, 1e-4, 1e-3)), {"alpha": alpha})))
        cases.append((f"HARD_SWISH-i8-{k}", single_op("HARD_SWISH", [q8(S, si * 0.5, zi)],
                                                      q8(S, _rscale(rng, 0.005, 0.05), int(rng.integers(-128, -50))))))
    cases.append(("RELU-i16", single_op("RELU", [q16(S, 0.001)], q16(S, 0.0007))))
    cases.append(("RELU6-i16", single_op("RELU6", [q16(S, 0.001)], q16(S, 0.001))))
    for op in ("LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH"):
        opts = {"alpha": 0.3} if op == "LEAKY_RELU" else None
        cases.append((f"{op}-f32", single_op(op, [f32(S)], f32(S), opts)))
    return cases


def _quant_cases():
    rng = np.random.default_rng(7)
    S = (3, 40)
    cases = [
        ("QUANTIZE-f32-i8", single_op("QUANTIZE", [f32(S)], q8(S, 0.037, -5))),
        ("QUANTIZE-f32-i16", single_op("QUANTIZE", [f32(S)], q16(S, 0.0003))),
        ("DEQUANTIZE-i8", single_op("DEQUANTIZE", [q8(S, 0.0371, 17)], f32(S))),
        ("DEQUANTIZE-i16", single_op("DEQUANTIZE", [q16(S, 0.00037)], f32(S))),
    ]
    for k in range(3):
        cases.append((f"QUANTIZE-i8-i8-{k}", single_op("QUANTIZE", [q8(S, _rscale(rng), int(rng.integers(-128, 128)))],
                                                        q8(S, _rscale(rng), int(rng.integers(-128, 128))))))
        cases.append((f"QUANTIZE-i16-i8-{k}", single_op("QUANTIZE", [q16(S, _rscale(rng, 1e-5, 1e-3))],
                                                         q8(S, _rscale(rng), int(rng.integers(-128, 128))))))
        cases.append((f"QUANTIZE-i8-i16-{k}", single_op("QUANTIZE", [q8(S, _rscale(rng), int(rng.integers(-128, 128)))],
                                                         q16(S, _rscale(rng, 1e-5, 1e-3)))))
        cases.append((f"QUANTIZE-i16-i16-{k}", single_op("QUANTIZE", [q16(S, _rscale(rng, 1e-5, 1e-3))],
                                                          q16(S, _rscale(rng, 1e-5, 1e-3)))))
    return cases


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


ALL_CASES = _binary_cases() + _unary_cases() + _quant_cases() + _shape_cases()


@pytest.mark.parametrize("name,data", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_single_op_matches_tflm(name, data, oracle):
    assert_single_op_matches_oracle(oracle, data, trials=4, seed=len(name), may_reject=True)


# --------------------------------------------------------------------------- pure functions

def test_gemmlowp_logistic_tanh_close_to_real():
    x = np.linspace(-7.9, 7.9, 101)
    raw = np.round(x * 2 ** 27).astype(np.int64)
    lo = fixedpoint.gemmlowp_logistic(raw, 4) / 2 ** 31
    th = fixedpoint.gemmlowp_tanh(raw, 4) / 2 ** 31
    assert np.max(np.abs(lo - 1 / (1 + np.exp(-x)))) < 1e-6
    assert np.max(np.abs(th - np.tanh(x))) < 1e-6


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
    data = single_op("CONCATENATION", [q8((2, 3), 0.1, 3), q8((2, 5), 0.1, 3), q8((2, 1), 0.1, 3)],
                     q8((2, 9), 0.1, 3), {"axis": 1})
    it = Interpreter.from_bytes(data, target=target)
    # measured: only the OpData, no per-input arrays in the oracle's TFLM
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataConcatenation"))
    it = Interpreter.from_bytes(single_op("ADD", [q8((4,), 0.1, 0), q8((4,), 0.2, 0)], q8((4,), 0.3, 0)),
                                target=target)
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataAdd"))
    it = Interpreter.from_bytes(single_op("RESHAPE", [q8((4,), 0.1, 0), i32((1,), data=np.array([4]))],
                                          q8((4,), 0.1, 0)), target=target)
    assert kernel_persistent(it) == (0, 0)


def test_prepare_errors_name_op_and_tensor():
    data = single_op("LOGISTIC", [q8((4,), 0.1, 0)], q8((4,), 1 / 256, 0))
    with pytest.raises(KernelError, match=r"op 0 LOGISTIC: output 'out0'.*-128"):
        Interpreter.from_bytes(data)
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


# --------------------------------------------------------------------------- shared models

def _seanet_models():
    """(path, interpreter, inputs, golden) for each seanet model micro_rt has every kernel for."""
    if not SEANET.exists():
        missing("../shared/models (seanet integration tests) not available")
    found = []
    for path in sorted(SEANET.rglob("*.tflite")):
        data = path.read_bytes()
        sg = read_model(data).main
        inputs = sorted(path.parent.glob(path.stem + "_input*.csv"))
        goldens = sorted(path.parent.glob(path.stem + "_golden*.csv"))
        if len(inputs) != len(sg.inputs) or not goldens:
            continue
        try:
            it = Interpreter.from_bytes(data)
        except UnsupportedOpError:
            continue
        xs = [np.loadtxt(p, delimiter=",").astype(sg.tensors[i].dtype).reshape(sg.tensors[i].shape)
              for p, i in zip(inputs, sg.inputs)]
        found.append((path, it, xs, np.loadtxt(goldens[0], delimiter=",").reshape(-1).astype(np.int64)))
    assert found
    return found


def test_seanet_models_match_golden():
    """int16 ADD/SUB/PAD/QUANTIZE/STRIDED_SLICE/LEAKY_RELU graphs within 1 LSB of the golden
    csv (the csv files come from another TFLM build: a few leaky_relu elements differ by one
    there, for the oracle as well)."""
    for path, it, xs, golden in _seanet_models():
        for k, x in enumerate(xs):
            it.set_input(x, k)
        it.invoke()
        assert np.max(np.abs(it.get_output(0).reshape(-1).astype(np.int64) - golden)) <= 1, path.name


def _assert_seanet_matches_oracle(oracle, models):
    for path, it, xs, _ in models:
        theirs = oracle.interpreter(path.read_bytes(), 1 << 22)
        oracle.invoke_both(it, theirs, xs)
        assert_bits_equal(it.get_output(0), theirs.get_output(0), path.name)


def _ops(it) -> set:
    return {op.op_name for op in it.model.main.operators}


def test_seanet_models_match_oracle(oracle):
    """The kernels-B models (add, sub, pad, quantize, strided_slice, leaky_relu) on the golden
    inputs: outputs exactly the oracle's."""
    models = [m for m in _seanet_models() if _ops(m[1]) <= KERNELS_B_OPS]
    assert models
    _assert_seanet_matches_oracle(oracle, models)


def test_seanet_int16_conv_matches_oracle(oracle):
    """int16 activations use TFLM's int64 MultiplyByQuantizedMultiplier (single rounding)."""
    models = [m for m in _seanet_models() if "CONV_2D" in _ops(m[1])]
    assert models
    _assert_seanet_matches_oracle(oracle, models)
