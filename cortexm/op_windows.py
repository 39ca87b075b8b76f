"""The operator windows of one call of the device runtime (cortexm/src/mrt_runtime.c), and what
each cost.

The runtime calls `mrt_op_boundary(index, phase, status)` before and after every entry of its
plan; a block hook on that function alone (Unicorn checks its range in C, so the rest runs at
full speed) takes a snapshot of the native hook's running counts there and repaints the stack
below the runtime's frame. What runs between an entry's two boundaries in kernel code is the
entry's (counted exactly as a call of its own: entered from nowhere, its return charged to it);
everything else (the runtime's loop, the argument words it moves, the boundary calls) is the
runtime's overhead = the whole call less its entries. That is what a DWT cycle counter around
Invoke() reads on a board.

Cycles: the flash interface is simulated as the code runs (memory_system.py), so each
boundary's snapshot holds the fetch stalls and data misses so far: an entry's are the
difference between its two boundaries, with the caches as the operators and the runtime before
it left them, as on a board; each entry's blocks are priced by native_hook.c
mrt_account_window.
Whole-invoke profiling (whole_invoke.WholeInvoke) prices a runtime call this way. The machine's
running clock (system/clock.py, what DWT->CYCCNT reads) runs on across the boundaries, which
bank the edges they clear, and advances over the call by exactly the cycles attributed here
(tests/test_vmcu_runtime.py). An exported project run by `micro-rt emulate`, a different image
of the same plan, has its mrt_invoke timed by system/call_watch.py: the same instructions,
cycles within a few in a thousand (tests/test_export.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from unicorn.arm_const import UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_SP

from micro_rt.errors import EmulationError

from . import alignment
from .calling import STACK_PAINT, StackProbe
from .memory_system import FlashCounts

INVOKE_SYMBOL = "mrt_invoke"
BOUNDARY_SYMBOL = "mrt_op_boundary"
HOST_SYMBOL = "mrt_host_op"       # the host trap (firmware_plan.HOST_SYMBOL): runtime code, so its
                                  # few instructions are the runtime's, the operator's none
START_SYMBOL = "mrt_start"        # the emulator image's reset vector: runs the plan, then BKPT #4
BEGINS, ENDED, MARK = 0, 1, 2     # mrt_runtime.h MRT_OP_BEGINS / MRT_OP_ENDED / MRT_OP_MARK
RUNTIME_FUNCTIONS = (INVOKE_SYMBOL, BOUNDARY_SYMBOL, HOST_SYMBOL, START_SYMBOL)


@dataclass
class EntryCost:
    """What one plan entry (one kernel call) cost inside the invoke."""
    instructions: int = 0
    cycles: int = 0
    stack_bytes: int = 0
    alignment_events: list = field(default_factory=list)


@dataclass
class RuntimeCost:
    """The runtime's own part of an invoke: the whole call less its entries."""
    instructions: int
    cycles: int
    frame_bytes: int          # the runtime's stack frame (below it, each kernel's stack)


@dataclass
class InvokeResult:
    trace: list[tuple[int, Optional[EntryCost]]]   # entries as they ran: (index, cost; None: ENTER / LEAVE)
    runtime: RuntimeCost
    instructions: int         # the whole call: entries + runtime
    cycles: int
    stack_bytes: int          # deepest stack of the invoke (runtime frame + a kernel's stack)
    edges: dict               # the block edges of the whole call (what code ran)
    ended_run: bool = False   # the last entry's kernel ended the invoke early (kTfLiteAbort)
    cyccnt_cycles: int = 0    # what DWT->CYCCNT advanced by over the call (the machine's clock)


@dataclass
class _Mark:
    index: int
    phase: int
    status: int
    edges: dict
    flash: FlashCounts           # the flash interface's counts so far
    unaligned_total: int
    unaligned: Optional[list]
    sp: int
    stack_bytes: int = 0


