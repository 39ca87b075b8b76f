"""The peripherals a firmware run models: the board's console UART and its flash-control
registers (latency, prefetch, caches: the memory model follows what the firmware writes), and
what happens at every other peripheral address.

Both come from the board file's `peripherals` section (cortexm/board_data/README.md). A board
without one has no console here, and its memory model stays where `profile` puts it (the board's
wait states at its clock, the accelerator on); the report says which.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Optional

import unicorn

from ..memory_map import PAGE

PERIPHERAL_RANGES = ((0x4000_0000, 0x6000_0000), (0xA000_0000, 0xE000_0000))


class MmioPolicy(Enum):
    STOP = "stop"          # an access to an unmodelled peripheral ends the run, named
    IGNORE = "ignore"      # it reads 0, a write is dropped; counted in the report


@dataclass
class FlashState:
    """The flash interface as the registers hold it now."""
    latency: Optional[int]            # wait states; None: the board file names no latency field
    prefetch: bool = True
    icache: bool = True
    dcache: bool = True
    source: str = ""                  # "reset", "set by the firmware", "configured (no register model)"

    def describe(self) -> str:
        ws = "?" if self.latency is None else str(self.latency)
        return (f"{ws} wait states, prefetch {'on' if self.prefetch else 'off'}, I-cache "
                f"{'on' if self.icache else 'off'}, D-cache {'on' if self.dcache else 'off'} ({self.source})")


class FlashControl:
    """The board's flash-control registers (cortexm.board_records.FlashControlRegister), holding
    what the firmware wrote. `changed(state)` is called when a write changes what the memory
    model depends on."""

    def __init__(self, registers, changed: Callable[[FlashState], None]):
        self.registers = list(registers)
        self.values = {r.address: r.reset for r in self.registers}
        self._changed = changed

    def state(self, source: str) -> FlashState:
        fields = {}
        for r in self.registers:
            for f in r.fields:
                fields[f.meaning.value] = f.value_in(self.values[r.address])
        cache = fields.get("cache")
        return FlashState(fields.get("latency"), bool(fields.get("prefetch", 1)),
                          bool(fields.get("icache", 1 if cache is None else cache)),
                          bool(fields.get("dcache", 1 if cache is None else cache)), source)

    def register_at(self, addr: int):
        return next((r for r in self.registers if r.address <= addr < r.end), None)

    def read(self, addr: int, size: int) -> int:
        r = self.register_at(addr)
        shift = 8 * (addr - r.address)
        return (self.values[r.address] >> shift) & ((1 << 8 * size) - 1)

    def write(self, addr: int, size: int, value: int) -> None:
        r = self.register_at(addr)
        before = self.state("")
        shift = 8 * (addr - r.address)
        mask = (((1 << 8 * size) - 1) << shift) & ((1 << 8 * r.size_bytes) - 1)
        self.values[r.address] = (self.values[r.address] & ~mask) | ((value << shift) & mask)
        after = self.state("set by the firmware")
        if (after.latency, after.prefetch, after.icache, after.dcache) != \
                (before.latency, before.prefetch, before.icache, before.dcache):
            self._changed(after)


@dataclass
class PeripheralEvents:
    console: bytearray = field(default_factory=bytearray)
    ignored: dict = field(default_factory=dict)            # address -> accesses (--ignore-mmio)


class Peripherals:
    """Maps the modelled peripheral blocks into the engine and decides about the rest."""

    def __init__(self, board, policy: MmioPolicy, flash_changed: Callable[[FlashState], None]):
        self.policy = policy
        self.events = PeripheralEvents()
        self.console = board.peripherals.console if board is not None else None
        regs = board.peripherals.flash_control if board is not None else ()
        self.flash = FlashControl(regs, flash_changed) if regs else None

    def map_into(self, uc: unicorn.Uc) -> None:
        """The console's register block and the pages of the flash-control registers, as MMIO
        (a page shared by both is mapped once)."""
        spans = []
        if self.console is not None:
            spans.append((self.console.base, self.console.base + self.console.size))
        if self.flash is not None:
            spans += [(r.address, r.end) for r in self.flash.registers]
        pages = sorted({p for lo, hi in spans for p in range(lo // PAGE * PAGE, hi, PAGE)})
        for page in pages:
            uc.mmio_map(page, PAGE, self._read, page, self._write, page)

    def _read(self, uc, offset: int, size: int, page: int) -> int:
        addr = page + offset
        c = self.console
        if self.flash is not None and self.flash.register_at(addr) is not None:
            return self.flash.read(addr, size)
        if c is not None and c.base + c.status_offset <= addr < c.base + c.status_offset + c.register_bytes:
            shift = 8 * (addr - c.base - c.status_offset)
            return (c.idle_status >> shift) & ((1 << 8 * size) - 1)
        return 0

    def _write(self, uc, offset: int, size: int, value: int, page: int) -> None:
        addr = page + offset
        c = self.console
        if self.flash is not None and self.flash.register_at(addr) is not None:
            self.flash.write(addr, size, value)
        elif c is not None and addr == c.base + c.data_offset:
            self.events.console.append(value & 0xFF)

    # ------------------------------------------------------------------ unmodelled addresses
    @staticmethod
    def is_peripheral(addr: int) -> bool:
        return any(lo <= addr < hi for lo, hi in PERIPHERAL_RANGES)

    def ignore_page(self, uc: unicorn.Uc, addr: int) -> bool:
        """With MmioPolicy.IGNORE, map the page holding `addr` as reads-zero / writes-dropped and
        count its accesses; True when the access may go on."""
        if self.policy is not MmioPolicy.IGNORE or not self.is_peripheral(addr):
            return False
        page = addr // PAGE * PAGE
        uc.mmio_map(page, PAGE, self._count_read, page, self._count_write, page)
        return True

    def _count(self, addr: int) -> None:
        self.events.ignored[addr] = self.events.ignored.get(addr, 0) + 1

    def _count_read(self, uc, offset: int, size: int, page: int) -> int:
        self._count(page + offset)
        return 0

    def _count_write(self, uc, offset: int, size: int, value: int, page: int) -> None:
        self._count(page + offset)
