"""What a board is, as micro_rt needs it: the records a board file becomes (cortexm/board_file.py
reads and validates the files; cortexm/boards.py finds them and maps a board to the virtual
MCU). Every figure carries the citations of its section.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from micro_rt.errors import InputError

from .boot_headers import RP2040_BOOT_STAGE_2_BYTES, FlexSpiNorConfig

REGION_KINDS = ("flash", "external-flash", "sram", "tcm")
DATA_KINDS = ("sram", "tcm")
CITATION_STATUSES = ("vendor-document", "vendor-code", "third-party", "unverified")
# The sections a board answer (fit, profile, boards, report) is computed from; `peripherals`
# serves the emulation of a user's firmware from reset and prices nothing.
ANSWER_SECTIONS = ("clock", "flash", "accelerator", "memory")

# The most flash wait states a board file's table or --flash-wait-states may give: a sanity
# bound, not a part's figure (the catalog's largest is 380, the i.MX RT1060's XIP line fill
# from QSPI flash in core cycles; on-chip flash latency fields hold 0-15 at most).
MAX_FLASH_WAIT_STATES = 1023


def normalize_name(name: str) -> str:
    """'NUCLEO_L4R5ZI' -> 'nucleo-l4r5zi' (the form boards are matched and printed in)."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


@dataclass(frozen=True)
class Citation:
    status: str          # one of CITATION_STATUSES
    source: str          # document / file and section or table; for 'unverified', why


@dataclass(frozen=True)
class Clock:
    default_hz: int      # the clock typical firmware for the board runs at
    max_hz: int
    citations: tuple[Citation, ...]


@dataclass(frozen=True)
class FlashTiming:
    """Flash wait states by clock: ((max_hz, wait_states), ...) ascending, looked up at the
    flash interface clock = core clock / bus_divider, for the stated supply condition."""
    table: tuple[tuple[int, int], ...]
    bus_divider: int
    condition: str
    citations: tuple[Citation, ...]

    def wait_states_at(self, core_hz: int) -> int:
        bus_hz = core_hz / self.bus_divider
        for max_hz, wait_states in self.table:
            if bus_hz <= max_hz:
                return wait_states
        raise InputError(f"no flash wait states known at {core_hz / 1e6:g} MHz "
                         f"(table ends at {self.table[-1][0] * self.bus_divider / 1e6:g} MHz core clock)")


@dataclass(frozen=True)
class FlashAccelerator:
    """What sits between the core and the flash: prefetch, flash cache or L1 caches."""
    kind: str
    description: str
    read_bytes: int      # bytes one flash access returns (one wait-state penalty)
    line_bytes: int      # cache line
    icache_bytes: int
    dcache_bytes: int
    unified: bool        # one cache serves instruction and data reads (dcache_bytes is then 0)
    prefetch: bool
    citations: tuple[Citation, ...]
    icache_ways: int = 0     # associativity (0: fully associative); replacement is LRU
    dcache_ways: int = 0

    @property
    def is_core_l1(self) -> bool:
        """The caches are the Cortex-M7's own L1 caches, enabled through the core's CCR (IC, DC)
        rather than a vendor flash register (Armv7-M ARM B3.2.8: both off at reset)."""
        return "cortex-m7-l1" in self.kind

    @property
    def data_reads_by_word(self) -> bool:
        """An ST ART fetches one flash word per D-code read, not a line ('Each DCode bus read
        access fetches 64 or 128 bits, which are saved in a current buffer', RM0440 section
        3.3.4; RM0090 section 3.5.2 has 128-bit reads and lines alike)."""
        return self.kind == "st-art"


@dataclass(frozen=True)
class MemoryRegion:
    name: str
    kind: str            # one of REGION_KINDS
    base: int
    size: int
    note: str = ""       # what the region is (e.g. the SRAM blocks it joins)
    timing: str = ""     # how the core reaches it, as the board's documents say (cited in
                         # memory.cite); reported, not used by the cycle model

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def holds_data(self) -> bool:
        return self.kind in DATA_KINDS


