"""Reading a board file: parse and validate one JSON file (schema in board_data/README.md) into
the records of cortexm/board_records.py. Every error names the file and the field; a malformed
file is an error, never skipped.
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Optional

from micro_rt.errors import InputError
from micro_rt.targets import TARGETS

from .board_records import (MAX_FLASH_WAIT_STATES, NO_PERIPHERALS, REGION_KINDS,
                            BitField, Board, Clock, ConsoleUart,
                            FlashAccelerator, FlashControlField, FlashControlRegister, FlashTiming, MemoryMap, MemoryRegion, Peripherals, normalize_name)
from .board_fields import Fields
from .board_file_boot import boot_header

SCHEMA = 1
FPU_KINDS = ("none", "single", "double")
_NAME = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")


def _no_unreachable_entries(f: Fields, key: str, table: tuple[tuple[int, int], ...],
                            top_hz: int) -> None:
    """Refuse an entry after the one that already covers the part's highest clock (`top_hz`, at
    the table's clock): no clock the part runs at reaches it."""
    for i in range(1, len(table)):
        if table[i - 1][0] >= top_hz:
            f.fail(f"{f.at(key)}[{i}]", f"({table[i][0]} Hz) is past the part's highest clock: "
                                         f"the entry before it covers up to {table[i - 1][0]} Hz, "
                                         f"which reaches {top_hz} Hz (from clock.max_hz)")


# The Cortex-M default memory map (Arm Cortex-M0+ TRM, DDI 0484C, 3.4 Table 3.2; Cortex-M33
# TRM, 100230_0004_00, B1.4; Cortex-M4/M7 the same Armv7-M regions): instructions are fetched
# only from 0x00000000-0x3FFFFFFF and 0x60000000-0x9FFFFFFF (elsewhere execute-never, and the
# images micro_rt runs and exports set up no MPU), and 0xE0000000-0xE00FFFFF is the Private
# Peripheral Bus (the core's NVIC, SysTick, debug), where no memory can be.
EXECUTABLE_RANGES = ((0x00000000, 0x40000000), (0x60000000, 0xA0000000))
PRIVATE_PERIPHERAL_BUS = (0xE0000000, 0xE0100000)


def _word(f: Fields, key: str, what: str = "address", bits: int = 32,
          default: Optional[int] = None) -> int:
    """An unsigned integer of `bits` bits, given as a number or a string such as "0x20000000"
    (addresses, register values, masks)."""
    value = f.data.get(key, default)
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            f.fail(f.at(key), f"must be {'an' if what[0] in 'aeiou' else 'a'} {what} such as "
                               f"\"0x20000000\", not '{value}'")
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << bits:
        f.fail(f.at(key), f"must be {'an' if bits == 8 else 'a'} {bits}-bit {what}, not {value!r}")
    return value


def _clock(f: Fields) -> Clock:
    f.check_keys(("default_hz", "max_hz", "cite"))
    default_hz, max_hz = f.count("default_hz", 1), f.count("max_hz", 1)
    if default_hz > max_hz:
        f.fail(f.at("default_hz"), f"({default_hz}) exceeds max_hz ({max_hz})")
    return Clock(default_hz, max_hz, f.citations())


def _flash(f: Fields, max_hz: int) -> FlashTiming:
    f.check_keys(("wait_states", "condition", "cite"), ("bus_divider",))
    timing = FlashTiming(f.clock_table("wait_states"), f.count("bus_divider", 1, 1),
                         f.text("condition"), f.citations())
    if timing.table[-1][0] * timing.bus_divider < max_hz:
        f.fail(f.at("wait_states"), f"ends at {timing.table[-1][0]} Hz (flash clock), below "
                                     f"clock.max_hz {max_hz} / bus_divider {timing.bus_divider}")
    _no_unreachable_entries(f, "wait_states", timing.table, math.ceil(max_hz / timing.bus_divider))
    for i, (_, wait_states) in enumerate(timing.table):
        if wait_states > MAX_FLASH_WAIT_STATES:
            f.fail(f"{f.at('wait_states')}[{i}]", f"has {wait_states} wait states, more than "
                                                   f"the {MAX_FLASH_WAIT_STATES} micro_rt accepts "
                                                   "(a typo, or a figure in other units?)")
    return timing


