"""A model's image on the virtual MCU: the firmware (the device runtime and the kernels) with the
model's plan written into it, a zero-copy tensor arena and a stack, on the machine every image
runs on (system/mcu.py Machine: the engine, the hooks, the cycle model and the running clock,
the exception unit and the System Control Space; `micro-rt emulate` runs a user's image on it
too).

`VirtualMCU` adds to that machine the parts of a model's image, each in its own module:
    memory_map.py       the image's layout and the host buffers behind it (flash, SRAM, arena,
                        stack, the plan's RAM)
    flash_constants.py  constants placed in flash once
    calling.py          the calling convention (registers, stacked arguments, ARGS area) and
                        the stack high-water mark
    cycles.py           instructions and cycles of a call from the native hook's block edges
    alignment.py, static_alignment.py   unaligned accesses found and classified
    faults.py           why a call did not return
`boot` starts the image from its reset vector, as every invoke does (whole_invoke.py); `call`
calls one kernel directly, for the kernels' unit tests (ops.run_op), never a model's run.
"""
from __future__ import annotations

import struct
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Union

import numpy as np
import unicorn
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_PC, UC_ARM_REG_R0, UC_ARM_REG_SP

from micro_rt.errors import EmulationError
from micro_rt.targets import get_target

from . import alignment, calling
from .calling import ArgsArea, StackProbe
from .cycles import CycleBreakdown
from .elf import ElfImage, load_elf
from .engine import CPU_MODELS, RECYCLE_EVERY
from .faults import INTR_BKPT, BudgetExceeded, CallFaults
from .flash_constants import FlashConstants
from .memory_map import (DEFAULT_FLASH, FLASH_BASE, FLASH_LIMIT, SRAM_BASE, MemoryMap, as_bytes,
                         page_aligned_buffer, round_up)
from .memory_system import FlashCounts, MemorySystem, default_memory_system
from .native import load_native
from .static_alignment import static_checks
from .system.mcu import HookOptions, Machine
from .system.memory_state import ConfiguredMemory

# The machine's public face: the memory map's and the engine's constants callers size things by,
# and the errors a call raises, next to the machine itself.
__all__ = ["CPU_MODELS", "FLASH_BASE", "FLASH_LIMIT", "RECYCLE_EVERY", "SRAM_BASE", "BudgetExceeded", "CallResult",
           "VirtualMCU", "page_aligned_buffer"]
HOST_TRAP_BKPT = bytes([0x03, 0xBE])     # bkpt #3: mrt_runtime.c mrt_host_op, the host trap
DONE_BKPT = bytes([0x04, 0xBE])          # bkpt #4: mrt_runtime.c mrt_start, the inference is done


@dataclass
class CallResult:
    return_value: int                    # r0 as signed int32
    instructions: int                    # exact executed instructions
    cycles: int                          # cycle model total (core + branches + memory system)
    stack_bytes: int                     # stack high-water mark of the call (bytes below SP at entry)
    alignment_events: list = field(default_factory=list)   # list[AlignmentEvent]
    breakdown: Optional[CycleBreakdown] = None             # core / branches / fetch / data_flash
    blocks: int = 0                      # executed translation blocks
    flash_data_reads: int = 0            # data loads from flash (with flash wait states)
    seconds: float = 0.0                 # cycles / clock_hz
    ended_run: bool = False              # a KernelCall.ends_run kernel returned kTfLiteAbort


@dataclass(frozen=True)
class BootWindow:
    """The measured call of a boot (VirtualMCU.boot): its CallResult, the block that branched
    into it (the start-up's, whose branch is the start-up's), its last block, what the flash
    interface counted over it, the stack pointer it was entered with, and what DWT->CYCCNT
    (the machine's running clock) advanced by from the call's first instruction to its return."""
    result: CallResult
    entry_prev: Optional[tuple[int, int]]
    last_block: Optional[tuple[int, int]]
    flash: FlashCounts
    entry_sp: int
    cyccnt_cycles: int = 0


