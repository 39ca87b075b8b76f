"""The cumulative cycle count of a firmware run: what DWT->CYCCNT reads at any instruction.

cycles(now) = the cycle model (cortexm/cycles.py) over every block edge counted so far (a block
is counted when it starts, so a read inside a block sees that whole block) + the flash
interface's stalls so far + the exception entries taken. Reading it changes nothing, so a
program's own CYCCNT deltas add up to the run's cycles however often it reads. When the firmware
changes the flash latency, misses already taken keep the price they had.
"""
from __future__ import annotations

from typing import Callable

from ..cycles import CycleBreakdown, CycleModel, account, sram_stalls
from ..memory_system import MemorySystem
from ..native import HookSet


class RunningCycles:
    def __init__(self, hooks: HookSet, model: CycleModel, memory_system: MemorySystem,
                 exception_entries: Callable[[], int]):
        """exception_entries(): the cycles the exception entries taken so far cost."""
        self._hooks = hooks
        self._exception_entries = exception_entries
        self._model = model
        self._known = -1
        self._edges: dict = {}
        self.memory_system = memory_system
        self._miss_base_cycles = 0       # data misses priced before the last latency change
        self._miss_base_count = 0
        self._edge_misses: dict = {}     # edge -> (misses priced, their cycles) at the last change
        self.instructions = 0

    def edges(self) -> dict:
        n = self._hooks.edge_count()
        if n != self._known:
            self._edges = self._hooks.edges()
            self._known = n
        return self._edges

    def breakdown(self) -> CycleBreakdown:
        hooks, model = self._hooks, self._model
        before = self._known
        edges = self.edges()
        flash = hooks.stats().flash
        if hooks.native:
            fresh = edges if self._known != before else {}       # blocks the library may lack
            costs = model.block_costs(fresh)
            priced = hooks.account(fresh, costs, None)
            assert priced is not None               # the native hooks price (hooks.native)
            insns, _blocks, core, branches, fetch, _data, loads = priced
            bd = CycleBreakdown(core, branches, fetch, 0, sram_stalls(self.memory_system, loads, flash))
        else:
            costs = model.block_costs(edges)
            insns, bd, _ = account(edges, costs, None, self.memory_system, flash)
        self.instructions = insns
        bd.data_flash = self._miss_base_cycles + (flash.data_misses - self._miss_base_count) * self.memory_system.data_miss
        return bd

    def total(self, bd: CycleBreakdown) -> int:
        """The run's cycles: a breakdown of the blocks' cycles and the exception entries."""
        return bd.total + self._exception_entries()

    def now(self) -> int:
        return self.total(self.breakdown())

    def reprice(self, memory_system: MemorySystem) -> None:
        """The flash interface changed (the firmware wrote its latency or cache enables): misses
        from here cost the new price (per edge too, for the profile)."""
        misses = self._hooks.stats().flash.data_misses
        self._miss_base_cycles += (misses - self._miss_base_count) * self.memory_system.data_miss
        self._miss_base_count = misses
        price = self.memory_system.data_miss
        for key, (_, count, _) in self._hooks.edge_stalls().items():
            seen, cycles = self._edge_misses.get(key, (0, 0))
            self._edge_misses[key] = (count, cycles + (count - seen) * price)
        self.memory_system = memory_system

    def edge_memory_cycles(self, edges: dict, costs: dict) -> dict:
        """{edge: memory stall cycles}: the fetch stalls and the data misses met in each edge's
        block (each miss at the price it had when it happened), and the SRAM wait states of its
        loads that were not loads from flash: together the breakdown's fetch, data and SRAM
        terms, edge by edge."""
        price = self.memory_system.data_miss
        sram = self.memory_system.sram_wait_states
        stalls = self._hooks.edge_stalls()
        out = {}
        for key, n in edges.items():
            fetch, count, reads = stalls.get(key, (0, 0, 0))
            seen, cycles = self._edge_misses.get(key, (0, 0))
            loads = n * costs[(key[2], key[3])].loads
            # unclamped: a block whose flash reads outnumber the words its loads count (an
            # unaligned load is two reads) gives back what the total's difference took
            out[key] = fetch + cycles + (count - seen) * price + sram * (loads - reads)
        return out
