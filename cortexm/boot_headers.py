"""What a part's boot ROM reads before it starts an image, for the parts whose ROM does not start
one from a vector table at the start of flash. One home for their layout: `micro-rt export`
writes them (micro_rt/export_boot.py) and `micro-rt emulate`'s boot-ROM model reads them
(system/boot_rom.py).

The RP2040's boot stage 2: the first 256 bytes of flash, 252 of code and a CRC-32 of them in the
last 4 (little-endian); the ROM copies the 256 bytes to the top of SRAM (SRAM_END - 256,
0x20041f00) and checks crc32_small(buf, 252, 0xffffffff): MSB first, polynomial 0x04c11db7, no
reflection, no final XOR (bootrom/bootrom_main.c and bootrom_misc.S, raspberrypi/pico-bootrom
@ ef22cd8).

An i.MX RT booting from FlexSPI NOR flash: the FlexSPI NOR configuration block at the start of
the flash, the image vector table (IVT) after it and the boot data the IVT points to.

Layout and values, from NXP's MCUXpresso SDK (nxp-mcuxpresso/mcux-sdk @ 8a289764):
- the configuration block, 512 bytes: `flexspi_mem_config_t` (its fields' offsets are given in
  its comments) and the NOR fields after it, `flexspi_nor_config_t`;
  boards/evkmimxrt1060/xip/evkmimxrt1060_flexspi_nor_config.h. Tag 0x42464346 ("FCFB" read
  big-endian), version 0x56010400 ('V' 1.4.0); LUT instructions FLEXSPI_LUT_SEQ: operand bits
  0-7, pads code bits 8-9, opcode bits 10-15, and the second instruction in bits 16-31
  (FLEXSPI_LUT_OPERAND0_SHIFT 0, NUM_PADS0 8, OPCODE0 10, OPERAND1 16, NUM_PADS1 24, OPCODE1 26
  in devices/MIMXRT1062/MIMXRT1062.h); the read sequence is LUT sequence 0 (4 words a
  sequence, NOR_CMD_LUT_SEQ_IDX_READ 0).
- the IVT, 32 bytes: hdr, entry, reserved1, dcd, boot_data, self, csf, reserved2; hdr =
  IVT_TAG_HEADER 0xD1 | IVT_SIZE 0x2000 << 8 (the length 0x0020 big-endian) | version 0x41
  << 24; the boot data: start, size, plugin flag, a placeholder;
  devices/MIMXRT1062/xip/fsl_flexspi_nor_boot.h and fsl_flexspi_nor_boot.c. The SDK's entry is
  the image's vector table (IMAGE_ENTRY_ADDRESS __VECTOR_TABLE), though the header's comment
  calls it "the first instruction to execute".
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional


class BootHeaderError(ValueError):
    """A boot header that the boot ROM would not accept: what is wrong, in words."""


RP2040_BOOT_STAGE_2_BYTES = 256
RP2040_BOOT_STAGE_2_LOAD = 0x2004_2000 - RP2040_BOOT_STAGE_2_BYTES     # SRAM_END - 256
RP2040_CRC_POLYNOMIAL = 0x04C11DB7


def rp2040_crc32(data: bytes) -> int:
    """The RP2040 boot ROM's crc32_small(data, len, 0xffffffff)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ RP2040_CRC_POLYNOMIAL if crc & 0x8000_0000 else crc << 1) & 0xFFFFFFFF
    return crc


def encode_boot_stage_2(code: bytes) -> bytes:
    """The 256 bytes the ROM checks: `code` padded with zeros to 252, then its CRC."""
    room = RP2040_BOOT_STAGE_2_BYTES - 4
    if len(code) > room:
        raise BootHeaderError(f"a boot stage 2 holds at most {room} bytes of code, not {len(code)}")
    body = code + bytes(room - len(code))
    return body + struct.pack("<I", rp2040_crc32(body))


def check_boot_stage_2(raw: bytes) -> bytes:
    """The 256 bytes' code part, or a BootHeaderError saying why the ROM would not run it."""
    if len(raw) != RP2040_BOOT_STAGE_2_BYTES:
        raise BootHeaderError(f"{len(raw)} bytes, not {RP2040_BOOT_STAGE_2_BYTES}")
    body, (stored,) = raw[:-4], struct.unpack("<I", raw[-4:])
    crc = rp2040_crc32(body)
    if crc != stored:
        raise BootHeaderError(f"its CRC-32 word is 0x{stored:08x}; the 252 bytes before it give 0x{crc:08x}")
    return body


FCB_TAG = 0x42464346
FCB_VERSION = 0x56010400
FCB_BYTES = 512
IVT_TAG = 0xD1
IVT_BYTES = 32
IVT_HEADER = IVT_TAG | (0x2000 << 8) | (0x41 << 24)
BOOT_DATA_BYTES = 16
BOOT_DATA_PLACEHOLDER = 0xFFFFFFFF

