"""The flash interface in front of the core: the memory-system part of the cycle model.

Both sides are simulated access by access, in execution order, by the hooks that watch the
emulation (native_hook.c flash_fetch / flash_data_read; `FlashInterface` below is their Python
twin, used by the Python hooks and by tests/test_native_memory_system.py):

- Instruction side: a block run from flash fetches each line it spans. A line still in the line
  buffer (the one fetched last) costs nothing; a line in the instruction cache nothing; the next
  sequential line while prefetch is on costs the fill less what executing the previous line
  hides; any other line a whole fill. The cache is LRU, set associative (one set: fully
  associative), as ST's reference manuals describe the ART's (RM0090 section 3.5.2, RM0440
  section 3.3.4) and Arm's TRMs the L1 caches.
- Data side: each load from flash looks its unit up in a data cache (LRU too); a miss costs
  `data_miss_cycles`. SRAM has zero wait states.

The stall totals run with the call, so any part of a call (an operator of the whole-invoke
runtime) is priced by differences of them, and the caches' content carries from one call to the
next as a board's does.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

# A line of L bytes holds at most L / 4 instructions of 32 bits, each taking at least a cycle:
# the time executing it hides of the next line's prefetch ("at least four CPU cycles are needed
# to execute the previous read instruction line" for 128 bits, RM0090 section 3.5.2).
MIN_BYTES_PER_CYCLE = 4


@dataclass(frozen=True)
class MemorySystem:
    """Flash interface in front of the core.

    wait_states: core stall cycles of one line fill (a miss); line_bytes: the instruction line;
    prefetch: the next sequential line is fetched while the current one executes;
    icache_bytes / icache_ways: instruction cache (0: a line buffer only; ways 0: fully
    associative); dcache_lines / dcache_ways: data cache entries of `data_unit_bytes` (0: the
    line) and their associativity; data_miss_cycles: stall of a data miss (None: a line fill);
    sram_wait_states: stall of each 32-bit word loaded from SRAM (a store is taken to be absorbed
    by the core's write buffer).
    """
    wait_states: int = 0
    line_bytes: int = 16
    prefetch: bool = True
    icache_bytes: int = 0
    dcache_lines: int = 1
    icache_ways: int = 0
    dcache_ways: int = 0
    data_unit_bytes: int = 0
    data_miss_cycles: Optional[int] = None
    sram_wait_states: int = 0

    @property
    def data_unit(self) -> int:
        return self.data_unit_bytes or self.line_bytes

    @property
    def data_miss(self) -> int:
        return self.wait_states if self.data_miss_cycles is None else self.data_miss_cycles

    @property
    def sequential_fill(self) -> int:
        """Stall of a prefetched sequential line: the fill less the least time the previous line
        takes to execute."""
        return max(0, self.wait_states - self.line_bytes // MIN_BYTES_PER_CYCLE)

    @property
    def icache_lines(self) -> int:
        return self.icache_bytes // self.line_bytes


def default_memory_system(core: str, wait_states: int) -> MemorySystem:
    """A bare target's flash interface, as on a typical part with that core:

    - cortex-m0plus: 64-bit flash lines with a prefetch buffer, no cache (STM32G0/L0-like).
    - cortex-m4: ART accelerator of the STM32F4: 128-bit lines, prefetch, 64-line LRU instruction
      cache, 8-line data cache (RM0090 section 3.5.2).
    - cortex-m7: L1 caches: 16 KiB 2-way instruction and 16 KiB 4-way data cache, 32-byte lines
      (Cortex-M7 TRM, L1 caches).
    - cortex-m33: an STM32U5-like 8 KiB 2-way instruction cache of 16-byte lines and a 4 KiB
      data cache.
    `wait_states` here is the stall of one line fill."""
    if core == "cortex-m0plus":
        return MemorySystem(wait_states, 8, True, 0, 1)
    if core == "cortex-m4":
        return MemorySystem(wait_states, 16, True, 1024, 8)
    if core == "cortex-m7":
        return MemorySystem(wait_states, 32, True, 16384, 512, icache_ways=2, dcache_ways=4)
    if core == "cortex-m33":
        return MemorySystem(wait_states, 16, True, 8192, 256, icache_ways=2, dcache_ways=2)
    raise ValueError(core)


@dataclass(frozen=True)
class FlashCounts:
    """What the flash interface counted over a span of execution: instruction-fetch stall
    cycles, data loads from flash that missed its cache, and all data loads from flash."""
    fetch_stalls: int = 0
    data_misses: int = 0
    data_reads: int = 0

    def __sub__(self, other: "FlashCounts") -> "FlashCounts":
        return FlashCounts(self.fetch_stalls - other.fetch_stalls, self.data_misses - other.data_misses,
                           self.data_reads - other.data_reads)


class LruCache:
    """An LRU cache of line numbers in sets of `ways` (native_hook.c lru_access is the twin)."""

    def __init__(self, lines: int, ways: int = 0):
        self.ways = lines if not ways or ways > lines else ways
        self.sets = (lines // self.ways or 1) if lines else 0
        self.flush()

    def access(self, line: int) -> bool:
        """True on a hit; on a miss the line replaces its set's least recently used."""
        if not self.sets:
            return False
        ways = self._sets[line % self.sets]          # least recently used first
        if line in ways:
            ways.move_to_end(line)
            return True
        if len(ways) == self.ways:
            ways.popitem(last=False)
        ways[line] = None
        return False

    def flush(self) -> None:
        self._sets: list[OrderedDict] = [OrderedDict() for _ in range(self.sets)]


class FlashInterface:
    """The Python twin of the native flash-interface model: instruction fetches block by block,
    data loads one by one, stall totals since `reset`."""

    def __init__(self, mem: MemorySystem, fetch: bool):
        self.mem, self.fetch_on = mem, fetch
        self.icache = LruCache(mem.icache_lines, mem.icache_ways)
        self.dcache = LruCache(mem.dcache_lines, mem.dcache_ways)
        self.reset()

    def reset(self) -> None:
        self.fetch_stalls = self.fills = self.data_reads = self.data_misses = 0
        self._last = -2

    def flush(self) -> None:
        self.icache.flush()
        self.dcache.flush()
        self._last = -2

    def fetch_block(self, addr: int, size: int) -> None:
        if not self.fetch_on:
            return
        line_bytes = self.mem.line_bytes
        for line in range(addr // line_bytes, (addr + max(size, 1) - 1) // line_bytes + 1):
            if line == self._last:
                continue
            sequential = line == self._last + 1
            self._last = line
            if self.icache.access(line):
                continue
            self.fills += 1
            self.fetch_stalls += (self.mem.sequential_fill if sequential and self.mem.prefetch
                                  else self.mem.wait_states)

    def data_read(self, addr: int) -> None:
        self.data_reads += 1
        if not self.dcache.access(addr // self.mem.data_unit):
            self.data_misses += 1
