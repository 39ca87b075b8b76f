"""micro-rt optimize (issue 6): operator reordering + offline plans that stock TFLM honours."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from micro_rt import Interpreter
from micro_rt.allocation_info import offline_offsets
from micro_rt.builder import ModelBuilder
from micro_rt.cli import main
from micro_rt.model import read_model
from micro_rt.optimize import check_outputs, optimize
from micro_rt.optimize.ordering import best_order, dataflow, planned_tensors
from micro_rt.optimize.placement import (best_placement, exact_placement, first_fit, order_buffers,
                                         placement_is_valid, placement_total, simulate_tflm)
from micro_rt.optimize.writing import OFFLINE_METADATA
from micro_rt.planner import BufferRequest, GreedyPlanner, lower_bound

from conftest import PROJECT_MODELS


def two_branch_model() -> bytes:
    """x -> RELU -> a -> MEAN -> a2 ; x -> RELU6 -> b -> MEAN -> b2 ; ADD(a2, b2) -> y.
    The file runs both big branches before reducing either (peak x + a + b); MEAN requests
    scratch buffers, so the plan has scratch placed online around the offline offsets."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8, 8, 16], "FLOAT32")
    axis = b.add_tensor("axis", [2], "INT32", data=np.array([1, 2], np.int32))
    a = b.add_tensor("a", [1, 8, 8, 16], "FLOAT32")
    bb = b.add_tensor("b", [1, 8, 8, 16], "FLOAT32")
    a2 = b.add_tensor("a2", [1, 16], "FLOAT32")
    b2 = b.add_tensor("b2", [1, 16], "FLOAT32")
    y = b.add_tensor("y", [1, 16], "FLOAT32")
    b.add_operator("RELU", [x], [a])
    b.add_operator("RELU6", [x], [bb])
    b.add_operator("MEAN", [a, axis], [a2], options={"keep_dims": False})
    b.add_operator("MEAN", [bb, axis], [b2], options={"keep_dims": False})
    b.add_operator("ADD", [a2, b2], [y])
    b.inputs, b.outputs = [x], [y]
    return b.build()


def _flow(data: bytes):
    model = read_model(data)
    it = Interpreter(model, None, target="host64", plan_only=True)
    scratch = [[] for _ in model.main.operators]
    for buf in it.plan.buffers:
        if buf.kind == "scratch":
            scratch[buf.tensor].append(buf.size)
    return model, dataflow(model, scratch), scratch


def _topological_orders(flow):
    n = flow.n_ops
    for perm in itertools.permutations(range(n)):
        done, ok = 0, True
        for o in perm:
            if flow.preds[o] & ~done:
                ok = False
                break
            done |= 1 << o
        if ok:
            yield list(perm)


@pytest.mark.parametrize("name", ["inception_block_int8.tflite", "residual_block_int8.tflite",
                                  "shape_ops_int8.tflite", None])
def test_order_search_is_exact_and_matches_tflm_lifetimes(name):
    data = two_branch_model() if name is None else (PROJECT_MODELS / name).read_bytes()
    model, flow, scratch = _flow(data)
    found = best_order(flow)
    assert found.exact
    # The DP's peak is the lower bound of the real TFLM lifetimes of its order...
    assert found.peak == lower_bound(order_buffers(model, flow.sizes, scratch, found.order)[0])
    # ...and no topological order does better (brute force where it is small enough).
    if flow.n_ops <= 9:
        best = min(lower_bound(order_buffers(model, flow.sizes, scratch, o)[0])
                   for o in _topological_orders(flow))
        assert found.peak == best
    # The file order's bound agrees with the allocator's own lower bound.
    plan = Interpreter.from_bytes(data, target="host64", plan_only=True).plan
    file_order = list(range(flow.n_ops))
    assert lower_bound(order_buffers(model, flow.sizes, scratch, file_order)[0]) == plan.lower_bound


