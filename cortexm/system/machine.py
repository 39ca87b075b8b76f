"""The machine of a firmware run: the image checked and loaded into the board's (or a generic)
memory map, the engine with its hooks, the System Control Space, the peripherals, semihosting
and the heap watch, all in their reset state. run.py runs it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_PC

from micro_rt.errors import FirmwareError
from micro_rt.targets import cores_running, get_target

from ..boards import Board
from ..cycles import CycleModel
from ..elf import Symbol
from ..engine import CPU_MODELS
from ..native import HookSet
from ..op_windows import INVOKE_SYMBOL
from ..static_alignment import static_checks
from ..thumb_decode import is_32bit_halfword
from .address_map import AddressMap, board_map, generic_map
from .call_watch import CallWatch, ReturnHooks
from .clock import RunningCycles
from .data_symbols import DataSymbols
from .exceptions import ExceptionUnit
from .firmware import FirmwareFile, read_firmware
from .heap import HeapWatch
from .memory_state import MemoryState, configured_wait_states, l1_geometry
from .peripherals import FlashState, MmioPolicy, Peripherals
from .reset_vectors import peek_initial_sp, reset_state
from .rp2040_xip import Rp2040Xip, watch_image_entry
from .scs import SystemControlSpace
from .semihosting import Semihost
from .tflm_app import TflmWatch, is_tflm_application

DEFAULT_MAX_CYCLES = 1_000_000_000
DEFAULT_CLOCK_HZ = 100_000_000


@dataclass
class EmulateRequest:
    path: Path
    board: Optional[Board] = None
    target: Optional[str] = None            # a core, when no board is given
    clock_hz: Optional[int] = None
    flash_wait_states: Optional[int] = None
    max_cycles: int = DEFAULT_MAX_CYCLES
    inputs: dict = field(default_factory=dict)       # symbol -> bytes
    outputs: tuple = ()                               # symbols read at the end
    timed: tuple = ()                                 # functions whose every call is timed
    mmio: MmioPolicy = MmioPolicy.STOP


def choose_core(req: EmulateRequest, architecture: Optional[str]) -> tuple[str, str]:
    """The core to run on and where that came from: the board's, the one given, or the one the
    ELF's build attributes were built for (the Cortex-M4 when they name none an emulated core
    runs, or both the M4 and the M7)."""
    if req.board is not None:
        return req.board.core, f"board {req.board.name}"
    if req.target:
        return req.target, "given"
    cores = cores_running(architecture) if architecture else []
    if not cores:
        why = ("name no architecture" if architecture is None else
               f"are for {architecture}, which no emulated core runs")
        return "cortex-m4", f"assumed: the ELF's build attributes {why}"
    own = [c for c in cores if get_target(c).architectures[0] == architecture]
    if len(own) > 1:
        return own[0], (f"the ELF's build attributes say {architecture}, which the "
                        + " and ".join(own[1:]) + " also runs: --target picks one")
    return cores[0], f"the ELF's build attributes say {architecture}"


def architecture_notes(core: str, architecture: Optional[str]) -> list[str]:
    """A note when the core does not run the architecture the ELF was built for."""
    if architecture is None or architecture in get_target(core).architectures:
        return []
    return [f"the ELF was built for {architecture}, which the {core} does not run: an instruction it "
            "lacks ends the run as an undefined instruction"]


class FirmwareMachine:
    """Everything one run needs, built from a request, at reset."""

    def __init__(self, req: EmulateRequest):
        self.req = req
        self.fw: FirmwareFile = read_firmware(req.path)
        img = self.fw.image
        self.name = self.fw.name
        self.board = req.board
        self.core, self.core_source = choose_core(req, img.architecture)
        if self.core not in CPU_MODELS:
            raise FirmwareError(f"target '{self.core}' is not an emulated Cortex-M core "
                                f"({', '.join(CPU_MODELS)})")
        self.core_notes = architecture_notes(self.core, img.architecture)
        if req.board is not None:
            self.clock_hz = req.clock_hz or req.board.clock.default_hz
            self.clock_source = "given" if req.clock_hz else f"board {req.board.name}'s default"
            self.amap: AddressMap = board_map(req.board)
        else:
            self.clock_hz = req.clock_hz or DEFAULT_CLOCK_HZ
            self.clock_source = "given" if req.clock_hz else "no board: 100 MHz assumed"
            self.amap = generic_map(img.segments, peek_initial_sp(img), self.name)
        self.amap.check_segments(img.segments, self.name)
        start = reset_state(self.fw, self.amap, self.board)
        self.vector_table, self.initial_sp, self.reset = start.vector_table, start.initial_sp, start.reset
        self.boot_notes, self.boot_stage = start.boot_notes, start.boot_stage
        self._build()

    # ------------------------------------------------------------------ the machine
    def _build(self) -> None:
        req, img = self.req, self.fw.image
        uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
        uc.ctl_set_cpu_model(CPU_MODELS[self.core])
        self.uc = uc
        self.amap.map_into(uc)
        self.symbols = DataSymbols(self.fw, self.name)
        self.symbols.place_inputs(req.inputs)
        self.amap.load(img.segments)
        self.wait_states = configured_wait_states(self.board, self.clock_hz, req.flash_wait_states)
        self.peripherals = Peripherals(self.board, req.mmio, self._flash_changed)
        reset_flash = (self.peripherals.flash.state("reset") if self.peripherals.flash is not None
                       else FlashState(None, source="configured: the board file names no flash-control "
                                       "register" if self.board is not None else "configured: no board"))
        self.memory = MemoryState(self.board, self.core, self.clock_hz, self.wait_states, reset_flash)
        self.memory_at_reset = self.memory.describe()
        self.memory_changes: list[tuple[int, str]] = []
        ms = self.memory.memory_system()
        code = self.amap.code_region
        self.hooks = HookSet(uc, memory_hook=False, check_alignment=False, flash_lo=code.base,
                             flash_hi=code.end, memory_system=ms, static_checks=static_checks(img),
                             flash_port=True)
        self.hooks.add_flash_segments([s for s in self.amap.flash_host_segments() if s[0] == code.base])
        self.hooks.keep_edge_stalls()                   # the per-function profile's memory stalls
        self.model = CycleModel(self.core, img.sha256, ms, self._read_code)
        self.exceptions = ExceptionUnit(self.core, self._read, self._write, has_fpu=self.core != "cortex-m0plus")
        self.exceptions.vtor = self.vector_table
        self.clock = RunningCycles(self.hooks, self.model, ms, lambda: self.exceptions.latency_cycles)
        d_geo, i_geo = l1_geometry(self.board, self.core, self.clock_hz, self.wait_states)
        self.scs = SystemControlSpace(self.core, self.exceptions, self.clock.now, self._caches_changed,
                                      self.hooks.stop_at_next_block, self._stop_after_write, d_geo, i_geo)
        self.scs.map_into(uc)
        self.peripherals.map_into(uc)
        self.xip: Optional[Rp2040Xip] = None
        self.boot_failure: Optional[str] = None       # why the image cannot run once entered
        self.on_image_entry: list = []                 # called when a boot stage enters the image
        if self.board is not None and self.board.boot is not None and self.board.boot.xip is not None:
            self.xip = Rp2040Xip(self.boot_notes)
            self.xip.map_into(uc)
            watch_image_entry(uc, code.base, code.end, self._image_entered)
        self.semihost = Semihost(self.clock.now, self.clock_hz, self.name, heap_info=self._heap_info())
        self.heap = HeapWatch(img)
        self.heap.install(uc)
        self.symbols.write_at_main(uc)
        self.returns = ReturnHooks(uc)
        self.tflm: Optional[TflmWatch] = None
        if is_tflm_application(img):
            self.tflm = TflmWatch(img, uc, self._read_code, self.clock.now, lambda: self.clock.instructions,
                                  self._last_block, self._stack_floor, self.returns)
            self.scs.on_cyccnt = self.tflm.on_cyccnt
        self.timed = [CallWatch(uc, self._function(name), self._read_code, self.clock.now,
                                lambda: self.clock.instructions, self._last_block, self._stack_floor,
                                self.returns.on)
                      for name in self._timed_functions()]
        self.stop_reason: Optional[tuple] = None        # (access, address, size, pc) of a memory fault
        self.stopped_in_write = False
        self.interrupt: Optional[tuple] = None
        uc.hook_add(UC.UC_HOOK_MEM_UNMAPPED | UC.UC_HOOK_MEM_PROT, self._on_invalid)
        uc.hook_add(UC.UC_HOOK_INTR, self._on_intr)

    def _image_entered(self, pc: int) -> None:
        """The boot stage's jump into the XIP window: its reads must return the flash by now."""
        assert self.xip is not None and self.board is not None and self.board.boot is not None
        problem = self.xip.ssi.xip_problem()
        where = f"pc 0x{pc:08x} <{self.fw.image.symbol_at(pc)}>"
        if problem is not None:
            self.boot_failure = (f"the boot stage 2 entered the image at {where}, but XIP reads would not "
                                 f"return the flash's contents: {problem}")
            self.uc.emu_stop()
            return
        read, board_reads = self.xip.ssi.xip_read(), self.board.boot.xip
        assert board_reads is not None          # self.xip is made only for a board with boot.xip
        self.boot_notes.append(
            f"the boot stage 2 left the SSI making {read.describe()}; " +
            ("the board file's flash figures are for these (boot.xip)" if read.same_as(board_reads) else
             f"the board file's flash figures are for {board_reads.describe()} (boot.xip), and price "
             "this run's flash all the same"))
        if self.xip.unmodelled_commands():
            self.boot_notes.append("flash commands micro_rt does not model, answered with 0xff: "
                                   + ", ".join(self.xip.unmodelled_commands()))
        for call in self.on_image_entry:
            call()

    def start_registers(self) -> tuple[int, int, Optional[int]]:
        """(pc, sp, lr) the run starts with: the image's reset handler on its initial stack (lr
        as at reset: None), or the boot stage the boot ROM runs first, copied into RAM now."""
        stage = self.boot_stage
        if stage is None:
            return self.reset, self.initial_sp, None
        self.uc.mem_write(stage.load_address, stage.code)
        return stage.load_address, stage.sp, stage.lr

    def _timed_functions(self) -> list[str]:
        """--time's functions, and micro_rt's runtime entry in an image that has one (an
        exported project: what `profile` counts)."""
        names = list(dict.fromkeys(self.req.timed))
        sym = self.fw.image.symbols.get(INVOKE_SYMBOL)
        if sym is not None and sym.is_func and sym.size and INVOKE_SYMBOL not in names:
            names.append(INVOKE_SYMBOL)
        return names

    def _function(self, name: str) -> Symbol:
        sym = self.fw.image.symbols.get(name)
        if sym is None:
            raise FirmwareError(f"{self.name}: no symbol '{name}' for --time")
        if not sym.is_func:
            raise FirmwareError(f"{self.name}: symbol '{name}' for --time is a data object, not a function")
        return sym

    def _last_block(self) -> Optional[tuple[int, int]]:
        return self.hooks.stats().last_block

    def _stack_floor(self) -> int:
        """The lowest address the stack may reach now: above static data and the heap."""
        return max(self._heap_info()[0], self.heap.stats.break_top or 0)

    def _stop_after_write(self) -> None:
        """End the engine's run right after the instruction whose MMIO write is being handled.
        Unicorn stops with the pc at that instruction, its write done; the run loop goes on
        after it (`resume_after_write`), so it is not executed twice."""
        self.stopped_in_write = True
        self.uc.emu_stop()

    def resume_after_write(self, pc: int) -> int:
        """The pc after the writing instruction at `pc`, with the block it ended counted only up
        to there."""
        self.stopped_in_write = False
        first = int.from_bytes(self._read_code(pc, 2) or b"\0\0", "little")
        after = pc + (4 if is_32bit_halfword(first) else 2)
        last = self.hooks.stats().last_block
        if last is not None and last[0] < after < last[0] + last[1]:
            self.hooks.truncate_last_block(after - last[0])
        return after

    def is_stack_reservation(self, seg) -> bool:
        """A segment with no file bytes that ends at the initial stack pointer: the stack a
        linker script reserves (a NOLOAD .stack section), not static data."""
        return not seg.data and seg.vaddr + seg.memsz == self.initial_sp

    def _heap_info(self) -> tuple[int, int, int, int]:
        """SYS_HEAPINFO's answer: the heap from the end of the image's data in the initial stack
        pointer's region up to that stack pointer, the stack from it down to the heap's base."""
        region = self.amap.region_holding(self.initial_sp - 4)
        base = region.base
        for s in self.fw.image.segments:
            if region.base <= s.vaddr < self.initial_sp and not self.is_stack_reservation(s):
                base = max(base, s.vaddr + s.memsz)
        base = (base + 7) & ~7
        return base, self.initial_sp, self.initial_sp, base

    def _read(self, addr: int, n: int) -> bytes:
        return bytes(self.uc.mem_read(addr, n))

    def _write(self, addr: int, data: bytes) -> None:
        self.uc.mem_write(addr, data)

    def _read_code(self, addr: int, n: int) -> bytes:
        try:
            return bytes(self.uc.mem_read(addr, n))
        except unicorn.UcError:
            return b""

    def _flash_changed(self, state: FlashState) -> None:
        self.memory.flash = state
        self._memory_changed()

    def _caches_changed(self, icache: bool, dcache: bool) -> None:
        self.memory.l1_icache, self.memory.l1_dcache = icache, dcache
        self._memory_changed()

    def _memory_changed(self) -> None:
        ms = self.memory.memory_system()
        self.hooks.set_memory_system(ms)
        self.clock.reprice(ms)
        self.model.memory_system = ms
        self.memory_changes.append((self.clock.now(), self.memory.describe()))

    # ------------------------------------------------------------------ engine callbacks
    def _on_invalid(self, uc, access, address, size, value, _user) -> bool:
        if access in (UC.UC_MEM_READ_UNMAPPED, UC.UC_MEM_WRITE_UNMAPPED) and \
                self.peripherals.ignore_page(uc, address):
            return True
        self.stop_reason = (access, address, size, uc.reg_read(UC_ARM_REG_PC))
        return False

    def _on_intr(self, uc, intno, _user) -> None:
        self.interrupt = (intno, uc.reg_read(UC_ARM_REG_PC))
        uc.emu_stop()
