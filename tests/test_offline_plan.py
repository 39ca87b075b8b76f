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


def test_offline_plan_overlapping_live_buffers_is_refused():
    """Every offset 0: TFLM accepts it (the head halves) and the operators overwrite each
    other's inputs; micro_rt names the two tensors and the step where both are live."""
    with pytest.raises(AllocationError, match=r"tensor 0 \('x', 256 bytes at offset 0\) and "
                                              r"tensor 1 \('a', 256 bytes at offset 0\) are both "
                                              r"live at step 1 \(operator 0 RELU\)"):
        Interpreter.from_bytes(chain_model([0, 0, 0, 0]))
    with pytest.raises(AllocationError, match=r"tensor 1 \('a'.*tensor 2 \('b'.*step 2 \(operator 1 RELU6\)"):
        Interpreter.from_bytes(chain_model([0, 256, 384, 768]))      # b overlaps a's last 128 B
    with pytest.raises(AllocationError, match="both live"):
        Interpreter.from_bytes(chain_model([0, 0, 512, 768]), target="host64", plan_only=True)


def test_offline_plan_sharing_memory_between_dead_buffers_is_kept(oracle):
    data = chain_model([0, 256, 0, 256])        # x and b, a and y never live together
    plan = Interpreter.from_bytes(data, target="host64").plan
    assert [b.offset for b in plan.buffers] == [0, 256, 0, 256] and plan.head_bytes == 512
    assert oracle.allocations(data, 1 << 16)["head"] == 512


def test_custom_operator_owns_its_offline_layout():
    """Vela puts an Ethos-U operator's input and output inside the scratch area its command
    stream addresses (all at offset 0): only the custom kernel touches them, so micro_rt
    cannot judge the aliasing and keeps the plan; the same layout on a builtin is refused."""
    def model(op: str) -> bytes:
        b = ModelBuilder()
        x = b.add_tensor("x", [1, 64], "INT8", scale=0.1, zero_point=0)
        scratch = (b.add_tensor("scratch", [1024], "UINT8") if op == "npu" else
                   b.add_tensor("other", [1, 64], "INT8", scale=0.1, zero_point=0))
        y = b.add_tensor("y", [1, 64], "INT8", scale=0.1, zero_point=0)
        if op == "npu":
            b.add_operator("npu", [scratch, x], [y], custom_options=b"")
        else:
            b.add_operator("ADD", [x, scratch], [y])
        b.inputs, b.outputs = ([x] if op == "npu" else [x, scratch]), [y]
        b.add_metadata("OfflineMemoryAllocation", np.array([1, 1, 3, 0, 0, 0], "<i4").tobytes())
        return b.build()

    plan = Interpreter.from_bytes(model("npu"), target="host64", plan_only=True).plan
    assert [b.offset for b in plan.buffers] == [0, 0, 0] and plan.head_bytes == 1024
    with pytest.raises(AllocationError, match="both live"):
        Interpreter.from_bytes(model("ADD"), target="host64", plan_only=True)


def test_offline_plan_metadata_without_data_is_refused(tmp_path):
    """OfflineMemoryAllocation metadata whose buffer holds no data: tflite-micro dereferences
    the missing array and crashes (signal 11, probed in a subprocess; fuzzing found it),
    so micro_rt refuses the model, whatever the planner, instead of planning without it."""
    import subprocess
    import sys
    from micro_rt.model import read_model
    b = ModelBuilder.from_model(read_model(chain_model()))
    b.add_metadata("OfflineMemoryAllocation", b"")
    data = b.build()
    path = tmp_path / "empty_plan.tflite"
    path.write_bytes(data)
    probe = ("import sys, numpy as np; from micro_rt import oracle; "
             "oracle.run(open(sys.argv[1], 'rb').read(), [np.zeros((1, 64), np.float32)], 1, arena_size=1 << 16)")
    assert subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True).returncode == -11
    for planner in ("greedy", "linear"):
        with pytest.raises(ModelError, match=r"OfflineMemoryAllocation metadata points to buffer \d+, which "
                                             r"holds no data: tflite-micro reads it anyway and crashes"):
            Interpreter.from_bytes(data, planner=planner)
