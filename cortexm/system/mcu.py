"""The virtual MCU: one Cortex-M core running one image from its memory, whichever front made it.

`Machine` is the part every image runs on: the Unicorn engine over the image's memory layout
(engine.py, recycled on long runs), the hooks that count block edges and simulate the flash
interface (native.py), the cycle model and the running clock DWT->CYCCNT reads (clock.py),
the exception unit and the System Control Space (SCB, NVIC, SysTick, DWT, ITM). Two fronts
build it:
    system/machine.py  FirmwareMachine: `emulate`'s image, read from an ELF file, in a board's
                       (or a generic) map, its flash interface from the part's reset state, with
                       semihosting, peripherals and the heap and call watches (run.py runs it)
    machine.py         VirtualMCU: a model's image (the firmware and the plan written into it),
                       in the layout of memory_map.py with the arena mapped zero-copy, the flash
                       interface the caller configured; booted once per invoke (`boot`), or one
                       kernel called directly (`call`, the kernels' unit tests)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import unicorn
from unicorn import unicorn_const as UC

from ..boards import Board
from ..cycles import CycleModel
from ..elf import ElfImage
from ..engine import Engine
from ..native import HookSet
from ..thumb_decode import is_32bit_halfword
from .clock import RunningCycles
from .exceptions import ExceptionUnit
from .memory_state import l1_geometry
from .peripherals import FlashState, Peripherals
from .scs import SystemControlSpace


@dataclass(frozen=True)
class HookOptions:
    """How the machine's hooks watch the code (native.HookSet). memory_hook: a memory hook on
    every access (strict alignment, or flash loads without the native flash data port: the slow
    paths); check_alignment: record unaligned accesses in that memory hook; static: the
    alignment checks found in the code (static_alignment), checked at block starts; flash_port:
    data loads from flash through the native flash data port; edge_stalls: the flash
    interface's stalls kept per edge (a per-function profile's; costs speed)."""
    memory_hook: bool = False
    check_alignment: bool = False
    static: Any = None
    flash_port: bool = True
    prefer_native: bool = True
    edge_stalls: bool = False


class Machine:
    """One core, one image, one memory layout: see the module's docstring."""

    peripherals: Optional[Peripherals] = None      # a board's: the emulate front's alone

    def __init__(self, core: str, board: Optional[Board], clock_hz: int, image: ElfImage, layout: Any,
                 memory_state: Any, options: HookOptions, flash: tuple[int, int], recycle_every: int = 0):
        """`core` on `board` (None: a bare core) at `clock_hz`, running `image`: the engine over
        `layout` (memory_map.MemoryMap or an address_map.AddressMap), replaced every
        `recycle_every` calls (0: never), its hooks (`options`) counting data loads from
        `flash` (lo, hi) through the flash interface `memory_state` describes (MemoryState, or
        memory_state.ConfiguredMemory), the cycle model, the running clock, the exception unit
        and the System Control Space, at reset."""
        self.core, self.board, self.clock_hz = core, board, clock_hz
        self.has_fpu = core != "cortex-m0plus"
        self.layout = layout
        self.memory_state = memory_state
        self.memory_at_reset = memory_state.describe()
        self.memory_changes: list[tuple[int, str]] = []
        self.hook_options = options
        self._flash_range = flash
        self._mmio_parts: list = []            # mapped again on each new engine
        ms = memory_state.memory_system()
        self.engine = Engine(self.core, layout, self._new_hooks, has_fpu=self.has_fpu,
                             recycle_every=recycle_every, on_engine=self._map_parts, on_fault=self._let_access)
        if options.edge_stalls:
            self.hooks.keep_edge_stalls()                   # the per-function profile's memory stalls
        self.model = CycleModel(self.core, image.sha256, ms, self.read_code)
        self.exceptions = ExceptionUnit(self.core, self._read, self._write, has_fpu=self.has_fpu)
        self.clock = RunningCycles(self.hooks, self.model, ms, lambda: self.exceptions.latency_cycles)
        d_geo, i_geo = l1_geometry(self.board, self.core, self.clock_hz, memory_state.configured_wait_states)
        self.scs = SystemControlSpace(self.core, self.exceptions, self.clock.now, self._caches_changed,
                                      self.hooks.stop_at_next_block, self._stop_after_write, d_geo, i_geo)
        self.add_mmio(self.scs)
        self.stopped_in_write = False

    def _new_hooks(self, uc: unicorn.Uc) -> HookSet:
        """The hooks, made with the first engine (later ones re-attach them: engine.py)."""
        o = self.hook_options
        return HookSet(uc, memory_hook=o.memory_hook, check_alignment=o.check_alignment,
                       flash_lo=self._flash_range[0], flash_hi=self._flash_range[1],
                       memory_system=self.memory_state.memory_system(), prefer_native=o.prefer_native,
                       static_checks=o.static, flash_port=o.flash_port)

    def add_mmio(self, part: Any) -> None:
        """A part whose registers are MMIO (its `map_into(uc)`), mapped now and on each new engine."""
        self._mmio_parts.append(part)
        part.map_into(self.uc)

    def _map_parts(self, uc: unicorn.Uc) -> None:
        for part in self._mmio_parts:
            part.map_into(uc)

    def reset_counts(self, budget_instructions: int) -> None:
        """Start counting afresh, as at reset: the hooks' edges, budget and flash counts (the
        caches keep their lines) and the clock from 0."""
        self.hooks.reset(budget_instructions, 0)
        self.clock.restart()

    def clear_edges(self, edges: Optional[dict] = None) -> None:
        """Forget the hooks' block edges (`edges`: what the caller just read of them), so that
        a part's pricing starts afresh; the clock, DWT->CYCCNT, runs on (clock.bank)."""
        self.clock.bank(edges)
        self.hooks.clear_edges()

    @property
    def uc(self) -> unicorn.Uc:
        """The engine (EmulationError after `close`)."""
        return self.engine.live()

    @property
    def hooks(self) -> HookSet:
        """The hooks on the engine (EmulationError after `close`)."""
        self.engine.live()
        assert self.engine.hooks is not None          # made with the first engine
        return self.engine.hooks

    @property
    def interrupt(self) -> Optional[tuple]:
        """(exception number, pc) of the CPU exception that stopped the engine."""
        return self.engine.interrupt

    @interrupt.setter
    def interrupt(self, value: Optional[tuple]) -> None:
        self.engine.interrupt = value

    @property
    def stop_reason(self) -> Optional[tuple]:
        """(access, address, size, pc) of the memory fault that stopped the engine."""
        return self.engine.fault

    @stop_reason.setter
    def stop_reason(self, value: Optional[tuple]) -> None:
        self.engine.fault = value

    def _last_block(self) -> Optional[tuple[int, int]]:
        return self.hooks.stats().last_block

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
        first = int.from_bytes(self.read_code(pc, 2) or b"\0\0", "little")
        after = pc + (4 if is_32bit_halfword(first) else 2)
        last = self.hooks.stats().last_block
        if last is not None and last[0] < after < last[0] + last[1]:
            self.hooks.truncate_last_block(after - last[0])
        return after

    def _read(self, addr: int, n: int) -> bytes:
        return bytes(self.uc.mem_read(addr, n))

    def _write(self, addr: int, data: bytes) -> None:
        self.uc.mem_write(addr, data)

    def read_code(self, addr: int, n: int) -> bytes:
        """The bytes at `addr`, or b"" where nothing is mapped (the decoders then see no instruction)."""
        try:
            return bytes(self.uc.mem_read(addr, n))
        except unicorn.UcError:
            return b""

    def _flash_changed(self, state: FlashState) -> None:
        self.memory_state.flash = state
        self._memory_changed()

    def _caches_changed(self, icache: bool, dcache: bool) -> None:
        self.memory_state.l1_icache, self.memory_state.l1_dcache = icache, dcache
        self._memory_changed()

    def _memory_changed(self) -> None:
        ms = self.memory_state.memory_system()
        self.hooks.set_memory_system(ms)
        self.clock.reprice(ms)
        self.model.memory_system = ms
        self.memory_changes.append((self.clock.now(), self.memory_state.describe()))

    def _let_access(self, uc: unicorn.Uc, access: int, address: int, size: int) -> bool:
        """A faulting access goes on only where the peripherals map a page for it (with
        --ignore-mmio, a peripheral micro_rt does not model reads 0)."""
        return self.peripherals is not None and access in (UC.UC_MEM_READ_UNMAPPED, UC.UC_MEM_WRITE_UNMAPPED) \
            and self.peripherals.ignore_page(uc, address)

    def close(self) -> None:
        """Free the engine and the hooks' native state now; later calls raise EmulationError."""
        self.engine.close()
