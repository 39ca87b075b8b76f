"""Where a firmware image starts: its vector table (at the boot address, or where the board's
boot ROM finds it), the initial stack pointer and the reset handler it holds, each checked
against the address map before anything runs."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Optional

from micro_rt.errors import FirmwareError

from ..boards import Board
from ..elf import ElfImage
from .address_map import AddressMap
from .boot_rom import BootStage, boot_start
from .firmware import FirmwareFile

__all__ = ["ResetState", "image_bytes", "peek_initial_sp", "reset_state"]


@dataclass
class ResetState:
    vector_table: int
    initial_sp: int
    reset: int                                  # the reset handler's address (no Thumb bit)
    boot_notes: list[str] = field(default_factory=list)
    boot_stage: Optional[BootStage] = None      # the boot stage a boot ROM runs first


def peek_initial_sp(img: ElfImage) -> Optional[int]:
    """Word 0 of the lowest loaded segment below SRAM, before any map exists (the generic map
    is sized to hold the stack it names)."""
    loads = sorted((s.paddr, s) for s in img.segments if s.data and s.paddr < 0x2000_0000)
    if not loads or len(loads[0][1].data) < 8:
        return None
    return struct.unpack_from("<I", loads[0][1].data, 0)[0]


def image_bytes(fw: FirmwareFile, addr: int, n: int) -> Optional[bytes]:
    """The image's `n` bytes at load address `addr`, or None where no segment holds them all."""
    for s in fw.image.segments:
        if s.paddr <= addr and addr + n <= s.paddr + len(s.data):
            return bytes(s.data[addr - s.paddr:addr - s.paddr + n])
    return None


def reset_state(fw: FirmwareFile, amap: AddressMap, board: Optional[Board]) -> ResetState:
    """The image's vector table and what it holds (FirmwareError naming the word and the
    address when one is not usable)."""
    notes: list[str] = []
    stage: Optional[BootStage] = None
    if board is not None and board.boot is not None:
        start = boot_start(board, amap, lambda a, n: image_bytes(fw, a, n), fw.name)
        table, notes, stage = start.vector_table, list(start.notes), start.stage
    else:
        table = _vector_table(fw, amap)
    sp, reset = _reset_vectors(fw, amap, table)
    return ResetState(table, sp, reset, notes, stage)


def _vector_table(fw: FirmwareFile, amap: AddressMap) -> int:
    code = amap.code_region
    if image_bytes(fw, code.base, 8) is not None:
        return code.base
    starts = sorted(s.paddr for s in fw.image.segments if s.data and code.base <= s.paddr < code.end)
    if amap.generic and starts:
        return starts[0]
    lowest = f"; the image's lowest segment in it starts at 0x{starts[0]:08x}" if starts else ""
    raise FirmwareError(f"{fw.name}: no vector table at the boot address 0x{code.base:08x} "
                        f"(the start of {code.name}, {amap.source}){lowest}: is the image "
                        "linked for this board?")


def _reset_vectors(fw: FirmwareFile, amap: AddressMap, table: int) -> tuple[int, int]:
    raw = image_bytes(fw, table, 8)
    if raw is None:
        raise FirmwareError(f"{fw.name}: no vector table at 0x{table:08x}: the image "
                            "holds fewer than 8 bytes there (initial stack pointer, reset vector)")
    sp, reset = struct.unpack("<II", raw)
    ram = amap.region_of(sp - 4) if sp >= 4 else None
    if ram is None or not ram.kind.writable:
        raise FirmwareError(f"{fw.name}: the initial stack pointer 0x{sp:08x} (vector table "
                            f"word 0 at 0x{table:08x}) is in no RAM region of the {amap.source}")
    if sp & 3:
        raise FirmwareError(f"{fw.name}: the initial stack pointer 0x{sp:08x} is not word-aligned")
    if not reset & 1:
        raise FirmwareError(f"{fw.name}: the reset vector 0x{reset:08x} (word 1 at "
                            f"0x{table + 4:08x}) has no Thumb bit: not a handler "
                            "address (is there a vector table at the boot address?)")
    target = reset & ~1
    holder = amap.region_of(target)
    if holder is None or (image_bytes(fw, target, 2) is None and not holder.kind.writable):
        raise FirmwareError(f"{fw.name}: the reset vector 0x{reset:08x} points outside every "
                            f"region holding code ({', '.join(str(r) for r in amap.regions)})")
    return sp, target