def _accelerator(f: Fields) -> FlashAccelerator:
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
            f.fail(f.at(key), f"({ways}) must divide the cache's {size // acc.line_bytes} lines")
    for key in ("read_bytes", "line_bytes"):
        if getattr(acc, key) & (getattr(acc, key) - 1):
            f.fail(f.at(key), f"must be a power of two, not {getattr(acc, key)}")
    for key in ("icache_bytes", "dcache_bytes"):
        if getattr(acc, key) % acc.line_bytes:
            f.fail(f.at(key), f"({getattr(acc, key)}) must be a multiple of line_bytes "
                               f"({acc.line_bytes})")
    if acc.unified and (acc.dcache_bytes or not acc.icache_bytes):
        f.fail(f.at("unified"), "needs icache_bytes > 0 and dcache_bytes 0 (one cache "
                                 "serves both)")
    return acc


def _memory(f: Fields, max_hz: int) -> MemoryMap:
    f.check_keys(("regions", "code_region", "arena_regions", "cite"),
                 ("sram_wait_states", "stack_region"))
    regions: list[MemoryRegion] = []
    for i, item in enumerate(f.items("regions")):
        r = Fields(f.path, item, f"{f.at('regions')}[{i}]")
        r.check_keys(("name", "kind", "base", "size"), ("note", "timing"))
        region = MemoryRegion(r.text("name"), r.choice("kind", REGION_KINDS), _word(r, "base"),
                              r.count("size", 1), r.text("note", ""), r.text("timing", ""))
        if region.end > 1 << 32:
            r.fail(r.at("size"), "runs past the 32-bit address space")
        lo, hi = PRIVATE_PERIPHERAL_BUS
        if region.base < hi and lo < region.end:
            r.fail(r.at("base"), f"region {region.name} (0x{region.base:08x}-0x{region.end - 1:08x}) "
                                  "overlaps the core's Private Peripheral Bus "
                                  "(0xE0000000-0xE00FFFFF), where no memory can be")
        for other in regions:
            if other.name == region.name:
                r.fail(r.at("name"), f"'{region.name}' is used twice")
            if region.base < other.end and other.base < region.end:
                r.fail(r.at("base"), f"region {region.name} overlaps region {other.name}")
        regions.append(region)
    if not regions:
        f.fail(f.at("regions"), "needs at least one region")
    by_name = {r.name: r for r in regions}
    code = f.text("code_region")
    if code not in by_name or by_name[code].kind not in ("flash", "external-flash"):
        f.fail(f.at("code_region"), f"must name a flash region, not '{code}'")
    region = by_name[code]
    if not any(lo <= region.base and region.end <= hi for lo, hi in EXECUTABLE_RANGES):
        f.fail(f.at("code_region"), f"region {code} (0x{region.base:08x}-0x{region.end - 1:08x}) "
                                     "is not where a Cortex-M core fetches instructions "
                                     "(0x00000000-0x3FFFFFFF or 0x60000000-0x9FFFFFFF; the rest "
                                     "of the default memory map is execute-never)")
    arena = f.items("arena_regions")
    if not arena:
        f.fail(f.at("arena_regions"), "needs at least one region name")
    for i, name in enumerate(arena):
        where = f"{f.at('arena_regions')}[{i}]"
        if name not in by_name or not by_name[name].holds_data:
            f.fail(where, f"must name an SRAM or TCM region, not {name!r}")
        if i and by_name[arena[i - 1]].end != by_name[name].base:
            f.fail(where, f"region {name} does not start where {arena[i - 1]} ends (the arena "
                          f"regions must be contiguous, in address order)")
    stack = f.text("stack_region", "")
    if stack and (stack not in by_name or not by_name[stack].holds_data):
        f.fail(f.at("stack_region"), f"must name an SRAM or TCM region, not {stack!r}")
    sram_wait = f.clock_table("sram_wait_states", [[max_hz, 0]])
    if sram_wait[-1][0] < max_hz:
        f.fail(f.at("sram_wait_states"), f"ends at {sram_wait[-1][0]} Hz, below clock.max_hz "
                                          f"{max_hz}")
    _no_unreachable_entries(f, "sram_wait_states", sram_wait, max_hz)
    return MemoryMap(tuple(regions), code, tuple(arena), sram_wait, f.citations(), stack)


