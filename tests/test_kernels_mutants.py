"""Kernel prepare checks: corrupt quantization, odd shapes and forged options get micro_rt's own
KernelError (op index, op name, tensor name, what is wrong), never a Python error the
interpreter had to wrap ("failed in prepare: ZeroDivisionError: ...").

The named cases are the ones a fuzz campaign found (divide by zero in conv / fully connected
on a zero scale or a missing quantization, an IndexError on a per-channel dimension, a
ValueError from a non-finite multiplier, an AttributeError on an absent ADD input); the seeded loop runs kernel-level mutants of every
project model (tests/kernel_mutants.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import assert_single_op_matches_oracle, q8, single_op
from kernel_mutants import make_mutant, seed_models
from micro_rt import Interpreter
from micro_rt.errors import KernelError, MicroRtError, ModelError
from devtools.fuzzing import classify

GEOM = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1, "dilation_w_factor": 1}
W = np.arange(-13, 14).reshape(3, 3, 3, 1).transpose(3, 0, 1, 2)


def _conv(filter_scale=0.01, out_scale=0.1, filter_quantized=True):
    flt = dict(shape=(1, 3, 3, 3), type="INT8", data=W)
    if filter_quantized:
        flt.update(scale=filter_scale, zp=0)
    return single_op("CONV_2D", [q8((1, 4, 4, 3), 0.05, 1), flt], q8((1, 4, 4, 1), out_scale, 0), GEOM)


def _fc(weights_scale=0.01, qdim=0, per_channel=False, weights_quantized=True):
    w = dict(shape=(3, 4), type="INT8", data=np.arange(12).reshape(3, 4), qdim=qdim)
    if weights_quantized:
        w.update(scale=[weights_scale] * 3 if per_channel else weights_scale, zp=0)
    return single_op("FULLY_CONNECTED", [q8((2, 4), 0.05, 0), w], q8((2, 3), 0.1, 0))


# name: (model, error class, words the message must hold). Non-finite and negative scales
# and impossible per-channel dimensions are already refused by the model reader.
CASES = {
    "conv output scale 0": (_conv(out_scale=0.0), KernelError, "output 'out0' (int8[1, 4, 4, 1]) has quantization scale 0.0"),
    "conv filter not quantized": (_conv(filter_quantized=False), KernelError,
                                  "filter 'in1' has no quantization"),
    "conv output scale nan": (_conv(out_scale=float("nan")), ModelError, "('out0') quantization: scale 0 is nan"),
    "fc weights scale -1": (_fc(weights_scale=-1.0), ModelError, "('in1') quantization: scale 0 is -1.0"),
    "fc per-channel dimension 5": (_fc(per_channel=True, qdim=5), ModelError, "dimension 5 of shape [3, 4]"),
    "quantize output scale 0": (single_op("QUANTIZE", [q8((4,), 0.1, 0)], q8((4,), 0.0, 0)), KernelError,
                                "output 'out0' (int8[4]) has quantization scale 0.0"),
    "quantize huge ratio": (single_op("QUANTIZE", [q8((4,), 1e20, 0)], q8((4,), 1e-20, 0)), KernelError,
                            "left shift"),
    "add output scale tiny": (single_op("ADD", [q8((4,), 0.5, 0), q8((4,), 0.5, 0)], q8((4,), 1e-9, 0)),
                              KernelError, "TFLITE_CHECK_LT(double_multiplier, 1.)"),
    "mul huge multiplier": (single_op("MUL", [q8((4,), 1e10, 0), q8((4,), 1e10, 0)], q8((4,), 1e-10, 0)),
                            KernelError, "left shift"),
    "add input 1 absent": (single_op("ADD", [q8((4,), 0.1, 0), None], q8((4,), 0.1, 0)), KernelError,
                           "input 1 is absent (inputs [0, -1], -1 = absent)"),
    "relu output scale 0": (single_op("RELU", [q8((4,), 0.1, 0)], q8((4,), 0.0, 0)), KernelError,
                            "output 'out0' (int8[4]) has quantization scale 0.0"),
    "relu6 input scale 0": (single_op("RELU6", [q8((4,), 0.0, 0)], q8((4,), 0.1, 0)), KernelError,
                            "input 'in0' (int8[4]) has quantization scale 0.0"),
    "add input scale 0": (single_op("ADD", [q8((4,), 0.0, 0), q8((4,), 0.5, 0)], q8((4,), 0.1, 0)), KernelError,
                          "input 1 'in0' (int8[4]) has quantization scale 0.0"),
    "fc filter absent": (single_op("FULLY_CONNECTED", [q8((2, 4), 0.05, 0), None], q8((2, 3), 0.1, 0)),
                         KernelError, "op 0 FULLY_CONNECTED: input 1 is absent (inputs [0, -1], -1 = absent)"),
    "gather indices absent": (single_op("GATHER", [q8((4, 2), 0.1, 0), None], q8((3, 2), 0.1, 0), {"axis": 0}),
                              KernelError, "op 0 GATHER: input 1 is absent (inputs [0, -1], -1 = absent)"),
    "softmax second input": (single_op("SOFTMAX", [q8((4,), 0.1, 0), None], q8((4,), 1 / 256, -128),
                                       {"beta": 1.0}), KernelError, "op 0 SOFTMAX: expects 1 input and 1 output"),
    "fc output not quantized": (single_op("FULLY_CONNECTED", [q8((2, 4), 0.05, 0), dict(
        shape=(3, 4), type="INT8", data=np.ones((3, 4)), scale=0.1, zp=0)], dict(shape=(2, 3), type="INT8")),
        KernelError, "output 'out0' (int8[2, 3]) has no quantization parameters"),
}


# A zero (or absent) scale in a numerator is well defined in TFLM (the multiplier is 0): these
# run, and match the oracle.
ZERO_NUMERATORS = {
    "conv filter scale 0": _conv(filter_scale=0.0),
    "fc weights scale 0": _fc(weights_scale=0.0),
    "fc weights not quantized": _fc(weights_quantized=False),
    "relu input scale 0": single_op("RELU", [q8((4,), 0.0, 0)], q8((4,), 0.1, 3)),
    "quantize input scale 0": single_op("QUANTIZE", [q8((4,), 0.0, 0)], q8((4,), 0.1, 3)),
    "mul input scale 0": single_op("MUL", [q8((4,), 0.0, 0), q8((4,), 0.5, 0)], q8((4,), 0.1, 0)),
}


@pytest.mark.parametrize("name", sorted(ZERO_NUMERATORS))
def test_zero_numerator_scales_run_like_tflm(name, oracle):
    assert_single_op_matches_oracle(oracle, ZERO_NUMERATORS[name], trials=3)


@pytest.mark.parametrize("name", sorted(CASES))
def test_named_cases_get_a_clear_kernel_error(name):
    data, error_class, words = CASES[name]
    with pytest.raises(error_class) as info:
        Interpreter.from_bytes(data)
    message = str(info.value)
    if error_class is KernelError:
        assert message.startswith("op 0 "), message
    assert words in message, message
    assert "failed in prepare" not in message and info.value.__cause__ is None, message


def _load_and_invoke(data: bytes):
    """Load and, when it loads, invoke once on zeros: the MicroRtError met, or None."""
    try:
        it = Interpreter.from_bytes(data)
        for i in range(it.num_inputs):
            d = it.get_input_details(i)
            if d["dtype"] is not None:
                it.set_input(np.zeros(d["shape"], d["dtype"]), i)
        it.invoke()
    except MicroRtError as e:
        return e
    return None


def test_seeded_kernel_mutants_never_wrap_a_python_error():
    """1,500 seeded mutants (about 10 s): none may raise anything but a MicroRtError, and no
    MicroRtError may be the interpreter's wrapping of a Python exception from a kernel."""
    np.seterr(all="ignore")
    seeds = seed_models()
    wrapped, ran = [], 0
    for k in range(1500):
        name, mutators, data = make_mutant(seeds, k, campaign=1)
        if data is None:
            continue
        ran += 1
        error = _load_and_invoke(data)          # anything but a MicroRtError propagates
        outcome, what = classify(error)
        if outcome == "wrapped":
            wrapped.append(f"mutant {k} ({name}, {mutators}): {what}: {error}")
    assert ran > 800
    assert not wrapped, "\n".join(wrapped[:10])
