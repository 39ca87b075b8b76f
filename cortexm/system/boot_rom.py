"""A part's boot ROM, as `micro-rt emulate` models it: what the ROM reads from the image before it
starts it, checked as the ROM would check it, and where the image starts.

Modelled (board_records.EMULATED_BOOT_KINDS): the i.MX RT's boot from FlexSPI NOR flash. The ROM
reads the FlexSPI NOR configuration block at the start of the flash and configures FlexSPI's
reads from it, then the image vector table (IVT) at the board's `ivt_offset` and the boot data
the IVT points to, then enters the image (layouts: cortexm/boot_headers.py). What micro_rt
takes as the ROM's behaviour beyond those layouts, each said in the run's notes:
- the IVT's entry is taken as the image's vector table, the initial SP and the reset handler
  read from it and VTOR set to it: that is the MCUXpresso SDK's IMAGE_ENTRY_ADDRESS
  (__VECTOR_TABLE), though the SDK header's comment calls entry "the first instruction to
  execute". An entry that is not a vector table is refused: code entered directly would run on
  the ROM's own stack, whose address micro_rt does not know.
- device configuration data (a DCD: register writes the ROM performs) and plugin images are
  refused; a CSF (the signature HAB checks) is not checked.
- the flash is priced by the board file's figures, which are for the configuration block the
  board file gives; an image whose block asks for other reads is priced the same, and the
  notes say so.
- the ROM's own time is not counted: the run starts at the image's reset handler.

Not modelled: the RP2040's boot stage 2, whose SSI set-up micro_rt has no model of; such a
board's images are refused, quoting the board file's `boot.needs`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Optional

from micro_rt.errors import FirmwareError

from ..board_records import Board, BootKind
from ..boot_headers import (BOOT_DATA_BYTES, FCB_BYTES, IVT_BYTES, BootHeaderError, decode_configuration_block,
                            decode_ivt)
from .address_map import AddressMap

ImageBytes = Callable[[int, int], Optional[bytes]]


@dataclass(frozen=True)
class BootStart:
    """Where the boot ROM leaves the image: its vector table, and what the model took."""
    vector_table: int
    notes: tuple[str, ...] = ()


def boot_start(board: Board, amap: AddressMap, image_bytes: ImageBytes, name: str) -> BootStart:
    """The image's vector table on `board` (which has a boot record) after its boot ROM, or a
    FirmwareError naming what the ROM would not accept. image_bytes(address, n): the image's
    bytes there, None where it holds none."""
    boot = board.boot
    if boot is None:
        raise ValueError(f"board {board.name} has no boot record")
    code = amap.code_region
    if boot.kind is BootKind.IMXRT_FLEXSPI_NOR:
        return _imxrt_flexspi_nor(board, amap, image_bytes, name)
    raise FirmwareError(
        f"{name}: board {board.name} does not start an image from a vector table at 0x{code.base:08x} "
        f"(the start of {code.name}): its boot ROM needs {boot.needs} (boot.needs in {board.path.name}); "
        "micro_rt does not emulate that boot ROM, so it cannot run this board's images from reset")


def _imxrt_flexspi_nor(board: Board, amap: AddressMap, image_bytes: ImageBytes, name: str) -> BootStart:
    boot = board.boot.flexspi_nor if board.boot is not None else None
    if boot is None:           # the board file's reader requires it for this kind
        raise ValueError(f"board {board.name}: boot.flexspi_nor missing")
    base = amap.code_region.base
    ivt_at = base + boot.ivt_offset
    what = f"{name}: board {board.name} boots from FlexSPI NOR flash"

    def refuse(problem: str) -> FirmwareError:
        return FirmwareError(f"{what}, and {problem}: its boot ROM would not start the image "
                             f"(boot in {board.path.name}; cortexm/system/boot_rom.py)")

    def header(name: str, address: int, nbytes: int, decode):
        raw = image_bytes(address, nbytes)
        if raw is None:
            raise refuse(f"the image holds no {nbytes}-byte {name} at 0x{address:08x}")
        try:
            return decode(raw)
        except BootHeaderError as e:
            raise refuse(f"the {name} at 0x{address:08x} is not one: {e}") from None

    config = header("FlexSPI NOR configuration block", base, FCB_BYTES, decode_configuration_block)
    ivt = header("image vector table (IVT)", ivt_at, IVT_BYTES, decode_ivt)
    if ivt.self_address != ivt_at:
        raise refuse(f"the IVT at 0x{ivt_at:08x} gives its own address (self) as 0x{ivt.self_address:08x}")
    if ivt.dcd:
        raise refuse(f"its IVT points to device configuration data (DCD) at 0x{ivt.dcd:08x}, whose "
                     "register writes micro_rt does not perform")
    data = image_bytes(ivt.boot_data, BOOT_DATA_BYTES) if ivt.boot_data else None
    if data is None:
        raise refuse(f"its IVT's boot data pointer 0x{ivt.boot_data:08x} is not in the image")
    start, size, plugin, _ = struct.unpack("<4I", data)
    if plugin:
        raise refuse(f"its boot data marks a plugin image (flag {plugin}), which micro_rt does not model")
    if start != base or size == 0:
        raise refuse(f"its boot data gives the image at 0x{start:08x}, {size} B, not one starting at "
                     f"the flash's base 0x{base:08x}")
    vectors = image_bytes(ivt.entry, 8)
    sp, reset = struct.unpack("<II", vectors) if vectors is not None else (0, 0)
    ram, code = amap.region_of(sp - 4) if sp >= 4 else None, amap.region_of(reset & ~1)
    if ram is None or not ram.kind.writable or not reset & 1 or code is None:
        raise refuse(f"its IVT's entry 0x{ivt.entry:08x} is not a vector table (an initial stack "
                     "pointer in RAM, then a Thumb reset vector): micro_rt starts the image from the "
                     "vector table the entry points at, as the MCUXpresso SDK writes it; code entered "
                     "directly would run on the boot ROM's stack, whose address micro_rt does not know")
    notes = [f"boot ROM (modelled): FlexSPI NOR configuration block at 0x{base:08x} "
             f"({config.describe_read()}), image vector table at 0x{ivt_at:08x}, boot data at "
             f"0x{ivt.boot_data:08x}; the IVT's entry 0x{ivt.entry:08x} taken as the image's vector "
             "table and VTOR set to it (the MCUXpresso SDK's convention; its header's comment calls "
             "entry the first instruction); the boot ROM's own time is not counted"]
    if ivt.csf:
        notes.append(f"the IVT points to a CSF at 0x{ivt.csf:08x}: the signature is not checked")
    if not config.same_reads(boot.config):
        notes.append(f"the image's configuration block asks FlexSPI for {config.describe_read()}; the "
                     f"board file's flash timing is for {boot.config.describe_read()} "
                     "(boot.flexspi_nor): its flash is priced by the board's figures")
    return BootStart(ivt.entry, tuple(notes))
