"""Every registered kernel accepts exactly the tensor types TFLM's reference kernel accepts.

For each builtin micro_rt registers and each type combination of devtools/op_models/type_cases.py
(the types a kernel runs plus uint8, int64, bool, hybrid float/int8 layers and odd bias types),
a single-op model goes to the tflite-micro oracle (tests/oracle_verdicts.py, in a child process:
TFLM can crash) and to micro_rt: micro_rt accepts it iff the oracle does; when both accept, the
outputs are bit-equal on seeded inputs; when both refuse, micro_rt's KernelError carries TFLM's
own reason wording.

DELIBERATE lists the few combinations where micro_rt's answer differs on purpose, each with
why; the test also checks that the oracle still behaves as written there.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from devtools.op_models.type_cases import type_cases
from kernel_cases import assert_bits_equal, assert_single_op_matches_oracle, q16, single_op
from micro_rt import Interpreter
from micro_rt.errors import KernelError, MicroRtError
from micro_rt.resolver import builtin_op_resolver
from oracle_verdicts import oracle_verdicts

CASES = type_cases()

_READS_WRONG_WORDS = ("refused: TFLM does not check the bias type and reads the buffer as words of "
                      "the type it expects (wrong values or past the end); LiteRT refuses it")
DELIBERATE = {
    **{f"{op} in={it} filter={ft} bias={bt}": _READS_WRONG_WORDS
       for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
       for it, ft, bt in (("INT8", "INT8", "INT64"), ("INT8", "INT8", "INT16"), ("INT8", "INT8", "FLOAT32"),
                          ("FLOAT32", "FLOAT32", "INT32"))},
    "DEPTHWISE_CONV_2D in=INT16 filter=INT8 bias=INT32": _READS_WRONG_WORDS,
    **{f"TRANSPOSE_CONV in={it} filter={ft} bias={bt}": _READS_WRONG_WORDS
       for it, ft, bt in (("INT8", "INT8", "INT64"), ("INT8", "INT8", "INT16"), ("INT8", "INT8", "FLOAT32"),
                          ("FLOAT32", "FLOAT32", "INT32"), ("INT16", "INT8", "INT32"))},
    "TRANSPOSE_CONV in=INT16 filter=INT16 bias=INT64":
        "refused: TFLM's 16x8 kernel does not check the filter type and reads int16 weights as int8 bytes",
    "UNIDIRECTIONAL_SEQUENCE_LSTM hybrid in=FLOAT32 weights=INT8":
        "refused: TFLM's float LSTM reads the int8 weights as float32 (hybrid models)",
    "DEPTHWISE_CONV_2D in=INT8 filter=INT8 bias=-": "accepted: TFLM crashes (no bias check), LiteRT runs it",
    "DEPTHWISE_CONV_2D in=INT16 filter=INT8 bias=-": "accepted: TFLM crashes (no bias check), LiteRT runs it",
    "GREATER INT16": "refused: TFLM's int16 GREATER reads a rescaling its prepare never sets (int8 only)",
    **{f"{op} {t}": "refused: TFLM reads and writes the tensors as bool bytes, one per element, and leaves the "
                    "rest of the output as the arena held it"
       for op in ("LOGICAL_AND", "LOGICAL_OR") for t in ("FLOAT32", "INT16", "INT32", "INT64")},
}


# Cases whose op refuses (both TFLM and micro_rt, at invoke) quantized inputs below zero.
NON_NEGATIVE_INPUT = {"RSQRT INT16"}


def _assert_matches_on_non_negative_inputs(oracle, data: bytes, label: str) -> None:
    ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 16)
    t = ours.model.main.tensors[ours.model.main.inputs[0]]
    rng = np.random.default_rng(len(label))
    for trial in range(4):
        x = rng.integers(0, int(np.iinfo(t.dtype).max) + 1, size=t.shape).astype(t.dtype)
        oracle.invoke_both(ours, theirs, [x])
        assert_bits_equal(ours.get_output(0), theirs.get_output(0), f"{label} trial {trial}")


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    pytest.importorskip("tflite_micro", reason="tflite-micro oracle not installed")
    return dict(zip((label for label, _, _ in CASES),
                    oracle_verdicts([data for _, _, data in CASES], tmp_path_factory.mktemp("types"))))


def tflm_reason(log: str):
    """TFLM's human-readable reason for a refusal (its first printed line, less a source
    path), or None when that line is a bare assertion ("x == y was not true", "a != b")."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    if not lines or lines[0].startswith("crashed"):
        return None
    line = re.sub(r"^tensorflow/\S+\.cc(:\d+)? ", "", lines[0])
    # FILL prints a type name's address with %d: the words before it are the reason
    line = re.sub(r" got -?\d{6,}\.$", " got", line)
    if "was not true" in line or re.search(r"\S (!=|==|<=|>=) \S", line) or line.startswith("Node "):
        return None
    return line


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("scale", [2.0 ** -12, 2.0 ** -11, 2.0 ** -10, 2.0 ** -15, 1 / 3000, 0.001, 3e-5, 0.05])
def test_int16_logistic_tanh_every_input(op, scale, oracle):
    """TFLM's int16 LOGISTIC / TANH (the interpolated sigmoid table, power-of-two and general
    input scales) on all 65,536 inputs."""
    data = single_op(op, [q16((256, 256), scale)], q16((256, 256), 2.0 ** -15))
    ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 22)
    x = np.arange(-32768, 32768, dtype=np.int16).reshape(256, 256)
    oracle.invoke_both(ours, theirs, [x])
    assert_bits_equal(ours.get_output(0), theirs.get_output(0), f"{op} int16, input scale {scale}")


def our_verdict(data: bytes):
    try:
        Interpreter.from_bytes(data)
    except MicroRtError as e:
        return e
    return None


def test_every_registered_builtin_is_covered():
    covered = {op for _, op, _ in CASES}
    resolver = builtin_op_resolver()      # TFLM's custom ops (Signal) are test_kernels_signal's
    assert {op for op in resolver.registered() if resolver.supports(op, is_custom=False)} <= covered


@pytest.mark.parametrize("label,op,data", CASES, ids=[c[0] for c in CASES])
def test_accepts_exactly_what_tflm_accepts(label, op, data, verdicts, oracle):
    tflm_accepts, log = verdicts[label]
    error = our_verdict(data)
    if label in DELIBERATE:
        expected = DELIBERATE[label]
        assert (error is None) == expected.startswith("accepted"), f"{label}: {error}"
        assert tflm_accepts == ("reads" in expected), \
            f"{label}: the oracle changed ({log!r}); revisit DELIBERATE"
        if error is not None:
            assert isinstance(error, KernelError) and f"op 0 {op}" in str(error)
        return
    assert (error is None) == tflm_accepts, f"{label}: TFLM says {log!r}, micro_rt {error}"
    if tflm_accepts:
        if label in NON_NEGATIVE_INPUT:
            _assert_matches_on_non_negative_inputs(oracle, data, label)
            return
        assert_single_op_matches_oracle(oracle, data, trials=4, seed=len(label))
        return
    assert isinstance(error, MicroRtError)
    reason = tflm_reason(log)
    if reason is not None:
        assert isinstance(error, KernelError), f"{label}: {error!r}"
        assert reason in str(error), f"{label}: TFLM's reason {reason!r} missing from {error}"
