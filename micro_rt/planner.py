"""TFLM's memory planners: given buffers with sizes and lifetimes, choose arena offsets.

Same interface as TFLM's MicroMemoryPlanner: `add_buffer(size, first_use, last_use,
offline_offset=None)`, then `offsets()` and `total()`. Sizes are used as given; the caller
rounds them to the arena alignment first, as TFLM's allocator does. `offline` is the
greedy planner honouring the model's OfflineMemoryAllocation offsets. The search for better
placements than TFLM's (`micro-rt optimize`) is micro_rt.optimize.placement.
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
    buffers: list[BufferRequest]              # what add_buffer was given, in order

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
        items = self._cover[node]
        if items is None:
            self._cover[node] = [item]
        else:
            items.append(item)

    def overlapping(self, first_use: int, last_use: int) -> list[int]:
        a, b = first_use - self._base, last_use - self._base
        found: list[int] = []
        cover, node = self._cover, a + self._leaves
        while node:
            items = cover[node]
            if items:
                found += items
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
