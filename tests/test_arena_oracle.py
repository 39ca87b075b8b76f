"""Arena accounting against the tflite-micro oracle: head, tail and total as TFLM prints them
(the true minimum, which the printout can miss, is tests/test_arena_minimum.py's)."""
from __future__ import annotations

import pytest

from conftest import SHARED_MODELS, custom_op_models, oracle_models, shared_model, shared_models
from micro_rt import Interpreter
from micro_rt.arena import align_up

SHARED = ["hello_world_int8.tflite", "hello_world_float.tflite", "micro_speech_quantized.tflite",
          "network_tester_model.tflite", "test_conv_model.tflite", "simple_add_model.tflite",
          "person_detect.tflite", "mobilenet_v2_quantized_1x3x224x224.tflite",
          # SVDF and LSTM, with variable (state) tensors
          "keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite", "trained_lstm.tflite",
          "trained_lstm_int8.tflite", "micro_speech_lstm.tflite", "dtln_noise_suppression.tflite"]


def _our_plan(path):
    it = Interpreter.from_file(path, target="host64", kernels="reference", plan_only=True)
    assert not it.unresolved, f"{path.name}: micro_rt cannot account for {it.unresolved[0][:80]}"
    return it.plan


def _check_against_oracle(path, oracle):
    plan = _our_plan(path)
    arena = align_up(max(plan.required_bytes * 2, 64 * 1024))
    theirs = oracle.allocations(path.read_bytes(), arena)
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == \
        (theirs["head"], theirs["tail"], theirs["total"]), f"{path.name}: ours vs oracle"
    return plan


@pytest.mark.parametrize("name", shared_models(SHARED))
def test_head_and_tail_equal_oracle_on_shared_models(name, oracle):
    _check_against_oracle(SHARED_MODELS / name, oracle)


@pytest.mark.parametrize("path", oracle_models("*.tflite"), ids=lambda p: p.name)
def test_head_and_tail_equal_oracle_on_project_models(path, oracle):
    _check_against_oracle(path, oracle)


@pytest.mark.parametrize("path", custom_op_models(), ids=lambda p: p.name)
def test_custom_op_models_are_not_accounted_by_either(path, oracle):
    """A custom operator's op data is the user's kernel's: micro_rt lists it as unresolved
    (and plans the rest), the oracle has no kernel and refuses to allocate."""
    it = Interpreter.from_file(path, target="host64", kernels="reference", plan_only=True)
    assert it.unresolved and "custom op" in it.unresolved[0]
    with pytest.raises(RuntimeError):
        oracle.allocations(path.read_bytes(), 1 << 16)


def test_hello_world_minimum_exceeds_tflm_printout():
    path = shared_model("hello_world_int8.tflite")
    plan = _our_plan(path)
    assert plan.total_bytes == 1504 and plan.required_bytes == 1936
