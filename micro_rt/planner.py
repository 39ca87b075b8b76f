"""Memory planners: given buffers with sizes and lifetimes, choose arena offsets.

Same interface as TFLM's MicroMemoryPlanner: `add_buffer(size, first_use, last_use,
offline_offset=None)`, then `offsets()` and `total()`. Sizes are used as given; the caller
rounds them to the arena alignment first, as TFLM's allocator does.
"""
from __future__ import annotations

import bisect
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
        if size < 0 or first_use < 0 or last_use < first_use:
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
        n = len(self.buffers)
        if n == 0:
            return []
        fixed = [i for i, b in enumerate(self.buffers) if b.offline_offset is not None]
        online = [i for i in reversed(range(n)) if self.buffers[i].offline_offset is None]
        online.sort(key=lambda i: -self.buffers[i].size)   # stable, like TFLM's bubble sort
        offsets = [-1] * n
        by_offset: list[tuple[int, int]] = []                # (offset, buffer id) in offset order
        for position, buffer_id in enumerate(fixed + online):
            wanted = self.buffers[buffer_id]
            if wanted.offline_offset is not None:
                candidate = wanted.offline_offset
            elif position == 0:
                candidate = 0
            else:
                candidate = self._first_fit(wanted, by_offset)
            offsets[buffer_id] = candidate
            # Insert after every entry at or below this offset (TFLM's list insertion).
            slot = bisect.bisect_right([o for o, _ in by_offset], candidate)
            by_offset.insert(slot, (candidate, buffer_id))
        return offsets

    def _first_fit(self, wanted: BufferRequest, by_offset: list[tuple[int, int]]) -> int:
        candidate = 0
        for offset, other_id in by_offset:
            other = self.buffers[other_id]
            if not other.overlaps_in_time(wanted.first_use, wanted.last_use):
                continue
            if offset - candidate >= wanted.size:
                return candidate
            candidate = max(candidate, offset + other.size)
        return candidate


class LinearPlanner(_PlannerBase):
    """TFLM's LinearMemoryPlanner: every buffer after the previous one, no reuse."""

    name = "linear"

    def _place(self) -> list[int]:
        offsets, end = [], 0
        for b in self.buffers:
            offsets.append(end)
            end += b.size
        return offsets


PLANNERS = {"greedy": GreedyPlanner, "linear": LinearPlanner}


def make_planner(name: str) -> MemoryPlanner:
    """`offline` is the greedy planner fed with the model's offline offsets."""
    key = "greedy" if name == "offline" else name
    if key not in PLANNERS:
        raise ValueError(f"unknown planner '{name}', choose from greedy, linear, offline")
    planner = PLANNERS[key]()
    planner.name = name
    return planner


def lower_bound(buffers: list[BufferRequest]) -> int:
    """The largest sum of sizes live at one step: no placement can use less."""
    if not buffers:
        return 0
    last = max(b.last_use for b in buffers)
    return max(sum(b.size for b in buffers if b.first_use <= step <= b.last_use)
               for step in range(last + 1))
