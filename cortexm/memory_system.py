"""The flash interface in front of the core: the memory-system part of the cycle model.

Instruction fetches from flash stall the core for the wait states of every line it has to
fill (an instruction cache, or a line buffer with prefetch, hides some of them); data loads
from flash (weights, literal pools) are counted by native_hook.c (the flash data port, or the
memory hook) against a small direct-mapped data cache of `dcache_lines` lines and stall the same
way. SRAM has zero wait states. The functions below are the Python reference of the fetch
stalls; native_hook.c mrt_account is their native twin (tests/test_native_memory_system.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class MemorySystem:
    """Flash interface in front of the core. Defaults per core model typical parts:

    - cortex-m0plus: 64-bit flash lines with a prefetch buffer, no cache (STM32G0/L0-like).
    - cortex-m4: ART accelerator of the STM32F4: 128-bit lines, prefetch, 1 KiB instruction cache
      (64 lines), 8-line data cache for constant loads.
    - cortex-m7: L1 caches of STM32F7/H7-class parts: 16 KiB I-cache and 16 KiB D-cache, 32-byte
      lines (cache hits cost nothing, a line fill costs the wait states).
    - cortex-m33: STM32U5/L5-like 8 KiB instruction cache, 16-byte lines, 4 KiB data cache.
    Assumption for all: a line fill costs `wait_states` stall cycles; SRAM has zero wait states.
    """
    wait_states: int = 0
    line_bytes: int = 16
    prefetch: bool = True
    icache_bytes: int = 0
    dcache_lines: int = 1


def default_memory_system(core: str, wait_states: int) -> MemorySystem:
    if core == "cortex-m0plus":
        return MemorySystem(wait_states, 8, True, 0, 1)
    if core == "cortex-m4":
        return MemorySystem(wait_states, 16, True, 1024, 8)
    if core == "cortex-m7":
        return MemorySystem(wait_states, 32, True, 16384, 512)
    if core == "cortex-m33":
        return MemorySystem(wait_states, 16, True, 8192, 256)
    raise ValueError(core)


def lines(addr: int, size: int, line: int) -> range:
    """The line numbers the `size` bytes at `addr` lie in."""
    return range(addr // line, (addr + max(size, 1) - 1) // line + 1)


def _icache_stalls(mem: MemorySystem, fetched: dict, warm_lines: Optional[set]) -> int:
    """Stalls of the fetches through an instruction cache: the cold lines of the call's code
    footprint, plus capacity misses when the footprint does not fit.
    warm_lines: I-cache content carried over between calls (updated in place)."""
    W, L = mem.wait_states, mem.line_bytes
    cap = mem.icache_bytes // L
    foot = set()
    for (c, cs) in fetched:
        foot.update(lines(c, cs, L))
    warm = warm_lines if warm_lines is not None else set()
    cold = len(foot - warm) if len(foot) <= cap else len(foot)
    stalls = cold * W
    if len(foot) > cap:
        # capacity misses: each line fetch hits with probability cap/footprint
        miss = 1.0 - cap / len(foot)
        refs = sum(f[0] * len(lines(c, cs, L)) for (c, cs), f in fetched.items())
        stalls += int(round(refs * miss * W))
    if warm_lines is not None:
        warm_lines.clear()
        if len(foot) <= cap:
            warm_lines.update(foot)
    return stalls


def _line_buffer_stalls(mem: MemorySystem, fetched: dict, costs: dict) -> int:
    """Stalls of the fetches through flash line buffers (no cache), with or without prefetch."""
    W, L = mem.wait_states, mem.line_bytes
    stalls = 0
    for (c, cs), (n, entries) in fetched.items():
        bc = costs[(c, cs)]
        nl = len(lines(c, cs, L))
        if mem.prefetch:
            # the next line is prefetched while this one executes: a sequential line
            # stalls only for what its execution time does not hide
            per_line = bc.cycles / nl
            seq = max(0.0, W + 1 - per_line)
            stalls += entries * W + (n * nl - entries) * seq
        else:
            stalls += n * nl * W
    return int(round(stalls))


def fetch_stalls(mem: MemorySystem, fetched: dict, costs: dict, warm_lines: Optional[set]) -> int:
    """Instruction-fetch stall cycles of one call (0 without wait states).

    fetched: {(addr, size): [executions, taken entries]} of the flash blocks that ran (a taken
    entry refetches the block's first line); costs: {(addr, size): BlockCost}."""
    if not mem.wait_states:
        return 0
    if mem.icache_bytes:
        return _icache_stalls(mem, fetched, warm_lines)
    return _line_buffer_stalls(mem, fetched, costs)
