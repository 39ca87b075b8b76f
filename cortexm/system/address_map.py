"""The regions of a firmware run: a board's memory, or a generic map that holds the image.

A board's regions come from its file (cortexm/board_data, `memory.regions`). Without a board a
generic Cortex-M map is made from the image itself, and says so: one code region over the
segments below 0x20000000 (Arm's Code area), one RAM region from 0x20000000 (the SRAM area) up
to the image's RAM segments and its initial stack pointer, and a region for each segment in the
external RAM/flash areas. Every region is host memory mapped zero-copy into Unicorn.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional, Sequence

import numpy as np
import unicorn
from unicorn import unicorn_const as UC

from micro_rt.errors import FirmwareError

from ..elf import Segment
from ..memory_map import PAGE, page_aligned_buffer, round_up

SRAM_AREA = 0x2000_0000
PERIPHERAL_AREA = (0x4000_0000, 0x6000_0000)
SYSTEM_AREA = 0xE000_0000            # the Private Peripheral Bus and vendor system space
GENERIC_CODE_ROUND = 0x1_0000
GENERIC_RAM_MIN = 0x1_0000
GENERIC_MAX_REGION = 64 * 1024 * 1024      # no Cortex-M part has more on chip: a larger span is a bad image


class RegionKind(Enum):
    FLASH = "flash"
    EXTERNAL_FLASH = "external-flash"
    SRAM = "sram"
    TCM = "tcm"

    @property
    def writable(self) -> bool:
        return self in (RegionKind.SRAM, RegionKind.TCM)


@dataclass(frozen=True)
class Region:
    name: str
    kind: RegionKind
    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size

    def holds(self, lo: int, hi: int) -> bool:
        return self.base <= lo and hi <= self.end

    def __str__(self) -> str:
        return f"{self.name} (0x{self.base:08x}-0x{self.end - 1:08x}, {self.kind.value})"


@dataclass
class AddressMap:
    regions: tuple[Region, ...]
    source: str                       # "board nucleo-l4r5zi" or "generic map made from the image"
    generic: bool
    code_region: Region               # where the vector table is looked for first
    _buffers: Optional[dict] = None   # region name -> host buffer, once mapped

    def region_of(self, addr: int) -> Optional[Region]:
        return next((r for r in self.regions if r.base <= addr < r.end), None)

    def region_holding(self, addr: int) -> Region:
        """The region of an address already checked to be in one."""
        region = self.region_of(addr)
        if region is None:
            raise ValueError(f"0x{addr:08x} is in no region of the {self.source}")
        return region

    def _buffer(self, name: str):
        if self._buffers is None:
            raise ValueError("the address map is not mapped into an engine yet")
        return self._buffers[name]

    def ram_regions(self) -> list[Region]:
        return [r for r in self.regions if r.kind.writable]

    def flash_regions(self) -> list[Region]:
        return [r for r in self.regions if not r.kind.writable]

    def check_segments(self, segments: Sequence[Segment], file: str) -> None:
        """Every segment's run image and load image inside one region, or FirmwareError naming
        the segment and the region it falls out of."""
        for i, seg in enumerate(segments):
            spans = [("runs at", seg.vaddr, seg.vaddr + seg.memsz)]
            if seg.data and seg.paddr != seg.vaddr:
                spans.append(("loads at", seg.paddr, seg.paddr + len(seg.data)))
            for what, lo, hi in spans:
                r = self.region_of(lo)
                if r is None or not r.holds(lo, hi):
                    where = (f"it runs past the end of region {r}" if r is not None else
                             "no region of the " + self.source + " holds it")
                    raise FirmwareError(f"{file}: segment {i} {what} 0x{lo:08x}-0x{hi - 1:08x} "
                                        f"({hi - lo} B): {where}; regions: "
                                        + ", ".join(str(x) for x in self.regions))

    def map_into(self, uc: unicorn.Uc) -> None:
        """Map every region (host memory, zero-copy), flash read + execute, RAM everything."""
        if self._buffers is None:
            self._buffers = {r.name: page_aligned_buffer(r.size) for r in self.regions}
        for r in self.regions:
            buf = self._buffers[r.name]
            prot = UC.UC_PROT_ALL if r.kind.writable else UC.UC_PROT_READ | UC.UC_PROT_EXEC
            try:
                uc.mem_map_ptr(r.base, round_up(r.size, PAGE), prot, buf.ctypes.data)
            except unicorn.UcError as exc:
                raise FirmwareError(f"region {r} cannot be mapped ({exc}): it overlaps another "
                                    "region") from None

    def host(self, region: Region) -> np.ndarray:
        return self._buffer(region.name)

    def load(self, segments: Sequence[Segment]) -> None:
        """The image's bytes where the CPU sees them at reset: each segment's file bytes at its
        load address (its run address when the two are one), and zeros for the rest of a segment
        that runs where it loads. .data copied to RAM and .bss cleared are the start-up's work."""
        for seg in segments:
            self._write(seg.paddr, seg.data)
            if seg.paddr == seg.vaddr and seg.memsz > len(seg.data):
                self._write(seg.vaddr + len(seg.data), bytes(seg.memsz - len(seg.data)))

    def _write(self, addr: int, data: bytes) -> None:
        if not data:
            return
        r = self.region_holding(addr)
        off = addr - r.base
        self._buffer(r.name)[off:off + len(data)] = np.frombuffer(data, dtype=np.uint8)

    def flash_segments(self) -> list[tuple[int, int, int]]:
        """[(lo, hi, host address)] of the code region: what the flash data port reads (the
        hooks count data loads from it alone)."""
        r = self.code_region
        return [(r.base, r.end, self._buffer(r.name).ctypes.data)]

    def fault_ranges(self) -> list[tuple[int, int]]:
        """Where an access faults, as inclusive (first, last) address pairs: the gaps between
        the regions (unmapped) and the flash regions (a write is refused there)."""
        spans = sorted((r.base, r.base + round_up(r.size, PAGE)) for r in self.regions)
        out, at = [], 0
        for lo, hi in spans:
            if lo > at:
                out.append((at, lo - 1))
            at = max(at, hi)
        if at < 1 << 32:
            out.append((at, (1 << 32) - 1))
        out += [(r.base, r.base + round_up(r.size, PAGE) - 1) for r in self.flash_regions()]
        return sorted(out)


