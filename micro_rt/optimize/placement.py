"""Placement search: arena offsets for the buffers of one operator order, below TFLM's greedy.

TFLM's greedy is one point in a space of first-fit placements: the order in which buffers are
placed decides the layout. This module explores that space (several first-fit orders: TFLM's
size order, longest lifetime, area, first use, TFLite's 'greedy by breadth'; lowest-gap and
best-gap rules; random restarts while time is left; an exact branch and bound on small
problems) and always keeps TFLM's own greedy result as a candidate, so the best found is
never worse than greedy. TFLM places scratch buffers online around the offline offsets, so
every candidate is scored by simulating exactly that (`GreedyPlanner` with the tensor
offsets fixed).
"""
from __future__ import annotations

import random
import time
import dataclasses
from dataclasses import dataclass
from typing import Optional, Sequence

from ..allocator import tensor_lifetimes
from ..model import Model
from ..model_records import Subgraph
from ..planner import BufferRequest, GreedyPlanner, LiveIndex, lower_bound, lowest_gap


# ---- first-fit placements ---------------------------------------------------------------
def overlapping_buffers(buffers: list[BufferRequest]) -> list[list[int]]:
    """For each buffer, the indices of the other buffers live at some common step."""
    result: list[list[int]] = [[] for _ in buffers]
    if not buffers:
        return result
    index = LiveIndex(min(b.first_use for b in buffers), max(b.last_use for b in buffers))
    for i, b in enumerate(buffers):
        for j in index.overlapping(b.first_use, b.last_use):
            result[i].append(j)
            result[j].append(i)
        index.add(i, b.first_use, b.last_use)
    return result


def first_fit(buffers: list[BufferRequest], order: list[int], best_fit: bool = False,
              overlapping: Optional[list[list[int]]] = None) -> list[int]:
    """Place buffers one by one in `order` (buffers with an offline offset keep it and are
    placed before all others). Each goes into the lowest gap between placed, time-overlapping
    buffers that holds it (`best_fit`: the smallest such gap), or on top of them."""
    if overlapping is None:
        overlapping = overlapping_buffers(buffers)
    offsets = [-1] * len(buffers)
    fixed = []
    for i, b in enumerate(buffers):
        if b.offline_offset is not None:
            offsets[i] = b.offline_offset
            fixed.append(i)
    for i in order:
        if offsets[i] != -1:
            continue
        size = buffers[i].size
        placed = sorted((offsets[j], buffers[j].size) for j in overlapping[i] if offsets[j] != -1)
        offsets[i] = lowest_gap(size, placed, best_fit)
    return offsets


def placement_total(buffers: list[BufferRequest], offsets: list[int]) -> int:
    return max((o + b.size for o, b in zip(offsets, buffers)), default=0)


def placement_is_valid(buffers: list[BufferRequest], offsets: list[int]) -> bool:
    """No two buffers live at the same step share a byte."""
    for i, bi in enumerate(buffers):
        for j in range(i + 1, len(buffers)):
            bj = buffers[j]
            if (bj.overlaps_in_time(bi.first_use, bi.last_use) and bi.size and bj.size
                    and offsets[i] < offsets[j] + bj.size and offsets[j] < offsets[i] + bi.size):
                return False
    return True


def _breadth_order(buffers: list[BufferRequest]) -> list[int]:
    """Steps with the most live bytes first; within a step, its unplaced buffers largest first
    (TFLite's 'greedy by breadth')."""
    if not buffers:
        return []
    last = max(b.last_use for b in buffers)
    live = [[i for i, b in enumerate(buffers) if b.first_use <= s <= b.last_use] for s in range(last + 1)]
    steps = sorted(range(last + 1), key=lambda s: -sum(buffers[i].size for i in live[s]))
    seen, order = set(), []
    for s in steps:
        for i in sorted(live[s], key=lambda i: (-buffers[i].size, buffers[i].first_use)):
            if i not in seen:
                seen.add(i)
                order.append(i)
    return order


