"""Run a whole program on the virtual MCU: an ELF from its entry point to completion (the
emulator build of a `micro-rt export` project).

The program's reset handler is entered as a call that returns to the machine's trampoline
(its start-up copies .data, clears .bss and calls main; built with MRT_EMULATOR it returns
when main does). The runtime's `mrt_invoke` is timed as `profile` times it: the run stops where
main calls it and where it returns, and in between the runtime's operator boundaries split the
call into its operators' windows and its own part, priced in turn as the whole-invoke mode
prices them (op_windows: entered from nowhere, its return charged, each operator finding the
caches as the one before left them). Before main goes on, the count is written to
the program's `g_mrt_emulator_cycles`, so the program prints what the emulator measured (on a
board it prints what its cycle counter read). The program prints to its console buffer
(`g_mrt_console`, `g_mrt_console_len`), which is read back after the run.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_PC, UC_ARM_REG_SP

from micro_rt.errors import EmulationError

from . import calling
from .calling import STACK_PAINT, StackProbe
from .machine import VirtualMCU
from .memory_system import MemorySystem
from .op_windows import BOUNDARY_SYMBOL, OperatorWindows

INVOKE = "mrt_invoke"
CYCLES_WORD = "g_mrt_emulator_cycles"
CONSOLE, CONSOLE_LEN = "g_mrt_console", "g_mrt_console_len"


@dataclass
class ProgramRun:
    console: str                   # what the program printed
    console_full: bool             # the console buffer filled up: the rest was not kept
    instructions: int              # the whole program, start-up to return
    invoke_instructions: int       # mrt_invoke's call, counted as `profile` counts it
    invoke_cycles: int
    invoke_stack_bytes: int        # bytes below the stack pointer mrt_invoke was entered with


def _add(total: dict, edges: dict) -> None:
    for key, n in edges.items():
        total[key] = total.get(key, 0) + n


def run_program(path: str | Path, core: str, *, memory_system: Optional[MemorySystem] = None,
                clock_hz: int = 100_000_000, budget: int = 2_000_000_000,
                stack_bytes: int = 16384) -> ProgramRun:
    """Run the ELF at `path` from its entry point to completion on a virtual `core`."""
    mcu = VirtualMCU(core, elf_path=path, arena_bytes=4096, memory_system=memory_system,
                     clock_hz=clock_hz, stack_bytes=stack_bytes)
    try:
        elf = mcu.elf
        for name in (INVOKE, BOUNDARY_SYMBOL, CYCLES_WORD, CONSOLE, CONSOLE_LEN):
            if name not in elf.symbols:
                raise EmulationError(f"{Path(path).name} has no symbol '{name}': not the emulator "
                                     "build of a micro-rt export project (make emulator)")
        invoke = elf.symbols[INVOKE].addr
        uc = mcu.engine.begin_call()
        probe = StackProbe(mcu.stack_bytes)
        paint_lo = probe.paint(uc, mcu.stack_top)
        calling.enter(uc, [], mcu.stack_top, mcu.ret_addr)
        mcu.hooks.reset(budget, 0)

        def run(start: int, stop: int, what: str) -> None:
            err = mcu.engine.run(start, stop)
            pc = uc.reg_read(UC_ARM_REG_PC)
            if err is not None or mcu.hooks.stats().budget_hit or mcu.engine.interrupt is not None \
                    or pc != stop:
                why = (f"{err}" if err is not None else
                       f"ran out of its {budget:,} instructions" if mcu.hooks.stats().budget_hit else
                       f"exception {mcu.engine.interrupt[0]}" if mcu.engine.interrupt is not None else
                       "stopped early")
                raise EmulationError(f"{Path(path).name}: {what}: {why} at pc 0x{pc:08x} "
                                     f"<{mcu.symbol_at(pc)}>")

        windows = OperatorWindows.of_firmware(mcu)
        run(elf.entry, invoke, "the program, up to mrt_invoke")
        total, entered = mcu.hooks.edges(), mcu.hooks.stats()
        mcu.hooks.clear_edges()              # from here the call's windows hold what runs
        back = uc.reg_read(UC_ARM_REG_LR) & ~1
        sp = uc.reg_read(UC_ARM_REG_SP)
        uc.mem_write(paint_lo, bytes([STACK_PAINT]) * (sp - paint_lo))     # what main used before
        windows.start()
        try:
            with mcu.hooks.observing(*windows.observer):
                run(invoke, back, "mrt_invoke")
        finally:
            windows.stop()
        left = mcu.hooks.stats()
        stack = probe.high_water(uc, paint_lo, sp)
        cost = windows.attribute(mcu.hooks.edges(), left.last_block, left.flash - entered.flash,
                                 stack, sp, entry_prev=entered.last_block)
        _add(total, cost.edges)               # the call's edges, every window's
        mcu.write(elf.symbols[CYCLES_WORD].addr, cost.cycles.to_bytes(4, "little"))
        mcu.hooks.clear_edges()
        run(back, mcu.ret_addr, "the program, after mrt_invoke")
        _add(total, mcu.hooks.edges())
        n = int.from_bytes(mcu.read(elf.symbols[CONSOLE_LEN].addr, 4), "little")
        size = elf.symbols[CONSOLE].size
        console = mcu.read(elf.symbols[CONSOLE].addr, min(n, size)).decode("ascii", "replace")
        everything, _, _ = mcu.price(total, mcu.hooks.stats().last_block)
        # the windows repaint the stack as each entry begins: the deepest is the attribution's
        return ProgramRun(console, n >= size, everything, cost.instructions, cost.cycles, cost.stack_bytes)
    finally:
        mcu.close()
