"""Real models through the host kernels, against the tflite-micro oracle: every tensor preserved
on both sides, each operator's output must equal the oracle's (whole-model outputs against the
oracle are test_oracle_models.py's); the seanet integration models (int16 ADD / SUB / PAD /
QUANTIZE / STRIDED_SLICE / LEAKY_RELU / CONV_2D / TRANSPOSE_CONV graphs) on their golden inputs,
on the host and on the virtual MCU, when ../shared/models is present (simple_add_model's
agreement is test_oracle_models.py's)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, missing, oracle_models, shared_model, shared_models
from kernel_cases import assert_bits_equal, assert_ops_match_oracle
from micro_rt import Interpreter
from micro_rt.errors import UnsupportedOpError
from micro_rt.kernels import activations, elementwise, quantize, shape_ops
from micro_rt.model import read_model

SEANET = SHARED_MODELS / "integration_tests" / "seanet"
# The operators of the element-wise, activation, quantize and data-movement kernels.
ELEMENTWISE_FAMILY_OPS = {name for module in (elementwise, activations, quantize, shape_ops)
                          for name, _, _ in module.BUILTINS}


# keyword_scrambled*: their FULLY_CONNECTED / SOFTMAX / QUANTIZE ops run one at a time on the
# oracle's tensors (kernel_cases.op_submodel); SVDF itself is tested in test_kernels_svdf.py.
REAL_MODELS = ["person_detect", "micro_speech_quantized", "network_tester_model",
               "test_conv_model", "hello_world_int8", "hello_world_float", "keyword_scrambled",
               "keyword_scrambled_8bit"]


@pytest.mark.parametrize("name", shared_models([f"{n}.tflite" for n in REAL_MODELS]))
def test_real_model_ops_match_tflm(name, oracle):
    checked = assert_ops_match_oracle(oracle, (SHARED_MODELS / name).read_bytes(), seeds=(7, 8))
    assert checked


def test_mobilenet_v2_ops_match_tflm(oracle):
    data = shared_model("mobilenet_v2_quantized_1x3x224x224.tflite").read_bytes()
    checked = assert_ops_match_oracle(oracle, data, seeds=(3,))
    assert checked["MEAN"] == 1 and checked["CONV_2D"] == 35


# custom_*.tflite are left out: the oracle has no kernel for a custom operator
# (test_oracle_models.test_custom_op_models_need_the_users_kernel)
@pytest.mark.parametrize("path", oracle_models(), ids=lambda p: p.stem)
def test_converter_model_ops_match_tflm(path, oracle):
    data = path.read_bytes()
    assert assert_ops_match_oracle(oracle, data, seeds=(5, 6))


# --------------------------------------------------------------------------- seanet

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
    """All 127 int16 graphs (ADD/SUB/PAD/QUANTIZE/STRIDED_SLICE/LEAKY_RELU/CONV_2D/TRANSPOSE_CONV)
    within 1 LSB of the golden
    csv (the csv files come from another TFLM build: a few leaky_relu elements differ by one
    there, for the oracle as well)."""
    models = _seanet_models()
    assert len(models) == 127
    for path, it, xs, golden in models:
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
    """The element-wise family's models (add, sub, pad, quantize, strided_slice, leaky_relu) on the golden
    inputs: outputs exactly the oracle's."""
    models = [m for m in _seanet_models() if _ops(m[1]) <= ELEMENTWISE_FAMILY_OPS]
    assert models
    _assert_seanet_matches_oracle(oracle, models)


def test_seanet_int16_conv_matches_oracle(oracle):
    """int16 activations use TFLM's int64 MultiplyByQuantizedMultiplier (single rounding);
    TRANSPOSE_CONV 16x8 accumulates in int64 and ignores the zero points. Goldens exactly too."""
    models = [m for m in _seanet_models() if {"CONV_2D", "TRANSPOSE_CONV"} & _ops(m[1])]
    assert sum("TRANSPOSE_CONV" in _ops(m[1]) for m in models) == 5
    _assert_seanet_matches_oracle(oracle, models)
    for path, it, _, golden in models:
        assert np.array_equal(it.get_output(0).reshape(-1).astype(np.int64), golden), path.name


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_seanet_models_on_the_mcu(core):
    """Every seanet graph on the virtual MCU (CMSIS-NN kernels) gives the host's outputs; the
    TRANSPOSE_CONV ones run wholly in C (mrt_transpose_conv_s16) and equal the goldens."""
    from vmcu_cases import firmware_elf
    firmware_elf(core)
    for path, host, xs, golden in _seanet_models():
        emu = Interpreter.from_bytes(path.read_bytes(), target=core, kernels="cmsis-nn", emulate=True)
        for k, x in enumerate(xs):
            host.set_input(x, k)
            emu.set_input(x, k)
        host.invoke()
        emu.invoke()
        assert_bits_equal(emu.get_output(0), host.get_output(0), f"{path.name} on {core}")
        if "TRANSPOSE_CONV" in _ops(host):
            assert all(r.on_mcu and r.cycles > 0 for r in emu.last_run), path.name
            assert np.array_equal(emu.get_output(0).reshape(-1).astype(np.int64), golden), path.name