# ---- peripherals ----------------------------------------------------------------------------
REGISTER_BYTES = (1, 2, 4)
_MEANINGS = tuple(m.value for m in FlashControlField)


def _in_peripheral_space(f: Fields, key: str, what: str, lo: int, hi: int,
                         memory: MemoryMap) -> None:
    """Refuse registers [lo, hi) that are not peripheral space: past 4 GiB, on the core's Private
    Peripheral Bus (the core's own registers, which the emulator models itself) or in memory."""
    span = f"{what} (0x{lo:08x}-0x{hi - 1:08x})"
    if hi > 1 << 32:
        f.fail(f.at(key), f"{span} runs past the 32-bit address space")
    ppb_lo, ppb_hi = PRIVATE_PERIPHERAL_BUS
    if lo < ppb_hi and ppb_lo < hi:
        f.fail(f.at(key), f"{span} is on the core's Private Peripheral Bus "
                           "(0xE0000000-0xE00FFFFF), not a vendor peripheral")
    for region in memory.regions:
        if lo < region.end and region.base < hi:
            f.fail(f.at(key), f"{span} lies in memory region {region.name}: peripheral registers "
                               "must be outside the board's memory regions")


def _register_bytes(f: Fields, key: str) -> int:
    value = f.count(key, 1, 4)
    if value not in REGISTER_BYTES:
        f.fail(f.at(key), f"must be one of {', '.join(map(str, REGISTER_BYTES))}, not {value}")
    return value


def _aligned(f: Fields, key: str, address: int) -> int:
    if address % 4:
        f.fail(f.at(key), f"(0x{address:08x}) is not 4-byte aligned")
    return address


def _console(f: Fields, memory: MemoryMap) -> ConsoleUart:
    f.check_keys(("name", "base", "size", "data_offset", "status_offset", "ready_mask",
                  "ready_value"), ("idle_status", "register_bytes", "note"))
    name, base, size = f.text("name"), _aligned(f, "base", _word(f, "base")), f.count("size", 1)
    width = _register_bytes(f, "register_bytes")
    offsets = {}
    for key in ("data_offset", "status_offset"):
        offset = f.count(key)
        if offset % width or offset + width > size:
            f.fail(f.at(key), f"({offset}) must be a multiple of register_bytes ({width}) "
                               f"with its register inside the block's {size} bytes")
        offsets[key] = offset
    if offsets["data_offset"] == offsets["status_offset"]:
        f.fail(f.at("status_offset"), "must differ from data_offset")
    bits = 8 * width
    mask = _word(f, "ready_mask", "register value", bits)
    ready = _word(f, "ready_value", "register value", bits)
    if not mask or ready & ~mask:
        f.fail(f.at("ready_value"), f"(0x{ready:x}) must lie within a non-zero ready_mask "
                                     f"(0x{mask:x})")
    idle = _word(f, "idle_status", "register value", bits, ready)
    if idle & mask != ready:
        f.fail(f.at("idle_status"), f"(0x{idle:x}) must read ready: (idle_status & ready_mask) "
                                     f"== ready_value (0x{ready:x})")
    _in_peripheral_space(f, "base", f"console {name}", base, base + size, memory)
    return ConsoleUart(name, base, size, offsets["data_offset"], offsets["status_offset"], mask,
                       ready, idle, width, f.text("note", ""))


