"""The converter-made operator models (models/ops/*.tflite, made by models/make_models_ops.py) as
a user brings them: host bit-exact with the tflite-micro oracle on 20 seeded input sets plus the
edge values, the arena (head, tail, total and TFLM's true minimum) equal to the oracle's, and on
the virtual MCU every operator running a C kernel with the host's outputs.

SWEEP lists the models whose every operator micro_rt runs; each operator family appends its
own (the refuse_* models are held by the tests of the family that refuses them).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import PROJECT_MODELS
from kernel_cases import (assert_arena_matches_oracle, assert_seeds_and_edges_match_oracle, edge_input_sets,
                          model_inputs)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from micro_rt.model import read_model
from vmcu_cases import CORES_FAST, assert_same_any_nan, firmware_elf

OPS = PROJECT_MODELS / "ops"

SWEEP = [
    # binary / comparison family (kernels/binary_ops.py, kernels/comparisons.py)
    "binary_f32", "binary_int8", "binary_int16x8", "binary_int32",
    "compare_bool", "compare_f32", "compare_int8", "compare_int32", "compare_int64",
]


def _data(name: str) -> bytes:
    return (OPS / f"{name}.tflite").read_bytes()


def test_sweep_lists_existing_models():
    assert all((OPS / f"{name}.tflite").exists() for name in SWEEP)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", SWEEP)
def test_host_matches_oracle(name, oracle):
    assert_seeds_and_edges_match_oracle(oracle, _data(name), what=name)


@pytest.mark.parametrize("name", SWEEP)
def test_arena_matches_oracle(name, oracle):
    assert_arena_matches_oracle(oracle, {name: _data(name)})


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("name", SWEEP)
def test_mcu_matches_host_with_a_complete_profile(name, core):
    """Every operator runs a C kernel (none falls back to the host), with the host's outputs on
    3 seeded input sets and the edge-value sets (NaNs made from non-NaN values count equal:
    their sign is the machine's default NaN)."""
    firmware_elf(core)
    data = _data(name)
    host = Interpreter.from_bytes(data, target=core)
    mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn")
    sg = read_model(data).main
    rng = np.random.default_rng(len(data))
    ran = 0
    for k, inputs in enumerate([model_inputs(sg, rng, first=s == 0) for s in range(3)] + edge_input_sets(sg)):
        refused = []
        for it in (host, mcu):
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            try:
                it.invoke()
                refused.append(False)
            except KernelError:             # e.g. FLOOR_DIV by zero: TFLM refuses when invoked
                refused.append(True)
        assert refused[0] == refused[1], f"{name} input set {k}: host refused {refused[0]}, MCU {refused[1]}"
        if refused[0]:
            continue
        ran += 1
        off = [f"{r.index} {r.op}" for r in mcu.last_run if not r.on_mcu]
        assert not off, f"{name}: ran on the host: {off}"
        assert all(r.cycles > 0 for r in mcu.last_run)
        assert_same_any_nan([host.get_output(j) for j in range(host.num_outputs)],
                          [mcu.get_output(j) for j in range(mcu.num_outputs)], f"{name} {core} input set {k}")
    assert ran >= 3
