"""A whole inference as one emulator entry: the firmware's runtime (cortexm/src/mrt_runtime.c)
walks the model's firmware plan (firmware_plan.py) as a board's Invoke() would, calling the same
kernels the call-by-call mode calls (IF and WHILE: jumping on their conditions, making their
copies; the runtime reports where each starts and ends, so records keep their subgraph costs).

The plan is written once per machine: each constant where the machine's flash already holds
it (or after it), the entry table after the constants, the structs kernels write (the state
region) then the argument structs in RAM of their own (memory_map.PLAN_RAM_BASE; RAM as TFLM's
structs are, apart so the arena lies where it does call by call). Each invoke is ONE call of
mrt_invoke. The runtime calls `mrt_op_boundary(index, phase, status)` before and after every
entry; a block hook on that function alone (Unicorn checks its range in C, so the rest runs at
full speed) takes a snapshot of the native hook's running counts there and repaints the stack
below the runtime's frame. What runs between an entry's two boundaries in kernel code is the
entry's (counted exactly as a call of its own: entered from nowhere, its return charged to it);
everything else (the runtime's loop, the argument words it moves, the boundary calls) is the
runtime's overhead = the whole call less its entries. That is what a DWT cycle counter around
Invoke() reads on a board.

Cycles: each entry's part is priced in turn by the machine's memory-system model (natively:
native_hook.c mrt_account_window), so the I-cache lines one operator leaves warm are what the
next one finds, as from one call to the next call by call and across invokes; the flash data
cache is the one the whole call ran through (the runtime's reads of its entry table included).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from unicorn.arm_const import UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_SP

from micro_rt.errors import EmulationError, KernelError

from .faults import BudgetExceeded

from . import alignment
from .calling import STACK_PAINT, StackProbe
from .firmware_plan import AddressReader, FirmwarePlan, PlanError, Reloc, binary_image, refresh_blocks, resolver
from .memory_map import round_up

INVOKE_SYMBOL = "mrt_invoke"
BOUNDARY_SYMBOL = "mrt_op_boundary"
BEGINS, ENDED, MARK = 0, 1, 2     # mrt_runtime.h MRT_OP_BEGINS / MRT_OP_ENDED / MRT_OP_MARK
RUNTIME_FUNCTIONS = (INVOKE_SYMBOL, BOUNDARY_SYMBOL)



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


@dataclass
class _Mark:
    index: int
    phase: int
    status: int
    edges: dict
    flash_misses: int
    unaligned_total: int
    unaligned: Optional[list]
    sp: int
    stack_bytes: int = 0


class InvokeFailed(EmulationError):
    """The invoke stopped inside the plan: `entry` is the entry running (None: the runtime's
    own code, between entries)."""

    def __init__(self, message: str, entry: Optional[int], cause: Exception):
        super().__init__(message)
        self.entry, self.cause = entry, cause


class WholeInvoke:
    """One model's plan written into one machine, invoked as one firmware call."""

    def __init__(self, mcu: Any, plan: FirmwarePlan):
        self.mcu, self.plan = mcu, plan
        try:
            self._entry = mcu.symbol(INVOKE_SYMBOL)
            boundary = mcu.elf.symbols[BOUNDARY_SYMBOL]
        except (EmulationError, KeyError):
            raise PlanError("the firmware has no device runtime (mrt_invoke): rebuild it (make firmware)") from None
        self._boundary = (boundary.addr, boundary.addr + max(boundary.size, 2) - 1)
        spans = sorted((s.addr, s.addr + s.size) for s in (mcu.elf.symbols[INVOKE_SYMBOL], boundary))
        if spans[0][1] + 4 < spans[1][0]:
            raise PlanError("the firmware's runtime functions are not next to each other (firmware.ld)")
        self._runtime = (spans[0][0], spans[1][1])     # one range: firmware.ld places them together
        for item in plan.constants:                    # before the plan's own place in flash
            mcu.place_constant(item.data, item.align)
        flash_base = round_up(mcu.constants.end, 16)
        # The argument structs go to RAM after the state region, as TFLM's are in RAM (its
        # kernels build their CMSIS-NN structs on the stack from OpData in the arena): a kernel
        # reading its parameters pays no flash wait states, as call by call. Apart from the
        # arena, which lies where it does call by call.
        structs_at = round_up(len(plan.state_blob), 16)
        state_base = mcu.map_plan_ram(structs_at + len(plan.plan_blob))
        self.resolve = resolver(plan, mcu.arena_base, state_base + structs_at, state_base, mcu.place_constant)
        image = binary_image(plan, self.resolve, mcu.symbol, flash_base, state_base, state_base + structs_at)
        placed = mcu.place_constant(image.flash, 16)
        if placed != flash_base:
            raise PlanError(f"the plan could not be placed at 0x{flash_base:08x} (flash gave 0x{placed:08x})")
        self.image = image
        self.plan_bytes = len(image.flash)
        self._stateful = [i for i, e in enumerate(plan.entries) if e.after is not None]
        self._marks: list[_Mark] = []
        self._paint_lo = mcu.stack_top - mcu.stack_bytes
        self._paint = bytes([STACK_PAINT]) * mcu.stack_bytes
        self._on_begin: Optional[Callable[[int], None]] = None
        self._cleared_at = 0            # the unaligned total when the records were last cleared
        self._runtime_lines: set = set()    # the I-cache lines of the runtime's own code

    # ------------------------------------------------------------------ running
    def invoke(self, budget: Optional[int] = None, on_begin: Optional[Callable[[int], None]] = None) -> InvokeResult:
        """Run the plan once (one emulator entry); `on_begin(entry index)` is called as each
        entry begins. InvokeFailed when a kernel refuses, faults or the budget runs out."""
        mcu = self.mcu
        mcu.write(self.image.state_base, self.image.state)
        for region, offset, data in refresh_blocks(self.plan, self._stateful, self.resolve):
            mcu.write(self.resolve_region(region, offset), data)
        self._marks, self._on_begin, self._cleared_at = [], on_begin, 0
        try:
            result = mcu.call(self._entry, self.image.plan_address, budget=budget,
                              observer=(*self._boundary, self._observe))
        except BudgetExceeded as e:
            raise InvokeFailed(str(e), self._over_budget_entry(e.budget), e) from e
        except EmulationError as e:
            raise InvokeFailed(str(e), self.running_entry(), e) from e
        finally:
            self._on_begin = None
        if result.return_value != 0:
            index = result.return_value - 1
            entry = self.plan.entries[index]
            status = self._marks[-1].status
            message = f"{entry.refusal} ({entry.symbol} returned {status})"
            raise InvokeFailed(message, index, KernelError(message))
        reader = AddressReader(mcu, self.resolve)
        for i in self._stateful:
            self.plan.entries[i].after(reader)
        last = self._marks[-1] if self._marks else None
        ended = last is not None and last.phase == ENDED and last.status != 0 and \
            self.plan.entries[last.index].ends_run
        return replace(self._attribute(result), ended_run=ended)

    def resolve_region(self, region: str, offset: int) -> int:
        return self.resolve(Reloc(region, offset))

    def _over_budget_entry(self, budget: int) -> Optional[int]:
        """The entry during which the invoke's instruction count passed `budget` (the engine
        checks the budget coarsely, by code bytes, so it may stop a little later)."""
        used = 0
        for mark in self._marks:
            used += self.mcu.price(mark.edges, None, 0, set())[0]
            if used > budget:
                return mark.index if mark.phase == ENDED else None
        return self.running_entry()

    def running_entry(self) -> Optional[int]:
        """The entry that was running when the call stopped (None: the runtime's own code)."""
        if self._marks and self._marks[-1].phase == BEGINS:
            return self._marks[-1].index
        return None

    def _observe(self, uc, address, size, user) -> None:
        hooks = self.mcu.hooks
        stats = hooks.stats()
        phase = uc.reg_read(UC_ARM_REG_R1)
        status = uc.reg_read(UC_ARM_REG_R2)
        previous = self._marks[-1] if self._marks else None
        changed = stats.unaligned_total != (previous.unaligned_total if previous else 0)
        mark = _Mark(uc.reg_read(UC_ARM_REG_R0), phase, status - (1 << 32) if status & 0x80000000 else status,
                     hooks.edges(), stats.flash_read_misses, stats.unaligned_total,
                     hooks.unaligned() if changed and phase == ENDED else None, uc.reg_read(UC_ARM_REG_SP))
        hooks.clear_edges()          # each mark holds the edges since the previous one
        if phase == BEGINS:
            if stats.unaligned_total != self._cleared_at:     # each entry's records start empty
                hooks.clear_unaligned()
                self._cleared_at = stats.unaligned_total
            uc.mem_write(self._paint_lo, self._paint[:mark.sp - self._paint_lo])
            if self._on_begin is not None:
                self._on_begin(mark.index)
        elif phase == ENDED and previous is not None:
            mark.stack_bytes = StackProbe.high_water(uc, self._paint_lo, previous.sp)
        self._marks.append(mark)

    # ------------------------------------------------------------------ attribution

    def _entry_cost(self, begin: _Mark, end: _Mark) -> tuple[EntryCost, int]:
        """The kernel's part of the window between two boundaries, as a call of its own counts
        it: entered from nowhere (the runtime's branch is the runtime's), its return charged;
        priced after the previous entry, the I-cache lines carrying on from it as from one
        call to the next (and the flash data cache as the runtime's reads of the plan left it,
        as on a board). With its cycles but instruction fetch."""
        edges: dict = {}
        last_block = None
        lo, hi = self._runtime
        for key, n in end.edges.items():
            p, ps, c, cs = key
            if lo <= c < hi:
                if p and not lo <= p < hi:
                    last_block = (p, ps)
                continue
            if lo <= p < hi:
                key = (0, 0, c, cs)
            edges[key] = edges.get(key, 0) + n
        insns, bd, _ = self.mcu.price(edges, last_block, end.flash_misses - begin.flash_misses)
        events = []
        if end.unaligned is not None:
            events = alignment.call_events(end.unaligned, self.mcu.read_code, self.mcu.symbol_at,
                                           strict=self.mcu.strict_alignment, armv6m=self.mcu.armv6m)
        return EntryCost(insns, bd.total, end.stack_bytes, events), bd.total - bd.fetch

    def _attribute(self, result) -> InvokeResult:
        marks = self._marks
        not_fetch = 0             # the entries' cycles but instruction fetch
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
            cost, rest = self._entry_cost(mark, end)
            trace.append((mark.index, cost))
            not_fetch += rest
            k += 2
        entries = [cost for _, cost in trace if cost is not None]
        # the whole call: every window's edges (the call's result counted the last one alone)
        edges = dict(self.mcu.last_edges)
        for mark in marks:
            for key, n in mark.edges.items():
                edges[key] = edges.get(key, 0) + n
        stats = self.mcu.hooks.stats()
        instructions, bd, _ = self.mcu.price(edges, stats.last_block, stats.flash_read_misses, set())
        # Instructions, core, branch and data-load cycles add up over the parts: the runtime's
        # are the whole call's less its entries'. Instruction fetch does not (a line one part
        # fetches another finds warm): the runtime's is that of its own code, whose lines stay
        # in the I-cache from one invoke to the next as a board's small hot loop does.
        lo, hi = self._runtime
        own = {key: n for key, n in edges.items() if lo <= key[2] < hi}
        fetch = self.mcu.price(own, None, 0, self._runtime_lines)[1].fetch
        frame = max((self.mcu.stack_top - m.sp for m in marks), default=0)
        runtime = RuntimeCost(instructions - sum(e.instructions for e in entries),
                              bd.total - bd.fetch - not_fetch + fetch, frame)
        cycles = runtime.cycles + sum(e.cycles for e in entries)
        stack = max([result.stack_bytes] + [frame + e.stack_bytes for e in entries])
        return InvokeResult(trace, runtime, instructions, cycles, stack, edges)

