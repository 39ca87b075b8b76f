"""The RP2040's execute-in-place path as a boot stage 2 sets it up: the SSI (a Synopsys
DW_apb_ssi at XIP_SSI_BASE), the QSPI pads and the W25Q-series flash behind them (the Pico's).

What a boot stage 2 does, and what the model keeps of it:
- its status-register commands (standard SPI, 8-bit frames, transmit and receive) reach the
  flash, which answers them (a flash in continuous-read mode would take them for an address;
  the model takes them as commands, as after the ROM's 0xff exit sequence): read status 1 and 2 (05h, 35h), write enable (06h), write status
  (01h: SR1 then SR2), write disable (04h). A status write is done at once: its BUSY bit is
  never seen set. Other commands are answered with 0xff bytes and listed in the run's notes.
- its quad I/O fast read (EBh) with continuous-read mode bits (M5-4 = 10) leaves the flash
  expecting no command on the next read.
- the SSI's control registers take a write only while the SSI is disabled (SSIENR 0), as the
  RP2040 datasheet says of DW_apb_ssi; a write while enabled is dropped and noted.
- transfer time is not modelled: the frames pushed since the last look are one transfer (chip
  select held), done when the program next reads SR, TXFLR, RXFLR or DR0. That is how the
  program sees them at a clock divider of 2 or more, where pushing frames is faster than
  shifting them out.

When the image is first entered (the first instruction fetched from the XIP window), the SSI
must be set up for reads the flash answers with its contents: EEPROM-read mode with 32-bit
frames, and either standard 03h reads, or quad EBh reads with the flash's QE bit set (sending
the command, or none with the flash in continuous-read mode and XIP_CMD holding continuous
mode bits). Otherwise the run ends there (XipReadiness.problem). Register offsets and fields:
src/rp2040/hardware_regs/include/hardware/regs/ssi.h and pads_qspi.h, raspberrypi/pico-sdk @
a1438df; the flash commands: the pico-sdk's boot2_w25q080.S (same commit), which sets the QE bit
with 01h because the W25Q080 has no 31h.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import unicorn

from ..board_records import Rp2040XipBoot, XipFrames
from ..memory_map import PAGE

XIP_SSI_BASE = 0x1800_0000
PADS_QSPI_BASE = 0x4002_0000

CTRLR0, CTRLR1, SSIENR, SER, BAUDR = 0x00, 0x04, 0x08, 0x10, 0x14
TXFLR, RXFLR, SR, DR0 = 0x20, 0x24, 0x28, 0x60
RX_SAMPLE_DLY, SPI_CTRLR0 = 0xF0, 0xF4
# written only while the SSI is disabled
CONFIGURATION = (CTRLR0, CTRLR1, BAUDR, RX_SAMPLE_DLY, SPI_CTRLR0)
SR_TFNF, SR_TFE, SR_RFNE = 0x02, 0x04, 0x08

FRF_STD, FRF_DUAL, FRF_QUAD = 0, 1, 2
TMOD_TX_AND_RX, TMOD_EEPROM_READ = 0, 3
INST_L_BITS = {0: 0, 1: 4, 2: 8, 3: 16}

# the pads' reset values (pads_qspi.h): VOLTAGE_SELECT, SCLK, SD0-3, SS
PADS_RESET = {0x00: 0x00, 0x04: 0x56, 0x08: 0x52, 0x0C: 0x52, 0x10: 0x52, 0x14: 0x52, 0x18: 0x5A}

CMD_WRITE_STATUS, CMD_READ_STATUS, CMD_WRITE_DISABLE, CMD_WRITE_ENABLE = 0x01, 0x05, 0x04, 0x06
CMD_READ_DATA, CMD_READ_STATUS2, CMD_QUAD_IO_READ = 0x03, 0x35, 0xEB
SR1_WEL, SR2_QE = 0x02, 0x02


def continuous_mode_bits(mode: int) -> bool:
    """W25Q EBh: mode bits M5-4 = (1, 0) keep the flash in continuous-read mode."""
    return (mode >> 4) & 0x3 == 0x2


@dataclass
class QspiFlash:
    """The W25Q-series flash's command state: its status registers and continuous-read mode.
    SR2's QE is non-volatile, 0 as the part leaves the factory."""
    sr1: int = 0
    sr2: int = 0
    continuous: bool = False
    unmodelled: list = field(default_factory=list)        # commands answered with 0xff

    def serial(self, frames: list[int]) -> list[int]:
        """One standard-SPI transfer (chip select held over the frames): the bytes back."""
        if not frames:
            return []
        self.continuous = False
        cmd, args = frames[0] & 0xFF, [f & 0xFF for f in frames[1:]]
        back = [0xFF] * len(frames)
        if cmd == CMD_READ_STATUS:
            back = [0xFF] + [self.sr1] * len(args)
        elif cmd == CMD_READ_STATUS2:
            back = [0xFF] + [self.sr2] * len(args)
        elif cmd == CMD_WRITE_ENABLE:
            self.sr1 |= SR1_WEL
        elif cmd == CMD_WRITE_DISABLE:
            self.sr1 &= ~SR1_WEL
        elif cmd == CMD_WRITE_STATUS:
            if self.sr1 & SR1_WEL and args:
                self.sr1 = args[0] & 0xFC                # BUSY and WEL are not written
                if len(args) > 1:
                    self.sr2 = args[1]
            self.sr1 &= ~SR1_WEL
        elif cmd not in self.unmodelled:
            self.unmodelled.append(cmd)
        return back

    def quad_read(self, command: Optional[int], mode: int) -> None:
        """An EBh read (command None: a read in continuous-read mode) ending in mode bits."""
        if command is not None and command != CMD_QUAD_IO_READ:
            if command not in self.unmodelled:
                self.unmodelled.append(command)
            return
        self.continuous = continuous_mode_bits(mode)


