"""Board catalog: development boards as the virtual MCU needs them (core, clock, flash timing,
flash accelerator, memory regions), each figure with its source.

One JSON file per board, `<name>.json`, in the shipped directory (cortexm/board_data, schema in
its README.md) and in user directories: `user_dirs` given by the caller (a CLI option), then
the entries of the MICRO_RT_BOARDS environment variable (os.pathsep-separated). A board found in
an earlier directory hides one of the same name or alias in a later one, so a user file can
correct a shipped board. Names match case-insensitively, with '_' and spaces read as '-'.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from micro_rt.errors import InputError
from micro_rt.targets import TARGETS

SHIPPED_DIR = Path(__file__).resolve().parent / "board_data"
ENV_VAR = "MICRO_RT_BOARDS"
SCHEMA = 1
FPU_KINDS = ("none", "single", "double")
REGION_KINDS = ("flash", "external-flash", "sram", "tcm")
DATA_KINDS = ("sram", "tcm")
CITATION_STATUSES = ("vendor-document", "vendor-code", "third-party", "unverified")
_NAME = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")


def normalize_name(name: str) -> str:
    """'NUCLEO_L4R5ZI' -> 'nucleo-l4r5zi' (the form boards are matched and printed in)."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())


# ---- records --------------------------------------------------------------------------------
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

    def citations(self) -> list[tuple[str, Citation]]:
        """(section, citation) for every cited figure of the board."""
        sections = (("clock", self.clock), ("flash", self.flash),
                    ("accelerator", self.accelerator), ("memory", self.memory))
        return [(name, c) for name, part in sections for c in part.citations]


@dataclass(frozen=True)
class SimulatorParameters:
    """What the virtual MCU takes from a board. `memory_system` carries the fields of
    cortexm.cycles.MemorySystem (wait_states = core stall cycles per line fill)."""
    board: str
    target: str
    clock_hz: int
    flash_wait_states: int   # wait states, in flash-interface clock cycles (the datasheet's WS)
    line_fill_cycles: int
    memory_system: dict
    flash_bytes: int
    arena_bytes: int
    sram_wait_states: int
    required_wait_states: int = 0   # the fewest the board's flash table allows at this clock


# The most flash wait states a board file's table or --flash-wait-states may give: a sanity
# bound, not a part's figure (the catalog's largest is 380, the i.MX RT1060's XIP line fill
# from QSPI flash in core cycles; on-chip flash latency fields hold 0-15 at most).
MAX_FLASH_WAIT_STATES = 1023


def line_fill_cycles(wait_states: int, line_bytes: int, read_bytes: int, bus_divider: int = 1) -> int:
    """Core stall cycles of one line fill: ceil(line / read) flash reads, each stalling the
    core (wait_states + 1) * bus_divider - 1 cycles (no overlap assumed: the documents are silent
    on critical-word-first refill, so the whole fill is charged). The one home of the cost of a
    wait state, for boards and bare targets alike."""
    per_read = (wait_states + 1) * bus_divider - 1
    return math.ceil(line_bytes / read_bytes) * per_read


@dataclass(frozen=True)
class FlashSetting:
    """A flash interface at a wait-state count: what the virtual MCU's memory system gets."""
    wait_states: int          # flash-interface clock cycles per access beyond the first
    line_fill_cycles: int     # core stall cycles per line fill
    memory_system: dict       # the fields of cortexm.memory_system.MemorySystem
    description: str          # what a wait state costs here, for the output


def core_flash(core: str, wait_states: int) -> FlashSetting:
    """A bare target's flash interface: the core's default one (memory_system.default_memory_system:
    its line size, prefetch and caches), a line read whole in one access on the core clock
    (read = line, bus divider 1), so a line fill costs `wait_states` core cycles."""
    from dataclasses import asdict
    from .memory_system import default_memory_system
    _check_wait_states(wait_states, f"target {core}")
    line = default_memory_system(core, 0).line_bytes
    fill = line_fill_cycles(wait_states, line, line)
    memory = asdict(default_memory_system(core, fill))
    return FlashSetting(wait_states, fill, memory,
                        f"{wait_states} wait states on {core}'s default flash interface "
                        f"({line}-byte lines read in one access), so a line fill costs {fill} "
                        "core cycles")


