"""Reading a user's firmware image and checking it before anything runs.

`load_elf` (cortexm/elf.py) trusts its input; a user's file is checked here first, from the raw
bytes (ELF identity, headers inside the file, loadable segments that do not overlap), so that a
bad file is a FirmwareError naming the file and the field, never a pyelftools exception.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError

from micro_rt.errors import FirmwareError
from micro_rt.files import read_regular_file

from ..elf import ElfImage, Segment, load_elf

MAX_FIRMWARE_BYTES = 256 * 1024 * 1024
EM_ARM = 40
PT_LOAD = 1
SHT_NOBITS = 8


@dataclass(frozen=True)
class FirmwareFile:
    """A checked ELF: its image and the symbols that were dropped for lying."""
    image: ElfImage
    dropped_symbols: tuple[str, ...]      # outside every segment: not used to name code

    @property
    def name(self) -> str:
        return Path(self.image.path).name


def _header(raw: bytes, name: str) -> dict:
    if len(raw) < 52:
        raise FirmwareError(f"{name}: {len(raw)} bytes is too short for an ELF header (52 bytes)")
    if raw[:4] != b"\x7fELF":
        raise FirmwareError(f"{name}: not an ELF file (it starts with {raw[:4]!r}, not b'\\x7fELF')")
    if raw[4] == 2:
        raise FirmwareError(f"{name}: a 64-bit ELF (EI_CLASS 2); a Cortex-M image is 32-bit")
    if raw[4] != 1:
        raise FirmwareError(f"{name}: EI_CLASS {raw[4]} is neither 32- nor 64-bit")
    if raw[5] == 2:
        raise FirmwareError(f"{name}: a big-endian ELF (EI_DATA 2); Cortex-M images are little-endian")
    if raw[5] != 1:
        raise FirmwareError(f"{name}: EI_DATA {raw[5]} is not a byte order")
    (e_type, e_machine, _ver, e_entry, e_phoff, e_shoff, _flags, _ehsize, e_phentsize, e_phnum,
     e_shentsize, e_shnum, _shstrndx) = struct.unpack_from("<HHIIIIIHHHHHH", raw, 16)
    if e_machine != EM_ARM:
        raise FirmwareError(f"{name}: e_machine {e_machine} is not ARM ({EM_ARM})")
    if e_phnum == 0:
        raise FirmwareError(f"{name}: no program headers (e_phnum 0): a relocatable object, not a "
                            "linked image")
    if e_phentsize < 32 or e_phoff + e_phnum * e_phentsize > len(raw):
        raise FirmwareError(f"{name}: the program headers (e_phoff 0x{e_phoff:x}, {e_phnum} x "
                            f"{e_phentsize} B) run past the end of the file ({len(raw)} B): truncated")
    if e_shnum and (e_shentsize < 40 or e_shoff + e_shnum * e_shentsize > len(raw)):
        raise FirmwareError(f"{name}: the section headers (e_shoff 0x{e_shoff:x}, {e_shnum} x "
                            f"{e_shentsize} B) run past the end of the file ({len(raw)} B): truncated")
    return dict(phoff=e_phoff, phnum=e_phnum, phentsize=e_phentsize, shoff=e_shoff, shnum=e_shnum,
                shentsize=e_shentsize, entry=e_entry)


def _check_tables(raw: bytes, name: str, h: dict) -> None:
    for i in range(h["phnum"]):
        p_type, p_offset, p_vaddr, _pa, p_filesz, p_memsz = struct.unpack_from(
            "<IIIIII", raw, h["phoff"] + i * h["phentsize"])
        if p_type != PT_LOAD:
            continue
        if p_offset + p_filesz > len(raw):
            raise FirmwareError(f"{name}: program header {i} (PT_LOAD at 0x{p_vaddr:08x}) holds "
                                f"{p_filesz} B from file offset 0x{p_offset:x}, past the end of the "
                                f"file ({len(raw)} B): truncated")
        if p_filesz > p_memsz:
            raise FirmwareError(f"{name}: program header {i} (PT_LOAD at 0x{p_vaddr:08x}): "
                                f"p_filesz {p_filesz} is larger than p_memsz {p_memsz}")
        if p_vaddr + p_memsz > 1 << 32:
            raise FirmwareError(f"{name}: program header {i} (PT_LOAD at 0x{p_vaddr:08x}, {p_memsz} B) "
                                "runs past the 32-bit address space")
    for i in range(h["shnum"]):
        _nm, sh_type, _fl, _addr, sh_offset, sh_size = struct.unpack_from(
            "<IIIIII", raw, h["shoff"] + i * h["shentsize"])
        if sh_type not in (0, SHT_NOBITS) and sh_offset + sh_size > len(raw):
            raise FirmwareError(f"{name}: section {i} holds {sh_size} B from file offset "
                                f"0x{sh_offset:x}, past the end of the file ({len(raw)} B): truncated")


def _check_overlaps(name: str, segments: list[Segment]) -> None:
    spans = sorted(((s.vaddr, s.vaddr + s.memsz, "run") for s in segments)
                   , key=lambda t: t[0])
    for (lo1, hi1, _), (lo2, hi2, _) in zip(spans, spans[1:]):
        if lo2 < hi1:
            raise FirmwareError(f"{name}: loadable segments overlap: 0x{lo1:08x}-0x{hi1 - 1:08x} "
                                f"and 0x{lo2:08x}-0x{hi2 - 1:08x}")
    loads = sorted((s.paddr, s.paddr + len(s.data)) for s in segments if s.data)
    for (lo1, hi1), (lo2, hi2) in zip(loads, loads[1:]):
        if lo2 < hi1:
            raise FirmwareError(f"{name}: the load images of two segments overlap: "
                                f"0x{lo1:08x}-0x{hi1 - 1:08x} and 0x{lo2:08x}-0x{hi2 - 1:08x}")


def _honest_symbols(image: ElfImage) -> tuple[str, ...]:
    """Drop symbols that lie: a function or object outside every segment, or one whose size runs
    past its segment (it would name code that is not there). Returns the names dropped."""
    spans = [(s.vaddr, s.vaddr + s.memsz) for s in image.segments]
    dropped = []
    for name, sym in list(image.symbols.items()):
        end = sym.addr + max(sym.size, 1)
        if not any(lo <= sym.addr and end <= hi for lo, hi in spans):
            if sym.is_func or sym.size:
                dropped.append(name)
                del image.symbols[name]
    if dropped:
        image.__post_init__()          # the address index, without them
    return tuple(sorted(dropped))


def read_firmware(path: str | Path) -> FirmwareFile:
    """The checked image of the ELF at `path`, or FirmwareError naming what is wrong."""
    p = Path(path)
    name = p.name
    raw = read_regular_file(p, MAX_FIRMWARE_BYTES, "firmware image", FirmwareError)
    h = _header(raw, name)
    _check_tables(raw, name, h)
    try:
        image = load_elf(p)
    except FirmwareError:
        raise
    except (ELFError, struct.error, ValueError, IndexError, KeyError, UnicodeDecodeError,
            AssertionError) as exc:
        raise FirmwareError(f"{name}: malformed ELF ({type(exc).__name__}: {exc})") from None
    if not image.segments:
        raise FirmwareError(f"{name}: no loadable segment (PT_LOAD with memory)")
    _check_overlaps(name, image.segments)
    return FirmwareFile(image, _honest_symbols(image))
