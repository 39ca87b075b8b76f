"""Per-core cycle model of one call on the virtual MCU.

cycles(call) = Σ_blocks count × static cost of the block            (core_timing.py)
             + Σ_taken-edges count × refill cost of the branch        (from the block-edge counts)
             + instruction-fetch stalls from flash                    (memory_system.py, wait states)
             + data-load stalls from flash (weights, literal pools)   (native memory hook counts)

Where a cycle is counted: the native block hook (native_hook.c, through native.HookSet) counts
*edges* (previous block -> block) while the call runs, so a conditional branch is charged as
taken exactly when the next block executed is not the fall-through one; after the call,
`CycleModel.count` prices every block once per (ELF, core) from a capstone disassembly
(thumb_decode.py) and sums the four terms above.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .core_timing import BlockCost, CodeReader, block_cost
from .memory_system import MemorySystem, fetch_stalls

__all__ = ["CycleBreakdown", "CycleModel", "MemorySystem", "account"]

# Static block costs per (ELF hash, core): the same firmware's blocks cost the same in every
# machine, so machines share them (read-only once computed).
_COST_CACHE: dict[tuple[str, str], dict[tuple[int, int], BlockCost]] = {}


@dataclass
class CycleBreakdown:
    core: int = 0
    branches: int = 0
    fetch: int = 0
    data_flash: int = 0

    @property
    def total(self) -> int:
        return self.core + self.branches + self.fetch + self.data_flash


def account(edges: dict, costs: dict, last_block: Optional[tuple[int, int]], mem: MemorySystem,
            flash: tuple[int, int], data_flash_misses: int, warm_lines: Optional[set] = None
            ) -> tuple[int, CycleBreakdown, int]:
    """(instructions, cycle breakdown, executed block count) of one call.

    edges: {(prev, prev_size, cur, cur_size): count}; costs: {(addr, size): BlockCost}.
    warm_lines: I-cache content carried over between calls (updated in place)."""
    bd = CycleBreakdown()
    insns = 0
    blocks = 0
    line = mem.line_bytes
    flo, fhi = flash
    fetched: dict = {}        # (addr,size) -> [count, taken-entries] of the blocks in flash
    for (p, ps, c, cs), n in edges.items():
        bc = costs[(c, cs)]
        insns += n * bc.n_insns
        blocks += n
        bd.core += n * bc.cycles
        sequential = (p + ps == c)
        if p and not sequential:
            bd.branches += n * costs[(p, ps)].taken_extra if (p, ps) in costs else 0
        if mem.wait_states and flo <= c < fhi:
            f = fetched.setdefault((c, cs), [0, 0])
            f[0] += n
            # a taken transfer (or the call entry) refetches the target line; a sequential entry
            # continuing in the line the previous block ended in does not
            if not sequential or (p + ps - 1) // line != c // line:
                f[1] += n
    if last_block is not None and last_block in costs:
        bd.branches += costs[last_block].taken_extra        # the final return
    bd.fetch = fetch_stalls(mem, fetched, costs, warm_lines)
    bd.data_flash = data_flash_misses * mem.wait_states
    return insns, bd, blocks


class CycleModel:
    """The cycles of a machine's calls: the static cost of every executed block (computed once
    per firmware and core, from the code as the machine reads it) and the I-cache content one
    call leaves to the next."""

    def __init__(self, core: str, firmware_sha256: str, memory_system: MemorySystem, read: CodeReader):
        self.core = core
        self.memory_system = memory_system
        self._read = read
        self._costs = _COST_CACHE.setdefault((firmware_sha256, core), {})
        self._warm_lines: set = set()

    def count(self, edges: dict, last_block: Optional[tuple[int, int]], flash: tuple[int, int],
              data_flash_misses: int) -> tuple[int, CycleBreakdown, int]:
        """(instructions, cycle breakdown, executed blocks) of a call from its block-edge counts."""
        return self.price(edges, last_block, flash, data_flash_misses, self._warm_lines)

    def price(self, edges: dict, last_block: Optional[tuple[int, int]], flash: tuple[int, int],
              data_flash_misses: int, warm_lines: Optional[set]) -> tuple[int, CycleBreakdown, int]:
        """`count` with the caller's I-cache content (updated in place; None: all cold)."""
        costs = self._costs
        for (_, _, c, cs) in edges:
            if (c, cs) not in costs:
                costs[(c, cs)] = block_cost(self.core, c, cs, self._read)
        return account(edges, costs, last_block, self.memory_system, flash, data_flash_misses,
                       warm_lines)