def board_flash(board: Board, clock_hz: int, wait_states: Optional[int] = None) -> FlashSetting:
    """The board's flash interface at `clock_hz` with `wait_states` (default: its table's at that
    clock). Fewer wait states than the table requires at that clock are refused (the flash would
    return wrong data); more are allowed, as firmware may set more. A unified cache serves data
    reads from the same capacity, so the data lines are the cache's lines. An ST ART reads data
    one flash word at a time (FlashAccelerator.data_reads_by_word): its data cache then holds
    dcache_bytes / read_bytes words and a data miss costs one read."""
    acc, flash = board.accelerator, board.flash
    required = flash.wait_states_at(clock_hz)
    given = wait_states is not None
    wait_states = required if wait_states is None else int(wait_states)
    _check_wait_states(wait_states, f"board {board.name}")
    if wait_states < required:
        raise InputError(f"board {board.name}: {wait_states} flash wait states is fewer than the "
                         f"{required} its flash needs at {clock_hz / 1e6:g} MHz (flash.wait_states "
                         f"in {board.path}); give {required} or more, or a lower clock")
    memory = flash_interface(board, clock_hz, wait_states)
    fill = memory["wait_states"]
    reads = math.ceil(acc.line_bytes / acc.read_bytes)
    source = (f"given; the table needs {required} at this clock" if given
              else "the board's table at this clock")
    bus = (f", the flash on core clock / {flash.bus_divider}" if flash.bus_divider > 1 else "")
    return FlashSetting(wait_states, fill, memory,
                        f"{wait_states} wait states ({source}), so a line fill of "
                        f"{acc.line_bytes} B ({reads} read{'s' if reads != 1 else ''} of "
                        f"{acc.read_bytes} B{bus}) costs {fill} core cycles")


