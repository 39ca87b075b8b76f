"""A part's boot ROM, as `micro-rt emulate` models it: what the ROM reads from the image before it
starts it, checked as the ROM would check it, and where the image starts.

Modelled, one for each board_records.BootKind. The i.MX RT's boot from FlexSPI NOR flash: the ROM
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

The RP2040's boot from QSPI flash: the ROM copies the first 256 bytes of flash (the boot
stage 2) to 0x20041f00, checks their CRC-32 and enters them with lr = 0 on its own stack (top
0x20041f00: pico-bootrom's bootrom.ld); the boot stage sets the SSI up for execute-in-place
and enters the image (layout: cortexm/boot_headers.py; the SSI and the flash:
system/rp2040_xip.py). The run starts at the boot stage, whose cycles count; the ROM's own
time (its flash reads and CRC) does not. The image's vector table is taken to be at 0x10000100,
where the pico-sdk's boot stage 2 enters it, for the initial stack pointer the run reports.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Optional

from micro_rt.errors import FirmwareError

from ..board_records import Board, BootKind
from ..boot_headers import (BOOT_DATA_BYTES, FCB_BYTES, IVT_BYTES, RP2040_BOOT_STAGE_2_BYTES,
                            RP2040_BOOT_STAGE_2_LOAD, BootHeaderError, check_boot_stage_2,
                            decode_configuration_block, decode_ivt)
from .address_map import AddressMap

ImageBytes = Callable[[int, int], Optional[bytes]]


@dataclass(frozen=True)
class BootStage:
    """Code the boot ROM copies into RAM and runs before the image (the RP2040's boot stage
    2): where it goes, its bytes, and the registers it is entered with."""
    load_address: int
    code: bytes
    sp: int
    lr: int


@dataclass(frozen=True)
class BootStart:
    """Where the boot ROM leaves the image: its vector table, the boot stage it runs first if
    any, and what the model took."""
    vector_table: int
    notes: tuple[str, ...] = ()
    stage: Optional[BootStage] = None


def boot_start(board: Board, amap: AddressMap, image_bytes: ImageBytes, name: str) -> BootStart:
    """The image's vector table on `board` (which has a boot record) after its boot ROM, or a
    FirmwareError naming what the ROM would not accept. image_bytes(address, n): the image's
    bytes there, None where it holds none."""
    boot = board.boot
    if boot is None:
        raise ValueError(f"board {board.name} has no boot record")
    if boot.kind is BootKind.IMXRT_FLEXSPI_NOR:
        return _imxrt_flexspi_nor(board, amap, image_bytes, name)
    return _rp2040_boot_stage_2(board, amap, image_bytes, name)


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


def _rp2040_boot_stage_2(board: Board, amap: AddressMap, image_bytes: ImageBytes, name: str) -> BootStart:
    base = amap.code_region.base
    what = f"{name}: board {board.name} boots from QSPI flash through a boot stage 2"
    raw = image_bytes(base, RP2040_BOOT_STAGE_2_BYTES)
    if raw is None:
        raise FirmwareError(f"{what}, and the image holds no {RP2040_BOOT_STAGE_2_BYTES}-byte boot stage 2 "
                            f"at 0x{base:08x}: its boot ROM would not start it (boot.needs in "
                            f"{board.path.name}: {board.boot.needs if board.boot else ''})")
    try:
        check_boot_stage_2(raw)
    except BootHeaderError as e:
        raise FirmwareError(f"{what}, and the {RP2040_BOOT_STAGE_2_BYTES} bytes at 0x{base:08x} are not "
                            f"one: {e}; the boot ROM would not run them (cortexm/system/boot_rom.py)") from None
    ram = amap.region_of(RP2040_BOOT_STAGE_2_LOAD)
    if ram is None or not ram.kind.writable or amap.region_of(RP2040_BOOT_STAGE_2_LOAD + len(raw) - 1) is not ram:
        raise ValueError(f"board {board.name}: no RAM region holds the boot stage 2's copy at "
                         f"0x{RP2040_BOOT_STAGE_2_LOAD:08x}")
    vectors = base + RP2040_BOOT_STAGE_2_BYTES
    notes = (f"boot ROM (modelled): the boot stage 2 at 0x{base:08x} (its CRC-32 checks) copied to "
             f"0x{RP2040_BOOT_STAGE_2_LOAD:08x} and entered with lr = 0 and the ROM's stack top "
             f"0x{RP2040_BOOT_STAGE_2_LOAD:08x}; its cycles count, the ROM's own time does not; the "
             f"image's vector table taken to be at 0x{vectors:08x}, where the pico-sdk's boot stage 2 "
             "enters it",)
    return BootStart(vectors, notes, BootStage(RP2040_BOOT_STAGE_2_LOAD, raw, RP2040_BOOT_STAGE_2_LOAD, 0))
