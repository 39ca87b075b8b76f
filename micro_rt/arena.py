"""The tensor arena, kept the way TFLM's SingleArenaBufferAllocator keeps it.

One block of bytes: the head grows up from the start (planned activations and scratch),
temporary allocations sit just above the head while the model is prepared, and the tail
grows down from the end (persistent data that lives as long as the interpreter).

The arena records every persistent allocation by category, like TFLM's
RecordingMicroAllocator, and the high-water mark of head/temp + tail over the whole
allocation, which is the smallest arena that works (TFLM's own printout misses the temp
peak, so it can be below what the model needs).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from .errors import AllocationError

ARENA_ALIGNMENT = 16
# No microcontroller has a gigabyte of RAM: a plan above this comes from a forged or corrupt
# dimension (or offline offset), and micro_rt refuses it instead of allocating it.
MAX_ARENA_BYTES = 1 << 30


def align_up(value: int, alignment: int = ARENA_ALIGNMENT) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass
class CategoryUse:
    used: int = 0        # with alignment overhead
    requested: int = 0
    count: int = 0


def usable_arena_bytes(size: int) -> int:
    """The part of an `arena_size` TFLM can use: a whole number of 16-byte units."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise AllocationError(f"arena size must be a non-negative number of bytes, got {size!r}")
    return size - size % ARENA_ALIGNMENT


@dataclass
class Peak:
    """The moment the arena was fullest: what was being allocated, and the three parts."""
    head: int = 0
    temp: int = 0                    # temporary bytes above the head
    tail: int = 0
    what: str = "nothing"

    @property
    def total(self) -> int:
        return self.head + self.temp + self.tail


@dataclass
class Arena:
    """Byte accounting of one arena, without a size limit: the allocator compares the
    smallest working size with the arena it was given once everything is allocated, so a
    too-small arena is reported with the real minimum, not with the bytes needed when
    the first allocation failed."""

    head: int = 0                    # bytes from the start used by planned buffers
    temp: int = 0                    # top of temporary allocations (>= head while in use)
    tail: int = 0                    # bytes used from the end
    peak: Peak = field(default_factory=Peak)   # max over time of max(head, temp) + tail
    categories: dict = field(default_factory=lambda: defaultdict(CategoryUse))

    # ---- tail ------------------------------------------------------------------------
    def allocate_persistent(self, nbytes: int, alignment: int = ARENA_ALIGNMENT,
                            category: str = "persistent buffer data") -> int:
        """Allocate from the end downwards; returns the offset from the arena's end."""
        if nbytes < 0:
            raise AllocationError(f"negative persistent allocation ({nbytes} bytes) for {category}")
        before = self.tail
        self.tail = align_up(self.tail + nbytes, alignment)
        use = self.categories[category]
        use.used += self.tail - before
        use.requested += nbytes
        use.count += 1
        self._check(f"{nbytes} persistent bytes for {category}")
        return self.tail

    # ---- temp ------------------------------------------------------------------------
    def allocate_temp(self, nbytes: int, alignment: int = ARENA_ALIGNMENT,
                      what: str = "temporary data") -> int:
        start = align_up(self.temp, alignment)
        self.temp = start + nbytes
        self._check(f"{nbytes} temporary bytes for {what}")
        return start

    def reset_temp(self) -> None:
        self.temp = self.head

    def check_temp_top(self, top: int, what: str) -> None:
        """The tail must stay above `top` (temporary bytes still to be read) as it is now."""
        saved, self.temp = self.temp, max(top, self.head)
        self._check(what)
        self.temp = saved

    # ---- head ------------------------------------------------------------------------
    def set_head(self, nbytes: int, what: str = "planned buffers") -> None:
        """Reserve the planned (non-persistent) area; temp must be empty, as in TFLM."""
        self.head = align_up(nbytes)
        self.temp = max(self.temp, self.head)
        self._check(f"{nbytes} bytes of {what}")
        self.reset_temp()

    # ---- totals ----------------------------------------------------------------------
    @property
    def required_bytes(self) -> int:
        """The smallest arena that survives every allocation made so far."""
        return align_up(self.peak.total)

    def _check(self, what: str) -> None:
        needed = max(self.head, self.temp) + self.tail
        if needed > MAX_ARENA_BYTES:
            raise AllocationError(
                f"the model needs an arena of {needed} bytes for {what} (head {self.head}, "
                f"temp {max(self.temp - self.head, 0)}, tail {self.tail}), over micro_rt's "
                f"{MAX_ARENA_BYTES}-byte (1 GiB) limit: a tensor shape or offline offset in the "
                "model is likely corrupt")
        if needed > self.peak.total:
            self.peak = Peak(self.head, max(self.temp - self.head, 0), self.tail, what)
