"""Per-core cycle model of one call on the virtual MCU.

cycles(call) = Σ_blocks count × static cost of the block            (core_timing.py)
             + Σ_taken-edges count × refill cost of the branch        (from the block-edge counts)
             + instruction-fetch stalls from flash                    (memory_system.py, wait states)
             + data-load stalls from flash (weights, literal pools)   (flash data port / memory hook counts)

Where a cycle is counted: the native block hook (native_hook.c, through native.HookSet) counts
*edges* (previous block -> block) while the call runs, so a conditional branch is charged as
taken exactly when the next block executed is not the fall-through one; after the call,
`CycleModel.count` prices every block once per (ELF, core) from a capstone disassembly
(thumb_decode.py) and sums the four terms above: natively over the hook's edge table
(native_hook.c mrt_account) when the hook library is loaded, else with `account` below, its
Python twin (tests/test_flash_port.py holds them equal).
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
              data_flash_misses: int, hooks=None) -> tuple[int, CycleBreakdown, int]:
        """(instructions, cycle breakdown, executed blocks) of a call from its block-edge counts.
        hooks: the native.HookSet that counted them, to price them natively (it then keeps the
        warm I-cache lines); without it (or with Python hooks) `account` prices them."""
        costs = self._block_costs(edges)
        native = hooks.account(self.memory_system, flash, edges, costs) if hooks is not None else None
        if native is not None:
            return _native_result(native)
        return account(edges, costs, last_block, self.memory_system, flash, data_flash_misses,
                       self._warm_lines)

    def price(self, edges: dict, last_block: Optional[tuple[int, int]], flash: tuple[int, int],
              data_flash_misses: int, hooks=None, warm_lines: Optional[set] = None
              ) -> tuple[int, CycleBreakdown, int]:
        """`count` of a part of a call (the whole-invoke runtime's operators): with
        `warm_lines` None the I-cache lines carry on from and to `count`'s (natively with native
        hooks), so parts priced in turn see each other's lines as calls do; else against the
        caller's own set (updated in place)."""
        costs = self._block_costs(edges)
        if warm_lines is None:
            native = (hooks.account(self.memory_system, flash, edges, costs, (last_block, data_flash_misses))
                      if hooks is not None else None)
            if native is not None:
                return _native_result(native)
            warm_lines = self._warm_lines
        return account(edges, costs, last_block, self.memory_system, flash, data_flash_misses, warm_lines)

    def _block_costs(self, edges: dict) -> dict:
        costs = self._costs
        for (_, _, c, cs) in edges:
            if (c, cs) not in costs:
                costs[(c, cs)] = block_cost(self.core, c, cs, self._read)
        return costs


def _native_result(native: tuple) -> tuple[int, CycleBreakdown, int]:
    insns, blocks, core, branches, fetch, data_flash = native
    return insns, CycleBreakdown(core, branches, fetch, data_flash), blocks
