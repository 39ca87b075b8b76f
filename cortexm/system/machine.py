"""The machine of a firmware run: the image checked and loaded into the board's (or a generic)
memory map, the engine with its hooks, the System Control Space, the peripherals, semihosting
and the heap watch, all in their reset state. run.py runs it."""
from __future__ import annotations

import struct
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
from .boot_rom import BootStage, boot_start
from .call_watch import CallWatch, ReturnHooks
from .clock import RunningCycles
from .exceptions import ExceptionUnit
from .firmware import FirmwareFile, read_firmware
from .heap import HeapWatch
from .memory_state import MemoryState, configured_wait_states
from .peripherals import FlashState, MmioPolicy, Peripherals
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
            self.amap = generic_map(img.segments, self._peek_sp(img), self.name)
        self.amap.check_segments(img.segments, self.name)
        self.vector_table = self._vector_table_address()
        self._build()

    # ------------------------------------------------------------------ reset state
    def _peek_sp(self, img) -> Optional[int]:
        loads = sorted((s.paddr, s) for s in img.segments if s.data and s.paddr < 0x2000_0000)
        if not loads or len(loads[0][1].data) < 8:
            return None
        return struct.unpack_from("<I", loads[0][1].data, 0)[0]

    def _image_bytes(self, addr: int, n: int) -> Optional[bytes]:
        for s in self.fw.image.segments:
            if s.paddr <= addr and addr + n <= s.paddr + len(s.data):
                return bytes(s.data[addr - s.paddr:addr - s.paddr + n])
        return None

    def _vector_table_address(self) -> int:
        code = self.amap.code_region
        self.boot_notes: list[str] = []
        self.boot_stage: Optional[BootStage] = None
        if self.board is not None and self.board.boot is not None:
            start = boot_start(self.board, self.amap, self._image_bytes, self.name)
            self.boot_notes = list(start.notes)
            self.boot_stage = start.stage
            return start.vector_table
        if self._image_bytes(code.base, 8) is not None:
            return code.base
        starts = sorted(s.paddr for s in self.fw.image.segments if s.data and code.base <= s.paddr < code.end)
        if self.amap.generic and starts:
            return starts[0]
        lowest = f"; the image's lowest segment in it starts at 0x{starts[0]:08x}" if starts else ""
        raise FirmwareError(f"{self.name}: no vector table at the boot address 0x{code.base:08x} "
                            f"(the start of {code.name}, {self.amap.source}){lowest}: is the image "
                            "linked for this board?")

    def _reset_vectors(self) -> tuple[int, int]:
        raw = self._image_bytes(self.vector_table, 8)
        if raw is None:
            raise FirmwareError(f"{self.name}: no vector table at 0x{self.vector_table:08x}: the image "
                                "holds fewer than 8 bytes there (initial stack pointer, reset vector)")
        sp, reset = struct.unpack("<II", raw)
        ram = self.amap.region_of(sp - 4) if sp >= 4 else None
        if ram is None or not ram.kind.writable:
            raise FirmwareError(f"{self.name}: the initial stack pointer 0x{sp:08x} (vector table "
                                f"word 0 at 0x{self.vector_table:08x}) is in no RAM region of the "
                                f"{self.amap.source}")
        if sp & 3:
            raise FirmwareError(f"{self.name}: the initial stack pointer 0x{sp:08x} is not word-aligned")
        if not reset & 1:
            raise FirmwareError(f"{self.name}: the reset vector 0x{reset:08x} (word 1 at "
                                f"0x{self.vector_table + 4:08x}) has no Thumb bit: not a handler "
                                "address (is there a vector table at the boot address?)")
        target = reset & ~1
        holder = self.amap.region_of(target)
        if holder is None or (self._image_bytes(target, 2) is None and not holder.kind.writable):
            raise FirmwareError(f"{self.name}: the reset vector 0x{reset:08x} points outside every "
                                f"region holding code ({', '.join(str(r) for r in self.amap.regions)})")
        return sp, target

    # ------------------------------------------------------------------ the machine
    def _build(self) -> None:
        req, img = self.req, self.fw.image
        self.initial_sp, self.reset = self._reset_vectors()
        uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
        uc.ctl_set_cpu_model(CPU_MODELS[self.core])
        self.uc = uc
        self.amap.map_into(uc)
        self._main_inputs = self._place_inputs()
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
        d_geo, i_geo = self._l1_geometry(ms)
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
        if self._main_inputs:
            self._hook_main_entry()
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

    def _l1_geometry(self, ms) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        if self.core != "cortex-m7":
            return (0, 0, 0), (0, 0, 0)
        full = MemoryState(self.board, self.core, self.clock_hz, self.wait_states,
                           FlashState(None, source=""), True, True).memory_system()
        line = full.line_bytes
        dl = full.dcache_lines if full.data_unit == line else 0
        dways = full.dcache_ways or 1
        iways = full.icache_ways or 1
        return ((max(1, dl // dways), dways, line) if dl > 1 else (0, 0, 0),
                (max(1, full.icache_lines // iways), iways, line) if full.icache_lines else (0, 0, 0))

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

    # ------------------------------------------------------------------ inputs and outputs
    def _symbol(self, name: str, what: str):
        sym = self.fw.image.symbols.get(name)
        if sym is None:
            raise FirmwareError(f"{self.name}: no symbol '{name}' for {what}")
        if sym.is_func or not sym.size:
            raise FirmwareError(f"{self.name}: symbol '{name}' for {what} is "
                                f"{'a function' if sym.is_func else 'of size 0'}, not a data object")
        return sym

    def _place_inputs(self) -> dict:
        """--input: into .data's initial image (the load image the start-up copies from), before
        the image is loaded; the rest (.bss, no initial image) is returned {address: bytes}, to be
        written where `main` is entered."""
        at_main = {}
        for name, data in self.req.inputs.items():
            sym = self._symbol(name, "--input")
            if len(data) > sym.size:
                raise FirmwareError(f"{self.name}: --input {name}: {len(data)} B does not fit the "
                                    f"symbol's {sym.size} B")
            seg = next((s for s in self.fw.image.segments if s.vaddr <= sym.addr < s.vaddr + s.memsz), None)
            if seg is not None and sym.addr + len(data) <= seg.vaddr + len(seg.data):
                off = sym.addr - seg.vaddr
                seg.data = seg.data[:off] + data + seg.data[off + len(data):]
            else:
                at_main[sym.addr] = data
        if at_main:
            main = self.fw.image.symbols.get("main")
            if main is None or not main.is_func:
                raise FirmwareError(f"{self.name}: --input into .bss is written when main is entered, "
                                    "and the image has no function 'main'")
        return at_main

    def _hook_main_entry(self) -> None:
        main = self.fw.image.symbols["main"]
        self.uc.hook_add(UC.UC_HOOK_CODE, self._write_bss_inputs, begin=main.addr, end=main.addr)

    def _write_bss_inputs(self, uc, address, size, _user) -> None:
        for addr, data in self._main_inputs.items():
            uc.mem_write(addr, data)
        self._main_inputs = {}

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
