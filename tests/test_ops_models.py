"""The converter-made operator models (models/ops/*.tflite, made by models/make_models_ops.py) as
a user brings them: host bit-exact with the tflite-micro oracle on 20 seeded input sets plus the
edge values, the arena (head, tail, total and TFLM's true minimum) equal to the oracle's, and on
the virtual MCU every operator running a C kernel with the host's outputs.

SWEEP lists the models whose every operator micro_rt runs; each operator family appends its
own (the refuse_* models are held by the tests of the family that refuses them).
"""
from __future__ import annotations

import pytest

from conftest import PROJECT_MODELS
from kernel_cases import assert_seeds_and_edges_match_oracle
from micro_rt import Interpreter
from oracle_minimum import minimum_mismatches

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
    data = _data(name)
    plan = Interpreter.from_bytes(data, target="host64", plan_only=True).plan
    theirs = oracle.allocations(data, 1 << 16)
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])
    assert minimum_mismatches([(name, data, Interpreter.from_bytes(data, target="host64").arena_required_bytes())]) == []
