"""Running an interpreter's operators on the virtual MCU.

The interpreter's arena is mapped into emulated SRAM zero-copy, at the offsets its planner
chose; constant tensors go to emulated flash. Every operator with a C kernel runs there (the
others fall back to their numpy twins) and leaves an `OpRecord`: instructions, cycles, stack,
and any unaligned access named by tensor, PC, symbol and instruction.
"""
from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from micro_rt.analysis import op_macs
from micro_rt.errors import EmulationError
from micro_rt.profile import AlignmentReport, OpRecord

from . import ops
from .machine import VirtualMCU


class McuExecutor:
    """Binds one interpreter to one VirtualMCU."""

    def __init__(self, interpreter: Any, *, clock_hz: int = 100_000_000, flash_wait_states: int = 0,
                 strict_alignment: bool = False, arena_misalign: int = 0, budget: int = 2_000_000_000):
        self.it = interpreter
        self.budget = budget
        head = max(interpreter.plan.head_bytes, 16)
        self.mcu = VirtualMCU(interpreter.target.name, arena_bytes=head, clock_hz=clock_hz,
                              flash_wait_states=flash_wait_states, strict_alignment=strict_alignment,
                              arena_misalign=arena_misalign)
        buffer = self.mcu.new_arena_buffer(head)
        self.mcu.map_arena(buffer)
        interpreter.rebind_arena(self.mcu.arena)
        self._scratch = self._scratch_offsets()
        self._constants = self._place_constants()
        self.emulation_seconds = 0.0
        self.functions_used: dict[str, int] = {}     # kernel code executed so far: name -> bytes

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
        if first is None or first.dtype is None or node.op_name not in ops._RUNNERS:
            return False
        if not ops.supported(node.op_name, first.dtype):
            return False
        touched = [self.it.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0]
        return all(t.is_constant or t.offset is not None for t in touched)

    def run(self, node: Any) -> Optional[OpRecord]:
        """Run one node on the MCU; None when it has no C kernel (the caller runs the twin)."""
        if not self.supports(node):
            return None
        tensors = {i: self.it.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0}
        offsets = {i: t.offset for i, t in tensors.items() if t.offset is not None}
        start = time.perf_counter()
        try:
            result = ops.run_op(self.mcu, node, tensors, offsets, self._scratch.get(node.index),
                                budget=self.budget)
        except ops.UnsupportedOnMcu:
            return None
        except EmulationError as e:
            raise EmulationError(f"op {node.index} {node.op_name}: {e}") from e
        finally:
            self.emulation_seconds += time.perf_counter() - start
        self._note_code(self.mcu.last_edges)
        record = OpRecord(node.index, node.op_name, True, result.instructions, result.cycles,
                          op_macs(self.it.model.main, self.it.model.main.operators[node.index]),
                          result.stack_bytes)
        record.alignment = [self._name_event(node, e) for e in result.alignment_events]
        return record

    def _note_code(self, edges) -> None:
        for edge in edges:
            function = self.mcu.elf.function_at(edge[2])
            if function is not None:
                self.functions_used[function.name] = function.size

    def code_bytes(self) -> int:
        """Flash taken by the kernel functions this model executed (a linker keeping only
        what is called would keep these; lookup tables in .rodata are not included)."""
        return sum(self.functions_used.values())

    def static_ram_bytes(self) -> int:
        return self.mcu.elf.static_ram_bytes(0x2000_0000)

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
