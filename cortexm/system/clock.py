"""The cumulative cycle count of a firmware run: what DWT->CYCCNT reads at any instruction.

cycles(now) = the cycle model (cortexm/cycles.py) over every block edge counted so far (a block
is counted when it starts, so a read inside a block sees that whole block) + the flash
interface's stalls so far + the exception entries taken. Reading it changes nothing, so a
program's own CYCCNT deltas add up to the run's cycles however often it reads. When the firmware
changes the flash latency, misses already taken keep the price they had. A model's image
(cortexm/machine.py VirtualMCU.boot, op_windows.py) prices its parts from the edges between
its boundaries and clears the hooks' edges at each: the clock banks what they cost first
(`bank`), so it runs on across the clears; each boot starts it again from 0 (`restart`), as a
reset does.
"""
from __future__ import annotations

from typing import Callable, Optional

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
        self._banked = (0, 0, 0, 0)      # (instructions, core, branches, words loaded) of cleared edges
        self.instructions = 0

    def restart(self) -> None:
        """The hooks were reset (a boot from reset): the clock counts from 0."""
        self._known, self._edges, self._banked = -1, {}, (0, 0, 0, 0)
        self._miss_base_cycles = self._miss_base_count = 0
        self._edge_misses = {}

    def bank(self, edges: Optional[dict] = None) -> None:
        """The hooks' edges (`edges`, when the caller has just read them) are about to be
        cleared: keep what they cost. The last block's return, charged provisionally (its taken
        branch, as if it were the final one), is left out: the next block's edge charges it
        when the branch is taken."""
        insns, core, branches, _fetch, loads = self._edge_terms(edges)
        last = self._hooks.stats().last_block
        if last is not None:
            branches -= self._model.block_costs({(0, 0, *last): 1})[last].taken_extra
        b = self._banked
        self._banked = (b[0] + insns, b[1] + core, b[2] + branches, b[3] + loads)
        self._known = -1

    def edges(self) -> dict:
        n = self._hooks.edge_count()
        if n != self._known:
            self._edges = self._hooks.edges()
            self._known = n
        return self._edges

    def _edge_terms(self, edges: Optional[dict] = None) -> tuple[int, int, int, int, int]:
        """(instructions, core, branches, fetch stalls, words loaded) of the edges the hooks
        hold now (`edges`, when the caller has just read them; the fetch stalls: the flash
        interface's so far)."""
        hooks, model = self._hooks, self._model
        before = self._known
        if edges is None:
            edges = self.edges()
            changed = self._known != before
        else:
            changed = True
        if hooks.native:
            fresh = edges if changed else {}       # blocks the library may lack
            priced = hooks.account(fresh, model.block_costs(fresh), None)
            if priced is not None:                 # else priced in Python, as CycleModel.count does
                insns, _blocks, core, branches, fetch, _data, loads = priced
                return insns, core, branches, fetch, loads
        costs = model.block_costs(edges)
        stats = hooks.stats()      # the last block's return charged provisionally, as natively
        insns, bd, _ = account(edges, costs, stats.last_block, self.memory_system, stats.flash)
        loads = sum(n * costs[(c, cs)].loads for (_, _, c, cs), n in edges.items())
        return insns, bd.core, bd.branches, bd.fetch, loads

    def breakdown(self) -> CycleBreakdown:
        insns, core, branches, fetch, loads = self._edge_terms()
        b = self._banked
        flash = self._hooks.stats().flash
        self.instructions = insns + b[0]
        ms = self.memory_system
        data = self._miss_base_cycles + (flash.data_misses - self._miss_base_count) * ms.data_miss
        return CycleBreakdown(core + b[1], branches + b[2], fetch, data, sram_stalls(ms, loads + b[3], flash))

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
