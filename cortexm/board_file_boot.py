"""A board file's `boot` section: how the part's boot ROM finds the image (the i.MX RT's FlexSPI
NOR boot with its configuration block, the RP2040's boot stage 2 and the XIP set-up it leaves),
each field checked against the header layouts of cortexm/boot_headers.py."""
from __future__ import annotations

from .board_fields import Fields
from .board_records import BootHeader, BootKind, FlexSpiNorBoot, MemoryMap, Rp2040XipBoot, XipFrames
from .boot_headers import (BOOT_DATA_BYTES, FCB_BYTES, IVT_BYTES, LUT_OPCODES, PADS_CODE,
                           READ_SEQUENCE_WORDS, SERIAL_CLOCK_MHZ, FlexSpiNorConfig, LutInstruction)

__all__ = ["boot_header"]


def boot_header(f: Fields, memory: MemoryMap) -> BootHeader:
    """The board's `boot` section: how its boot ROM finds the image, and the header it reads."""
    f.check_keys(("kind", "needs", "cite"), ("flexspi_nor", "xip"))
    kind = BootKind(f.choice("kind", [k.value for k in BootKind]))
    needs, citations = f.text("needs"), f.citations()
    flexspi = xip = None
    owners = (("flexspi_nor", BootKind.IMXRT_FLEXSPI_NOR), ("xip", BootKind.RP2040_BOOT_STAGE_2))
    for key, owner in owners:
        if kind is not owner and key in f.data:
            f.fail(f.at(key), f"is only for boot.kind {owner.value}")
    for key, owner in owners:
        if kind is owner and key not in f.data:
            f.fail(f.at(key), f"is missing (boot.kind {kind.value} needs it)")
    if kind is BootKind.IMXRT_FLEXSPI_NOR:
        flexspi = _flexspi_nor(f.obj("flexspi_nor"), memory)
    if kind is BootKind.RP2040_BOOT_STAGE_2:
        xip = _rp2040_xip(f.obj("xip"))
    return BootHeader(kind, needs, citations, flexspi, xip)


def _rp2040_xip(f: Fields) -> Rp2040XipBoot:
    f.check_keys(("clock_divider", "frames", "wait_cycles", "continuous"))
    divider = f.count("clock_divider", 2)
    if divider % 2 or divider > 0xFFFE:
        f.fail(f.at("clock_divider"), f"must be an even number, 2 to 65534 (the SSI's BAUDR), not {divider}")
    wait = f.count("wait_cycles")
    if wait > 31:
        f.fail(f.at("wait_cycles"), f"must be 0 to 31 (SPI_CTRLR0.WAIT_CYCLES), not {wait}")
    return Rp2040XipBoot(divider, XipFrames(f.choice("frames", [x.value for x in XipFrames])), wait,
                         f.get("continuous", bool))


def _flexspi_nor(f: Fields, memory: MemoryMap) -> FlexSpiNorBoot:
    """The configuration block's fields (cortexm/boot_headers.py), each in its range."""
    f.check_keys(("ivt_offset", "vectors_offset", "read_sample_clock", "cs_hold_time", "cs_setup_time",
                  "controller_misc", "device_type", "pads", "serial_clock", "flash_bytes", "page_bytes",
                  "sector_bytes", "block_bytes", "ip_serial_clock", "read_sequence"))
    code = memory.region(memory.code_region)
    ivt, vectors = f.count("ivt_offset", FCB_BYTES), f.count("vectors_offset", 1)
    if ivt % 4 or ivt + IVT_BYTES + BOOT_DATA_BYTES > vectors:
        f.fail(f.at("ivt_offset"), f"({ivt}) must be word-aligned, after the {FCB_BYTES}-byte "
                                    f"configuration block, with the IVT and boot data before vectors_offset ({vectors})")
    if vectors % 512 or vectors >= code.size:
        f.fail(f.at("vectors_offset"), f"({vectors}) must be a multiple of 512 inside {code.name}")
    byte = {}
    for key, top in (("read_sample_clock", 3), ("cs_hold_time", 255), ("cs_setup_time", 255),
                     ("device_type", 255), ("ip_serial_clock", 255)):
        byte[key] = f.count(key)
        if byte[key] > top:
            f.fail(f.at(key), f"must be 0 to {top}, not {byte[key]}")
    pads = f.count("pads", 1)
    if pads not in PADS_CODE:
        f.fail(f.at("pads"), f"must be one of {', '.join(map(str, PADS_CODE))}, not {pads}")
    clock = f.count("serial_clock", 1)
    if clock not in SERIAL_CLOCK_MHZ:
        f.fail(f.at("serial_clock"), f"must be a kFlexSpiSerialClk_* value, 1 to {max(SERIAL_CLOCK_MHZ)}, "
                                      f"not {clock}")
    sizes = {k: f.count(k, 1) for k in ("flash_bytes", "page_bytes", "sector_bytes", "block_bytes")}
    if sizes["flash_bytes"] < code.size:
        f.fail(f.at("flash_bytes"), f"({sizes['flash_bytes']}) is smaller than {code.name} ({code.size})")
    sequence = []
    for i, raw in enumerate(f.items("read_sequence")):
        where = f"{f.at('read_sequence')}[{i}]"
        if (not isinstance(raw, list) or len(raw) != 3 or raw[0] not in LUT_OPCODES or raw[0] == "STOP"
                or raw[1] not in PADS_CODE or not isinstance(raw[2], str)):
            f.fail(where, f"must be [opcode, pads, \"0xNN\"] with an opcode of {', '.join(LUT_OPCODES)} "
                          f"(not STOP) and pads 1, 2, 4 or 8, not {raw!r}")
        try:
            operand = int(raw[2], 16)
        except ValueError:
            operand = -1
        if not 0 <= operand <= 0xFF:
            f.fail(where, f"operand must be a hex byte, not {raw[2]!r}")
        sequence.append(LutInstruction(raw[0], raw[1], operand))
    if not 1 <= len(sequence) <= 2 * READ_SEQUENCE_WORDS:
        f.fail(f.at("read_sequence"), f"must hold 1 to {2 * READ_SEQUENCE_WORDS} instructions (LUT sequence 0)")
    misc = f.count("controller_misc")
    config = FlexSpiNorConfig(byte["read_sample_clock"], byte["cs_hold_time"], byte["cs_setup_time"], misc,
                              byte["device_type"], pads, clock, sizes["flash_bytes"], sizes["page_bytes"],
                              sizes["sector_bytes"], sizes["block_bytes"], byte["ip_serial_clock"],
                              tuple(sequence))
    return FlexSpiNorBoot(ivt, vectors, config)