def flash_interface(board: Board, clock_hz: int, wait_states: int, *, prefetch: bool = True,
                    icache: bool = True, dcache: bool = True) -> dict:
    """The fields of cortexm.memory_system.MemorySystem for the board's flash interface at
    `wait_states` with its prefetch and caches as enabled (a disabled cache is a line buffer
    only, one data entry): what board_flash gives a configured part, and what a firmware run
    gives the registers as its firmware set them (any count: at reset the part may run slower
    than the board's clock)."""
    acc, flash = board.accelerator, board.flash
    fill = line_fill_cycles(wait_states, acc.line_bytes, acc.read_bytes, flash.bus_divider)
    per_read = line_fill_cycles(wait_states, acc.read_bytes, acc.read_bytes, flash.bus_divider)
    data_bytes = (acc.icache_bytes if icache else 0) if acc.unified else (acc.dcache_bytes if dcache else 0)
    data_unit = acc.read_bytes if acc.data_reads_by_word else acc.line_bytes
    return {"wait_states": fill, "line_bytes": acc.line_bytes, "prefetch": acc.prefetch and prefetch,
            "icache_bytes": acc.icache_bytes if icache else 0, "icache_ways": acc.icache_ways,
            "dcache_lines": max(1, data_bytes // data_unit),
            "dcache_ways": acc.icache_ways if acc.unified else acc.dcache_ways,
            "data_unit_bytes": data_unit,
            "data_miss_cycles": per_read if acc.data_reads_by_word else fill,
            "sram_wait_states": board.memory.sram_wait_states_at(clock_hz)}


def _check_wait_states(wait_states: int, where: str) -> None:
    if not 0 <= wait_states <= MAX_FLASH_WAIT_STATES:
        raise InputError(f"{where}: {wait_states} flash wait states is outside "
                         f"0-{MAX_FLASH_WAIT_STATES}")


def simulator_parameters(board: Board, clock_hz: Optional[int] = None,
                         wait_states: Optional[int] = None) -> SimulatorParameters:
    """Map a board to the simulator's parameters at `clock_hz` (default: the board's clock) and
    `wait_states` (default: its flash table's at that clock; the line fill as board_flash)."""
    clock = board.clock.default_hz if clock_hz is None else int(clock_hz)
    if not 0 < clock <= board.clock.max_hz:
        raise InputError(f"board {board.name}: clock {clock / 1e6:g} MHz is outside "
                         f"0-{board.clock.max_hz / 1e6:g} MHz (clock.max_hz in {board.path})")
    setting = board_flash(board, clock, wait_states)
    return SimulatorParameters(board.name, board.core, clock, setting.wait_states,
                               setting.line_fill_cycles, setting.memory_system,
                               board.memory.flash_bytes, board.memory.arena_bytes,
                               board.memory.sram_wait_states_at(clock),
                               board.flash.wait_states_at(clock))


# ---- lookup ---------------------------------------------------------------------------------
def board_dirs(user_dirs: Optional[Sequence[os.PathLike | str]] = None) -> list[Path]:
    """Directories searched, first match wins: user_dirs, then $MICRO_RT_BOARDS, then shipped."""
    env = [p for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    dirs = [Path(p).expanduser() for p in [*(user_dirs or ()), *env]]
    for d in dirs:
        if not d.is_dir():
            raise InputError(f"board directory {d} does not exist (from {ENV_VAR} or a board "
                             f"directory option)")
    return [*dirs, SHIPPED_DIR]


def _index(dirs: Iterable[Path]) -> dict[str, Board]:
    """Normalized name or alias -> board; earlier directories hide later ones."""
    index: dict[str, Board] = {}
    for d in dirs:
        here: dict[str, Board] = {}
        for path in sorted(d.glob("*.json")):
            board = load_board_file(path)
            for key in (board.name, *board.aliases):
                if key in here:
                    raise InputError(f"board files {here[key].path} and {path} both claim "
                                     f"the name '{key}'")
                here[key] = board
        for key, board in here.items():
            index.setdefault(key, board)
    return index


def list_boards(user_dirs: Optional[Sequence[os.PathLike | str]] = None) -> list[Board]:
    """Every board reachable by name, sorted by name."""
    index = _index(board_dirs(user_dirs))
    return sorted({b.name: b for k, b in index.items() if k == b.name}.values(),
                  key=lambda b: b.name)


def load_board(name: str, user_dirs: Optional[Sequence[os.PathLike | str]] = None) -> Board:
    index = _index(board_dirs(user_dirs))
    key = normalize_name(name)
    if key not in index:
        names = sorted(k for k, b in index.items() if k == b.name)
        raise InputError(f"unknown board '{key}'; known boards: {', '.join(names)} "
                         f"(add one as <name>.json in a directory named by {ENV_VAR})")
    return index[key]


# ---- parsing and validation -----------------------------------------------------------------
class _Fields:
    """One JSON object of a board file; every error names the file and the field."""

    def __init__(self, path: Path, data: Any, where: str):
        self.path, self.where = path, where
        if not isinstance(data, dict):
            self.fail(where, f"must hold a JSON object, not {type(data).__name__}")
        self.data: dict = data

    def fail(self, field: str, problem: str):
        what = f"field '{field}'" if field else "the file"
        raise InputError(f"board file {self.path}: {what} {problem}")

    def check_keys(self, required: Sequence[str], optional: Sequence[str] = ()) -> None:
        for key in required:
            if key not in self.data:
                self.fail(self._at(key), "is missing")
        for key in self.data:
            if key not in required and key not in optional:
                self.fail(self._at(key), f"is not a known field (expected one of "
                                         f"{', '.join([*required, *optional])})")

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, kind: type, default: Any = None) -> Any:
        value = self.data.get(key, default)
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(self._at(key), f"must be an integer, not {value!r}")
        if not isinstance(value, kind):
            self.fail(self._at(key), f"must be a {kind.__name__}, not {value!r}")
        return value

    def text(self, key: str, default: Optional[str] = None) -> str:
        value = self.get(key, str, default)
        if not value.strip() and default is None:
            self.fail(self._at(key), "must not be empty")
        return value

    def count(self, key: str, minimum: int = 0, default: Optional[int] = None) -> int:
        value = self.get(key, int, default)
        if value < minimum:
            self.fail(self._at(key), f"must be >= {minimum}, not {value}")
        return value

    def choice(self, key: str, choices: Sequence[str]) -> str:
        value = self.text(key)
        if value not in choices:
            self.fail(self._at(key), f"must be one of {', '.join(choices)}, not '{value}'")
        return value

    def obj(self, key: str) -> "_Fields":
        return _Fields(self.path, self.data.get(key), self._at(key))

    def items(self, key: str, default: Optional[list] = None) -> list:
        return self.get(key, list, default)

    def citations(self) -> tuple[Citation, ...]:
        raw = self.items("cite")
        if not raw:
            self.fail(self._at("cite"), "needs at least one citation")
        out = []
        for i, item in enumerate(raw):
            f = _Fields(self.path, item, f"{self._at('cite')}[{i}]")
            f.check_keys(("status", "source"))
            out.append(Citation(f.choice("status", CITATION_STATUSES), f.text("source")))
        return tuple(out)

    def clock_table(self, key: str, default: Optional[list] = None) -> tuple[tuple[int, int], ...]:
        """[[max_hz, value], ...] with max_hz rising and value not falling."""
        raw = self.items(key, default)
        if not raw:
            self.fail(self._at(key), "needs at least one [max_hz, value] entry")
        table = []
        for i, entry in enumerate(raw):
            if (not isinstance(entry, list) or len(entry) != 2
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in entry)
                    or entry[0] <= 0 or entry[1] < 0):
                self.fail(f"{self._at(key)}[{i}]", f"must be [max_hz, count] with "
                                                   f"max_hz > 0 and count >= 0, not {entry!r}")
            if table and (entry[0] <= table[-1][0] or entry[1] < table[-1][1]):
                self.fail(f"{self._at(key)}[{i}]", "must have a higher max_hz than the entry "
                                                   "before it and no fewer wait states")
            table.append((entry[0], entry[1]))
        return tuple(table)


