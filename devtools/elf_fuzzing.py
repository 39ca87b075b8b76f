"""Mutants of firmware images for `micro-rt emulate` (the fuzzer's firmware stage).

Each mutation edits a linked ELF where a bad image goes wrong in practice: the ELF header, a
program header (offset, addresses, sizes), a section header, the symbol table (symbols that lie
about their address or size), the vector table (stack pointer, reset and fault vectors), the code
itself (random bytes: undefined instructions, wild branches, faults), or a truncation. The
property `check_firmware` tests: whatever the bytes, `emulate` ends with a report or a
MicroRtError, within its cycle bound, never with another exception.
"""
from __future__ import annotations

import random
import struct
import tempfile
from pathlib import Path
from typing import Callable

from micro_rt.errors import MicroRtError

BOUNDARY = (0, 1, 2, 3, 4, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFF9, 0x2000_0000, 0x0800_0000,
            0xE000_ED00, 0x4000_0000)


def _value(rng: random.Random) -> int:
    return rng.choice(BOUNDARY) if rng.random() < 0.5 else rng.getrandbits(32)


def _headers(raw: bytes) -> tuple[list[int], list[int]]:
    """File offsets of the program headers and of the section headers (empty if unreadable)."""
    try:
        phoff, shoff = struct.unpack_from("<II", raw, 28)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", raw, 42)
    except struct.error:
        return [], []
    ph = [phoff + i * phentsize for i in range(phnum) if phoff + (i + 1) * phentsize <= len(raw)]
    sh = [shoff + i * shentsize for i in range(shnum) if shoff + (i + 1) * shentsize <= len(raw)]
    return ph, sh


def _load_offset(raw: bytes) -> int:
    ph, _ = _headers(raw)
    for off in ph:
        if struct.unpack_from("<I", raw, off)[0] == 1:
            return struct.unpack_from("<I", raw, off + 4)[0]
    return 0


def _put(raw: bytearray, offset: int, value: int) -> None:
    if 0 <= offset and offset + 4 <= len(raw):
        struct.pack_into("<I", raw, offset, value & 0xFFFF_FFFF)


def elf_header(raw: bytearray, rng: random.Random) -> None:
    raw[rng.randrange(min(52, len(raw)))] = rng.getrandbits(8)


def program_header(raw: bytearray, rng: random.Random) -> None:
    ph, _ = _headers(raw)
    if ph:
        _put(raw, rng.choice(ph) + 4 * rng.randrange(1, 8), _value(rng))


def section_header(raw: bytearray, rng: random.Random) -> None:
    _, sh = _headers(raw)
    if sh:
        _put(raw, rng.choice(sh) + 4 * rng.randrange(0, 10), _value(rng))


def symbol_table(raw: bytearray, rng: random.Random) -> None:
    """A symbol's value or size: a symbol that lies."""
    _, sh = _headers(raw)
    for off in sh:
        if struct.unpack_from("<I", raw, off + 4)[0] == 2:            # SHT_SYMTAB
            start, size = struct.unpack_from("<II", raw, off + 16)
            if size >= 16:
                sym = start + 16 * rng.randrange(size // 16)
                _put(raw, sym + (4 if rng.random() < 0.5 else 8), _value(rng))
            return


def vector_table(raw: bytearray, rng: random.Random) -> None:
    _put(raw, _load_offset(raw) + 4 * rng.choice((0, 1, 1, 3, 11, 15)), _value(rng))


def code_bytes(raw: bytearray, rng: random.Random) -> None:
    base = _load_offset(raw)
    for _ in range(rng.randrange(1, 8)):
        i = base + 0x40 + rng.randrange(0x2000)
        if i < len(raw):
            raw[i] = rng.getrandbits(8)


def truncate(raw: bytearray, rng: random.Random) -> None:
    del raw[rng.randrange(len(raw)):]


MUTATORS: dict[str, Callable[[bytearray, random.Random], None]] = {
    "elf_header": elf_header, "program_header": program_header, "section_header": section_header,
    "symbol_table": symbol_table, "vector_table": vector_table, "code_bytes": code_bytes,
    "truncate": truncate}


def make_firmware_mutant(seed_image: bytes, campaign_seed: int, k: int) -> tuple[str, bytes]:
    """Mutant k of a campaign: 1-3 stacked mutations; (their names, the bytes)."""
    rng = random.Random(f"{campaign_seed}:{k}")
    raw = bytearray(seed_image)
    names = []
    for _ in range(rng.randrange(1, 4)):
        name = rng.choice(sorted(MUTATORS))
        MUTATORS[name](raw, rng)
        names.append(name)
    return "+".join(names), bytes(raw)


def check_firmware(data: bytes, max_cycles: int = 200_000, board=None) -> str:
    """'report' or 'error: <MicroRtError type>' for an image's bytes; any other exception
    propagates (a bug of micro_rt's)."""
    from micro_rt.cortexm.system.machine import EmulateRequest
    from micro_rt.cortexm.system.run import run_firmware
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutant.elf"
        path.write_bytes(data)
        try:
            run_firmware(EmulateRequest(path, board=board, max_cycles=max_cycles))
        except MicroRtError as exc:
            return f"error: {type(exc).__name__}"
    return "report"
