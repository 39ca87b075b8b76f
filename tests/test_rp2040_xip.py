"""The RP2040's execute-in-place path as `micro-rt emulate` models it (cortexm/system/rp2040_xip.py):
the boot stage 2's CRC as the boot ROM computes it, the SSI and the W25Q flash answering a boot
stage's commands, and the check that XIP reads return the flash once the image is entered.
tests/test_export_boot.py runs micro_rt's own boot stage 2 (the exported Pico project)."""
from __future__ import annotations

import pytest

from micro_rt.cortexm.boards import load_board
from micro_rt.cortexm.boot_headers import (BootHeaderError, check_boot_stage_2, encode_boot_stage_2,
                                           rp2040_crc32)
from micro_rt.cortexm.firmware_build import RP2040_BOOT_STAGE_2
from micro_rt.cortexm.system.rp2040_xip import (BAUDR, CTRLR0, CTRLR1, DR0, SPI_CTRLR0, SR, SR_RFNE, SSIENR,
                                                QspiFlash, Ssi)

QUAD_READ = (2 << 21) | (31 << 16) | (3 << 8)
ENTER = (4 << 11) | (2 << 8) | (8 << 2) | 1            # EBh in serial, address in quad
XIP = (0xA0 << 24) | (4 << 11) | (8 << 2) | 2          # no command, mode bits 0xa0


def test_crc_is_the_boot_roms():
    """crc32_small: CRC-32/MPEG-2 (its check value over "123456789" is 0x0376e6e7)."""
    assert rp2040_crc32(b"123456789") == 0x0376E6E7
    assert rp2040_crc32(b"") == 0xFFFFFFFF


def test_boot_stage_encoding_pads_checks_and_refuses():
    code = RP2040_BOOT_STAGE_2.read_bytes()
    assert 100 < len(code) <= 252
    raw = encode_boot_stage_2(code)
    assert len(raw) == 256 and raw[:len(code)] == code and check_boot_stage_2(raw)[:len(code)] == code
    with pytest.raises(BootHeaderError, match="its CRC-32 word is 0x"):
        check_boot_stage_2(bytes([raw[0] ^ 0x80]) + raw[1:])
    with pytest.raises(BootHeaderError, match="at most 252 bytes of code, not 253"):
        encode_boot_stage_2(bytes(253))
    with pytest.raises(BootHeaderError, match="255 bytes, not 256"):
        check_boot_stage_2(raw[:-1])


def _status(ssi: Ssi, command: int) -> int:
    ssi.write(DR0, command)
    ssi.write(DR0, command)
    assert ssi.read(SR) & SR_RFNE
    ssi.read(DR0)
    return ssi.read(DR0)


def _boot(ssi: Ssi, set_qe: bool = True, dummy_read: bool = True, divider: int = 2) -> None:
    """A boot stage's sequence, as the pico-sdk's boot2_w25q080 and micro_rt's run it."""
    ssi.write(SSIENR, 0)
    ssi.write(BAUDR, divider)
    ssi.write(CTRLR0, 7 << 16)
    ssi.write(SSIENR, 1)
    if set_qe and not _status(ssi, 0x35) & 2:
        ssi.write(DR0, 0x06)
        ssi.read(SR)
        ssi.read(DR0)
        for byte in (0x01, 0x00, 0x02):
            ssi.write(DR0, byte)
        ssi.read(SR)
        assert [ssi.read(DR0) for _ in range(3)] == [0xFF] * 3
        assert not _status(ssi, 0x05) & 1
    ssi.write(SSIENR, 0)
    ssi.write(CTRLR0, QUAD_READ)
    ssi.write(CTRLR1, 0)
    ssi.write(SPI_CTRLR0, ENTER)
    ssi.write(SSIENR, 1)
    if dummy_read:
        ssi.write(DR0, 0xEB)
        ssi.write(DR0, 0xA0)
        ssi.read(SR)
    ssi.write(SSIENR, 0)
    ssi.write(SPI_CTRLR0, XIP)
    ssi.write(SSIENR, 1)


def test_the_boot_sequence_leaves_xip_reads_the_board_figures_are_for():
    notes: list[str] = []
    flash = QspiFlash()
    ssi = Ssi(flash, notes)
    assert ssi.xip_problem() == ("the SSI is not in EEPROM-read mode with 32-bit frames (CTRLR0 "
                                 "0x00070000), so XIP accesses are not turned into flash reads")
    _boot(ssi)
    assert flash.sr2 == 2 and flash.continuous and not flash.sr1
    assert ssi.xip_problem() is None and not notes and not flash.unmodelled
    assert ssi.xip_read().same_as(load_board("raspberry-pi-pico").boot.xip)
    # a second boot (QE already set, as non-volatile) writes no status register
    ssi2 = Ssi(QspiFlash(sr2=2), notes)
    _boot(ssi2)
    assert ssi2.xip_problem() is None


@pytest.mark.parametrize("changes,problem", [
    (dict(set_qe=False), "quad reads need the flash's QE bit (status register 2), which is clear"),
    (dict(dummy_read=False), "the SSI sends no command, and the flash is not in continuous-read mode"),
    (dict(divider=3), "the SSI's clock divider BAUDR 3 is not an even number of 2 or more"),
])
def test_a_boot_sequence_that_misses_a_step_leaves_xip_unready(changes, problem):
    ssi = Ssi(QspiFlash(), [])
    _boot(ssi, **changes)
    assert ssi.xip_problem().startswith(problem)


def test_configuration_written_while_enabled_is_dropped_and_noted():
    notes: list[str] = []
    ssi = Ssi(QspiFlash(), notes)
    ssi.write(BAUDR, 4)                      # enabled, as the boot ROM leaves it
    assert ssi.read(BAUDR) == 6
    assert notes == ["SSI register 0x18000014 written while the SSI is enabled: the write is dropped, "
                     "as on the part"]


def test_unmodelled_flash_commands_answer_ff_and_are_listed():
    flash = QspiFlash()
    ssi = Ssi(flash, [])
    ssi.write(DR0, 0x9F)                     # JEDEC ID
    ssi.write(DR0, 0)
    ssi.read(SR)
    assert [ssi.read(DR0), ssi.read(DR0)] == [0xFF, 0xFF]
    assert flash.unmodelled == [0x9F]


def test_a_status_write_without_write_enable_changes_nothing():
    flash = QspiFlash()
    assert flash.serial([0x01, 0x00, 0x02]) == [0xFF] * 3
    assert flash.sr2 == 0