def heuristic_orders(buffers: list[BufferRequest]) -> dict[str, list[int]]:
    """Named placement orders for `first_fit`."""
    n = len(buffers)
    length = [b.last_use - b.first_use + 1 for b in buffers]
    return {
        "size": sorted(reversed(range(n)), key=lambda i: -buffers[i].size),     # TFLM's
        "size-then-longest": sorted(range(n), key=lambda i: (-buffers[i].size, -length[i])),
        # Left-edge within each size: optimal for equal sizes (interval graphs are perfect).
        "size-then-first-use": sorted(range(n), key=lambda i: (-buffers[i].size, buffers[i].first_use,
                                                               -length[i])),
        "longest": sorted(range(n), key=lambda i: (-length[i], -buffers[i].size)),
        "area": sorted(range(n), key=lambda i: (-buffers[i].size * length[i], -buffers[i].size)),
        "first-use": sorted(range(n), key=lambda i: (buffers[i].first_use, -buffers[i].size)),
        "breadth": _breadth_order(buffers),
    }


# ---- exact branch and bound --------------------------------------------------------------
class _CompactedSearch:
    """The state of `exact_placement`: the partial placement, the best complete one found
    (and its height), and the number of nodes visited."""

    def __init__(self, buffers: list[BufferRequest], upper: int, node_limit: int):
        self.buffers = buffers
        self.overlapping = overlapping_buffers(buffers)
        self.last_step = max(b.last_use for b in buffers)
        self.bound_all = lower_bound(buffers)
        self.offsets = [-1] * len(buffers)
        self.best: Optional[list[int]] = None
        self.best_height = upper
        self.nodes, self.node_limit = 0, node_limit

    def remaining_bound(self, floor: int, unplaced: list[int]) -> int:
        """Every unplaced buffer goes at `floor` or above: the most they need at one step."""
        need = [0] * (self.last_step + 1)
        for i in unplaced:
            b = self.buffers[i]
            for s in range(b.first_use, b.last_use + 1):
                need[s] += b.size
        return floor + max(need)

    def options(self, floor: int, unplaced: list[int]) -> list[tuple[int, int, int]]:
        """(offset, -size, buffer) for every buffer that can go next: at 0 or on top of a
        placed, time-overlapping buffer, not below `floor`, clear of the placed ones."""
        buffers, offsets = self.buffers, self.offsets
        options, kinds = [], set()
        for i in unplaced:
            b = buffers[i]
            kind = (b.size, b.first_use, b.last_use)
            if kind in kinds:          # identical buffers: branching on one of them is enough
                continue
            kinds.add(kind)
            spots = {0} | {offsets[j] + buffers[j].size for j in self.overlapping[i] if offsets[j] != -1}
            for y in spots:
                if y < floor:
                    continue
                if any(offsets[j] != -1 and offsets[j] < y + b.size and y < offsets[j] + buffers[j].size
                       for j in self.overlapping[i]):
                    continue
                options.append((y, -b.size, i))
        options.sort()
        return options

    def search(self, floor: int, height: int, unplaced: list[int]) -> bool:
        """False when the node limit was hit (the search is then not exhaustive)."""
        self.nodes += 1
        if self.nodes > self.node_limit:
            return False
        if not unplaced:
            if height < self.best_height:
                self.best_height, self.best = height, list(self.offsets)
            return True
        if max(height, self.remaining_bound(floor, unplaced)) >= self.best_height:
            return True
        for y, _, i in self.options(floor, unplaced):
            self.offsets[i] = y
            rest = [k for k in unplaced if k != i]
            ok = self.search(y, max(height, y + self.buffers[i].size), rest)
            self.offsets[i] = -1
            if not ok:
                return False
            if self.best_height <= self.bound_all:
                return True
        return True


def exact_placement(buffers: list[BufferRequest], upper: int, node_limit: int = 200_000
                    ) -> tuple[Optional[list[int]], bool]:
    """Branch and bound over placements that are 'compacted' (every buffer at 0 or on top of a
    time-overlapping buffer), built in non-decreasing offset order; every placement can be
    compacted without growing, so the search is exact when it finishes within `node_limit`.
    Returns (offsets better than `upper` or None, finished)."""
    if not buffers:
        return None, True
    state = _CompactedSearch(buffers, upper, node_limit)
    if state.bound_all >= upper:
        return None, True
    finished = state.search(0, 0, list(range(len(buffers))))
    return state.best, finished or state.best_height <= state.bound_all


