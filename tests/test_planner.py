"""Planners: TFLM's greedy rules, the linear planner, offline offsets, and properties."""
from __future__ import annotations

import itertools
import time

from hypothesis import given, settings, strategies as st

from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.model import MAX_OPERATORS
from micro_rt.planner import (BufferRequest, GreedyPlanner, LinearPlanner, LiveIndex, lower_bound,
                               make_planner)


def _plan(planner, buffers):
    for b in buffers:
        planner.add_buffer(*b)
    return planner.offsets(), planner.total()


def test_greedy_reuses_memory_of_dead_buffers():
    offsets, total = _plan(GreedyPlanner(), [(64, 0, 1), (64, 1, 2), (64, 2, 3)])
    assert total == 128
    assert offsets[0] == offsets[2] != offsets[1]


def test_greedy_places_largest_first_then_fills_gaps():
    offsets, total = _plan(GreedyPlanner(), [(16, 0, 3), (128, 1, 2), (32, 3, 4)])
    assert offsets[1] == 0           # the largest goes first, at the bottom
    assert total == 144


def test_greedy_ties_place_the_later_buffer_first():
    # TFLM fills its sort array from the back, so among equal sizes the last added is placed first.
    offsets, _ = _plan(GreedyPlanner(), [(32, 0, 1), (32, 0, 1)])
    assert offsets == [32, 0]


def test_offline_offsets_are_kept_and_others_fit_around():
    offsets, total = _plan(GreedyPlanner(), [(32, 0, 2, 64), (48, 0, 2), (16, 0, 2)])
    assert offsets[0] == 64
    assert offsets[1] == 0 and offsets[2] == 48
    assert total == 96


def test_linear_never_reuses():
    offsets, total = _plan(LinearPlanner(), [(16, 0, 0), (32, 1, 1), (16, 2, 2)])
    assert offsets == [0, 16, 48] and total == 64


def test_make_planner_names():
    assert make_planner("offline").name == "offline"
    assert isinstance(make_planner("greedy"), GreedyPlanner)


def _first_fit(buffers, order):
    """Place buffers in `order`, each at the lowest offset where it overlaps no placed buffer
    that is live at the same time: the rule TFLM's greedy planner applies."""
    offsets = {}
    for i in order:
        b = buffers[i]
        live = sorted((offsets[j], buffers[j].size) for j in offsets
                      if buffers[j].overlaps_in_time(b.first_use, b.last_use))
        candidate = 0
        for start, size in live:
            if start - candidate >= b.size:
                break
            candidate = max(candidate, start + size)
        offsets[i] = candidate
    return [offsets[i] for i in range(len(buffers))]


def _slow_tflm_greedy(buffers):
    """TFLM's rules restated plainly: largest first (later added first on ties), first fit."""
    return _first_fit(buffers, sorted(reversed(range(len(buffers))), key=lambda i: -buffers[i].size))


buffer_lists = st.lists(
    st.tuples(st.integers(1, 64).map(lambda k: 16 * k), st.integers(0, 12), st.integers(0, 6))
    .map(lambda t: (t[0], t[1], t[1] + t[2])), min_size=1, max_size=24)


@settings(max_examples=300, deadline=None)
@given(buffer_lists)
def test_greedy_properties(raw):
    planner = GreedyPlanner()
    offsets, total = _plan(planner, raw)
    buffers = [BufferRequest(*b) for b in raw]
    for (i, a), (j, b) in itertools.combinations(enumerate(buffers), 2):
        if a.overlaps_in_time(b.first_use, b.last_use):
            assert offsets[i] + a.size <= offsets[j] or offsets[j] + b.size <= offsets[i]
    assert all(o % 16 == 0 for o in offsets)
    assert total >= lower_bound(buffers)
    assert offsets == _slow_tflm_greedy(buffers)


def _optimal_total(buffers):
    """Exhaustive: the best first-fit placement over all orders (tiny cases only)."""
    return min(max(o + b.size for o, b in zip(_first_fit(buffers, order), buffers))
               for order in itertools.permutations(range(len(buffers))))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8).map(lambda k: 16 * k), st.integers(0, 4), st.integers(0, 3))
                .map(lambda t: (t[0], t[1], t[1] + t[2])), min_size=1, max_size=6))
def test_greedy_against_exhaustive_search(raw):
    buffers = [BufferRequest(*b) for b in raw]
    _, greedy = _plan(GreedyPlanner(), raw)
    optimum = _optimal_total(buffers)
    assert lower_bound(buffers) <= optimum <= greedy
    # Greedy is known to be near-optimal on small cases; it is never worse than twice the optimum.
    assert greedy <= 2 * optimum


