"""Which flash interface a firmware run sees, as its registers change.

With a board whose file names its flash-control registers, the run starts from their reset
values (latency, prefetch, cache enables) and follows what the firmware writes. Without such
registers it keeps the configured interface: the board's wait states at its clock with the
accelerator on (what `profile` assumes), or a bare core's default. On a Cortex-M7 the L1 caches
are also gated by CCR.IC / CCR.DC, off at reset (Armv7-M ARM B3.2.8; Cortex-M7 TRM: caches are
disabled at reset).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..boards import Board, core_flash, flash_interface, simulator_parameters
from ..memory_system import MemorySystem
from .peripherals import FlashState


@dataclass
class MemoryState:
    board: Optional[Board]
    core: str
    clock_hz: int
    configured_wait_states: int
    flash: FlashState
    l1_icache: Optional[bool] = None      # None: as at reset (off where CCR gates the caches)
    l1_dcache: Optional[bool] = None

    def __post_init__(self):
        if self.l1_icache is None:
            self.l1_icache = not self.l1_gated
        if self.l1_dcache is None:
            self.l1_dcache = not self.l1_gated

    @property
    def l1_gated(self) -> bool:
        """The caches of this interface are the core's L1 (enabled through CCR)."""
        if self.core != "cortex-m7":
            return False
        return self.board is None or self.board.accelerator.is_core_l1

    def memory_system(self) -> MemorySystem:
        ic = self.flash.icache and (self.l1_icache or not self.l1_gated)
        dc = self.flash.dcache and (self.l1_dcache or not self.l1_gated)
        ws = self.configured_wait_states if self.flash.latency is None else self.flash.latency
        if self.board is not None:
            fields = flash_interface(self.board, self.clock_hz, ws, prefetch=self.flash.prefetch,
                                     icache=ic, dcache=dc)
        else:
            fields = dict(core_flash(self.core, ws).memory_system)
            if not ic:
                fields["icache_bytes"] = 0
            if not dc:
                fields["dcache_lines"] = 1
            fields["prefetch"] = fields["prefetch"] and self.flash.prefetch
        return MemorySystem(**fields)

    def describe(self) -> str:
        flash = self.flash
        if flash.latency is None:
            flash = FlashState(self.configured_wait_states, flash.prefetch, flash.icache, flash.dcache,
                               flash.source)
        text = flash.describe()
        if self.l1_gated:
            text += (f"; L1 I-cache {'on' if self.l1_icache else 'off'}, D-cache "
                     f"{'on' if self.l1_dcache else 'off'} (CCR)")
        return text


@dataclass
class ConfiguredMemory:
    """The flash interface of a model's image (cortexm/machine.py VirtualMCU): the one its
    caller configured (`profile`'s assumption: a board's wait states at its clock with the
    accelerator on, or a bare core's), whatever the image's registers say. The caches' enables
    are kept as a Cortex-M7 image writes them, and change nothing."""
    system: MemorySystem
    flash: FlashState = field(default_factory=lambda: FlashState(None, source="configured by the caller"))
    l1_icache: bool = True
    l1_dcache: bool = True

    @property
    def configured_wait_states(self) -> int:
        return self.system.wait_states

    def memory_system(self) -> MemorySystem:
        return self.system

    def describe(self) -> str:
        return f"{self.system.wait_states} flash wait states, as configured by the caller"


def configured_wait_states(board: Optional[Board], clock_hz: int, wait_states: Optional[int]) -> int:
    """The wait states of the configured interface: given, else the board's table at the clock
    (a clock above the part's maximum, or fewer wait states than its table needs, is the
    InputError `profile --board` gives), else 0 on a bare core."""
    if board is None:
        return 0 if wait_states is None else int(wait_states)
    return simulator_parameters(board, clock_hz, wait_states).flash_wait_states


def l1_geometry(board: Optional[Board], core: str, clock_hz: int,
                wait_states: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(sets, ways, line bytes) of the Cortex-M7's L1 data and instruction caches as CCSIDR
    reports them (with both caches on), (0, 0, 0) for a cache the part has not; on other cores
    both (0, 0, 0)."""
    if core != "cortex-m7":
        return (0, 0, 0), (0, 0, 0)
    full = MemoryState(board, core, clock_hz, wait_states, FlashState(None, source=""), True, True).memory_system()
    line = full.line_bytes
    dl = full.dcache_lines if full.data_unit == line else 0
    dways = full.dcache_ways or 1
    iways = full.icache_ways or 1
    return ((max(1, dl // dways), dways, line) if dl > 1 else (0, 0, 0),
            (max(1, full.icache_lines // iways), iways, line) if full.icache_lines else (0, 0, 0))