# ---- placement for one operator order ----------------------------------------------------
def _reordered_view(model: Model, order: Sequence[int]) -> Subgraph:
    """The main subgraph with its operators in `order` (the tensors shared, not copied)."""
    sg = model.main
    return dataclasses.replace(sg, operators=[sg.operators[i] for i in order])


def order_buffers(model: Model, sizes: dict[int, int], scratch: list[list[int]],
                  order: Sequence[int]) -> tuple[list[BufferRequest], list[int]]:
    """The buffers TFLM plans when the operators run in `order`, in TFLM's AddBuffer order:
    planned tensors by index, then scratch buffers by node. Returns (buffers, tensor of each
    tensor buffer)."""
    first, last, _ = tensor_lifetimes(_reordered_view(model, order))
    tensors = sorted(sizes)
    buffers = [BufferRequest(sizes[t], first[t], last[t]) for t in tensors]
    for position, o in enumerate(order):
        for s in scratch[o]:
            buffers.append(BufferRequest(s, position + 1, position + 1))
    return buffers, tensors


def simulate_tflm(buffers: list[BufferRequest], ntensors: int,
                  tensor_offsets: Optional[Sequence[int]]) -> tuple[list[int], int]:
    """What TFLM's greedy planner does with these tensor offsets fixed (None: no offline plan)
    and every scratch buffer placed online around them."""
    g = GreedyPlanner()
    for k, b in enumerate(buffers):
        fixed = None
        if tensor_offsets is not None and k < ntensors and tensor_offsets[k] >= 0:
            fixed = int(tensor_offsets[k])
        g.add_buffer(b.size, b.first_use, b.last_use, fixed)
    return g.offsets(), g.total()


@dataclass
class Placement:
    head: int                              # TFLM's head with this plan (simulated)
    method: str
    tensor_offsets: Optional[list[int]]    # per tensor buffer; None: leave it all to TFLM
    bound: int                             # lower bound for this order


def best_placement(buffers: list[BufferRequest], ntensors: int, deadline: float,
                   seed: int = 0, exact_limit: int = 14) -> Placement:
    bound = lower_bound(buffers)
    _, greedy_head = simulate_tflm(buffers, ntensors, None)
    best = Placement(greedy_head, "tflm-greedy", None, bound)
    overlapping = overlapping_buffers(buffers)
    tensor_only = buffers[:ntensors]
    overlapping_t = [[j for j in js if j < ntensors] for js in overlapping[:ntensors]]

    def consider(offsets: list[int], method: str) -> None:
        nonlocal best
        fixed = list(offsets[:ntensors])
        _, head = simulate_tflm(buffers, ntensors, fixed)
        if head < best.head or (head == best.head and best.tensor_offsets is None):
            best = Placement(head, method, fixed, bound)

    greedy_offsets, _ = simulate_tflm(buffers, ntensors, None)
    consider(greedy_offsets, "tflm-greedy, fixed")
    for name, order in heuristic_orders(buffers).items():
        for best_fit in (False, True):
            if best.head <= bound:
                return best
            rule = "best-fit" if best_fit else "first-fit"
            consider(first_fit(buffers, order, best_fit, overlapping), f"{rule} by {name}")
            torder = [i for i in order if i < ntensors]
            consider(first_fit(tensor_only, torder, best_fit, overlapping_t),
                     f"{rule} by {name}, tensors only")
    if best.head > bound and len(buffers) <= exact_limit and time.monotonic() < deadline:
        offsets, _ = exact_placement(buffers, best.head)
        if offsets is not None:
            consider(offsets, "exact branch and bound")
    rng = random.Random(seed)
    tries = 0
    while best.head > bound and time.monotonic() < deadline and tries < 2000:
        tries += 1
        keys = {i: b.size * rng.uniform(0.5, 1.5) for i, b in enumerate(buffers)}
        order = sorted(range(len(buffers)), key=lambda i: -keys[i])
        consider(first_fit(buffers, order, tries % 2 == 1, overlapping), "first-fit, random restarts")
    return best
