"""Running an interpreter's operators on the virtual MCU.

The interpreter's arena is mapped into emulated SRAM zero-copy, at the offsets its planner
chose; constant tensors go to emulated flash. Every operator with a C kernel runs there (the
others fall back to their numpy twins) and leaves an `OpRecord`: instructions, cycles, stack,
and any unaligned access named by tensor, PC, symbol and instruction.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import unicorn

from micro_rt.analysis import op_macs
from micro_rt.errors import EmulationError
from micro_rt.profile import AlignmentReport, OpRecord

from . import ops
from .engine import RECYCLE_EVERY
from .faults import BudgetExceeded
from .machine import VirtualMCU
from .memory_map import SRAM_BASE
from .memory_system import MemorySystem


@dataclass(frozen=True)
class WorkRates:
    """Instructions a kernel is expected to need at most, per multiply-accumulate and per
    element it reads or writes (pooling windows count each window element)."""
    per_mac: int
    per_element: int


# Worst cases measured over the bundled and shared models' operators on each core, rounded up
# by about half: depthwise convolutions with few channels (per MAC), LOGISTIC / TANH / SOFTMAX
# (per element; float32 on the M0+ is soft-float, hundreds of instructions per operation).
EXPECTED_RATES = {
    ("cortex-m0plus", "int"): WorkRates(per_mac=64, per_element=1_000),
    ("cortex-m0plus", "float"): WorkRates(per_mac=400, per_element=3_000),
    ("dsp", "int"): WorkRates(per_mac=16, per_element=300),
    ("dsp", "float"): WorkRates(per_mac=48, per_element=250),
}
CALL_OVERHEAD = 50_000      # instructions any kernel call may spend on its setup
BUDGET_MARGIN = 4           # an operator may run this many times its expected instructions

_WINDOW_OPS = ("AVERAGE_POOL_2D", "MAX_POOL_2D")


@dataclass(frozen=True)
class OpBudget:
    budget: int             # instructions the operator may run before it is stopped
    expected: int           # instructions it is expected to need at most
    macs: int
    elements: int
    fixed: bool = False     # set by the caller (McuExecutor's `budget`), not from the work


class McuExecutor:
    """Binds one interpreter to one VirtualMCU.

    Each operator may run `BUDGET_MARGIN` times the instructions its work is expected to need
    (`op_budget`), and a whole invoke at most `invoke_budget` instructions (default: the sum of
    its operators' budgets). `budget` fixes every operator's budget instead (tests)."""

    def __init__(self, interpreter: Any, *, clock_hz: int = 100_000_000, flash_wait_states: int = 0,
                 strict_alignment: bool = False, arena_misalign: int = 0, budget: Optional[int] = None,
                 memory_system: Optional[MemorySystem] = None, invoke_budget: Optional[int] = None, recycle_every: int = RECYCLE_EVERY,
                 flash_port: bool = True):
        self.it = interpreter
        self.budget = budget
        head = max(interpreter.plan.head_bytes, 16)
        self.mcu = None
        try:
            self.mcu = VirtualMCU(interpreter.target.name, arena_bytes=head, clock_hz=clock_hz,
                                  flash_wait_states=flash_wait_states, strict_alignment=strict_alignment,
                                  arena_misalign=arena_misalign, flash_bytes=0,
                                  memory_system=memory_system,
                                  weights_bytes=self._constant_bytes(),
                                  recycle_every=recycle_every, flash_port=flash_port)
            buffer = self.mcu.new_arena_buffer(head)
            self.mcu.map_arena(buffer)
            interpreter.rebind_arena(self.mcu.arena)
            self._scratch = self._scratch_offsets()
            self._constants = self._place_constants()
        except unicorn.UcError as e:
            self.close()
            raise EmulationError(f"the virtual MCU could not be set up for this model: {e}") from e
        except BaseException:
            self.close()
            raise
        self.emulation_seconds = 0.0
        self.functions_used: dict[str, int] = {}     # kernel code executed so far: name -> bytes
        self._blocks_noted: set[int] = set()          # block starts already looked up for it
        self._op_budgets = {node.index: self.op_budget(node) for node in interpreter.nodes}
        self.invoke_budget = (invoke_budget if invoke_budget is not None else
                              sum(b.budget for b in self._op_budgets.values()))
        self._invoke_used = 0

    def close(self) -> None:
        if self.mcu is not None:
            self.mcu.close()

    def _constant_bytes(self) -> int:
        """Flash the model's constants take (each buffer once, 16-byte aligned)."""
        sizes = {t.info.buffer: t.nbytes for t in self.it.tensors if t.is_constant and t.nbytes}
        return sum(-(-n // 16) * 16 for n in sizes.values())

    # ------------------------------------------------------------------ instruction budgets
    def op_budget(self, node: Any) -> OpBudget:
        """The operator's budget from its work: MACs and elements touched, at the core's rates."""
        tensors = [self.it.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0]
        elements = sum(math.prod(t.shape) for t in tensors)
        if node.op_name in _WINDOW_OPS and node.outputs:
            out = self.it.tensors[node.outputs[0]]
            window = max(1, int(node.options.get("filter_width", 1) or 1)) * \
                max(1, int(node.options.get("filter_height", 1) or 1))
            elements += math.prod(out.shape) * window
        macs = op_macs(self.it.model.main, self.it.model.main.operators[node.index])
        first = tensors[0] if tensors else None
        arithmetic = "float" if first is not None and first.type_name == "FLOAT32" else "int"
        core = "cortex-m0plus" if self.mcu.armv6m else "dsp"
        rates = EXPECTED_RATES[(core, arithmetic)]
        expected = CALL_OVERHEAD + rates.per_mac * macs + rates.per_element * elements
        if self.budget is not None:
            return OpBudget(self.budget, expected, macs, elements, fixed=True)
        return OpBudget(BUDGET_MARGIN * expected, expected, macs, elements)

    def start_invoke(self) -> None:
        """A new invoke starts: its instruction count starts from zero."""
        self._invoke_used = 0

    def _budget_error(self, node: Any, e: BudgetExceeded, limit: OpBudget, capped: bool) -> EmulationError:
        where = f"stopped at pc 0x{e.pc:08x} <{e.symbol}>"
        if not e.in_code:
            return EmulationError(f"operator {node.index} {node.op_name}: {e}")
        if capped:
            return EmulationError(
                f"the invoke exceeded its instruction budget of {self.invoke_budget:,}: operators "
                f"before {node.index} ran {self._invoke_used:,} instructions, and operator "
                f"{node.index} {node.op_name} did not finish within the {e.budget:,} left ({where})")
        work = f"{limit.macs:,} MACs" if limit.macs else f"{limit.elements:,} tensor elements"
        why = (f"set by the caller; {work} are expected to need at most {limit.expected:,}"
               if limit.fixed else f"expected at most {limit.expected:,} for {work}")
        return EmulationError(
            f"operator {node.index} {node.op_name} exceeded its instruction budget of {e.budget:,} "
            f"({why}): the kernel did not finish ({where})")

    def _scratch_offsets(self) -> dict[int, int]:
        """The node's last scratch buffer: the kernel library's own request comes last."""
        found: dict[int, int] = {}
        for b in self.it.plan.buffers:
            if b.kind == "scratch":
                found[b.tensor] = b.offset
        return found

    def _place_constants(self) -> list[tuple[int, int, str]]:
        placed = []
        for t in self.it.tensors:
            if t.is_constant and t.nbytes:
                addr = self.mcu.place_constant(np.ascontiguousarray(t.data))
                placed.append((addr, addr + t.nbytes, f"constant tensor {t.index} '{t.name}'"))
        return placed

    def supports(self, node: Any) -> bool:
        """A C kernel exists for this op and type, and every non-constant tensor it touches has
        an arena place (a malformed model may leave one unplanned: the host kernel reports it)."""
        first = self.it.tensors[node.inputs[0]] if node.inputs and node.inputs[0] >= 0 else None
        if first is None or first.dtype is None or not ops.supported(node.op_name, first.dtype):
            return False
        touched = [self.it.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0]
        return all(t.is_constant or t.offset is not None for t in touched)

    def run(self, node: Any) -> Optional[OpRecord]:
        """Run one node on the MCU; None when it has no C kernel (the caller runs the twin)."""
        if not self.supports(node):
            return None
        tensors = {i: self.it.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0}
        offsets = {i: t.offset for i, t in tensors.items() if t.offset is not None}
        limit = self._op_budgets[node.index]
        left = max(0, self.invoke_budget - self._invoke_used)
        budget = min(limit.budget, left)
        start = time.perf_counter()
        try:
            result = ops.run_op(self.mcu, node, tensors, offsets, self._scratch.get(node.index),
                                budget=budget)
        except ops.UnsupportedOnMcu:
            return None
        except BudgetExceeded as e:
            raise self._budget_error(node, e, limit, capped=budget < limit.budget) from e
        except EmulationError as e:
            raise EmulationError(f"op {node.index} {node.op_name}: {e}") from e
        finally:
            self.emulation_seconds += time.perf_counter() - start
        self._invoke_used += result.instructions
        self._note_code(self.mcu.last_edges)
        record = OpRecord(node.index, node.op_name, True, result.instructions, result.cycles,
                          op_macs(self.it.model.main, self.it.model.main.operators[node.index]),
                          result.stack_bytes)
        record.alignment = [self._name_event(node, e) for e in result.alignment_events]
        return record

    def _note_code(self, edges) -> None:
        for edge in edges:
            start = edge[2]
            if start in self._blocks_noted:      # each block's function is looked up once
                continue
            self._blocks_noted.add(start)
            function = self.mcu.elf.function_at(start)
            if function is not None:
                self.functions_used[function.name] = function.size

    def code_bytes(self) -> int:
        """Flash taken by the kernel functions this model executed (a linker keeping only
        what is called would keep these; lookup tables in .rodata are not included)."""
        return sum(self.functions_used.values())

    def static_ram_bytes(self) -> int:
        return self.mcu.elf.static_ram_bytes(SRAM_BASE)

    def _name_event(self, node: Any, event: Any) -> AlignmentReport:
        return AlignmentReport(node.index, node.op_name, self.owner_of(event.address, node.index + 1),
                               event.pc, event.symbol, event.disassembly, event.address, event.kind,
                               event.count, event.fatal)

    def owner_of(self, address: int, step: int) -> str:
        """Which tensor (or scratch, constant, stack) the byte at `address` belongs to at `step`."""
        offset = address - self.mcu.arena_base
        if 0 <= offset < self.it.plan.head_bytes:
            for b in self.it.plan.buffers:
                if b.offset <= offset < b.offset + b.size and b.first_use <= step <= b.last_use:
                    return f"{b.kind} {b.tensor} '{b.name}'+{offset - b.offset}"
            return f"arena offset {offset} (no live buffer)"
        for lo, hi, name in self._constants:
            if lo <= address < hi:
                return f"{name}+{address - lo}"
        return f"{self.mcu.region_of(address)} 0x{address:08x}"