def board_map(board) -> AddressMap:
    """The regions of a catalog board (cortexm.boards.Board)."""
    regions = []
    for r in board.memory.regions:
        size = round_up(r.size, PAGE)
        regions.append(Region(r.name, RegionKind(r.kind), r.base, size))
    code = next(r for r in regions if r.name == board.memory.code_region)
    return AddressMap(tuple(regions), f"board {board.name}", False, code)


def generic_map(segments: Sequence[Segment], initial_sp: Optional[int], file: str) -> AddressMap:
    """A map for a core without a board: the regions that hold the image (module docstring)."""
    code = [s for s in segments if s.vaddr < SRAM_AREA or (s.data and s.paddr < SRAM_AREA)]
    ram = [s for s in segments if SRAM_AREA <= s.vaddr < PERIPHERAL_AREA[0]]
    ext = [s for s in segments if 0x6000_0000 <= s.vaddr < SYSTEM_AREA]
    areas = ((0, SRAM_AREA, "Code"), (SRAM_AREA, PERIPHERAL_AREA[0], "SRAM"),
             (0x6000_0000, SYSTEM_AREA, "external RAM / device"))
    for i, s in enumerate(segments):
        for what, addr, size in (("runs", s.vaddr, s.memsz), ("loads", s.paddr, len(s.data))):
            area = next((a for a in areas if a[0] <= addr < a[1]), None)
            if area is None:
                if what == "loads" and not size:
                    continue
                raise FirmwareError(f"{file}: segment {i} {what} at 0x{addr:08x}, in the peripheral or "
                                    "system area of the Cortex-M memory map, where no memory is")
            _, hi, name = area
            if size and addr + size > hi:
                raise FirmwareError(f"{file}: segment {i} at 0x{addr:08x} ({size} B) runs past the end "
                                    f"of the Cortex-M {name} area (0x{hi:08x}): no generic region can "
                                    "hold it")
    if not code:
        raise FirmwareError(f"{file}: no segment in the Code area (below 0x20000000): nowhere to "
                            "boot from")
    loads = [(s.paddr, s.paddr + len(s.data)) for s in code if s.data and s.paddr < SRAM_AREA]
    loads += [(s.vaddr, s.vaddr + s.memsz) for s in code if s.vaddr < SRAM_AREA]
    lo = min(a for a, _ in loads) // PAGE * PAGE
    hi = round_up(max(b for _, b in loads), GENERIC_CODE_ROUND)
    regions = [Region("FLASH", RegionKind.FLASH, lo, min(hi, SRAM_AREA) - lo)]
    ram_hi = max([s.vaddr + s.memsz for s in ram] + [SRAM_AREA + GENERIC_RAM_MIN])
    if initial_sp is not None and SRAM_AREA < initial_sp <= PERIPHERAL_AREA[0]:
        ram_hi = max(ram_hi, initial_sp)
    regions.append(Region("RAM", RegionKind.SRAM, SRAM_AREA, round_up(ram_hi - SRAM_AREA, PAGE)))
    for r in regions:
        if r.size > GENERIC_MAX_REGION:
            raise FirmwareError(f"{file}: a generic {r.name} region holding the image (and the initial "
                                f"stack pointer) would span 0x{r.base:08x}-0x{r.end - 1:08x}, "
                                f"{r.size // (1 << 20)} MiB: more than any part has "
                                f"({GENERIC_MAX_REGION >> 20} MiB); give --board for its memory map")
    for i, s in enumerate(ext):
        base = s.vaddr // PAGE * PAGE
        regions.append(Region(f"EXT{i}", RegionKind.SRAM, base, round_up(s.vaddr + s.memsz - base, PAGE)))
    return AddressMap(tuple(regions), "generic map made from the image", True, regions[0])
