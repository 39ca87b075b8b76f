"""CIRCULAR_BUFFER against the tflite-micro oracle: the buffer carried across invokes, the
period (from the options or TFLM's shape rule) that ends a run early so later operators keep
their last outputs, reset() restarting the period, and the arena equal to the oracle's."""
from __future__ import annotations

import numpy as np
import pytest
from flatbuffers import flexbuffers

from devtools.op_models.circular_buffer import streaming_model
from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.errors import MicroRtError


CASES = [(4, 8, 2, 1), (3, 5, 3, 1), (5, 4, None, 1), (4, 6, None, 1), (13, 3, None, 2),
         (6, 4, 1, 2)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_stream_equals_oracle(oracle, case):
    slots, depth, cycles_max, width = case
    data = streaming_model(slots, depth, cycles_max, width)
    ours = Interpreter.from_bytes(data, target="host64")
    theirs = oracle.interpreter(data, 1 << 16)
    rng = np.random.default_rng(slots * 100 + depth)
    full_runs = 0
    for n in range(30):
        if n == 17:
            ours.reset()
            theirs.reset()
        x = rng.integers(-128, 128, (1, 1, width, depth), dtype=np.int8)
        ours.set_input(x, 0)
        ours.invoke()
        oracle.invoke(theirs, [x])
        # the buffer starts as whatever TFLM's arena held: compare the slots written so far,
        # and the reshaped copy once a full run copied a fully written buffer
        written = min(n + 1, slots)
        mine, tflm = ours.get_output(1), np.array(theirs.get_output(1))
        assert np.array_equal(mine[:, slots - written:], tflm[:, slots - written:]), n
        full_runs += n >= slots - 1 and len(ours.last_run) == 2
        if full_runs:
            assert np.array_equal(ours.get_output(0), np.array(theirs.get_output(0))), n
    assert full_runs


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: "-".join(map(str, c)))
def test_arena_equals_oracle(oracle, case):
    data = streaming_model(*case)
    plan = Interpreter.from_bytes(data, target="host64", plan_only=True).plan
    theirs = oracle.allocations(data, 1 << 16)
    assert (plan.head_bytes, plan.tail_bytes) == (theirs["head"], theirs["tail"])


def test_aborted_run_leaves_later_operators_unrun():
    it = Interpreter.from_bytes(streaming_model(4, 2, 3))
    for n in range(3):
        it.set_input(np.full((1, 1, 1, 2), n + 1, np.int8), 0)
        it.invoke()
        assert [r.index for r in it.last_run] == ([0, 1] if n == 2 else [0])
    assert it.get_output(1)[0, :, 0].tolist() == [[0, 0], [1, 1], [2, 2], [3, 3]]


@pytest.mark.parametrize("model, message", [
    (lambda: streaming_model(4, 8, 2, dtype="INT16"), "int8 only"),
])
def test_bad_nodes_are_refused(model, message):
    with pytest.raises(MicroRtError, match=message):
        Interpreter.from_bytes(model())


def batched_model() -> bytes:
    """A CIRCULAR_BUFFER of batch 2: [2, 1, 2, 3] into [2, 4, 2, 3], period 1."""
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0}
    x = b.add_tensor("x", [2, 1, 2, 3], "INT8", **q)
    buf = b.add_tensor("buffer", [2, 4, 2, 3], "INT8", **q)
    b.add_operator("CIRCULAR_BUFFER", [x], [buf], custom_options=flexbuffers.Dumps({"cycles_max": 1}))
    b.inputs, b.outputs = [x], [buf]
    return b.build()


def test_batch_above_one_moves_batch_zero_only_as_tflm(oracle):
    """TFLM's depth is h * w whatever the batch: batch 0's slots move and take batch 0's input;
    the other batches are never written (the oracle's hold whatever its arena held)."""
    data = batched_model()
    ours = Interpreter.from_bytes(data, target="host64")
    theirs = oracle.interpreter(data, 1 << 16)
    rng = np.random.default_rng(5)
    for n in range(7):
        x = rng.integers(-128, 128, (2, 1, 2, 3), dtype=np.int8)
        ours.set_input(x, 0)
        ours.invoke()
        oracle.invoke(theirs, [x])
        written = min(n + 1, 4)
        mine, tflm = ours.get_output(0), np.array(theirs.get_output(0))
        assert np.array_equal(mine[0, 4 - written:], tflm[0, 4 - written:]), n
        assert not mine[1].any(), n
