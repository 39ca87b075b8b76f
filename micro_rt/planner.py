"""Memory planners: given buffers with sizes and lifetimes, choose arena offsets.

Same interface as TFLM's MicroMemoryPlanner: `add_buffer(size, first_use, last_use,
offline_offset=None)`, then `offsets()` and `total()`. Sizes are used as given; the caller
rounds them to the arena alignment first, as TFLM's allocator does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol


@dataclass(frozen=True)
class BufferRequest:
    size: int
    first_use: int
    last_use: int
    offline_offset: Optional[int] = None

    def overlaps_in_time(self, first_use: int, last_use: int) -> bool:
        """Both ends inclusive, as TFLM's DoesEntryOverlapInTime."""
        return not (self.first_use > last_use or first_use > self.last_use)


class MemoryPlanner(Protocol):
    name: str

    def add_buffer(self, size: int, first_use: int, last_use: int,
                   offline_offset: Optional[int] = None) -> int: ...

    def offsets(self) -> list[int]: ...

    def total(self) -> int: ...


class _PlannerBase:
    name = "base"

    def __init__(self) -> None:
        self.buffers: list[BufferRequest] = []
        self._offsets: Optional[list[int]] = None

    def add_buffer(self, size: int, first_use: int, last_use: int,
                   offline_offset: Optional[int] = None) -> int:
        # TFLM gives a tensor no operator touches the lifetime -1..-1: it is planned, live
        # with nothing but other such tensors.
        if size < 0 or first_use < -1 or last_use < first_use:
            raise ValueError(f"invalid buffer: size {size}, lifetime {first_use}..{last_use}")
        self.buffers.append(BufferRequest(size, first_use, last_use, offline_offset))
        self._offsets = None
        return len(self.buffers) - 1

    def offsets(self) -> list[int]:
        if self._offsets is None:
            self._offsets = self._place()
        return self._offsets

    def total(self) -> int:
        return max((o + b.size for o, b in zip(self.offsets(), self.buffers)), default=0)

    def _place(self) -> list[int]:
        raise NotImplementedError


class GreedyPlanner(_PlannerBase):
    """TFLM's GreedyMemoryPlanner, rule for rule.

    Offline-planned buffers keep their offsets and are placed first. The others are taken
    largest first; TFLM fills its sort array from the back, so among equal sizes the buffer
    added last goes first. Each goes into the lowest gap between the already-placed
    buffers whose lifetimes overlap its own, or after the last of them.
    """

    name = "greedy"

    def _place(self) -> list[int]:
        buffers = self.buffers
        if not buffers:
            return []
        fixed = [i for i, b in enumerate(buffers) if b.offline_offset is not None]
        online = [i for i in reversed(range(len(buffers))) if buffers[i].offline_offset is None]
        online.sort(key=lambda i: -buffers[i].size)         # stable, like TFLM's bubble sort
        offsets = [-1] * len(buffers)
        placed = LiveIndex(min(b.first_use for b in buffers), max(b.last_use for b in buffers))
        for buffer_id in fixed + online:
            wanted = buffers[buffer_id]
            if wanted.offline_offset is not None:
                offset = wanted.offline_offset
            else:
                # TFLM walks every placed buffer in offset order and skips those not live
                # with this one; walking only the live ones, sorted, gives the same offset.
                live = sorted((offsets[j], buffers[j].size)
                              for j in placed.overlapping(wanted.first_use, wanted.last_use))
                offset = lowest_gap(wanted.size, live)
            offsets[buffer_id] = offset
            placed.add(buffer_id, wanted.first_use, wanted.last_use)
        return offsets


def lowest_gap(size: int, placed: list[tuple[int, int]], best_fit: bool = False) -> int:
    """TFLM's gap search: `placed` is (offset, size) of the time-overlapping placed buffers
    in offset order; the candidate starts at 0 and moves past each buffer it cannot fit
    below. The result is the lowest offset where `size` bytes overlap none of them (a
    zero-size buffer counts as a point nothing may straddle). `best_fit`: the smallest gap
    that holds it instead of the lowest."""
    candidate, best, best_gap = 0, None, None
    for start, length in placed:
        gap = start - candidate
        if gap >= size:
            if not best_fit:
                return candidate
            if best_gap is None or gap < best_gap:
                best, best_gap = candidate, gap
        candidate = max(candidate, start + length)
    return candidate if best is None else best


class LiveIndex:
    """Buffers indexed by lifetime (integer steps, both ends inclusive): `overlapping` finds
    those live at some step of a lifetime in time proportional to the answer and the
    lifetime's length (plus log steps), not to the number of buffers indexed.

    A segment tree over steps answers "live at step f" (each lifetime is stored in the
    O(log) nodes that cover it, and the nodes on one root-to-leaf path hold exactly the
    lifetimes containing that step); lifetimes starting in (f, l] come from a list per step.
    """

    def __init__(self, first_step: int, last_step: int):
        self._base = first_step
        steps = max(last_step - first_step + 1, 1)
        self._leaves = 1 << (steps - 1).bit_length()
        self._cover: list[Optional[list[int]]] = [None] * (2 * self._leaves)
        self._starts: list[list[int]] = [[] for _ in range(steps)]

    def add(self, item: int, first_use: int, last_use: int) -> None:
        a, b = first_use - self._base, last_use - self._base
        self._starts[a].append(item)
        lo, hi = a + self._leaves, b + self._leaves + 1
        while lo < hi:
            if lo & 1:
                self._store(lo, item)
                lo += 1
            if hi & 1:
                hi -= 1
                self._store(hi, item)
            lo >>= 1
            hi >>= 1

    def _store(self, node: int, item: int) -> None:
        if self._cover[node] is None:
            self._cover[node] = [item]
        else:
            self._cover[node].append(item)

    def overlapping(self, first_use: int, last_use: int) -> list[int]:
        a, b = first_use - self._base, last_use - self._base
        found: list[int] = []
        cover, node = self._cover, a + self._leaves
        while node:
            if cover[node]:
                found += cover[node]
            node >>= 1
        for step in range(a + 1, b + 1):
            found += self._starts[step]
        return found