@dataclass(frozen=True)
class XipRead:
    """The reads the SSI turns an XIP access into, as a boot stage 2 left them."""
    clock_divider: int
    frame_format: int            # FRF_STD / FRF_DUAL / FRF_QUAD
    command: Optional[int]       # None: no command (continuous-read mode)
    mode_bits: Optional[int]     # XIP_CMD sent after the address when there is no command
    wait_cycles: int

    def same_as(self, board: Rp2040XipBoot) -> bool:
        """Whether these are the reads the board file's flash figures are for."""
        frames = {FRF_STD: XipFrames.STANDARD, FRF_QUAD: XipFrames.QUAD}.get(self.frame_format)
        return (self.clock_divider, frames, self.wait_cycles, self.command is None) == (
            board.clock_divider, board.frames, board.wait_cycles, board.continuous)

    def describe(self) -> str:
        lanes = {FRF_STD: "standard", FRF_DUAL: "dual", FRF_QUAD: "quad"}.get(self.frame_format, "?")
        cmd = (f"no command (continuous-read mode bits 0x{self.mode_bits or 0:02x})" if self.command is None
               else f"command 0x{self.command:02x}")
        return (f"{lanes} SPI reads, {cmd}, {self.wait_cycles} wait cycles, SCLK = clk_sys / "
                f"{self.clock_divider}")