def _tflm_linked_list_greedy(buffers):
    """TFLM's GreedyMemoryPlanner step by step: a sort array filled from both ends (offline
    buffers from the front in order, the rest from the back), a bubble sort of the back part
    by size, then for each buffer a walk of a singly linked list of the placed buffers in
    offset order, skipping those not live with it, and an insertion after every entry at or
    below the new offset. Deliberately quadratic: the reference the fast planner must equal."""
    n = len(buffers)
    ids, sizes = [None] * n, [None] * n
    head, tail = 0, n
    for i, b in enumerate(buffers):
        if b.offline_offset is None:
            tail -= 1
            ids[tail], sizes[tail] = i, b.size
        else:
            ids[head], sizes[head] = i, b.size
            head += 1
    swapped = True
    while swapped:
        swapped = False
        for k in range(head + 1, n):
            if sizes[k - 1] < sizes[k]:
                sizes[k - 1], sizes[k] = sizes[k], sizes[k - 1]
                ids[k - 1], ids[k] = ids[k], ids[k - 1]
                swapped = True
    offsets = [b.offline_offset if b.offline_offset is not None else -1 for b in buffers]
    first = ids[0]
    if offsets[first] == -1:
        offsets[first] = 0
    order = [first]                                  # the linked list, as a Python list
    for k in range(1, n):
        i = ids[k]
        b = buffers[i]
        if b.offline_offset is None:
            candidate = 0
            for j in order:
                if not buffers[j].overlaps_in_time(b.first_use, b.last_use):
                    continue
                if offsets[j] - candidate >= b.size:
                    break
                candidate = max(candidate, offsets[j] + buffers[j].size)
            offsets[i] = candidate
        position = 0 if offsets[order[0]] > offsets[i] else \
            1 + max(p for p, j in enumerate(order) if offsets[j] <= offsets[i])
        order.insert(position, i)
    return offsets


# Sizes include 0 (an empty scratch request) and lifetimes include -1..-1 (a tensor no operator
# touches); a few buffers carry offline offsets.
odd_buffer_lists = st.lists(
    st.tuples(st.integers(0, 12).map(lambda k: 16 * k), st.integers(-1, 10), st.integers(0, 5),
              st.one_of(st.none(), st.none(), st.none(), st.integers(0, 20).map(lambda k: 16 * k)))
    .map(lambda t: (t[0], -1, -1, t[3]) if t[1] == -1 else (t[0], t[1], t[1] + t[2], t[3])),
    min_size=1, max_size=30)


@settings(max_examples=400, deadline=None)
@given(odd_buffer_lists)
def test_greedy_equals_tflm_step_by_step(raw):
    offsets, _ = _plan(GreedyPlanner(), raw)
    assert offsets == _tflm_linked_list_greedy([BufferRequest(*b) for b in raw])


@settings(max_examples=200, deadline=None)
@given(odd_buffer_lists, st.integers(-1, 16), st.integers(0, 6))
def test_live_index_finds_exactly_the_overlapping(raw, first, length):
    buffers = [BufferRequest(*b) for b in raw]
    index = LiveIndex(-1, 16)
    for i, b in enumerate(buffers):
        index.add(i, b.first_use, b.last_use)
    last = min(first + length, 16) if first >= 0 else -1
    found = index.overlapping(first, last)
    assert sorted(found) == [i for i, b in enumerate(buffers) if b.overlaps_in_time(first, last)]


def test_lower_bound_counts_untouched_buffers():
    assert lower_bound([BufferRequest(64, -1, -1), BufferRequest(32, 0, 3)]) == 64
    assert lower_bound([BufferRequest(16, 0, 1), BufferRequest(32, 1, 2), BufferRequest(48, 3, 3)]) == 48


# Hang bounds, not timing targets (benchmarks/bench_planner.py measures speed against
# tflite-micro): generous multiples of what the linear code takes on a busy machine, far
# below what the quadratic planner took (150 s and more for the planner alone).
HANG_BOUND_S = 20.0
LOAD_HANG_BOUND_S = 60.0


def test_greedy_is_not_quadratic_in_buffers():
    """A 32768-operator chain's buffers: TFLM's list walk visits every placed buffer (half a
    billion visits here); walking only the live ones is linear."""
    n = 1 << 15
    planner = GreedyPlanner()
    for step in range(n + 1):
        planner.add_buffer(16 * (1 + step % 7), step, step + 1)
    start = time.perf_counter()
    offsets, total = planner.offsets(), planner.total()
    lower_bound(planner.buffers)
    assert time.perf_counter() - start < HANG_BOUND_S
    assert total == 16 * 7 + 16 * 6 and len(offsets) == n + 1


def test_longest_chain_loads_and_plans():
    """A chain of MAX_OPERATORS operators (issue 10: 73 s to construct, now a few seconds)."""
    b = ModelBuilder()
    tensors = [b.add_tensor(f"t{i}", [1, 8], "FLOAT32") for i in range(MAX_OPERATORS + 1)]
    for i in range(MAX_OPERATORS):
        b.add_operator("RELU", [tensors[i]], [tensors[i + 1]])
    b.inputs, b.outputs = [tensors[0]], [tensors[-1]]
    data = b.build()
    start = time.perf_counter()
    it = Interpreter.from_bytes(data, target="host64")
    assert time.perf_counter() - start < LOAD_HANG_BOUND_S
    assert it.plan.head_bytes == 64 and len(it.plan.buffers) == MAX_OPERATORS + 1