def test_beam_search_when_the_width_is_exceeded():
    model, flow, scratch = _flow(two_branch_model())
    narrow = best_order(flow, width=1)
    assert not narrow.exact
    assert sorted(narrow.order) == list(range(flow.n_ops))
    assert narrow.peak >= best_order(flow).peak


def test_reordering_shrinks_a_branching_graph_and_tflm_agrees(oracle):
    data = two_branch_model()
    result = optimize(data, time_limit=2)
    assert result.reordered
    assert result.order.index(2) < result.order.index(1)     # a is reduced before b is made
    assert result.predicted_head < result.original_head
    assert any(b.kind == "scratch" for b in result.optimized_plan.buffers)
    arena = 1 << 16
    theirs_before = oracle.allocations(data, arena)["head"]
    theirs_after = oracle.allocations(result.data, arena)["head"]
    assert theirs_before == result.original_head
    assert theirs_after == result.predicted_head < theirs_before
    assert check_outputs(data, result.data, seeds=range(3)) == {"seeds": 3, "micro_rt": True,
                                                                 "oracle": True}


@pytest.mark.parametrize("name", ["mobilenet_tiny_int8.tflite", "pooling_int8.tflite",
                                  "conv_variants_int8.tflite", "shape_ops_int8.tflite",
                                  "residual_block_int8.tflite", "inception_block_int8.tflite"])
def test_project_models_never_grow_and_tflm_agrees(name, oracle):
    data = (PROJECT_MODELS / name).read_bytes()
    result = optimize(data, time_limit=2)
    arena = max(result.original_plan.required_bytes * 2, 1 << 16)
    before = oracle.allocations(data, arena)["head"]
    after = oracle.allocations(result.data, arena)["head"]
    assert after == result.predicted_head <= before == result.original_head
    assert result.chosen_bound <= result.predicted_head
    if name in ("mobilenet_tiny_int8.tflite", "pooling_int8.tflite", "shape_ops_int8.tflite"):
        assert after < before
    if name in ("residual_block_int8.tflite", "inception_block_int8.tflite"):
        # Already at the lower bound over every order: nothing under TFLM's lifetimes beats it.
        assert result.order_peak_exact and result.order_bound == before and result.optimal
    assert check_outputs(data, result.data, seeds=range(2)) == {"seeds": 2, "micro_rt": True,
                                                                 "oracle": True}


def test_offline_metadata_format_and_replacement():
    data = (PROJECT_MODELS / "mobilenet_tiny_int8.tflite").read_bytes()
    first = optimize(data, time_limit=1)
    model = read_model(first.data)
    raw = np.frombuffer(model.metadata_bytes(OFFLINE_METADATA), "<i4")
    ntensors = len(model.main.tensors)
    assert list(raw[:3]) == [1, 1, ntensors] and len(raw) == 3 + ntensors
    offsets = offline_offsets(model)
    planned = planned_tensors(model)
    for t in model.main.tensors:
        if t.index not in planned:
            assert offsets[t.index] == -1          # constants, variables, empty: TFLM's own
        else:
            assert offsets[t.index] % 16 == 0
    # Optimizing the optimized model replaces the plan rather than adding a second one.
    second = optimize(first.data, time_limit=1)
    again = read_model(second.data)
    assert [k for k in again.metadata if k == OFFLINE_METADATA] == [OFFLINE_METADATA]
    assert second.predicted_head <= first.predicted_head
    assert set(again.metadata) == set(read_model(data).metadata) | {OFFLINE_METADATA}


