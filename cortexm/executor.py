"""Running an interpreter's model on the virtual MCU, with the C kernels of the flavour its
arena was planned for (`interpreter.kernels`: cmsis-nn or reference, see ops.REFERENCE_KERNELS).

The interpreter's arena is mapped into emulated SRAM zero-copy, at the offsets its planner
chose; constant tensors go to emulated flash. Every invoke is one call of the firmware's device
runtime walking the model's plan (whole_invoke.py): the operators of every subgraph, IF / WHILE
unrolled, CALL_ONCE and the resource variables' copies. An operator the plan has no C kernel
call for (a custom operator registered in Python, a node whose call cannot be planned ahead)
is a host entry: the runtime traps, the operator's host kernel runs on the arena, and its
record says it ran on the host and is not counted. Each operator leaves an `OpRecord`:
instructions, cycles, stack, and any unaligned access named by tensor, PC, symbol and
instruction.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
import unicorn

from micro_rt.analysis import op_macs
from micro_rt.errors import EmulationError, KernelError
from micro_rt.op_records import AlignmentReport, OpRecord, RunRecords
from micro_rt.subgraphs import model_lifetimes

from . import ops
from .engine import RECYCLE_EVERY
from .faults import BudgetExceeded
from .firmware_plan import CALL, ENTER, NOTE, FirmwarePlan, PlanEntry, PlanError, build_plan, plan_nodes, scratch_offsets
from .machine import VirtualMCU
from .memory_map import SRAM_BASE
from .memory_system import MemorySystem
from .whole_invoke import RUNTIME_FUNCTIONS, InvokeFailed, RuntimeCost, WholeInvoke


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
_PAIRWISE_OP = "TFLite_Detection_PostProcess"


@dataclass(frozen=True)
class OpBudget:
    budget: int             # instructions the operator may run before it is stopped
    expected: int           # instructions it is expected to need at most
    macs: int
    elements: int
    fixed: bool = False     # set by the caller (McuExecutor's `budget`), not from the work


class McuExecutor:
    """Binds one interpreter to one VirtualMCU and runs its invokes as the firmware's runtime
    walking the model's plan.

    A whole invoke may run at most `invoke_budget` instructions (default: the sum of what each
    operator may run, `BUDGET_MARGIN` times the instructions its work is expected to need,
    `op_budget`; no limit for a model with several subgraphs, whose loops run operators any
    number of times: WHILE stops a loop that never ends). `budget` fixes every operator's
    share instead (tests)."""

    def __init__(self, interpreter: Any, *, clock_hz: int = 100_000_000, flash_wait_states: int = 0,
                 strict_alignment: bool = False, arena_misalign: int = 0, budget: Optional[int] = None,
                 memory_system: Optional[MemorySystem] = None, invoke_budget: Optional[int] = None, recycle_every: int = RECYCLE_EVERY,
                 flash_port: bool = True):
        self.it = interpreter
        self.kernels = interpreter.kernels      # the flavour the arena was planned for
        self._whole: Optional[WholeInvoke] = None
        self.last_runtime: Optional[RuntimeCost] = None        # the runtime's part of the last invoke
        self.last_cyccnt_cycles = 0     # what DWT->CYCCNT advanced by over the last invoke's mrt_invoke
        self.budget = budget
        head = interpreter.memory_bytes
        variables = [t for t in interpreter.tensors if t.is_variable and not t.is_constant and t.offset is None]
        after_variables = head + sum(-(-t.nbytes // 16) * 16 for t in variables)
        persistent = self._persistent_requests()
        arena_bytes = after_variables + sum(-(-n // 16) * 16 for sizes in persistent.values() for n in sizes)
        self.mcu: Optional[VirtualMCU] = None          # None once closed
        try:
            self.mcu = mcu = VirtualMCU(interpreter.target.name, arena_bytes=arena_bytes, clock_hz=clock_hz,
                                  flash_wait_states=flash_wait_states, strict_alignment=strict_alignment,
                                  arena_misalign=arena_misalign, flash_bytes=0,
                                  memory_system=memory_system,
                                  weights_bytes=self._constant_bytes(),
                                  recycle_every=recycle_every, flash_port=flash_port)
            buffer = mcu.new_arena_buffer(arena_bytes)
            mcu.map_arena(buffer)
            interpreter.rebind_arena(mcu.arena)
            self._map_variables(variables, head)
            self._persistent = self._persistent_offsets(persistent, after_variables)
            self._scratch = scratch_offsets(interpreter)
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
        budgets = [self.op_budget(node) for sub in interpreter.subgraphs for node in sub.nodes]
        several = len(interpreter.subgraphs) > 1
        self.invoke_budget = (invoke_budget if invoke_budget is not None else None if several else
                              sum(b.budget for b in budgets))
        self._invoke_budget_set = invoke_budget is not None      # by the caller
        self._steps = model_lifetimes(interpreter.model).node_scopes

    # ------------------------------------------------------------------ the plan
    @property
    def machine(self) -> VirtualMCU:
        """The virtual MCU (EmulationError once the executor is closed)."""
        if self.mcu is None:
            raise EmulationError("the virtual MCU was closed: create a new interpreter")
        return self.mcu

    def _planned(self) -> WholeInvoke:
        """The model's plan, written into the machine at the first invoke."""
        if self._whole is None:
            try:
                plan = build_plan(plan_nodes(self.it, self._scratch, self._persistent), self.machine.core,
                                  self.machine.arena_misalign, self.machine.arena_bytes)
                self._whole = WholeInvoke(self.machine, plan, self._run_on_host)
            except PlanError as e:
                raise EmulationError(f"the model cannot run on the virtual MCU: {e}") from None
        return self._whole

    def _run_on_host(self, entry: PlanEntry) -> int:
        """A host entry's operator, run by its host kernel on the arena while the runtime waits."""
        return self.it.run_on_host(self.it.subgraphs[entry.subgraph].nodes[entry.node_index])

    @property
    def persistent_offsets(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """Arena offsets of each node's persistent buffers (by subgraph and node), after the
        variable tensors."""
        return dict(self._persistent)

    @property
    def firmware_plan(self) -> FirmwarePlan:
        """The model's firmware plan (firmware_plan.FirmwarePlan), written into the machine."""
        return self._planned().plan

    @property
    def plan_image(self):
        """The plan as written into the machine (firmware_plan_binary.PlanImage)."""
        return self._planned().image

    def host_entries(self) -> list[PlanEntry]:
        """The plan's entries that run on the host (not counted), one per operator."""
        seen, out = set(), []
        for e in self.firmware_plan.entries:
            if e.on_host and (e.subgraph, e.node_index) not in seen:
                seen.add((e.subgraph, e.node_index))
                out.append(e)
        return out

    def invoke(self, progress: Optional[Callable[[int, int], None]] = None) -> list[OpRecord]:
        """One invoke as one firmware call: a record per operator (a loop's operators once, their
        runs summed; IF / WHILE with their subgraphs' costs; a host entry's operator as run on
        the host), the runtime's own part in `last_runtime`."""
        whole = self._planned()
        plan = whole.plan
        budget = self.invoke_budget if self.invoke_budget is not None else self.machine.call_budget
        total = len(self.it.nodes)
        on_begin = None if progress is None else (
            lambda i: progress(plan.entries[i].node_index, total) if plan.entries[i].subgraph == 0 else None)
        start = time.perf_counter()
        try:
            result = whole.invoke(budget, on_begin)
        except InvokeFailed as e:
            raise self._whole_error(e, budget) from e.cause
        finally:
            self.emulation_seconds += time.perf_counter() - start
        self._note_code(result.edges)
        for name in RUNTIME_FUNCTIONS:      # code_bytes counts kernels
            self.functions_used.pop(name, None)
        self.last_runtime = result.runtime
        self.last_cyccnt_cycles = result.cyccnt_cycles
        records = self._records_of(result.trace)
        if result.ended_run:               # the ending operator says so
            records[-1].ended_run = True
        return records

    def _records_of(self, trace: list) -> list[OpRecord]:
        """The trace of an invoke replayed through RunRecords: one record per operator run."""
        plan = self._planned().plan
        records, control, current = RunRecords(), [], None
        first: dict = {}
        for k, e in enumerate(plan.entries):
            if e.opcode == CALL:
                first.setdefault((e.subgraph, e.node_index), k)

        def finish() -> None:
            nonlocal current
            if current is not None:
                records.finish(current.subgraph, current)
                current = None

        for index, cost in trace:
            entry = plan.entries[index]
            node = self.it.subgraphs[entry.subgraph].nodes[entry.node_index]
            if cost is None:                                    # a control-flow operator starts / ends
                finish()
                if entry.opcode == NOTE:                        # an operator without work ran
                    records.start(node.subgraph, node.index)
                    records.finish(node.subgraph, OpRecord(node.index, node.op_name, True, subgraph=node.subgraph))
                elif entry.opcode == ENTER:
                    records.start(node.subgraph, node.index)
                    control.append(OpRecord(node.index, node.op_name, True, subgraph=node.subgraph))
                else:
                    records.finish(node.subgraph, control.pop())
                continue
            if entry.on_host:                                   # its host kernel ran: nothing counted
                finish()
                records.start(node.subgraph, node.index)
                records.finish(node.subgraph, OpRecord(node.index, node.op_name, False, subgraph=node.subgraph,
                                                       host_reason=entry.host_reason))
                continue
            if control and (control[-1].subgraph, control[-1].index) == (node.subgraph, node.index):
                finish()                                        # the control-flow operator's copies
                record = control[-1]
            else:
                if current is None or (current.subgraph, current.index) != (node.subgraph, node.index) or \
                        first[(node.subgraph, node.index)] == index:
                    finish()
                    records.start(node.subgraph, node.index)
                    current = OpRecord(node.index, node.op_name, True, macs=self._macs(node), subgraph=node.subgraph)
                record = current
            record.instructions += cost.instructions
            record.cycles += cost.cycles
            record.stack_bytes = max(record.stack_bytes, cost.stack_bytes)
            record.alignment += [self._name_event(node, ev) for ev in cost.alignment_events]
        finish()
        return records.finished()

    def _whole_error(self, e: InvokeFailed, budget: int) -> Exception:
        expected = ""
        if e.entry is None:
            where = "in the runtime, between operators"
        else:
            entry = self._planned().plan.entries[e.entry]
            where = f"operator {entry.node_index} {entry.op_name}"
            limit = self.op_budget(self.it.subgraphs[entry.subgraph].nodes[entry.node_index])
            work = f"{limit.macs:,} MACs" if limit.macs else f"{limit.elements:,} tensor elements"
            expected = f"; it was expected to need at most {limit.expected:,} instructions for {work}"
        if isinstance(e.cause, BudgetExceeded):
            what = ("a model with loops has the machine's limit" if self.invoke_budget is None else
                    "set by the caller" if self._invoke_budget_set else
                    f"the sum of its operators' budgets, {self.budget:,} each as the caller set" if self.budget
                    is not None else "the sum of its operators' budgets")
            return EmulationError(f"the invoke exceeded its instruction budget of {budget:,} ({what}): "
                                  f"{where} was running when it ran out (the emulator stopped at pc "
                                  f"0x{e.cause.pc:08x} <{e.cause.symbol}>){expected}")
        if isinstance(e.cause, KernelError):
            return KernelError(f"op {where.removeprefix('operator ')}: {e.cause}")
        return EmulationError(f"{where}: {e.cause}")

    def close(self) -> None:
        if self.mcu is not None:
            self.mcu.close()

    def _all_tensors(self) -> list:
        return [t for sub in self.it.subgraphs for t in sub.tensors]

    def _constant_bytes(self) -> int:
        """Flash the model's constants take (each buffer once, 16-byte aligned)."""
        sizes = {t.info.buffer: t.nbytes for t in self._all_tensors() if t.is_constant and t.nbytes}
        return sum(-(-n // 16) * 16 for n in sizes.values())

    def _tensors(self, node: Any) -> list:
        """The tensors of the node's subgraph."""
        return self.it.subgraphs[node.subgraph].tensors

    def _macs(self, node: Any) -> int:
        sg = self.it.model.subgraphs[node.subgraph]
        return op_macs(sg, sg.operators[node.index])

    # ------------------------------------------------------------------ instruction budgets
    def op_budget(self, node: Any) -> OpBudget:
        """The operator's budget from its work: MACs and elements touched, at the core's rates."""
        all_tensors = self._tensors(node)
        tensors = [all_tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0]
        elements = sum(math.prod(t.shape) for t in tensors)
        if node.op_name in _WINDOW_OPS and node.outputs:
            out = all_tensors[node.outputs[0]]
            window = max(1, int(node.options.get("filter_width", 1) or 1)) * \
                max(1, int(node.options.get("filter_height", 1) or 1))
            elements += math.prod(out.shape) * window
        if node.op_name == _PAIRWISE_OP and len(node.inputs) > 1 and node.inputs[1] >= 0:
            boxes, columns = all_tensors[node.inputs[1]].shape[-2:]      # class predictions [1, n, classes]
            elements += boxes * boxes * columns       # NMS: box pairs, per class on the regular path
        macs = self._macs(node)
        first = tensors[0] if tensors else None
        return self._work_budget(macs, elements, first is not None and first.type_name == "FLOAT32")

    def _work_budget(self, macs: int, elements: int, floating: bool) -> OpBudget:
        core = "cortex-m0plus" if self.machine.armv6m else "dsp"
        rates = EXPECTED_RATES[(core, "float" if floating else "int")]
        expected = CALL_OVERHEAD + rates.per_mac * macs + rates.per_element * elements
        if self.budget is not None:
            return OpBudget(self.budget, expected, macs, elements, fixed=True)
        return OpBudget(BUDGET_MARGIN * expected, expected, macs, elements)

    def _map_variables(self, variables: list, start: int) -> None:
        """Variable tensors (state that carries over between invokes, in TFLM's tail) move
        into MCU memory after the head, so kernels that update them run on the MCU; their
        values come along and the host tensors become views of the same bytes."""
        offset = start
        for t in variables:
            region = self.machine.arena[offset:offset + t.nbytes]
            region[...] = np.ascontiguousarray(t.data).view(np.uint8).reshape(-1)
            t.bind(region.view(t.dtype).reshape(t.shape) if t.dtype is not None else region)
            t.offset = offset
            offset += -(-t.nbytes // 16) * 16

    def _persistent_requests(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """The persistent buffers (TFLM's, in its tail) each node's C kernel writes at invoke."""
        found = {}
        for sub in self.it.subgraphs:
            for node in sub.nodes:
                index = ops.data_input_index(node)
                typed = index >= 0 and sub.tensors[index].dtype is not None
                sizes = ops.persistent_requests(node, sub.tensors, self.kernels) if typed else ()
                if sizes:
                    found[(node.subgraph, node.index)] = sizes
        return found

    @staticmethod
    def _persistent_offsets(requests: dict, start: int) -> dict[tuple[int, int], tuple[int, ...]]:
        """MCU memory for the persistent buffers, after the variable tensors (16-byte steps)."""
        placed, offset = {}, start
        for key, sizes in requests.items():
            offsets = []
            for n in sizes:
                offsets.append(offset)
                offset += -(-n // 16) * 16
            placed[key] = tuple(offsets)
        return placed

    def _place_constants(self) -> list[tuple[int, int, str]]:
        placed = []
        for t in self._all_tensors():
            if t.is_constant and t.nbytes:
                addr = self.machine.place_constant(np.ascontiguousarray(t.data))
                placed.append((addr, addr + t.nbytes, f"constant tensor {t.index} '{t.name}'"))
        return placed

    def _note_code(self, edges) -> None:
        for edge in edges:
            start = edge[2]
            if start in self._blocks_noted:      # each block's function is looked up once
                continue
            self._blocks_noted.add(start)
            function = self.machine.elf.function_at(start)
            if function is not None:
                self.functions_used[function.name] = function.size

    def code_bytes(self) -> int:
        """Flash taken by the kernel functions this model executed (a linker keeping only
        what is called would keep these; lookup tables in .rodata are not included; nor is the
        device runtime of whole invokes, the same in every mode)."""
        return sum(self.functions_used.values())

    def static_ram_bytes(self) -> int:
        return self.machine.elf.static_ram_bytes(SRAM_BASE)

    def _name_event(self, node: Any, event: Any) -> AlignmentReport:
        step = self._steps[node.subgraph][node.index][0]
        return AlignmentReport(node.index, node.op_name, self.owner_of(event.address, step),
                               event.pc, event.symbol, event.disassembly, event.address, event.kind,
                               event.count, event.fatal)

    def owner_of(self, address: int, step: int) -> str:
        """Which tensor (or scratch, constant, stack) the byte at `address` belongs to at `step`."""
        offset = address - self.machine.arena_base
        if 0 <= offset < self.it.plan.head_bytes:
            for b in self.it.plan.buffers:
                if b.offset <= offset < b.offset + b.size and b.first_use <= step <= b.last_use:
                    return f"{b.kind} {b.tensor} '{b.name}'+{offset - b.offset}"
            return f"arena offset {offset} (no live buffer)"
        for lo, hi, name in self._constants:
            if lo <= address < hi:
                return f"{name}+{address - lo}"
        return f"{self.machine.region_of(address)} 0x{address:08x}"