def _no_unreachable_entries(f: _Fields, key: str, table: tuple[tuple[int, int], ...],
                            top_hz: int) -> None:
    """Refuse an entry after the one that already covers the part's highest clock (`top_hz`, at
    the table's clock): no clock the part runs at reaches it."""
    for i in range(1, len(table)):
        if table[i - 1][0] >= top_hz:
            f.fail(f"{f._at(key)}[{i}]", f"({table[i][0]} Hz) is past the part's highest clock: "
                                         f"the entry before it covers up to {table[i - 1][0]} Hz, "
                                         f"which reaches {top_hz} Hz (from clock.max_hz)")


# The Cortex-M default memory map (Arm Cortex-M0+ TRM, DDI 0484C, 3.4 Table 3.2; Cortex-M33
# TRM, 100230_0004_00, B1.4; Cortex-M4/M7 the same Armv7-M regions): instructions are fetched
# only from 0x00000000-0x3FFFFFFF and 0x60000000-0x9FFFFFFF (elsewhere execute-never, and the
# images micro_rt runs and exports set up no MPU), and 0xE0000000-0xE00FFFFF is the Private
# Peripheral Bus (the core's NVIC, SysTick, debug), where no memory can be.
EXECUTABLE_RANGES = ((0x00000000, 0x40000000), (0x60000000, 0xA0000000))
PRIVATE_PERIPHERAL_BUS = (0xE0000000, 0xE0100000)


def _address(f: _Fields, key: str) -> int:
    value = f.data.get(key)
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            f.fail(f._at(key), f"must be an address such as \"0x20000000\", not '{value}'")
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 32:
        f.fail(f._at(key), f"must be a 32-bit address, not {value!r}")
    return value


def _clock(f: _Fields) -> Clock:
    f.check_keys(("default_hz", "max_hz", "cite"))
    default_hz, max_hz = f.count("default_hz", 1), f.count("max_hz", 1)
    if default_hz > max_hz:
        f.fail(f._at("default_hz"), f"({default_hz}) exceeds max_hz ({max_hz})")
    return Clock(default_hz, max_hz, f.citations())