class Ssi:
    """The SSI's registers and FIFOs, driving a QspiFlash."""

    def __init__(self, flash: QspiFlash, notes: list[str]):
        self.flash = flash
        self.notes = notes
        # as the boot ROM leaves it (pico-bootrom's flash_init_spi: BAUDR 6, standard SPI with
        # 8-bit frames transmit and receive, slave 0 selected, enabled)
        self.regs = {CTRLR0: 7 << 16, CTRLR1: 0, SSIENR: 1, SER: 1, BAUDR: 6, RX_SAMPLE_DLY: 0,
                     SPI_CTRLR0: 0}
        self.tx: list[int] = []
        self.rx: list[int] = []

    def field(self, reg: int, lsb: int, width: int) -> int:
        return (self.regs.get(reg, 0) >> lsb) & ((1 << width) - 1)

    @property
    def enabled(self) -> bool:
        return bool(self.regs[SSIENR] & 1)

    def _finish(self) -> None:
        """The frames pushed since the last look, as one transfer."""
        if not self.tx:
            return
        frames, self.tx = self.tx, []
        frf, tmod = self.field(CTRLR0, 21, 2), self.field(CTRLR0, 8, 2)
        if frf == FRF_STD and tmod == TMOD_TX_AND_RX:
            self.rx += self.flash.serial(frames)
        elif frf == FRF_QUAD and tmod == TMOD_EEPROM_READ:
            has_command = self.field(SPI_CTRLR0, 8, 2) != 0
            command = frames[0] & 0xFF if has_command else None
            address = frames[1 if has_command else 0] if len(frames) > has_command else 0
            mode = address & 0xFF if has_command else self.field(SPI_CTRLR0, 24, 8)
            self.flash.quad_read(command, mode)
            self.rx += [0] * (self.field(CTRLR1, 0, 16) + 1)
        else:
            self.notes.append(f"SSI transfer in CTRLR0 0x{self.regs[CTRLR0]:08x} (frame format {frf}, "
                              f"transfer mode {tmod}) not modelled: {len(frames)} frames dropped")

    def read(self, offset: int) -> int:
        if offset in (SR, TXFLR, RXFLR, DR0):
            self._finish()
        if offset == SR:
            return SR_TFNF | SR_TFE | (SR_RFNE if self.rx else 0)
        if offset == TXFLR:
            return 0
        if offset == RXFLR:
            return len(self.rx)
        if offset == DR0:
            return self.rx.pop(0) if self.rx else 0
        return self.regs.get(offset, 0)

    def write(self, offset: int, value: int) -> None:
        if offset == DR0:
            if self.enabled:
                self.tx.append(value)
            return
        if offset == SSIENR:
            if not value & 1:
                self._finish()
                self.tx, self.rx = [], []
            self.regs[SSIENR] = value & 1
            return
        if offset in CONFIGURATION and self.enabled:
            self.notes.append(f"SSI register 0x{XIP_SSI_BASE + offset:08x} written while the SSI is "
                              "enabled: the write is dropped, as on the part")
            return
        self.regs[offset] = value

    def xip_read(self) -> XipRead:
        command = self.field(SPI_CTRLR0, 24, 8) if self.field(SPI_CTRLR0, 8, 2) else None
        return XipRead(self.regs[BAUDR] & 0xFFFF, self.field(CTRLR0, 21, 2), command,
                       None if command is not None else self.field(SPI_CTRLR0, 24, 8),
                       self.field(SPI_CTRLR0, 11, 5))

    def xip_problem(self) -> Optional[str]:
        """Why an XIP read would not return the flash's contents now (None: it would)."""
        if not self.enabled:
            return "the SSI is disabled (SSIENR 0)"
        if self.field(CTRLR0, 8, 2) != TMOD_EEPROM_READ or self.field(CTRLR0, 16, 5) != 31:
            return (f"the SSI is not in EEPROM-read mode with 32-bit frames (CTRLR0 "
                    f"0x{self.regs[CTRLR0]:08x}), so XIP accesses are not turned into flash reads")
        if self.regs[BAUDR] & 0xFFFF < 2 or self.regs[BAUDR] & 1:
            return f"the SSI's clock divider BAUDR {self.regs[BAUDR]} is not an even number of 2 or more"
        read = self.xip_read()
        addr_bits = self.field(SPI_CTRLR0, 2, 4) * 4
        if read.frame_format == FRF_STD:
            if read.command == CMD_READ_DATA and addr_bits == 24 and read.wait_cycles == 0:
                return None
            return (f"standard SPI XIP reads are modelled as 03h with a 24-bit address and no wait "
                    f"cycles; the SSI sends {read.describe()} with {addr_bits} address bits")
        if read.frame_format != FRF_QUAD:
            return f"the SSI's dual SPI frames (CTRLR0 0x{self.regs[CTRLR0]:08x}) are not modelled"
        if not self.flash.sr2 & SR2_QE:
            return "quad reads need the flash's QE bit (status register 2), which is clear"
        if addr_bits != 32 or read.wait_cycles != 4:
            return (f"a W25Q quad I/O read takes a 24-bit address, 8 mode bits and 4 wait cycles; "
                    f"the SSI sends {addr_bits} address and mode bits and {read.wait_cycles} wait cycles")
        if read.command is None:
            if not self.flash.continuous:
                return ("the SSI sends no command, and the flash is not in continuous-read mode (no "
                        "EBh read with continuous mode bits went before)")
            if not continuous_mode_bits(read.mode_bits or 0):
                return (f"the SSI's mode bits 0x{read.mode_bits:02x} end the flash's continuous-read "
                        "mode after the first read")
            return None
        if read.command != CMD_QUAD_IO_READ:
            return f"quad XIP reads with command 0x{read.command:02x} are not modelled (EBh is)"
        return None


class Rp2040Xip:
    """The SSI and the QSPI pads as MMIO, and the check at the image's first instruction."""

    def __init__(self, notes: list[str]):
        self.notes = notes
        self.flash = QspiFlash()
        self.ssi = Ssi(self.flash, notes)
        self.pads = dict(PADS_RESET)

    def map_into(self, uc: unicorn.Uc) -> None:
        uc.mmio_map(XIP_SSI_BASE, PAGE, self._ssi_read, None, self._ssi_write, None)
        uc.mmio_map(PADS_QSPI_BASE, PAGE, self._pads_read, None, self._pads_write, None)

    def _ssi_read(self, uc, offset: int, size: int, _user) -> int:
        return self.ssi.read(offset & ~3) >> 8 * (offset & 3) & ((1 << 8 * size) - 1)

    def _ssi_write(self, uc, offset: int, size: int, value: int, _user) -> None:
        self.ssi.write(offset & ~3, value)

    def _pads_read(self, uc, offset: int, size: int, _user) -> int:
        return self.pads.get(offset & ~3, 0) >> 8 * (offset & 3) & ((1 << 8 * size) - 1)

    def _pads_write(self, uc, offset: int, size: int, value: int, _user) -> None:
        if offset & ~3 in self.pads:
            self.pads[offset & ~3] = value

    def unmodelled_commands(self) -> list[str]:
        return [f"0x{c:02x}" for c in self.flash.unmodelled]


def watch_image_entry(uc: unicorn.Uc, lo: int, hi: int, entered: Callable[[int], None]) -> None:
    """Call entered(pc) once, at the first instruction fetched from [lo, hi)."""
    handle: list = []

    def hook(uc, address, size, _user) -> None:
        if handle:
            uc.hook_del(handle.pop())
            entered(address)

    handle.append(uc.hook_add(unicorn.UC_HOOK_BLOCK, hook, begin=lo, end=hi - 1))