@dataclass(frozen=True)
class MemoryMap:
    regions: tuple[MemoryRegion, ...]
    code_region: str
    # The contiguous regions where the vendor's default linker script puts .data and .bss
    # (static data, and the arena when it is an ordinary static array); the name is the
    # board files' field.
    arena_regions: tuple[str, ...]
    sram_wait_states: tuple[tuple[int, int], ...]
    citations: tuple[Citation, ...]
    # Where the vendor's start-up puts the stack, when not with .bss (the RP2040's SCRATCH_Y).
    stack_region: str = ""

    def region(self, name: str) -> MemoryRegion:
        return next(r for r in self.regions if r.name == name)

    @property
    def data_regions(self) -> tuple[MemoryRegion, ...]:
        """The SRAM and TCM regions, in address order: where a user can place data."""
        return tuple(sorted((r for r in self.regions if r.holds_data), key=lambda r: r.base))

    @property
    def stack_regions(self) -> tuple[str, ...]:
        return (self.stack_region,) if self.stack_region else self.arena_regions

    @property
    def flash_bytes(self) -> int:
        return self.region(self.code_region).size

    @property
    def arena_bytes(self) -> int:
        return sum(self.region(n).size for n in self.arena_regions)

    @property
    def sram_bytes(self) -> int:
        return sum(r.size for r in self.data_regions)

    def sram_wait_states_at(self, core_hz: int) -> int:
        return next(ws for max_hz, ws in self.sram_wait_states if core_hz <= max_hz)


# ---- peripherals: what firmware run from reset touches besides memory -----------------------
class FlashControlField(enum.Enum):
    """What a bit field of a flash-control register sets."""
    LATENCY = "latency"      # flash wait states (the datasheet's WS)
    PREFETCH = "prefetch"    # prefetch enable
    ICACHE = "icache"        # instruction cache enable
    DCACHE = "dcache"        # data cache enable
    CACHE = "cache"          # the one enable of a unified cache (ST ART on the F7, XIP cache,
                             # FCACHE, NVMC ICACHECNF, nRF5340 CACHE, U5 ICACHE)


@dataclass(frozen=True)
class BitField:
    meaning: FlashControlField
    lsb: int
    width: int

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lsb

    def value_in(self, word: int) -> int:
        """The field's value in a register value."""
        return (word & self.mask) >> self.lsb


@dataclass(frozen=True)
class FlashControlRegister:
    """A register through which firmware sets flash latency, prefetch or the flash cache, with
    the part's reset value, so the emulator's memory model can follow what firmware writes."""
    name: str
    address: int
    reset: int
    fields: tuple[BitField, ...]
    size_bytes: int = 4      # the register's width (the RA6M4's FLWT is 8 bits, FCACHEE 16)
    note: str = ""           # inverted polarity, a key to write first, what else sets it

    @property
    def end(self) -> int:
        return self.address + self.size_bytes

    def field(self, meaning: FlashControlField) -> Optional[BitField]:
        return next((f for f in self.fields if f.meaning is meaning), None)


@dataclass(frozen=True)
class ConsoleUart:
    """The UART the board's debug probe carries to the host (the vendor BSP's printf port): a
    byte written to the data register is a console character; the status register reads
    `idle_status`, in which (value & ready_mask) == ready_value means ready to transmit."""
    name: str
    base: int
    size: int                # the register block the emulator maps
    data_offset: int
    status_offset: int
    ready_mask: int
    ready_value: int
    idle_status: int         # what the status register reads for an idle, enabled transmitter
    register_bytes: int = 4  # width of the data and status registers (1: RA SCI's 8-bit ones)
    note: str = ""

    @property
    def end(self) -> int:
        return self.base + self.size

    @property
    def data_address(self) -> int:
        return self.base + self.data_offset

    @property
    def status_address(self) -> int:
        return self.base + self.status_offset

    def is_ready(self, status: int) -> bool:
        return status & self.ready_mask == self.ready_value


@dataclass(frozen=True)
class Peripherals:
    console: Optional[ConsoleUart]
    flash_control: tuple[FlashControlRegister, ...]
    citations: tuple[Citation, ...]

    def flash_field(self, meaning: FlashControlField
                    ) -> Optional[tuple[FlashControlRegister, BitField]]:
        """The register and field that set `meaning`, if the board has one (at most one does)."""
        for register in self.flash_control:
            found = register.field(meaning)
            if found:
                return register, found
        return None


