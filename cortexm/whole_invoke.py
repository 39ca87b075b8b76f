"""A whole inference as one run of the device runtime (cortexm/src/mrt_runtime.c), which
walks the model's firmware plan (firmware_plan.py) as a board's Invoke() would, calling its
kernels (IF and WHILE: jumping on their conditions, making their copies; the runtime reports
where each starts and ends, so records keep their subgraph costs; CALL_ONCE: a byte of the
state region says whether its init subgraph has run, mirrored from and to the host kernel's
flag around each invoke; resource variables: copies to and from their buffers in the arena).
An operator without a C kernel call is a host entry: the runtime's trap (mrt_host_op, BKPT #3)
stops the call, the operator's host kernel runs on the arena, and the call goes on.

The plan is written once per machine, which makes the firmware an image of the model: each
constant where the machine's flash already holds it (or after it), the entry table after the
constants, the structs kernels write (the state region) then the argument structs in RAM of
their own (memory_map.PLAN_RAM_BASE; RAM as TFLM's structs are, apart from the arena); the
plan's address goes into the firmware's mrt_boot_plan and the stack's top into the vector
table, as a linker would resolve them. Each invoke starts the image at its entry point, as a
board comes out of reset: the reset vector, mrt_start, runs mrt_invoke on the plan and stops at
its BKPT #4. What is measured is mrt_invoke's call, what a DWT cycle counter around Invoke()
reads on a board (VirtualMCU.boot), split into operators and the runtime's own part by
op_windows.
"""
from __future__ import annotations

import struct
from dataclasses import replace
from typing import Any, Callable, Optional

from micro_rt.errors import EmulationError, KernelError

from .faults import BudgetExceeded
from .firmware_plan import AddressReader, FirmwarePlan, PlanEntry, PlanError, Reloc, refresh_blocks
from .firmware_plan_binary import binary_image, resolver
from .image import reference_graph
from .memory_map import FLASH_BASE, round_up
from .op_windows import (BOUNDARY_SYMBOL, ENDED, INVOKE_SYMBOL, RUNTIME_FUNCTIONS, START_SYMBOL, EntryCost,
                         InvokeResult, OperatorWindows, RuntimeCost)

__all__ = ["InvokeFailed", "WholeInvoke", "EntryCost", "InvokeResult", "RuntimeCost", "RUNTIME_FUNCTIONS",
           "BOUNDARY_SYMBOL", "INVOKE_SYMBOL"]


BOOT_PLAN_SYMBOL = "mrt_boot_plan"     # the plan mrt_start runs (mrt_runtime.c)


class InvokeFailed(EmulationError):
    """The invoke stopped inside the plan: `entry` is the entry running (None: the runtime's
    own code, between entries)."""

    def __init__(self, message: str, entry: Optional[int], cause: Exception):
        super().__init__(message)
        self.entry, self.cause = entry, cause


