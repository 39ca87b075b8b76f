"""The machine of a firmware run (`emulate`): the image checked and loaded into the board's (or a
generic) memory map, on the one machine (mcu.py) with the flash interface in the part's reset
state, the peripherals, semihosting and the heap and call watches. run.py runs it."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from micro_rt.errors import FirmwareError
from micro_rt.targets import cores_running, get_target

from ..boards import Board
from ..elf import Symbol
from ..engine import CPU_MODELS
from ..op_windows import INVOKE_SYMBOL
from ..static_alignment import static_checks
from .address_map import AddressMap, board_map, generic_map
from .call_watch import CallWatch, ReturnHooks
from .data_symbols import DataSymbols
from .firmware import FirmwareFile, read_firmware
from .heap import HeapWatch
from .mcu import HookOptions, Machine
from .memory_state import MemoryState, configured_wait_states
from .peripherals import FlashState, MmioPolicy, Peripherals
from .reset_vectors import peek_initial_sp, reset_state
from .rp2040_xip import Rp2040Xip, watch_image_entry
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


class FirmwareMachine(Machine):
    """The machine (mcu.Machine) of an `emulate` request, at reset: the ELF file's image in a
    board's (or a generic) map, the part's flash interface from its reset state, semihosting,
    the board's peripherals, the heap and call watches."""

    peripherals: Peripherals

    def __init__(self, req: EmulateRequest):
        self.req = req
        self.fw: FirmwareFile = read_firmware(req.path)
        img = self.fw.image
        self.name = self.fw.name
        board = req.board
        core, self.core_source = choose_core(req, img.architecture)
        if core not in CPU_MODELS:
            raise FirmwareError(f"target '{core}' is not an emulated Cortex-M core "
                                f"({', '.join(CPU_MODELS)})")
        self.core_notes = architecture_notes(core, img.architecture)
        if board is not None:
            clock_hz = req.clock_hz or board.clock.default_hz
            self.clock_source = "given" if req.clock_hz else f"board {board.name}'s default"
            self.amap: AddressMap = board_map(board)
        else:
            clock_hz = req.clock_hz or DEFAULT_CLOCK_HZ
            self.clock_source = "given" if req.clock_hz else "no board: 100 MHz assumed"
            self.amap = generic_map(img.segments, peek_initial_sp(img), self.name)
        self.amap.check_segments(img.segments, self.name)
        start = reset_state(self.fw, self.amap, board)
        self.vector_table, self.initial_sp, self.reset = start.vector_table, start.initial_sp, start.reset
        self.boot_notes, self.boot_stage = start.boot_notes, start.boot_stage
        self.symbols = DataSymbols(self.fw, self.name)
        self.symbols.place_inputs(req.inputs)
        self.wait_states = configured_wait_states(board, clock_hz, req.flash_wait_states)
        self.peripherals = Peripherals(board, req.mmio, self._flash_changed)
        reset_flash = (self.peripherals.flash.state("reset") if self.peripherals.flash is not None
                       else FlashState(None, source="configured: the board file names no flash-control "
                                       "register" if board is not None else "configured: no board"))
        code = self.amap.code_region
        super().__init__(core, board, clock_hz, img, self.amap,
                         MemoryState(board, core, clock_hz, self.wait_states, reset_flash),
                         HookOptions(static=static_checks(img), edge_stalls=True), (code.base, code.end))
        self._add_parts()

    def _add_parts(self) -> None:
        """The image loaded, and the parts an `emulate` run has beyond the machine's own."""
        img, uc, code = self.fw.image, self.uc, self.amap.code_region
        self.amap.load(img.segments)
        self.exceptions.vtor = self.vector_table
        self.add_mmio(self.peripherals)
        self.xip: Optional[Rp2040Xip] = None
        self.boot_failure: Optional[str] = None       # why the image cannot run once entered
        self.on_image_entry: list = []                 # called when a boot stage enters the image
        if self.board is not None and self.board.boot is not None and self.board.boot.xip is not None:
            self.xip = Rp2040Xip(self.boot_notes)
            self.add_mmio(self.xip)
            watch_image_entry(uc, code.base, code.end, self._image_entered)
        self.semihost = Semihost(self.clock.now, self.clock_hz, self.name, heap_info=self._heap_info())
        self.heap = HeapWatch(img)
        self.heap.install(uc)
        self.symbols.write_at_main(uc)
        self.returns = ReturnHooks(uc)
        self.tflm: Optional[TflmWatch] = None
        if is_tflm_application(img):
            self.tflm = TflmWatch(img, uc, self.read_code, self.clock.now, lambda: self.clock.instructions,
                                  self._last_block, self._stack_floor, self.returns)
            self.scs.on_cyccnt = self.tflm.on_cyccnt
        self.timed = [CallWatch(uc, self._function(name), self.read_code, self.clock.now,
                                lambda: self.clock.instructions, self._last_block, self._stack_floor,
                                self.returns.on)
                      for name in self._timed_functions()]

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

    def _stack_floor(self) -> int:
        """The lowest address the stack may reach now: above static data and the heap."""
        return max(self._heap_info()[0], self.heap.stats.break_top or 0)

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