def test_variable_and_custom_ops_keep_their_relative_order():
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "FLOAT32")
    state = b.add_tensor("state", [1, 4], "FLOAT32", is_variable=True)
    u = b.add_tensor("u", [1, 4], "FLOAT32")
    v = b.add_tensor("v", [1, 4], "FLOAT32")
    w = b.add_tensor("w", [1, 4], "FLOAT32")
    # Kernels such as SVDF and LSTM update their variable inputs in place: two operators that
    # touch the same variable tensor are not independent even without a dataflow edge.
    b.add_operator("ADD", [x, state], [u])
    b.add_operator("ADD", [x, state], [v])
    b.add_operator("RELU6", [x], [w])
    b.inputs, b.outputs = [x], [u, v, w]
    flow = dataflow(read_model(b.build()), [[], [], []])
    assert flow.preds[1] & 1 and flow.preds[0] == 0 and flow.preds[2] == 0


def _random_buffers(draw_sizes, lifetimes):
    return [BufferRequest(16 * s, a, a + d) for s, (a, d) in zip(draw_sizes, lifetimes)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 5), st.integers(0, 4)),
                min_size=1, max_size=7))
def test_placement_search_is_valid_never_worse_than_greedy_and_exact_when_small(spec):
    buffers = [BufferRequest(16 * s, a, a + d) for s, a, d in spec]
    greedy = GreedyPlanner()
    for b in buffers:
        greedy.add_buffer(b.size, b.first_use, b.last_use)
    import time
    found = best_placement(buffers, len(buffers), time.monotonic() + 0.2)
    assert found.head <= greedy.total()
    assert found.head >= lower_bound(buffers)
    offsets, head = simulate_tflm(buffers, len(buffers), found.tensor_offsets)
    assert head == found.head and placement_is_valid(buffers, offsets)
    # Exact branch and bound against brute force over first-fit orders (small instances).
    exact, finished = exact_placement(buffers, greedy.total() + 1)
    assert finished and exact is not None and placement_is_valid(buffers, exact)
    brute = min(placement_total(buffers, first_fit(buffers, list(p)))
                for p in itertools.permutations(range(len(buffers))))
    assert placement_total(buffers, exact) <= brute
    assert found.head <= max(placement_total(buffers, exact), lower_bound(buffers)) or \
        found.head <= brute


def test_scratch_buffers_are_planned_by_tflm_around_fixed_offsets():
    # Two tensors fixed with a 32-byte hole between them at step 1; a 32-byte scratch at step 1
    # must go into the hole (TFLM's first fit), a 48-byte one on top.
    buffers = [BufferRequest(64, 0, 2), BufferRequest(64, 0, 2), BufferRequest(32, 1, 1),
               BufferRequest(48, 1, 1)]
    offsets, head = simulate_tflm(buffers, 2, [0, 96])
    assert offsets[:2] == [0, 96] and offsets[2] == 64 and offsets[3] == 160 and head == 208


def test_cli_optimize_json_and_html(tmp_path, capsys):
    src = PROJECT_MODELS / "pooling_int8.tflite"
    out, page = tmp_path / "out.tflite", tmp_path / "plans.html"
    rc = main(["optimize", str(src), "-o", str(out), "--json", "--time-limit", "1",
               "--html", str(page), "--seeds", "1"])
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["predicted_head"] < payload["original_head"]
    assert payload["chosen_lower_bound"] <= payload["predicted_head"]
    assert payload["outputs_equal"]["micro_rt"] is True
    assert out.exists()
    assert Interpreter.from_file(out, target="host64").plan.head_bytes == payload["predicted_head"]
    text = page.read_text()
    assert "original: file order" in text and "optimized: operators reordered" in text
    rc = main(["optimize", str(src), "-o", str(out), "--no-check", "--time-limit", "1"])
    text = capsys.readouterr().out
    assert rc == 0 and "head (optimized)" in text and "lower bound" in text


def test_plan_json_has_lower_bound_and_efficiency(capsys):
    src = PROJECT_MODELS / "elementwise_int8.tflite"
    assert main(["plan", str(src), "--json", "--target", "host64"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["lower_bound"] == 1024 and payload["head_bytes"] == 1168
    assert payload["efficiency"] == pytest.approx(1024 / 1168)