class OperatorWindows:
    """The boundaries one runtime call reports, observed on `mcu` (`observer` for VirtualMCU.call
    or a hook of one's own), and the call's cost split into its entries and the runtime's part.
    `runtime`: the address range of the runtime's code (mrt_invoke and mrt_op_boundary)."""

    def __init__(self, mcu: Any, runtime: tuple[int, int], boundary: tuple[int, int]):
        self.mcu, self.runtime, self.boundary = mcu, runtime, boundary
        self.marks: list[_Mark] = []
        self._paint_lo = mcu.stack_top - mcu.stack_bytes
        self._paint = bytes([STACK_PAINT]) * mcu.stack_bytes
        self._on_begin: Optional[Callable[[int], None]] = None
        self._cleared_at = 0            # the unaligned total when the records were last cleared

    @classmethod
    def of_firmware(cls, mcu: Any) -> "OperatorWindows":
        """The windows of the runtime in `mcu`'s ELF (the host trap and the image's entry point,
        when it has them, are part of the runtime); KeyError when it has none."""
        symbols = mcu.elf.symbols
        invoke, boundary = symbols[INVOKE_SYMBOL], symbols[BOUNDARY_SYMBOL]
        functions = (invoke, boundary) + tuple(symbols[name] for name in (HOST_SYMBOL, START_SYMBOL) if name in symbols)
        spans = sorted((s.addr, s.addr + s.size) for s in functions)
        if any(end + 4 < start for (_, end), (start, _) in zip(spans, spans[1:])):
            raise EmulationError("the firmware's runtime functions are not next to each other (its linker script)")
        return cls(mcu, (spans[0][0], spans[-1][1]), (boundary.addr, boundary.addr + max(boundary.size, 2) - 1))

    @property
    def observer(self) -> tuple[int, int, Callable]:
        return (*self.boundary, self._observe)

    def start(self, on_begin: Optional[Callable[[int], None]] = None) -> None:
        """Before the call: `on_begin(entry index)` is called as each entry begins."""
        self.marks, self._on_begin, self._cleared_at = [], on_begin, 0

    def stop(self) -> None:
        self._on_begin = None

    def over_budget_entry(self, budget: int) -> Optional[int]:
        """The entry during which the invoke's instruction count passed `budget` (the engine
        checks the budget coarsely, by code bytes, so it may stop a little later)."""
        used = 0
        for mark in self.marks:
            used += self.mcu.price(mark.edges, None)[0]
            if used > budget:
                return mark.index if mark.phase == ENDED else None
        return self.running_entry()

    def running_entry(self) -> Optional[int]:
        """The entry that was running when the call stopped (None: the runtime's own code)."""
        if self.marks and self.marks[-1].phase == BEGINS:
            return self.marks[-1].index
        return None

    def _observe(self, uc, address, size, user) -> None:
        hooks = self.mcu.hooks
        stats = hooks.stats()
        phase = uc.reg_read(UC_ARM_REG_R1)
        status = uc.reg_read(UC_ARM_REG_R2)
        previous = self.marks[-1] if self.marks else None
        changed = stats.unaligned_total != (previous.unaligned_total if previous else 0)
        mark = _Mark(uc.reg_read(UC_ARM_REG_R0), phase, status - (1 << 32) if status & 0x80000000 else status,
                     hooks.edges(), stats.flash, stats.unaligned_total,
                     hooks.unaligned() if changed and phase == ENDED else None, uc.reg_read(UC_ARM_REG_SP))
        self.mcu.clear_edges(mark.edges)          # each mark holds the edges since the previous one
        if phase == BEGINS:
            if stats.unaligned_total != self._cleared_at:     # each entry's records start empty
                hooks.clear_unaligned()
                self._cleared_at = stats.unaligned_total
            uc.mem_write(self._paint_lo, self._paint[:mark.sp - self._paint_lo])
            if self._on_begin is not None:
                self._on_begin(mark.index)
        elif phase == ENDED and previous is not None:
            mark.stack_bytes = StackProbe.high_water(uc, self._paint_lo, previous.sp)
        self.marks.append(mark)

    # ------------------------------------------------------------------ attribution

    def _entry_cost(self, begin: _Mark, end: _Mark) -> EntryCost:
        """The kernel's part of the window between two boundaries, as a call of its own counts
        it: entered from nowhere (the runtime's branch is the runtime's), its return charged;
        its flash stalls are those the flash interface counted between the two boundaries (the
        caches as the previous entry and the runtime left them, as on a board)."""
        edges: dict = {}
        last_block = None
        lo, hi = self.runtime
        for key, n in end.edges.items():
            p, ps, c, cs = key
            if lo <= c < hi:
                if p and not lo <= p < hi:
                    last_block = (p, ps)
                continue
            if lo <= p < hi:
                key = (0, 0, c, cs)
            edges[key] = edges.get(key, 0) + n
        insns, bd, _ = self.mcu.price(edges, last_block, end.flash - begin.flash)
        events = []
        if end.unaligned is not None:
            events = alignment.call_events(end.unaligned, self.mcu.read_code, self.mcu.symbol_at,
                                           strict=self.mcu.strict_alignment, armv6m=self.mcu.armv6m)
        return EntryCost(insns, bd.total, end.stack_bytes, events)

    def attribute(self, tail_edges: dict, last_block: Optional[tuple[int, int]], flash: FlashCounts,
                  stack_bytes: int, entry_sp: int,
                  entry_prev: Optional[tuple[int, int]] = None) -> InvokeResult:
        """The call's cost once it returned: `tail_edges` ran after the last boundary,
        `last_block` returned, the flash interface counted `flash` over the call, `stack_bytes`
        below `entry_sp` (the stack pointer it was entered with) it used.
        `entry_prev`: the caller's block, whose branch into the call is the caller's."""
        if entry_prev is not None:
            for mark in self.marks:
                mark.edges = _entered_from_nowhere(mark.edges, entry_prev)
            tail_edges = _entered_from_nowhere(tail_edges, entry_prev)
        marks = self.marks
        trace: list[tuple[int, Optional[EntryCost]]] = []
        k = 0
        while k < len(marks):
            mark = marks[k]
            if mark.phase == MARK:
                trace.append((mark.index, None))
                k += 1
                continue
            end = marks[k + 1] if k + 1 < len(marks) else None
            if mark.phase != BEGINS or end is None or end.phase != ENDED or end.index != mark.index:
                raise EmulationError(f"the runtime's operator boundaries are out of order at entry {mark.index}")
            trace.append((mark.index, self._entry_cost(mark, end)))
            k += 2
        entries = [cost for _, cost in trace if cost is not None]
        # the whole call: every window's edges (the call's result counted the last one alone)
        edges = dict(tail_edges)
        for mark in marks:
            for key, n in mark.edges.items():
                edges[key] = edges.get(key, 0) + n
        instructions, bd, _ = self.mcu.price(edges, last_block, flash)
        # every term adds up over the parts (the flash stalls were counted as the code ran): the
        # runtime's are the whole call's less its entries'
        frame = max((entry_sp - m.sp for m in marks), default=0)
        runtime = RuntimeCost(instructions - sum(e.instructions for e in entries),
                              bd.total - sum(e.cycles for e in entries), frame)
        cycles = runtime.cycles + sum(e.cycles for e in entries)
        stack = max([stack_bytes] + [frame + e.stack_bytes for e in entries])
        return InvokeResult(trace, runtime, instructions, cycles, stack, edges)


def _entered_from_nowhere(edges: dict, prev: tuple[int, int]) -> dict:
    out: dict = {}
    for (p, ps, c, cs), n in edges.items():
        key = (0, 0, c, cs) if (p, ps) == prev else (p, ps, c, cs)
        out[key] = out.get(key, 0) + n
    return out

