"""Board catalog: development boards as the virtual MCU needs them (core, clock, flash timing,
flash accelerator, memory regions, and the peripherals firmware run from reset touches), each
figure with its source.

One JSON file per board, `<name>.json`, in the shipped directory (cortexm/board_data, schema in
its README.md) and in user directories: `user_dirs` given by the caller (a CLI option), then
the entries of the MICRO_RT_BOARDS environment variable (os.pathsep-separated). A board found in
an earlier directory hides one of the same name or alias in a later one, so a user file can
correct a shipped board. Names match case-insensitively, with '_' and spaces read as '-'.

The records are cortexm/board_records.py's, a file is read by cortexm/board_file.py; both are
importable from here, the catalog's one public face.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from micro_rt.errors import InputError

from .board_file import (EXECUTABLE_RANGES, FPU_KINDS, PRIVATE_PERIPHERAL_BUS, SCHEMA,
                         load_board_file)
from .board_records import (ANSWER_SECTIONS, CITATION_STATUSES, DATA_KINDS, MAX_FLASH_WAIT_STATES,
                            NO_PERIPHERALS, REGION_KINDS, BitField, Board, BootHeader, Citation,
                            Clock, ConsoleUart, FlashAccelerator, FlashControlField,
                            FlashControlRegister, FlashTiming, MemoryMap, MemoryRegion, Peripherals,
                            normalize_name)

__all__ = [
    # records (board_records) and reading a file (board_file)
    "ANSWER_SECTIONS", "CITATION_STATUSES", "DATA_KINDS", "MAX_FLASH_WAIT_STATES", "NO_PERIPHERALS",
    "REGION_KINDS", "BitField", "Board", "BootHeader", "Citation", "Clock", "ConsoleUart",
    "FlashAccelerator", "FlashControlField", "FlashControlRegister", "FlashTiming", "MemoryMap",
    "MemoryRegion", "Peripherals", "normalize_name", "EXECUTABLE_RANGES", "FPU_KINDS",
    "PRIVATE_PERIPHERAL_BUS", "SCHEMA", "load_board_file",
    # the catalog and the virtual MCU's view of a board (here)
    "SHIPPED_DIR", "ENV_VAR", "SimulatorParameters", "FlashSetting", "line_fill_cycles",
    "core_flash", "board_flash", "simulator_parameters", "board_dirs", "list_boards", "load_board",
]

SHIPPED_DIR = Path(__file__).resolve().parent / "board_data"
ENV_VAR = "MICRO_RT_BOARDS"


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