# flexspi_mem_config_t / flexspi_nor_config_t field offsets (bytes)
OFF_TAG, OFF_VERSION = 0x000, 0x004
OFF_READ_SAMPLE_CLOCK, OFF_CS_HOLD, OFF_CS_SETUP = 0x00C, 0x00D, 0x00E
OFF_CONTROLLER_MISC = 0x040
OFF_DEVICE_TYPE, OFF_PAD_TYPE, OFF_SERIAL_CLOCK = 0x044, 0x045, 0x046
OFF_A1_SIZE = 0x050
OFF_LUT = 0x080
OFF_PAGE_SIZE, OFF_SECTOR_SIZE, OFF_IP_SERIAL_CLOCK, OFF_BLOCK_SIZE = 0x1C0, 0x1C4, 0x1C8, 0x1D0

LUT_OPCODES = {"STOP": 0x00, "CMD_SDR": 0x01, "RADDR_SDR": 0x02, "CADDR_SDR": 0x03, "MODE1_SDR": 0x04,
               "MODE2_SDR": 0x05, "MODE4_SDR": 0x06, "MODE8_SDR": 0x07, "WRITE_SDR": 0x08,
               "READ_SDR": 0x09, "DUMMY_SDR": 0x0C, "CMD_DDR": 0x21, "RADDR_DDR": 0x22,
               "READ_DDR": 0x29, "DUMMY_DDR": 0x2C}
PADS_CODE = {1: 0, 2: 1, 4: 2, 8: 3}                    # FLEXSPI_1PAD ... FLEXSPI_8PAD
SERIAL_CLOCK_MHZ = {1: 30, 2: 50, 3: 60, 4: 75, 5: 80, 6: 100, 7: 120, 8: 133, 9: 166}   # kFlexSpiSerialClk_*
READ_SEQUENCE_WORDS = 4                                 # LUT sequence 0, two instructions a word


@dataclass(frozen=True)
class LutInstruction:
    """One FlexSPI LUT instruction: opcode (a LUT_OPCODES name), data pads, operand."""
    opcode: str
    pads: int
    operand: int

    def __str__(self) -> str:
        return f"{self.opcode} {self.pads} pad{'s' if self.pads > 1 else ''} 0x{self.operand:02X}"


@dataclass(frozen=True)
class FlexSpiNorConfig:
    """The fields of a FlexSPI NOR configuration block micro_rt writes and reads: what the boot
    ROM configures FlexSPI's reads with. Values are the SDK's encodings (serial_clock: a
    kFlexSpiSerialClk_* value; read_sample_clock: kFlexSPIReadSampleClk_*)."""
    read_sample_clock: int
    cs_hold_time: int
    cs_setup_time: int
    controller_misc: int
    device_type: int
    pads: int
    serial_clock: int
    flash_bytes: int
    page_bytes: int
    sector_bytes: int
    block_bytes: int
    ip_serial_clock: int
    read_sequence: tuple[LutInstruction, ...]

    @property
    def serial_clock_mhz(self) -> Optional[int]:
        return SERIAL_CLOCK_MHZ.get(self.serial_clock)

    def describe_read(self) -> str:
        mhz = self.serial_clock_mhz
        clock = f"{mhz} MHz" if mhz is not None else f"serial clock code {self.serial_clock}"
        return f"{self.pads}-pad flash at {clock}, read sequence " + ", ".join(str(i) for i in self.read_sequence)

    def same_reads(self, other: "FlexSpiNorConfig") -> bool:
        """Whether the two configure the same reads: what the flash timing depends on."""
        return (self.serial_clock, self.pads, self.read_sequence, self.cs_hold_time, self.cs_setup_time) == \
            (other.serial_clock, other.pads, other.read_sequence, other.cs_hold_time, other.cs_setup_time)


def _lut_half(i: LutInstruction) -> int:
    return (i.operand & 0xFF) | PADS_CODE[i.pads] << 8 | LUT_OPCODES[i.opcode] << 10