class WholeInvoke:
    """One model's plan written into one machine, invoked as one firmware call. `host_op(entry)`
    runs a host entry's operator (PlanEntry.on_host) on the host while the call waits in the
    runtime's host trap, and returns its status (nonzero: kTfLiteAbort)."""

    def __init__(self, mcu: Any, plan: FirmwarePlan, host_op: Optional[Callable[[PlanEntry], int]] = None):
        self.mcu, self.plan = mcu, plan
        if host_op is None and any(e.on_host for e in plan.entries):
            first = next(e for e in plan.entries if e.on_host)
            raise PlanError(f"op {first.node_index} {first.op_name} runs on the host ({first.host_reason}), "
                            "and nothing here runs host operators")
        self._host_op = host_op
        try:
            boot_plan, self._invoke = mcu.symbol(BOOT_PLAN_SYMBOL), mcu.symbol(INVOKE_SYMBOL)
            if mcu.elf.symbols[START_SYMBOL].addr != struct.unpack("<I", mcu.read(FLASH_BASE + 4, 4))[0] & ~1:
                raise EmulationError(f"its reset vector is not {START_SYMBOL}")
            self.windows = OperatorWindows.of_firmware(mcu)
        except (EmulationError, KeyError) as e:
            raise PlanError(f"the firmware has no usable device runtime ({e}): rebuild it (make firmware)") from None
        for item in plan.constants:                    # before the plan's own place in flash
            mcu.place_constant(item.data, item.align)
        flash_base = round_up(mcu.constants.end, 16)
        # The argument structs go to RAM after the state region, as TFLM's are in RAM (its
        # kernels build their CMSIS-NN structs on the stack from OpData in the arena): a kernel
        # reading its parameters pays no flash wait states. Apart from the arena, which lies
        # where the interpreter's plan put it.
        structs_at = round_up(len(plan.state_blob), 16)
        state_base = mcu.map_plan_ram(structs_at + len(plan.plan_blob))
        self.resolve = resolver(plan, mcu.arena_base, state_base + structs_at, state_base, mcu.place_constant)
        image = binary_image(plan, self.resolve, mcu.symbol, flash_base, state_base, state_base + structs_at)
        placed = mcu.place_constant(image.flash, 16)
        if placed != flash_base:
            raise PlanError(f"the plan could not be placed at 0x{flash_base:08x} (flash gave 0x{placed:08x})")
        self.image = image
        self.plan_bytes = len(image.flash)
        graph = reference_graph(mcu.elf.path)       # what the plan can reach: its kernels, the runtime
        roots = [s for s in {e.symbol for e in plan.entries if e.symbol} | {START_SYMBOL, *RUNTIME_FUNCTIONS}
                 if s in graph.by_name]
        mcu.check_code_of(graph.closure(roots).names("code"))
        mcu.write(boot_plan, struct.pack("<I", image.plan_address))     # the image's links
        mcu.write(FLASH_BASE, struct.pack("<I", mcu.stack_top))
        self._stateful = [i for i, e in enumerate(plan.entries) if e.after is not None]

    # ------------------------------------------------------------------ running
    def invoke(self, budget: Optional[int] = None, on_begin: Optional[Callable[[int], None]] = None) -> InvokeResult:
        """Run the plan once (one emulator entry); `on_begin(entry index)` is called as each
        entry begins. InvokeFailed when a kernel refuses, faults or the budget runs out."""
        mcu = self.mcu
        mcu.write(self.image.state_base, self.image.state)
        for region, offset, data in refresh_blocks(self.plan, self._stateful, self.resolve):
            mcu.write(self.resolve_region(region, offset), data)
        for offset, flag in self.plan.flags:       # the bytes the runtime keeps, as the host has them
            mcu.write(self.resolve_region("state", offset), bytes([flag.get() & 0xFF]))
        windows = self.windows
        windows.start(on_begin)
        try:
            run = mcu.boot(self._invoke, budget=budget, observer=windows.observer, host_trap=self._host_trap)
        except BudgetExceeded as e:
            raise InvokeFailed(str(e), windows.over_budget_entry(e.budget), e) from e
        except EmulationError as e:
            raise InvokeFailed(str(e), windows.running_entry(), e) from e
        finally:
            windows.stop()
        if run.result.return_value != 0:
            index = run.result.return_value - 1
            entry = self.plan.entries[index]
            status = windows.marks[-1].status
            message = f"{entry.refusal} ({entry.symbol} returned {status})"
            raise InvokeFailed(message, index, KernelError(message))
        reader = AddressReader(mcu, self.resolve)
        for i in self._stateful:
            after = self.plan.entries[i].after
            if after is not None:
                after(reader)
        for offset, flag in self.plan.flags:
            flag.put(mcu.read(self.resolve_region("state", offset), 1)[0])
        last = windows.marks[-1] if windows.marks else None
        ended = last is not None and last.phase == ENDED and last.status != 0 and \
            self.plan.entries[last.index].ends_run
        cost = windows.attribute(mcu.last_edges, run.last_block, run.flash, run.result.stack_bytes, run.entry_sp,
                                 entry_prev=run.entry_prev)
        return replace(cost, ended_run=ended, cyccnt_cycles=run.cyccnt_cycles)

    def _host_trap(self, index: int) -> int:
        """The runtime's host trap for entry `index` (its argument word)."""
        if not 0 <= index < len(self.plan.entries) or not self.plan.entries[index].on_host:
            raise EmulationError(f"the runtime trapped to the host for entry {index}, which is not a host entry")
        if self._host_op is None:       # refused at construction when the plan has a host entry
            raise EmulationError(f"the runtime trapped to the host for entry {index}, and nothing here runs host operators")
        return self._host_op(self.plan.entries[index])

    def resolve_region(self, region: str, offset: int) -> int:
        return self.resolve(Reloc(region, offset))