def _firmware(core: str, elf_path: Union[str, Path, None]) -> ElfImage:
    if elf_path is None:
        elf_path = Path(__file__).parent / "firmware" / f"{core}.elf"
        if not Path(elf_path).exists():
            raise EmulationError(f"firmware {elf_path} not built (run `make firmware`)")
    return load_elf(elf_path)


class VirtualMCU(Machine):
    """The machine (system/mcu.py Machine) in the layout of a model's image: see
    memory_map.py for the map. Its host-facing side is here: the arena mapped zero-copy, the
    constants placed in flash, the image booted per invoke (`boot`) and, for the kernels' unit
    tests, one kernel function called directly (`call`).

    check_alignment: record unaligned LDRD/STRD/LDM/STM/PUSH/POP (and every unaligned access when
    strict_alignment) through a native memory hook; costs speed (see benchmarks/bench_emulator.py).
    On the M0+ (Unicorn's M0) every unaligned access faults and raises EmulationError anyway.
    Raises EmulationError when used after `close()`.
    """

    call_budget = 2_000_000_000      # instructions one call may run when the caller gives no budget

    def __init__(self, core: str, elf_path: Union[str, Path, None] = None, *, arena_bytes: int,
                 flash_wait_states: int = 0, clock_hz: int = 100_000_000,
                 strict_alignment: bool = False, arena_misalign: int = 0, stack_bytes: int = 8192,
                 check_alignment: bool = True, flash_bytes: int = DEFAULT_FLASH,
                 memory_system: Optional[MemorySystem] = None, native: bool = True,
                 model_flash_data: bool = True, weights_bytes: int = 0,
                 recycle_every: int = RECYCLE_EVERY, flash_port: bool = True):
        """flash_bytes: flash mapped at least; weights_bytes: room for constants after the
        firmware image (flash is sized to hold both, or EmulationError says by how much it cannot).
        recycle_every: replace the Unicorn engine after this many calls (0: never).
        flash_port: see data loads from flash through the native flash data port (native.py),
        else through a memory hook on every access (the slow reference; same counts)."""
        target = get_target(core)
        if target.cpu is None or target.name not in CPU_MODELS:
            raise EmulationError(f"target '{core}' is not an emulated Cortex-M core")
        self.core = target.name
        self.target = target
        self.elf: ElfImage = _firmware(self.core, elf_path)
        self.strict_alignment = bool(strict_alignment)
        self.arena_bytes = int(arena_bytes)
        self.memory_system = memory_system or default_memory_system(self.core, int(flash_wait_states))
        self.flash_wait_states = self.memory_system.wait_states
        self.armv6m = self.core == "cortex-m0plus"
        # Armv6-M faults on every unaligned access by itself: no hook needed for alignment there
        self.check_alignment = bool(check_alignment) and not self.armv6m
        self.memory = MemoryMap(self.elf, flash_bytes=flash_bytes, weights_bytes=weights_bytes,
                                arena_misalign=arena_misalign,
                                stack_bytes=round_up(max(int(stack_bytes), 256), 8))
        super().__init__(self.core, None, int(clock_hz), self.elf, self.memory, ConfiguredMemory(self.memory_system),
                         self._hook_options(model_flash_data, native, flash_port),
                         (FLASH_BASE, self.memory.flash_end), recycle_every)
        self.exceptions.vtor = FLASH_BASE
        self.map_arena(self.new_arena_buffer(self.arena_bytes))
        self._load_image()
        self.constants = FlashConstants(self.engine, self.memory.weights_base)
        self.args_area = self.new_args_area()
        self._stack = StackProbe(self.memory.stack_bytes)
        self._faults = CallFaults(self)
        self.last_edges: dict = {}

    def _hook_options(self, model_flash_data: bool, native: bool, flash_port: bool) -> HookOptions:
        """Alignment: strict mode (every LDR/STR) uses a native memory hook on every access (slow
        path, ~4-10x). Otherwise only LDRD/STRD/LDM/STM/LDREX* can fault; they are found
        statically and checked in the block hook (or a code hook on the instruction): near full
        speed. A flash wait-state model needs the data loads from flash: through the flash data
        port (native.py) when the native hook library is there, else (or with flash_port=False)
        through the memory hook."""
        # the SRAM's wait states are charged to the words loaded less those loaded from flash
        ms = self.memory_system
        self.model_flash_data = bool(model_flash_data) and (ms.wait_states > 0 or ms.sram_wait_states > 0)
        strict = self.check_alignment and self.strict_alignment
        port = (self.model_flash_data and not strict and bool(flash_port) and bool(native)
                and load_native() is not None)
        memory_hook = strict or (self.model_flash_data and not port)
        static = static_checks(self.elf) if self.check_alignment and not memory_hook else None
        self.alignment_mode = ("off" if not self.check_alignment else
                               "memory hook" if memory_hook else "static + block hook")
        return HookOptions(memory_hook=memory_hook, check_alignment=self.check_alignment and memory_hook,
                           static=static, flash_port=port, prefer_native=bool(native))

    def _load_image(self) -> None:
        """The ELF's segments at their run and load addresses (a kernel called directly runs
        without the start-up that copies .data), and the return trampoline."""
        for seg in self.elf.segments:
            for a in sorted({seg.vaddr, seg.paddr}):
                self.memory.check_segment(a)
                size = seg.memsz if a == seg.vaddr else len(seg.data)
                if seg.data:
                    self.uc.mem_write(a, bytes(seg.data))
                if size > len(seg.data):
                    self.uc.mem_write(a + len(seg.data), bytes(size - len(seg.data)))
        self.uc.mem_write(self.ret_addr, b"\x00\xbe\x00\xbe")          # BKPT #0 (stop address)

    # ------------------------------------------------------------------ what callers read of the parts
    @property
    def engines_started(self) -> int:
        return self.engine.engines_started

    @property
    def recycle_every(self) -> int:
        return self.engine.recycle_every

    @property
    def ret_addr(self) -> int:
        return self.memory.ret_addr

    @property
    def weights_base(self) -> int:
        return self.memory.weights_base

    @property
    def flash_size(self) -> int:
        return self.memory.flash_size

    def map_plan_ram(self, nbytes: int) -> int:
        """RAM apart from the arena for a whole-invoke plan (memory_map.PLAN_RAM_BASE); its address."""
        base = self.memory.map_plan_ram(self.uc, nbytes)
        self.engine.refresh_fault_hooks()
        return base

    @property
    def flash_port(self) -> bool:
        """True when data loads from flash go through the native flash data port."""
        return self.hook_options.flash_port

    @property
    def args_base(self) -> int:
        return self.memory.args_base

    @property
    def args_end(self) -> int:
        return self.memory.args_end

    @property
    def arena_map(self) -> int:
        return self.memory.arena_map

    @property
    def arena_base(self) -> int:
        return self.memory.arena_base

    @property
    def arena_misalign(self) -> int:
        return self.memory.arena_misalign

    @property
    def stack_bytes(self) -> int:
        return self.memory.stack_bytes

    @property
    def stack_top(self) -> int:
        return self.memory.stack_top

    # ------------------------------------------------------------------ memory
    def new_arena_buffer(self, nbytes: int) -> np.ndarray:
        """Page-aligned zeroed uint8 buffer for `map_arena`: length a multiple of 4 KiB, with
        `arena_misalign` bytes of slack at the front (arena offset 0 is buf[arena_misalign])."""
        return page_aligned_buffer(int(nbytes) + self.arena_misalign)

    def map_arena(self, buffer: np.ndarray) -> None:
        """Map a host buffer (page aligned, length multiple of 4 KiB) as the arena, zero-copy:
        the emulated kernels read and write the very bytes numpy sees. Keeps a reference."""
        self.memory.map_arena(self.uc, buffer)
        self.engine.refresh_fault_hooks()

    @property
    def arena(self) -> np.ndarray:
        """The mapped arena as numpy (offset 0 = arena_base)."""
        buffer = self.memory.arena_buffer
        assert buffer is not None                     # mapped when the machine is made
        return buffer[self.arena_misalign:]

    def place_constant(self, data, align: int = 16) -> int:
        """Copy constant data into the WEIGHTS flash area once; the same object (or the same
        bytes) placed again returns the same address. Flash grows as needed."""
        return self.constants.place(data, align)

    def new_args_area(self) -> ArgsArea:
        """An allocator of its own over the ARGS area, from its start: for laying out a call's
        argument structs before writing them (ops.context.CallContext)."""
        return ArgsArea(self.memory.args_base, self.memory.args_end)

    def args_reset(self) -> None:
        self.args_area.reset()

    def args_alloc(self, data, align: int = 4) -> int:
        """Copy an argument struct into the ARGS area; its address."""
        raw = as_bytes(data)
        addr = self.args_area.reserve(len(raw), align)
        if raw:
            self.uc.mem_write(addr, raw)
        return addr

    def write(self, addr: int, data) -> None:
        try:
            self.uc.mem_write(addr, as_bytes(data))
        except unicorn.UcError as exc:
            raise EmulationError(f"write of {len(data)} bytes at 0x{addr:08x}: {exc}") from None

    def read(self, addr: int, n: int) -> bytes:
        try:
            return bytes(self.uc.mem_read(addr, n))
        except unicorn.UcError as exc:
            raise EmulationError(f"read of {n} bytes at 0x{addr:08x}: {exc}") from None

    # ------------------------------------------------------------------ names
    def symbol(self, name: str) -> int:
        return self.elf.symbol(name)

    def symbol_at(self, pc: int) -> str:
        pc &= ~1
        if pc == self.ret_addr:
            return "return_trampoline"
        if self.constants.base <= pc < self.constants.end:
            return f"weights+0x{pc - self.constants.base:x}"
        return self.elf.symbol_at(pc)

    def region_of(self, addr: int) -> str:
        return self.memory.region_of(addr)

    # ------------------------------------------------------------------ calling
    def call(self, func: Union[str, int], *args: int, budget: Optional[int] = None,
             observer: Optional[tuple[int, int, Callable]] = None,
             host_trap: Optional[Callable[[int], int]] = None) -> CallResult:
        """Call the firmware function `func` (a symbol or an address) with 32-bit argument words;
        at most `budget` instructions (default `call_budget`). `observer`: (first, last address,
        callback(uc, address, size, user)) a block hook on that code range for this call only
        (the whole-invoke runtime's operator boundaries). `host_trap(r0) -> r0`: answers the
        runtime's host trap (BKPT #3 in mrt_host_op) while the call is stopped there; the call
        then goes on after the breakpoint, its counts running on."""
        uc = self.engine.begin_call()
        budget = self.call_budget if budget is None else budget
        if isinstance(func, str):
            name, entry = func, self.symbol(func)
        else:
            entry = int(func) & ~1
            name = self.symbol_at(entry)
        paint_lo = self._stack.paint(uc, self.stack_top)
        sp = calling.enter(uc, [int(a) & 0xFFFFFFFF for a in args], self.stack_top, self.ret_addr)
        self.reset_counts(budget)
        err = self._run(entry, self.ret_addr, observer, host_trap)
        stats = self.hooks.stats()
        pc = uc.reg_read(UC_ARM_REG_PC)
        self._check_returned(name, budget, err, stats.budget_hit, pc)
        return self._result(name, budget, stats, pc, paint_lo, sp)

    def boot(self, window: int, *, budget: Optional[int] = None,
             observer: Optional[tuple[int, int, Callable]] = None,
             host_trap: Optional[Callable[[int], int]] = None) -> "BootWindow":
        """Start the image at its entry point: the initial stack pointer and the reset handler
        from the vector table at FLASH_BASE, the other registers at their reset values, as a
        board comes out of reset. What is measured is the call of the function at `window` the
        start-up makes (mrt_invoke: what a DWT cycle counter around Invoke() reads), counted as
        `call` counts a call; the run then goes on to where the firmware says its work is done
        (BKPT #4, mrt_runtime.c mrt_start). `budget`, `observer` (for the window) and
        `host_trap` as `call`."""
        uc = self.engine.begin_call()
        budget = self.call_budget if budget is None else budget
        top, reset = struct.unpack("<II", self.read(FLASH_BASE, 8))
        if top != self.stack_top:
            raise EmulationError(f"the image's initial stack pointer 0x{top:08x} (vector table word 0) is not "
                                 f"the top of the machine's stack, 0x{self.stack_top:08x}: write it when "
                                 "the image is built")
        paint_lo = self._stack.paint(uc, self.stack_top)
        uc.reg_write(UC_ARM_REG_SP, top)
        uc.reg_write(UC_ARM_REG_LR, 0xFFFF_FFFF)            # its reset value
        self.reset_counts(budget)
        start, name = self.symbol_at(reset), self.symbol_at(window)
        self._run_part(reset & ~1, window, None, host_trap, budget, f"{start}, up to {name}")
        entered = self.hooks.stats()
        entered_at = self.clock.now()
        self.clear_edges()                                # from here the window's edges
        back, sp = uc.reg_read(UC_ARM_REG_LR) & ~1, uc.reg_read(UC_ARM_REG_SP)
        err = self._run(window, back, observer, host_trap)
        stats = self.hooks.stats()
        pc = uc.reg_read(UC_ARM_REG_PC)
        self._check_returned(name, budget, err, stats.budget_hit, pc, back)
        flash = stats.flash - entered.flash
        result = self._result(name, budget, stats, pc, paint_lo, sp, flash)
        returned_at = self.clock.now()
        self.clear_edges(self.last_edges)
        self._run_part(back, None, None, host_trap, budget, f"{start}, after {name}")
        return BootWindow(result, entered.last_block, stats.last_block, flash, sp, returned_at - entered_at)

    def _run_part(self, entry: int, stop: Optional[int], observer, host_trap, budget: int, what: str) -> None:
        """A part of a boot outside its window: it must reach `stop`, or with None the end of
        the firmware's work (BKPT #4)."""
        err = self._run(entry, stop if stop is not None else self.ret_addr, observer, host_trap)
        pc = self.uc.reg_read(UC_ARM_REG_PC)
        interrupt = self.engine.interrupt
        if stop is None and err is None and interrupt is not None and interrupt[0] == INTR_BKPT and \
                self.read_code(interrupt[1], 2) == DONE_BKPT:
            self.engine.interrupt = None
            return
        self._check_returned(what, budget, err, self.hooks.stats().budget_hit, pc,
                             stop if stop is not None else -1)

    def _run(self, entry: int, stop: int, observer: Optional[tuple[int, int, Callable]],
             host_trap: Optional[Callable[[int], int]]) -> Optional[unicorn.UcError]:
        """Run from `entry` until the pc reaches `stop`, answering host traps; the engine's error.
        A stop inside code that ran before (a boot's window) needs its translation dropped:
        QEMU checks the stop address only in blocks translated while it is the one set."""
        uc = self.uc
        if stop != self.ret_addr:
            uc.ctl_remove_cache(stop, stop + 2)
        with (self.hooks.observing(*observer) if observer is not None else nullcontext()):
            err = self.engine.run(entry, stop)
            while host_trap is not None and err is None and (trap_pc := self._host_trap_pc()) is not None:
                self.engine.interrupt = None
                uc.reg_write(UC_ARM_REG_R0, host_trap(uc.reg_read(UC_ARM_REG_R0)) & 0xFFFFFFFF)
                err = self.engine.run(trap_pc + 2, stop)
        return err

    def check_code_of(self, functions: set[str]) -> None:
        """Keep the alignment checks that need a code hook (static_alignment's by_pc) only in
        these functions: the code a run can reach (its callers say which). Unicorn walks every
        code hook at every hooked instruction, so the firmware's 200-odd hooks made a hot loop's
        one hooked VLDM cost more than the loop (float32 models emulated at about 9 M
        instructions/s). The checks at block starts stay for all code."""
        if self.hook_options.static is None:
            return
        hooks = self.hooks
        pcs = {pc for pc in self.hook_options.static.keys(1)
               if (f := self.elf.function_at(pc)) is not None and f.name in functions}
        if pcs == hooks.code_hook_pcs:
            return
        hooks.set_code_hook_pcs(pcs)
        self.uc.ctl_flush_tb()  # type: ignore[attr-defined]   # Unicorn 2.1's, not in its stubs: no translation made with the old hooks

    def _host_trap_pc(self) -> Optional[int]:
        """The pc of the runtime's host trap when the engine stopped there, else None."""
        interrupt = self.engine.interrupt
        if interrupt is not None and interrupt[0] == INTR_BKPT and self.read_code(interrupt[1], 2) == HOST_TRAP_BKPT:
            return interrupt[1]
        return None

    def _check_returned(self, name: str, budget: int, err: Optional[unicorn.UcError], budget_hit: bool,
                        pc: int, stop: Optional[int] = None) -> None:
        """Raise the error of a call that stopped anywhere but at `stop` (default: the return
        trampoline)."""
        stop = self.ret_addr if stop is None else stop
        if err is not None:
            raise self._faults.engine_error(name, err, pc, self.engine.fault)
        if budget_hit:
            raise self._faults.budget(name, budget, budget + 1, pc)
        if self.engine.interrupt is not None:
            raise self._faults.exception(name, *self.engine.interrupt)
        if pc != stop:
            raise EmulationError(f"{name}: stopped at pc 0x{pc:08x} <{self.symbol_at(pc)}> "
                                 f"instead of returning")

    def _result(self, name: str, budget: int, stats, pc: int, paint_lo: int, sp: int,
                flash: Optional[FlashCounts] = None) -> CallResult:
        """Counts, cycles, stack and alignment events of a call that returned (`flash`: what the
        flash interface counted over it, default all since the hooks' reset)."""
        edges = self.hooks.edges()
        self.last_edges = edges
        insns, bd, blocks = self.model.count(edges, stats.last_block, stats.flash if flash is None else flash,
                                               self.hooks)
        if insns > budget:
            raise self._faults.budget(name, budget, insns, pc)
        stack_used = self._stack.high_water(self.uc, paint_lo, sp)
        events = self._alignment_events() if stats.unaligned_total else []
        cycles = bd.total
        return CallResult(calling.result(self.uc), insns, cycles, stack_used, events, bd, blocks,
                          stats.flash_reads, cycles / self.clock_hz)

    def price(self, edges: dict, last_block: Optional[tuple[int, int]],
              flash: FlashCounts = FlashCounts()) -> tuple[int, CycleBreakdown, int]:
        """(instructions, cycles, blocks) of part of a call from its block edges and what the
        flash interface counted over that part (a difference of two `hooks.stats().flash`), as
        `call` counts them."""
        return self.model.count(edges, last_block, flash, self.hooks, part=True)

    def _alignment_events(self) -> list[alignment.AlignmentEvent]:
        return alignment.call_events(self.hooks.unaligned(), self.read_code, self.symbol_at,
                                     strict=self.strict_alignment, armv6m=self.armv6m)