def _bit_fields(f: Fields, bits: int) -> tuple[BitField, ...]:
    """{meaning: [lowest bit, width]} of one register: known meanings, inside the register,
    not overlapping."""
    out: list[BitField] = []
    for meaning, entry in f.data.items():
        where = f.at(meaning)
        if meaning not in _MEANINGS:
            f.fail(where, f"is not a known meaning (expected one of {', '.join(_MEANINGS)})")
        if (not isinstance(entry, list) or len(entry) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in entry)
                or entry[0] < 0 or entry[1] < 1):
            f.fail(where, f"must be [lowest bit, width] with width >= 1, not {entry!r}")
        field = BitField(FlashControlField(meaning), entry[0], entry[1])
        if field.lsb + field.width > bits:
            f.fail(where, f"(bits {field.lsb}-{field.lsb + field.width - 1}) runs past bit "
                          f"{bits - 1}, the register's last")
        for other in out:
            if field.mask & other.mask:
                f.fail(where, f"overlaps field '{other.meaning.value}' of the same register")
        out.append(field)
    if not out:
        f.fail(f.where, "needs at least one field")
    return tuple(out)


def _flash_control(f: Fields, memory: MemoryMap) -> FlashControlRegister:
    f.check_keys(("name", "address", "reset", "fields"), ("bytes", "note"))
    name, address = f.text("name"), _aligned(f, "address", _word(f, "address"))
    width = _register_bytes(f, "bytes")
    register = FlashControlRegister(name, address, _word(f, "reset", "register value", 8 * width),
                                    _bit_fields(f.obj("fields"), 8 * width), width,
                                    f.text("note", ""))
    _in_peripheral_space(f, "address", f"register {name}", address, register.end, memory)
    return register


def _peripherals(f: Fields, memory: MemoryMap) -> Peripherals:
    f.check_keys(("cite",), ("console", "flash_control"))
    console = _console(f.obj("console"), memory) if "console" in f.data else None
    registers: list[FlashControlRegister] = []
    for i, item in enumerate(f.items("flash_control", [])):
        r = Fields(f.path, item, f"{f.at('flash_control')}[{i}]")
        register = _flash_control(r, memory)
        if console and register.address < console.end and console.base < register.end:
            r.fail(r.at("address"), f"register {register.name} lies in the console's block")
        for other in registers:
            if other.name == register.name or (register.address < other.end
                                               and other.address < register.end):
                r.fail(r.at("address"), f"register {register.name} overlaps register "
                                         f"{other.name}")
            for field in register.fields:
                if other.field(field.meaning):
                    r.fail(f"{r.at('fields')}.{field.meaning.value}",
                           f"is set by register {other.name} already (one register per meaning)")
        registers.append(register)
    if console is None and not registers:
        f.fail(f.where, "needs a console or flash_control (leave the section out otherwise)")
    return Peripherals(console, tuple(registers), f.citations())


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
    f = Fields(path, data, "")
    f.check_keys(("schema", "name", "title", "vendor", "mcu", "core", "fpu", "clock", "flash",
                  "accelerator", "memory"), ("aliases", "notes", "peripherals", "boot"))
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
    title, vendor, mcu = f.text("title"), f.text("vendor"), f.text("mcu")
    fpu = f.choice("fpu", FPU_KINDS)
    flash, accelerator = _flash(f.obj("flash"), clock.max_hz), _accelerator(f.obj("accelerator"))
    memory = _memory(f.obj("memory"), clock.max_hz)
    peripherals = (_peripherals(f.obj("peripherals"), memory) if "peripherals" in f.data
                   else NO_PERIPHERALS)
    boot = boot_header(f.obj("boot"), memory) if "boot" in f.data else None
    return Board(name, title, tuple(aliases), vendor, mcu, core, fpu, clock, flash, accelerator,
                 memory, tuple(notes), path, peripherals, boot)
