"""The i.MX RT boot ROM as `micro-rt emulate` models it (cortexm/system/boot_rom.py): the FlexSPI
NOR configuration block, the image vector table and the boot data that `export` writes
(cortexm/boot_headers.py) are read back as written, and every header the ROM would not accept
is a FirmwareError naming what is wrong; a board file's boot record is checked field by field."""
from __future__ import annotations

import json
import struct
from dataclasses import replace

import pytest

from micro_rt.cortexm.board_file import load_board_file
from micro_rt.cortexm.boards import load_board
from micro_rt.cortexm.boot_headers import (FCB_BYTES, IVT_HEADER, LutInstruction, decode_configuration_block,
                                           encode_boot_data, encode_configuration_block, encode_ivt)
from micro_rt.cortexm.system.address_map import board_map
from micro_rt.cortexm.system.boot_rom import boot_start
from micro_rt.errors import FirmwareError, InputError

BOARD = load_board("mimxrt1060-evk")
BASE = 0x6000_0000
IVT = BASE + 0x1000
VECTORS = BASE + 0x2000


def _image(**changes) -> dict[int, bytes]:
    """A header as export writes it, {address: bytes}; `changes` replace words or blocks."""
    config = encode_configuration_block(BOARD.boot.flexspi_nor.config)
    ivt = list(encode_ivt(VECTORS, IVT + 0x20, IVT))
    data = list(encode_boot_data(BASE, 8 << 20))
    for key, value in changes.items():
        if key == "config":
            config = value
        elif key.startswith("ivt"):
            ivt[int(key[3:])] = value
        elif key.startswith("data"):
            data[int(key[4:])] = value
    vectors = struct.pack("<II", 0x2002_0000, VECTORS + 0x41)
    return {BASE: config, IVT: struct.pack("<8I", *ivt), IVT + 0x20: struct.pack("<4I", *data),
            VECTORS: vectors + bytes(56), VECTORS + 0x40: bytes(16)}


def _reader(image: dict[int, bytes]):
    def read(addr: int, n: int):
        for start, raw in image.items():
            if start <= addr and addr + n <= start + len(raw):
                return raw[addr - start:addr - start + n]
        return None
    return read


def _start(image: dict[int, bytes]):
    return boot_start(BOARD, board_map(BOARD), _reader(image), "app.elf")


def test_the_header_export_writes_starts_at_its_vector_table():
    start = _start(_image())
    assert start.vector_table == VECTORS
    assert "boot ROM (modelled): FlexSPI NOR configuration block at 0x60000000 (4-pad flash at 120 MHz" in start.notes[0]
    assert len(start.notes) == 1                       # the board's reads: no note of a difference
    assert IVT_HEADER == 0x412000D1                    # the SDK's IVT_HEADER
    raw = encode_configuration_block(BOARD.boot.flexspi_nor.config)
    # the SDK's read LUT words for CMD_SDR 1 pad 0xEB, RADDR_SDR 4 pads 24 bits; DUMMY 6, READ
    assert struct.unpack_from("<2I", raw, 0x80) == (0x0A1804EB, 0x26043206)
    assert decode_configuration_block(raw) == BOARD.boot.flexspi_nor.config


def test_a_block_asking_for_other_reads_is_noted():
    config = replace(BOARD.boot.flexspi_nor.config, serial_clock=6,
                     read_sequence=(LutInstruction("CMD_SDR", 1, 0x03), LutInstruction("RADDR_SDR", 1, 0x18),
                                    LutInstruction("READ_SDR", 1, 0x04)))
    start = _start(_image(config=encode_configuration_block(config)))
    assert start.vector_table == VECTORS
    assert ("the image's configuration block asks FlexSPI for 4-pad flash at 100 MHz, read sequence "
            "CMD_SDR 1 pad 0x03") in start.notes[1]
    assert "its flash is priced by the board's figures" in start.notes[1]


