"""Per-core cycle model of one call on the virtual MCU.

cycles(call) = Σ_blocks count × static cost of the block            (core_timing.py)
             + Σ_taken-edges count × refill cost of the branch        (from the block-edge counts)
             + instruction-fetch stalls from flash                    (memory_system.py, simulated as it ran)
             + data-load stalls from flash (weights, literal pools)   (flash data port / memory hook)

Where a cycle is counted: the native block hook (native_hook.c, through native.HookSet) counts
*edges* (previous block -> block) while the call runs, so a conditional branch is charged as
taken exactly when the next block executed is not the fall-through one; after the call,
`CycleModel.count` prices every block once per (ELF, core) from a capstone disassembly
(thumb_decode.py; kept on disk between processes by block_store.py) and sums the four terms above: natively over the hook's edge table
(native_hook.c mrt_account) when the hook library is loaded, else with `account` below, its
Python twin (tests/test_native_memory_system.py holds them equal). The stalls come from the
flash interface the hooks simulated while the call ran.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .block_store import BlockStore
from .core_timing import BlockCost, CodeReader, block_cost
from .memory_system import FlashCounts, MemorySystem

__all__ = ["CycleBreakdown", "CycleModel", "MemorySystem", "account"]

# Static block costs per (ELF hash, core): the same firmware's blocks cost the same in every
# machine, so machines share them (read-only once computed), and processes share them through
# the block store.
_COST_CACHE: dict[tuple[str, str], tuple[dict[tuple[int, int], BlockCost], BlockStore]] = {}


@dataclass
class CycleBreakdown:
    core: int = 0
    branches: int = 0
    fetch: int = 0
    data_flash: int = 0
    sram: int = 0             # wait states of the words loaded from SRAM

    @property
    def total(self) -> int:
        return self.core + self.branches + self.fetch + self.data_flash + self.sram


def sram_stalls(mem: MemorySystem, words_loaded: int, flash: FlashCounts) -> int:
    """The SRAM's wait states over a span: every word loaded that was not a load from flash."""
    return mem.sram_wait_states * max(0, words_loaded - flash.data_reads)


def account(edges: dict, costs: dict, last_block: Optional[tuple[int, int]], mem: MemorySystem,
            flash: FlashCounts) -> tuple[int, CycleBreakdown, int]:
    """(instructions, cycle breakdown, executed block count) of one call or part of a call.

    edges: {(prev, prev_size, cur, cur_size): count}; costs: {(addr, size): BlockCost};
    flash: what the flash interface (memory_system.py, simulated as the code ran) counted over
    the same span."""
    bd = CycleBreakdown()
    insns = blocks = loads = 0
    for (p, ps, c, cs), n in edges.items():
        bc = costs[(c, cs)]
        insns += n * bc.n_insns
        blocks += n
        loads += n * bc.loads
        bd.core += n * bc.cycles
        if p and p + ps != c:
            bd.branches += n * costs[(p, ps)].taken_extra if (p, ps) in costs else 0
    if last_block is not None and last_block in costs:
        bd.branches += costs[last_block].taken_extra        # the final return
    bd.fetch = flash.fetch_stalls
    bd.data_flash = flash.data_misses * mem.data_miss
    bd.sram = sram_stalls(mem, loads, flash)
    return insns, bd, blocks


class CycleModel:
    """The cycles of a machine's calls: the static cost of every executed block, computed once
    per firmware and core from the code as the machine reads it, and the flash interface's
    stalls the hooks simulated."""

    def __init__(self, core: str, firmware_sha256: str, memory_system: MemorySystem, read: CodeReader):
        self.core = core
        self.memory_system = memory_system
        self._read = read
        key = (firmware_sha256, core)
        if key not in _COST_CACHE:
            _COST_CACHE[key] = ({}, BlockStore.for_firmware(firmware_sha256, core))
        self._costs, self._store = _COST_CACHE[key]

    def count(self, edges: dict, last_block: Optional[tuple[int, int]], flash: FlashCounts,
              hooks=None, part: bool = False) -> tuple[int, CycleBreakdown, int]:
        """(instructions, cycle breakdown, executed blocks) of a call (or, with `part`, a part
        of one) from its block-edge counts and its flash counts. hooks: the native.HookSet that
        counted them, to price them natively; without it (or with Python hooks) `account`
        prices them."""
        costs = self.block_costs(edges)
        native = (hooks.account(edges, costs, (last_block, flash) if part else None)
                  if hooks is not None else None)
        if native is None:
            return account(edges, costs, last_block, self.memory_system, flash)
        insns, blocks, core, branches, fetch, data_flash, loads = native
        bd = CycleBreakdown(core, branches, fetch, data_flash, sram_stalls(self.memory_system, loads, flash))
        return insns, bd, blocks

    def block_costs(self, edges: dict) -> dict:
        """{(addr, size): BlockCost} holding every block of `edges` (priced once, shared)."""
        costs = self._costs
        priced = []
        for (_, _, c, cs) in edges:
            if (c, cs) not in costs:
                cost = self._store.lookup(c, cs, self._read)
                if cost is None:
                    cost = block_cost(self.core, c, cs, self._read)
                    priced.append(cost)
                costs[(c, cs)] = cost
        self._store.add(priced, self._read)
        return costs