def _flash(f: _Fields, max_hz: int) -> FlashTiming:
    f.check_keys(("wait_states", "condition", "cite"), ("bus_divider",))
    timing = FlashTiming(f.clock_table("wait_states"), f.count("bus_divider", 1, 1),
                         f.text("condition"), f.citations())
    if timing.table[-1][0] * timing.bus_divider < max_hz:
        f.fail(f._at("wait_states"), f"ends at {timing.table[-1][0]} Hz (flash clock), below "
                                     f"clock.max_hz {max_hz} / bus_divider {timing.bus_divider}")
    _no_unreachable_entries(f, "wait_states", timing.table, math.ceil(max_hz / timing.bus_divider))
    for i, (_, wait_states) in enumerate(timing.table):
        if wait_states > MAX_FLASH_WAIT_STATES:
            f.fail(f"{f._at('wait_states')}[{i}]", f"has {wait_states} wait states, more than "
                                                   f"the {MAX_FLASH_WAIT_STATES} micro_rt accepts "
                                                   "(a typo, or a figure in other units?)")
    return timing


def _accelerator(f: _Fields) -> FlashAccelerator:
    f.check_keys(("kind", "description", "read_bytes", "line_bytes", "icache_bytes",
                  "dcache_bytes", "unified", "prefetch", "cite"), ("icache_ways", "dcache_ways"))
    acc = FlashAccelerator(f.text("kind"), f.text("description"), f.count("read_bytes", 1),
                           f.count("line_bytes", 1), f.count("icache_bytes"),
                           f.count("dcache_bytes"), f.get("unified", bool),
                           f.get("prefetch", bool), f.citations(),
                           f.count("icache_ways", 0, 0), f.count("dcache_ways", 0, 0))
    for key, size in (("icache_ways", acc.icache_bytes), ("dcache_ways", acc.dcache_bytes)):
        ways = getattr(acc, key)
        if ways and (not size or (size // acc.line_bytes) % ways):
            f.fail(f._at(key), f"({ways}) must divide the cache's {size // acc.line_bytes} lines")
    for key in ("read_bytes", "line_bytes"):
        if getattr(acc, key) & (getattr(acc, key) - 1):
            f.fail(f._at(key), f"must be a power of two, not {getattr(acc, key)}")
    for key in ("icache_bytes", "dcache_bytes"):
        if getattr(acc, key) % acc.line_bytes:
            f.fail(f._at(key), f"({getattr(acc, key)}) must be a multiple of line_bytes "
                               f"({acc.line_bytes})")
    if acc.unified and (acc.dcache_bytes or not acc.icache_bytes):
        f.fail(f._at("unified"), "needs icache_bytes > 0 and dcache_bytes 0 (one cache "
                                 "serves both)")
    return acc


def _memory(f: _Fields, max_hz: int) -> MemoryMap:
    f.check_keys(("regions", "code_region", "arena_regions", "cite"),
                 ("sram_wait_states", "stack_region"))
    regions: list[MemoryRegion] = []
    for i, item in enumerate(f.items("regions")):
        r = _Fields(f.path, item, f"{f._at('regions')}[{i}]")
        r.check_keys(("name", "kind", "base", "size"), ("note", "timing"))
        region = MemoryRegion(r.text("name"), r.choice("kind", REGION_KINDS), _address(r, "base"),
                              r.count("size", 1), r.text("note", ""), r.text("timing", ""))
        if region.end > 1 << 32:
            r.fail(r._at("size"), "runs past the 32-bit address space")
        lo, hi = PRIVATE_PERIPHERAL_BUS
        if region.base < hi and lo < region.end:
            r.fail(r._at("base"), f"region {region.name} (0x{region.base:08x}-0x{region.end - 1:08x}) "
                                  "overlaps the core's Private Peripheral Bus "
                                  "(0xE0000000-0xE00FFFFF), where no memory can be")
        for other in regions:
            if other.name == region.name:
                r.fail(r._at("name"), f"'{region.name}' is used twice")
            if region.base < other.end and other.base < region.end:
                r.fail(r._at("base"), f"region {region.name} overlaps region {other.name}")
        regions.append(region)
    if not regions:
        f.fail(f._at("regions"), "needs at least one region")
    by_name = {r.name: r for r in regions}
    code = f.text("code_region")
    if code not in by_name or by_name[code].kind not in ("flash", "external-flash"):
        f.fail(f._at("code_region"), f"must name a flash region, not '{code}'")
    region = by_name[code]
    if not any(lo <= region.base and region.end <= hi for lo, hi in EXECUTABLE_RANGES):
        f.fail(f._at("code_region"), f"region {code} (0x{region.base:08x}-0x{region.end - 1:08x}) "
                                     "is not where a Cortex-M core fetches instructions "
                                     "(0x00000000-0x3FFFFFFF or 0x60000000-0x9FFFFFFF; the rest "
                                     "of the default memory map is execute-never)")
    arena = f.items("arena_regions")
    if not arena:
        f.fail(f._at("arena_regions"), "needs at least one region name")
    for i, name in enumerate(arena):
        where = f"{f._at('arena_regions')}[{i}]"
        if name not in by_name or not by_name[name].holds_data:
            f.fail(where, f"must name an SRAM or TCM region, not {name!r}")
        if i and by_name[arena[i - 1]].end != by_name[name].base:
            f.fail(where, f"region {name} does not start where {arena[i - 1]} ends (the arena "
                          f"regions must be contiguous, in address order)")
    stack = f.text("stack_region", "")
    if stack and (stack not in by_name or not by_name[stack].holds_data):
        f.fail(f._at("stack_region"), f"must name an SRAM or TCM region, not {stack!r}")
    sram_wait = f.clock_table("sram_wait_states", [[max_hz, 0]])
    if sram_wait[-1][0] < max_hz:
        f.fail(f._at("sram_wait_states"), f"ends at {sram_wait[-1][0]} Hz, below clock.max_hz "
                                          f"{max_hz}")
    _no_unreachable_entries(f, "sram_wait_states", sram_wait, max_hz)
    return MemoryMap(tuple(regions), code, tuple(arena), sram_wait, f.citations(), stack)


def load_board_file(path: os.PathLike | str) -> Board:
    """Parse and validate one board file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"board file {path}: cannot be read ({e})") from None
    except json.JSONDecodeError as e:
        raise InputError(f"board file {path}: not valid JSON at line {e.lineno} column "
                         f"{e.colno}: {e.msg}") from None
    f = _Fields(path, data, "")
    f.check_keys(("schema", "name", "title", "vendor", "mcu", "core", "fpu", "clock", "flash",
                  "accelerator", "memory"), ("aliases", "notes"))
    if f.data["schema"] != SCHEMA:
        f.fail("schema", f"must be {SCHEMA}, not {f.data['schema']!r}")
    name = f.text("name")
    if name != normalize_name(name) or not _NAME.match(name):
        f.fail("name", f"must be lower case letters, digits and '-', not '{name}'")
    if normalize_name(path.stem) != name:
        f.fail("name", f"('{name}') must match the file name ({path.name})")
    aliases = []
    for i, alias in enumerate(f.items("aliases", [])):
        if not isinstance(alias, str) or not _NAME.match(normalize_name(alias)):
            f.fail(f"aliases[{i}]", f"must be a board name, not {alias!r}")
        aliases.append(normalize_name(alias))
    core = f.text("core")
    if core not in TARGETS or TARGETS[core].is_host:
        f.fail("core", f"must be one of {', '.join(t for t in TARGETS if not TARGETS[t].is_host)}"
                       f", not '{core}'")
    clock = _clock(f.obj("clock"))
    notes = f.items("notes", [])
    if not all(isinstance(n, str) for n in notes):
        f.fail("notes", "must be a list of strings")
    return Board(name, f.text("title"), tuple(aliases), f.text("vendor"), f.text("mcu"), core,
                 f.choice("fpu", FPU_KINDS), clock, _flash(f.obj("flash"), clock.max_hz),
                 _accelerator(f.obj("accelerator")), _memory(f.obj("memory"), clock.max_hz),
                 tuple(notes), path)
