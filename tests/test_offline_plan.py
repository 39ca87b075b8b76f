"""Offline memory plans (OfflineMemoryAllocation metadata): honoured like TFLM honours them."""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt import AllocationError, Interpreter, ModelError
from micro_rt.builder import ModelBuilder


def chain_model(offsets=None, count=None) -> bytes:
    """x -> relu -> a -> relu6 -> b -> relu -> y, float32 [1, 64] (256 bytes each)."""
    b = ModelBuilder()
    names = ["x", "a", "b", "y"]
    t = [b.add_tensor(n, [1, 64], "FLOAT32") for n in names]
    for op, i in zip(("RELU", "RELU6", "RELU"), range(3)):
        b.add_operator(op, [t[i]], [t[i + 1]])
    b.inputs, b.outputs = [t[0]], [t[3]]
    if offsets is not None:
        n = len(offsets) if count is None else count
        b.add_metadata("OfflineMemoryAllocation", np.array([1, 1, n] + list(offsets), "<i4").tobytes())
    return b.build()


def test_greedy_reuses_and_offline_plan_is_honoured(oracle):
    plain = chain_model()
    spread = chain_model([0, 256, 512, 768])       # no reuse at all: 1024 bytes of head
    ours_plain = Interpreter.from_bytes(plain, target="host64").plan
    ours_spread = Interpreter.from_bytes(spread, target="host64").plan
    assert ours_plain.head_bytes == 512
    assert ours_spread.head_bytes == 1024
    assert [b.offset for b in ours_spread.buffers] == [0, 256, 512, 768]
    for data, plan in ((plain, ours_plain), (spread, ours_spread)):
        theirs = oracle.allocations(data, 1 << 16)
        assert (theirs["head"], theirs["tail"]) == (plan.head_bytes, plan.tail_bytes)


def test_partial_offline_plan_mixes_with_greedy(oracle):
    data = chain_model([512, -1, -1, -1])
    plan = Interpreter.from_bytes(data, target="host64").plan
    assert plan.buffers[0].offset == 512
    theirs = oracle.allocations(data, 1 << 16)
    assert theirs["head"] == plan.head_bytes


def test_offline_plan_gives_the_same_outputs():
    x = np.linspace(-5, 9, 64, dtype=np.float32).reshape(1, 64)
    results = []
    for data in (chain_model(), chain_model([0, 256, 512, 768])):
        it = Interpreter.from_bytes(data)
        it.set_input(x, 0)
        it.invoke()
        results.append(it.get_output(0))
    np.testing.assert_array_equal(results[0], results[1])


def test_linear_planner_ignores_offline_plan():
    plan = Interpreter.from_bytes(chain_model([768, 512, 256, 0]), planner="linear").plan
    assert [b.offset for b in plan.buffers] == [0, 256, 512, 768]


def test_offline_count_must_match_tensors():
    with pytest.raises(ModelError, match="lists 3 offsets"):
        Interpreter.from_bytes(chain_model([0, 256, 512], count=3))


def test_offline_offsets_must_be_aligned():
    with pytest.raises(ModelError, match="multiple of 16"):
        Interpreter.from_bytes(chain_model([0, 250, 512, 768]))


def test_offline_planner_needs_metadata():
    with pytest.raises(AllocationError, match="no OfflineMemoryAllocation"):
        Interpreter.from_bytes(chain_model(), planner="offline")