NO_PERIPHERALS = Peripherals(None, (), ())


class BootKind(enum.Enum):
    """What a part's boot ROM needs before it starts an image (boot.kind in a board file)."""
    RP2040_BOOT_STAGE_2 = "rp2040-boot-stage-2"      # a CRC-checked 256-byte boot stage 2
    IMXRT_FLEXSPI_NOR = "imxrt-flexspi-nor"          # a FlexSPI NOR configuration block and an IVT


class XipFrames(enum.Enum):
    STANDARD = "standard"
    QUAD = "quad"


@dataclass(frozen=True)
class Rp2040XipBoot:
    """The XIP reads an RP2040 board's flash figures are for, as its usual boot stage 2 sets
    the SSI up: the clock divider (SCLK = clk_sys / divider), the frames, the wait cycles after
    the address, and whether reads go without a command (the flash in continuous-read mode).
    micro_rt's own boot stage 2 (cortexm/src/export/rp2040_boot2.S) sets these; their
    citations are the boot record's."""
    clock_divider: int
    frames: XipFrames
    wait_cycles: int
    continuous: bool

    def describe(self) -> str:
        cmd = "no command (continuous-read mode)" if self.continuous else "a command each"
        return (f"{self.frames.value} SPI reads, {cmd}, {self.wait_cycles} wait cycles, SCLK = "
                f"clk_sys / {self.clock_divider}")


@dataclass(frozen=True)
class FlexSpiNorBoot:
    """An i.MX RT part booting from FlexSPI NOR flash: where the image vector table and the
    image's vector table go (offsets from the code region's base; the configuration block is
    at 0) and the configuration block the board's flash is read with (cortexm/boot_headers.py)."""
    ivt_offset: int
    vectors_offset: int
    config: "FlexSpiNorConfig"


@dataclass(frozen=True)
class BootHeader:
    """What the part's boot ROM needs at the start of the code region before it starts an image,
    on a part that does not start one from a vector table there (the RP2040's boot stage 2, the
    i.MX RT's FlexSPI configuration block and image vector table). `micro-rt export` writes it
    (micro_rt/export_boot.py) and `micro-rt emulate` models the boot ROM reading it
    (system/boot_rom.py), for every kind."""
    kind: BootKind
    needs: str
    citations: tuple[Citation, ...]
    flexspi_nor: Optional[FlexSpiNorBoot] = None     # with kind IMXRT_FLEXSPI_NOR
    xip: Optional[Rp2040XipBoot] = None              # with kind RP2040_BOOT_STAGE_2

    @property
    def image_offset(self) -> int:
        """Where the image's vector table goes, from the code region's base: after the i.MX
        RT's configuration block and IVT, after the RP2040's 256-byte boot stage 2 ('padded to a
        size of 256 bytes, including a 4-byte checksum': the board file's boot citation)."""
        if self.flexspi_nor is not None:
            return self.flexspi_nor.vectors_offset
        return RP2040_BOOT_STAGE_2_BYTES if self.kind is BootKind.RP2040_BOOT_STAGE_2 else 0

    @property
    def header_bytes(self) -> int:
        """Flash the boot ROM's header takes before the image."""
        return self.image_offset


@dataclass(frozen=True)
class Board:
    name: str            # lower case, as printed
    title: str           # the vendor's spelling
    aliases: tuple[str, ...]
    vendor: str
    mcu: str
    core: str            # a micro_rt target name
    fpu: str
    clock: Clock
    flash: FlashTiming
    accelerator: FlashAccelerator
    memory: MemoryMap
    notes: tuple[str, ...]
    path: Path
    peripherals: Peripherals = NO_PERIPHERALS
    boot: Optional[BootHeader] = None     # None: the vector table at the code region's base

    def citations(self) -> list[tuple[str, Citation]]:
        """(section, citation) for every cited figure of the board, peripherals included."""
        sections: list[tuple[str, Any]] = [("clock", self.clock), ("flash", self.flash),
                                            ("accelerator", self.accelerator), ("memory", self.memory),
                                            ("peripherals", self.peripherals)]
        if self.boot is not None:
            sections.append(("boot", self.boot))
        return [(name, c) for name, part in sections for c in part.citations]