class LinearPlanner(_PlannerBase):
    """TFLM's LinearMemoryPlanner: every buffer after the previous one, no reuse."""

    name = "linear"

    def _place(self) -> list[int]:
        offsets, end = [], 0
        for b in self.buffers:
            offsets.append(end)
            end += b.size
        return offsets


# `offline` is the greedy planner fed with (and requiring) the model's offline offsets.
PLANNERS = {"greedy": GreedyPlanner, "linear": LinearPlanner, "offline": GreedyPlanner}


def make_planner(name: str) -> MemoryPlanner:
    if name not in PLANNERS:
        raise ValueError(f"unknown planner '{name}', choose from {', '.join(PLANNERS)}")
    planner = PLANNERS[name]()
    planner.name = name
    return planner


def live_bytes(buffers: list) -> tuple[int, list[int]]:
    """(first step, bytes live at each step from it): the sum of the sizes of the buffers
    (anything with size, first_use, last_use) live at each step, both ends inclusive."""
    if not buffers:
        return 0, []
    base = min(b.first_use for b in buffers)
    change = [0] * (max(b.last_use for b in buffers) - base + 2)
    for b in buffers:
        change[b.first_use - base] += b.size
        change[b.last_use - base + 1] -= b.size
    live, per_step = 0, []
    for delta in change[:-1]:
        live += delta
        per_step.append(live)
    return base, per_step


def lower_bound(buffers: list[BufferRequest]) -> int:
    """The largest sum of sizes live at one step: no placement can use less."""
    return max(live_bytes(buffers)[1], default=0)


# ---- placement search (micro-rt optimize) ---------------------------------------------------
# TFLM's greedy is one point in a space of first-fit placements: the order in which buffers are
# placed decides the layout. The functions below explore that space (several orders, best-fit
# gaps, random restarts, and an exact branch and bound on small problems) and always keep
# TFLM's own greedy result as a candidate, so the best found is never worse than greedy.

def _overlapping(buffers: list[BufferRequest]) -> list[list[int]]:
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
        overlapping = _overlapping(buffers)
    offsets = [-1] * len(buffers)
    fixed = [i for i, b in enumerate(buffers) if b.offline_offset is not None]
    for i in fixed:
        offsets[i] = buffers[i].offline_offset
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


def exact_placement(buffers: list[BufferRequest], upper: int, node_limit: int = 200_000
                    ) -> tuple[Optional[list[int]], bool]:
    """Branch and bound over placements that are 'compacted' (every buffer at 0 or on top of a
    time-overlapping buffer), built in non-decreasing offset order; every placement can be
    compacted without growing, so the search is exact when it finishes within `node_limit`.
    Returns (offsets better than `upper` or None, finished)."""
    n = len(buffers)
    if n == 0:
        return None, True
    overlapping = _overlapping(buffers)
    last_step = max(b.last_use for b in buffers)
    bound_all = lower_bound(buffers)
    if bound_all >= upper:
        return None, True
    offsets = [-1] * n
    best: list = [upper, None]
    nodes = [0]

    def remaining_bound(floor: int, unplaced: list[int]) -> int:
        need = [0] * (last_step + 1)
        for i in unplaced:
            b = buffers[i]
            for s in range(b.first_use, b.last_use + 1):
                need[s] += b.size
        return floor + max(need)

    def search(floor: int, height: int, unplaced: list[int]) -> bool:
        nodes[0] += 1
        if nodes[0] > node_limit:
            return False
        if not unplaced:
            if height < best[0]:
                best[0], best[1] = height, list(offsets)
            return True
        if max(height, remaining_bound(floor, unplaced)) >= best[0]:
            return True
        options, kinds = [], set()
        for i in unplaced:
            b = buffers[i]
            kind = (b.size, b.first_use, b.last_use)
            if kind in kinds:          # identical buffers: branching on one of them is enough
                continue
            kinds.add(kind)
            spots = {0} | {offsets[j] + buffers[j].size for j in overlapping[i] if offsets[j] != -1}
            for y in spots:
                if y < floor:
                    continue
                if any(offsets[j] != -1 and offsets[j] < y + b.size and y < offsets[j] + buffers[j].size
                       for j in overlapping[i]):
                    continue
                options.append((y, -b.size, i))
        options.sort()
        for y, _, i in options:
            offsets[i] = y
            rest = [k for k in unplaced if k != i]
            ok = search(y, max(height, y + buffers[i].size), rest)
            offsets[i] = -1
            if not ok:
                return False
            if best[0] <= bound_all:
                return True
        return True

    finished = search(0, 0, list(range(n)))
    return best[1], finished or best[0] <= bound_all