@pytest.mark.parametrize("changes,problem", [
    ({"config": bytes(FCB_BYTES)}, "the FlexSPI NOR configuration block at 0x60000000 is not one: its tag is 0x00000000"),
    ({"config": struct.pack("<II", 0x42464346, 0x57020000) + bytes(FCB_BYTES - 8)}, "its version is 0x57020000"),
    ({"ivt0": 0x412000D2}, "the image vector table (IVT) at 0x60001000 is not one: its header tag is 0xd2"),
    ({"ivt0": 0x410020D1}, "its header gives the length 0x0020 (big-endian), not 32"),
    ({"ivt5": IVT + 4}, "gives its own address (self) as 0x60001004"),
    ({"ivt3": BASE + 0x1100}, "device configuration data (DCD) at 0x60001100"),
    ({"ivt4": 0x7000_0000}, "boot data pointer 0x70000000 is not in the image"),
    ({"data2": 1}, "marks a plugin image"),
    ({"data0": BASE + 0x100}, "gives the image at 0x60000100"),
    ({"ivt1": VECTORS + 0x41}, "entry 0x60002041 is not a vector table"),
])
def test_a_header_the_boot_rom_would_not_accept_is_named(changes, problem):
    with pytest.raises(FirmwareError) as e:
        _start(_image(**changes))
    assert "app.elf: board mimxrt1060-evk boots from FlexSPI NOR flash" in str(e.value)
    assert problem in str(e.value), str(e.value)
    assert "its boot ROM would not start the image" in str(e.value)


def test_an_image_without_a_header_is_refused():
    with pytest.raises(FirmwareError, match="holds no 512-byte FlexSPI NOR configuration block at 0x60000000"):
        _start({VECTORS: bytes(64)})


@pytest.mark.parametrize("field,value,problem", [
    ("kind", "uefi", "field 'boot.kind' must be one of rp2040-boot-stage-2, imxrt-flexspi-nor"),
    ("flexspi_nor.pads", 3, "field 'boot.flexspi_nor.pads' must be one of 1, 2, 4, 8, not 3"),
    ("flexspi_nor.serial_clock", 12, "field 'boot.flexspi_nor.serial_clock' must be a kFlexSpiSerialClk_* value"),
    ("flexspi_nor.vectors_offset", 12300, "field 'boot.flexspi_nor.vectors_offset' (12300) must be a multiple of 512"),
    ("flexspi_nor.ivt_offset", 8192, "field 'boot.flexspi_nor.ivt_offset' (8192) must be word-aligned"),
    ("flexspi_nor.read_sequence", [["JUMP", 1, "0xEB"]], "field 'boot.flexspi_nor.read_sequence[0]' must be [opcode"),
    ("flexspi_nor.read_sequence", [["CMD_SDR", 1, "0x1EB"]], "operand must be a hex byte"),
    ("flexspi_nor.flash_bytes", 4096, "field 'boot.flexspi_nor.flash_bytes' (4096) is smaller than QSPI_FLASH"),
    ("flexspi_nor", None, "field 'boot.flexspi_nor' is missing (boot.kind imxrt-flexspi-nor needs it)"),
])
def test_a_boot_record_out_of_range_is_named(tmp_path, field, value, problem):
    data = json.loads(BOARD.path.read_text())
    where, _, key = field.rpartition(".")
    target = data["boot"][where] if where else data["boot"]
    if value is None:
        del target[key]
    else:
        target[key] = value
    path = tmp_path / "mimxrt1060-evk.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as e:
        load_board_file(path)
    assert str(e.value).startswith(f"board file {path}: ") and problem in str(e.value), str(e.value)


@pytest.mark.parametrize("board,header", [("mimxrt1060-evk", 0x2000), ("raspberry-pi-pico", 256),
                                          ("nucleo-l4r5zi", 0)])
def test_the_flash_budget_leaves_the_boot_header_out(board, header):
    """fit / boards judge flash against the code region less what the boot ROM reads first."""
    from micro_rt.run_setup import board_setup
    b = load_board(board)
    setup = board_setup(board)
    assert setup.flash_budget == b.memory.region(b.memory.code_region).size - header
    assert (f"less the {header:,} B its boot ROM reads before the image" in setup.budget_source) == bool(header)
