"""The interpreter's API mirrors tflite_micro.runtime; wrong use gets a precise error."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import PROJECT_MODELS, shared_model
from micro_rt import AllocationError, InputError, Interpreter
from micro_rt.builder import ModelBuilder

MODEL = PROJECT_MODELS / "residual_block_int8.tflite"


def _two_relu_model(variable: bool = False) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    mid = b.add_tensor("mid", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    b.add_operator("RELU", [x], [mid])
    b.add_operator("RELU6", [mid], [y])
    if variable:
        b.add_tensor("state", [1, 8], "FLOAT32", is_variable=True)
    b.inputs, b.outputs = [x], [y]
    return b.build()


def test_details_match_the_oracle_format(oracle):
    ours = Interpreter.from_file(MODEL)
    theirs = oracle.interpreter(MODEL.read_bytes(), 1 << 20)
    for getter in ("get_input_details", "get_output_details"):
        a, b = getattr(ours, getter)(0), getattr(theirs, getter)(0)
        assert a["dtype"] == b["dtype"]
        np.testing.assert_array_equal(a["shape"], b["shape"])
        qa, qb = a["quantization_parameters"], b["quantization_parameters"]
        np.testing.assert_array_equal(qa["scales"], qb["scales"])
        np.testing.assert_array_equal(qa["zero_points"], qb["zero_points"])
        assert qa["quantized_dimension"] == qb["quantized_dimension"]


def test_counts_and_round_trip():
    it = Interpreter.from_bytes(_two_relu_model())
    assert (it.num_inputs, it.num_outputs) == (1, 1)
    x = np.linspace(-2, 9, 8, dtype=np.float32).reshape(1, 8)
    it.set_input(x, 0)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0), np.clip(x, 0, 6))


def test_set_input_errors_say_what_was_expected():
    it = Interpreter.from_bytes(_two_relu_model())
    with pytest.raises(InputError, match="expects float32, got int8"):
        it.set_input(np.zeros((1, 8), np.int8), 0)
    with pytest.raises(InputError, match=r"expects shape \[1, 8\], got \[8\]"):
        it.set_input(np.zeros(8, np.float32), 0)
    with pytest.raises(InputError, match="input index 3 is out of range: model has 1 inputs"):
        it.set_input(np.zeros((1, 8), np.float32), 3)
    with pytest.raises(InputError, match="output index 1"):
        it.get_output(1)


def test_intermediate_tensors_need_preserve():
    it = Interpreter.from_bytes(_two_relu_model())
    with pytest.raises(InputError, match="preserve_all_tensors"):
        it.get_tensor(1)
    kept = Interpreter.from_bytes(_two_relu_model(), preserve_all_tensors=True)
    x = np.full((1, 8), -3.0, np.float32)
    x[0, :4] = 2.5
    kept.set_input(x, 0)
    kept.invoke()
    np.testing.assert_array_equal(kept.get_tensor(1), np.maximum(x, 0))
    assert kept.plan.head_bytes > it.plan.head_bytes    # nothing shares memory any more


def test_arena_none_means_the_minimum_and_it_is_tight():
    data = MODEL.read_bytes()
    smallest = Interpreter.from_bytes(data).arena_required_bytes()
    Interpreter.from_bytes(data, arena_size=smallest)
    with pytest.raises(AllocationError) as info:
        Interpreter.from_bytes(data, arena_size=smallest - 16)
    message = str(info.value)
    assert f"arena has {smallest - 16}" in message and f"at least {smallest}" in message


def test_tiny_arenas_fail_cleanly_at_every_size():
    data = MODEL.read_bytes()
    smallest = Interpreter.from_bytes(data).arena_required_bytes()
    for size in list(range(0, 2048, 16)) + [smallest // 2, smallest - 16, smallest - 1]:
        with pytest.raises(AllocationError, match="arena too small"):
            Interpreter.from_bytes(data, arena_size=size)


def test_used_bytes_is_head_plus_tail():
    it = Interpreter.from_bytes(shared_model("hello_world_int8.tflite").read_bytes(), target="host64")
    assert it.arena_used_bytes() == 1504
    assert it.arena_required_bytes() == 1936


def test_reset_zeroes_variables():
    it = Interpreter.from_bytes(_two_relu_model(variable=True))
    state = it.tensors[3]
    state.data[...] = 7
    it.reset()
    assert not state.data.any()


def test_targets_change_the_tail_not_the_head():
    data = MODEL.read_bytes()
    host = Interpreter.from_bytes(data, target="host64").plan
    m4 = Interpreter.from_bytes(data, target="cortex-m4").plan
    assert host.head_bytes == m4.head_bytes
    assert m4.tail_bytes < host.tail_bytes


def test_activations_use_the_planned_offsets():
    it = Interpreter.from_file(MODEL)
    memory = it._memory
    for b in it.plan.buffers:
        if b.kind == "tensor":
            view = it.tensors[b.tensor].data
            assert np.shares_memory(view, memory[b.offset:b.offset + b.size])