def encode_configuration_block(c: FlexSpiNorConfig) -> bytes:
    """The 512-byte block, every field not named here zero (as the SDK's initialiser leaves it)."""
    out = bytearray(FCB_BYTES)
    struct.pack_into("<II", out, OFF_TAG, FCB_TAG, FCB_VERSION)
    struct.pack_into("<BBB", out, OFF_READ_SAMPLE_CLOCK, c.read_sample_clock, c.cs_hold_time, c.cs_setup_time)
    struct.pack_into("<I", out, OFF_CONTROLLER_MISC, c.controller_misc)
    struct.pack_into("<BBB", out, OFF_DEVICE_TYPE, c.device_type, c.pads, c.serial_clock)
    struct.pack_into("<I", out, OFF_A1_SIZE, c.flash_bytes)
    seq = list(c.read_sequence) + [LutInstruction("STOP", 1, 0)] * (2 * READ_SEQUENCE_WORDS - len(c.read_sequence))
    for k in range(READ_SEQUENCE_WORDS):
        struct.pack_into("<I", out, OFF_LUT + 4 * k, _lut_half(seq[2 * k]) | _lut_half(seq[2 * k + 1]) << 16)
    struct.pack_into("<II", out, OFF_PAGE_SIZE, c.page_bytes, c.sector_bytes)
    struct.pack_into("<B", out, OFF_IP_SERIAL_CLOCK, c.ip_serial_clock)
    struct.pack_into("<I", out, OFF_BLOCK_SIZE, c.block_bytes)
    return bytes(out)


def decode_configuration_block(raw: bytes) -> FlexSpiNorConfig:
    """The fields back from a block (BootHeaderError: a wrong tag or version, an unknown LUT
    opcode or pads code in the read sequence)."""
    if len(raw) < FCB_BYTES:
        raise BootHeaderError(f"{len(raw)} B where the {FCB_BYTES}-byte configuration block should be")
    tag, version = struct.unpack_from("<II", raw, OFF_TAG)
    if tag != FCB_TAG:
        raise BootHeaderError(f"its tag is 0x{tag:08x}, not 0x{FCB_TAG:08x} ('FCFB')")
    if version >> 24 != ord("V") or (version >> 16) & 0xFF != 1:
        raise BootHeaderError(f"its version is 0x{version:08x}, not 'V' 1.x (0x{FCB_VERSION:08x})")
    names = {v: k for k, v in LUT_OPCODES.items()}
    pads = {v: k for k, v in PADS_CODE.items()}
    halves = []
    for k in range(READ_SEQUENCE_WORDS):
        word = struct.unpack_from("<I", raw, OFF_LUT + 4 * k)[0]
        halves += [word & 0xFFFF, word >> 16]
    sequence = []
    for i, half in enumerate(halves):
        opcode = half >> 10
        if opcode not in names:
            raise BootHeaderError(f"instruction {i} of the read sequence (LUT sequence 0) has the "
                                  f"unknown opcode 0x{opcode:02x}")
        if names[opcode] == "STOP":
            break
        sequence.append(LutInstruction(names[opcode], pads[(half >> 8) & 3], half & 0xFF))
    rsc, hold, setup = struct.unpack_from("<BBB", raw, OFF_READ_SAMPLE_CLOCK)
    misc = struct.unpack_from("<I", raw, OFF_CONTROLLER_MISC)[0]
    device, pad_type, clock = struct.unpack_from("<BBB", raw, OFF_DEVICE_TYPE)
    flash = struct.unpack_from("<I", raw, OFF_A1_SIZE)[0]
    page, sector = struct.unpack_from("<II", raw, OFF_PAGE_SIZE)
    ip_clock = raw[OFF_IP_SERIAL_CLOCK]
    block = struct.unpack_from("<I", raw, OFF_BLOCK_SIZE)[0]
    return FlexSpiNorConfig(rsc, hold, setup, misc, device, pad_type, clock, flash, page, sector, block,
                            ip_clock, tuple(sequence))


@dataclass(frozen=True)
class ImageVectorTable:
    entry: int
    dcd: int
    boot_data: int
    self_address: int
    csf: int


def encode_ivt(entry: int, boot_data: int, self_address: int) -> tuple[int, ...]:
    """The IVT's 8 words, no DCD or CSF (what the SDK writes for an XIP image)."""
    return (IVT_HEADER, entry, 0, 0, boot_data, self_address, 0, 0)


def decode_ivt(raw: bytes) -> ImageVectorTable:
    if len(raw) < IVT_BYTES:
        raise BootHeaderError(f"{len(raw)} B where the {IVT_BYTES}-byte image vector table should be")
    hdr, entry, _r1, dcd, boot_data, self_address, csf, _r2 = struct.unpack_from("<8I", raw)
    tag, length, version = hdr & 0xFF, (hdr >> 8) & 0xFFFF, hdr >> 24
    if tag != IVT_TAG:
        raise BootHeaderError(f"its header tag is 0x{tag:02x}, not 0x{IVT_TAG:02x}")
    if int.from_bytes(length.to_bytes(2, "little"), "big") != IVT_BYTES:
        raise BootHeaderError(f"its header gives the length 0x{length:04x} (big-endian), not {IVT_BYTES}")
    if version >> 4 != 4:
        raise BootHeaderError(f"its header version is 0x{version:02x}, not 4.x")
    return ImageVectorTable(entry, dcd, boot_data, self_address, csf)


def encode_boot_data(start: int, size: int) -> tuple[int, ...]:
    return (start, size, 0, BOOT_DATA_PLACEHOLDER)
