"""What a firmware image needs for one model: the functions and data reachable from its entry
points, found in the linked ELF the way `ld --gc-sections` finds what to keep.

The firmware ELF is linked with every kernel kept (the emulator calls them by name). A device
image built for one model keeps only the vector table, the start-up code, the runtime and the
kernels its plan calls, with everything those reach. `ld` decides that from relocations; the
linked ELF has none left, so the references are read back from the code itself: BL / B / CBZ
targets and ADR addresses from a capstone disassembly of each function's instructions, and the
words of its literal pools (and of every data object) that point into another function or object
(R_ARM_ABS32 in the object file). The $t / $d mapping symbols say which bytes of a function are
instructions and which are literal pools.

A piece is what `ld` keeps or drops whole: one input section. The assembler starts every input
section with a mapping symbol, and `ld` lists each input object's local symbols after a FILE
symbol naming its source, so the pieces are found from the symbol table: with
-ffunction-sections -fdata-sections (the firmware's own sources) one function or object each;
a library object built without them (newlib's libm, libgcc's soft-float) keeps all its code in
one .text and its constants in one .rodata, so its functions form one piece. Anonymous data (a
$d span no object symbol covers: string constants) is a piece of its own. Checked against real
--gc-sections links of every exported kernel on every core (tests/test_image_size.py).
"""
from __future__ import annotations

import bisect
import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

import capstone
from capstone import arm as csarm
from elftools.elf.elffile import ELFFile

from micro_rt.errors import EmulationError

from .elf import table_symbols
from .firmware_build import SOURCE_DIR
from .firmware_facts import read_facts, write_facts
from .thumb_decode import disassembler

CODE, RODATA, DATA, BSS = "code", "rodata", "data", "bss"


@dataclass(frozen=True)
class Piece:
    """One unit the linker keeps or drops: a function (or several sharing a section), a data
    object, or anonymous data."""
    name: str
    addr: int
    size: int
    kind: str                    # CODE, RODATA (flash), DATA (SRAM, initial values in flash), BSS
    symbols: tuple[str, ...] = ()    # every symbol it holds (aliases, functions sharing a section)

    @property
    def end(self) -> int:
        return self.addr + self.size


@dataclass
class ImageParts:
    """The bytes of an image keeping `pieces` (what `ld --gc-sections` would keep)."""
    pieces: list[Piece]

    def total(self, kind: str) -> int:
        """Bytes of one kind; .data and .bss as firmware.ld lays them out (each ends 4-aligned)."""
        n = sum(p.size for p in self.pieces if p.kind == kind)
        return -(-n // 4) * 4 if kind in (DATA, BSS) else n

    @property
    def code_bytes(self) -> int:
        return self.total(CODE)

    @property
    def rodata_bytes(self) -> int:
        return self.total(RODATA)

    @property
    def data_bytes(self) -> int:
        return self.total(DATA)

    @property
    def bss_bytes(self) -> int:
        return self.total(BSS)

    @property
    def static_ram_bytes(self) -> int:
        return self.data_bytes + self.bss_bytes

    def names(self, kind: Optional[str] = None) -> set[str]:
        """Every symbol the pieces hold (of one kind)."""
        return {n for p in self.pieces if kind is None or p.kind == kind for n in p.symbols}

    def padding_bytes(self, flash_base: int, end_align: int = 16) -> int:
        """The alignment padding a link of these pieces adds in flash, laid out in the firmware's
        order from `flash_base`: Thumb code sections are 4-byte aligned (GCC), data at most 8
        (doubles) and no more than its address in the firmware shows; the image ends on
        `end_align` (firmware.ld). An estimate: the firmware ELF does not record alignments."""
        addr = flash_base
        for p in self.pieces:
            if p.kind in (CODE, RODATA):
                align = min(4 if p.kind == CODE else 8, p.addr & -p.addr) if p.addr else 4
                addr = -(-addr // align) * align + p.size
        end = -(-addr // end_align) * end_align
        return end - flash_base - self.code_bytes - self.rodata_bytes


@dataclass
class _Section:
    name: str
    addr: int
    data: bytes
    size: int
    kind: str                   # CODE for .text (which also holds .rodata), DATA, BSS


@dataclass
class ReferenceGraph:
    """Every piece of a linked firmware ELF and what each one refers to."""
    pieces: list[Piece]
    refs: dict[int, set[int]]                   # piece index -> piece indices it refers to
    by_name: dict[str, int]                     # every symbol name (aliases too) -> piece index

    def closure(self, roots: Iterable[str]) -> ImageParts:
        """The pieces reachable from the symbols `roots` (KeyError-free: an unknown name is an
        EmulationError naming it)."""
        todo = []
        for name in roots:
            if name not in self.by_name:
                raise EmulationError(f"symbol '{name}' is not in the firmware image")
            todo.append(self.by_name[name])
        seen: set[int] = set()
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            todo.extend(self.refs.get(i, ()))
        return ImageParts([self.pieces[i] for i in sorted(seen)])


def _sections(elf: ELFFile) -> list[_Section]:
    found = []
    for s in elf.iter_sections():
        flags = s["sh_flags"]
        if not flags & 0x2 or not s["sh_size"]:           # SHF_ALLOC
            continue
        nobits = s["sh_type"] == "SHT_NOBITS"
        kind = BSS if nobits else CODE if flags & 0x4 else DATA    # SHF_EXECINSTR
        if not nobits and not flags & 0x1 and not flags & 0x4:      # read-only data section
            kind = CODE
        found.append(_Section(s.name, s["sh_addr"], b"" if nobits else s.data(), s["sh_size"], kind))
    return found


def _symbols(elf: ELFFile) -> tuple[list, list, dict[int, tuple[int, str]]]:
    """(sized symbols [(addr, size, name, is_func, is_global)], mapping symbols [(addr, 't'|'d')],
    {mapping symbol address: (input object number, its source file name)}). `ld` writes each
    input object's local symbols after a FILE symbol naming its source: that says which object
    a mapping symbol, and so an input section, comes from."""
    sized, mapping, files = [], [], {}
    symbols = table_symbols(elf)
    if symbols is None:
        raise EmulationError("the firmware ELF has no symbol table")
    current = (-1, "")
    for sym in symbols:
        name = sym.name
        if sym.is_file:
            current = (sym.number, name)
            continue
        if not sym.defined:
            continue
        if name in ("$t", "$d", "$a") or name.startswith(("$t.", "$d.", "$a.")):
            addr = sym.value & ~1
            mapping.append((addr, name[1]))
            files[addr] = current
        elif (sym.is_func or sym.is_object) and sym.size:
            sized.append((sym.value & ~1 if sym.is_func else sym.value, sym.size, name, sym.is_func,
                          sym.is_global))
    return sized, sorted(set(mapping)), files


def _kind_lookup(mapping: list) -> Callable[[int], str]:
    """addr -> 't' (instructions) or 'd' (data) from the mapping symbols."""
    addrs = [a for a, _ in mapping]

    def kind_at(addr: int) -> str:
        i = bisect.bisect_right(addrs, addr) - 1
        return mapping[i][1] if i >= 0 else "d"

    return kind_at


def _pieces(sections: list[_Section], sized: list, mapping: list, files: dict[int, tuple[int, str]],
            sectioned: Callable[[str], bool]) -> tuple[list[Piece], dict[str, int]]:
    """The pieces of every allocated section, and every symbol name's piece.

    The assembler puts a mapping symbol ($t or $d) at the start of every input section, so an
    input section starts at a mapping symbol that lies outside every function body, unless it is
    of the same library object as the one before it (`sectioned(source)` is False: built without
    -ffunction-sections -fdata-sections, one .text and one .rodata per object)."""
    map_addrs = [a for a, _ in mapping]
    kind_at = _kind_lookup(mapping)
    functions = sorted({(a, a + n) for a, n, _, is_func, _ in sized if is_func})
    pieces: list[Piece] = []
    names: dict[str, int] = {}
    for sec in sections:
        lo, hi = sec.addr, sec.addr + sec.size
        here = sorted((a, n, name, is_func, is_global) for a, n, name, is_func, is_global in sized
                      if lo <= a < hi)
        inside = [(a, b) for a, b in functions if lo <= a < hi]
        starts = [a for a, _ in inside]

        def in_body(addr: int) -> bool:
            i = bisect.bisect_right(starts, addr) - 1
            return i >= 0 and inside[i][0] < addr < inside[i][1]

        kept: list[int] = []
        for b in sorted({lo} | {a for a in map_addrs if lo <= a < hi and not in_body(a)}):
            same = kept and b in files and files[b] == files.get(kept[-1]) and \
                kind_at(b) == kind_at(kept[-1]) and not sectioned(files[b][1])
            if not same:
                kept.append(b)
        bounds = kept + [hi]
        for start, stop in zip(bounds, bounds[1:]):
            symbols = [s for s in here if start <= s[0] < stop]
            if not symbols and (sec.kind == CODE and kind_at(start) != "d"):
                continue                            # padding between input sections
            # globals first, so a piece is named as its callers name it
            symbols.sort(key=lambda s: (s[0], not s[4], s[2]))
            end = max((a + n for a, n, *_ in symbols), default=stop)
            is_func = any(s[3] for s in symbols)
            kind = CODE if is_func else RODATA if sec.kind == CODE else sec.kind
            label = symbols[0][2] if symbols else f"<data 0x{start:08x}>"
            for _, _, name, _, _ in symbols:
                names.setdefault(name, len(pieces))
            pieces.append(Piece(label, start, end - start, kind, tuple(s[2] for s in symbols)))
    return pieces, names


def _code_spans(piece: Piece, mapping: list, kinds_at) -> list[tuple[int, int, str]]:
    """(start, end, 't' or 'd') spans of a code piece from the mapping symbols."""
    points = sorted({piece.addr, piece.end, *(a for a, _ in mapping if piece.addr < a < piece.end)})
    return [(a, b, kinds_at(a)) for a, b in zip(points, points[1:])]


def _references(sections: list[_Section], pieces: list[Piece], mapping: list) -> dict[int, set[int]]:
    starts = [p.addr for p in pieces]

    def piece_at(addr: int) -> Optional[int]:
        i = bisect.bisect_right(starts, addr) - 1
        return i if i >= 0 and pieces[i].addr <= addr < pieces[i].end else None

    kind_at = _kind_lookup(mapping)
    md = disassembler(detail=True)
    refs: dict[int, set[int]] = {}
    for sec in sections:
        if not sec.data:
            continue
        for index, piece in enumerate(pieces):
            if not sec.addr <= piece.addr < sec.addr + sec.size:
                continue
            targets: set[int] = set()
            spans = (_code_spans(piece, mapping, kind_at) if piece.kind == CODE
                     else [(piece.addr, piece.end, "d")])
            for lo, hi, kind in spans:
                raw = sec.data[lo - sec.addr:hi - sec.addr]
                if kind == "d":
                    first = (-lo) % 4
                    for off in range(first, len(raw) - 3, 4):
                        targets.add(struct.unpack_from("<I", raw, off)[0] & ~1)
                    continue
                off = 0
                while off < len(raw) - 1:
                    step = 2
                    for insn in md.disasm(raw[off:], lo + off):
                        step = 0
                        off = insn.address - lo + insn.size
                        name = insn.mnemonic.split(".")[0]
                        imm = [o.imm for o in insn.operands if o.type == csarm.ARM_OP_IMM]
                        if imm and (insn.group(capstone.CS_GRP_JUMP) or insn.group(capstone.CS_GRP_CALL)):
                            targets.add(imm[-1] & ~1)
                        elif name == "adr" and imm:
                            targets.add(((insn.address + 4) & ~3) + imm[-1])
                        elif name == "add" and "pc" in insn.op_str and imm and len(insn.operands) == 3:
                            targets.add(((insn.address + 4) & ~3) + imm[-1])
                    off += step
            found = {p for t in targets if (p := piece_at(t)) is not None and p != index}
            if found:
                refs[index] = found
    return refs


_CACHE: dict[str, ReferenceGraph] = {}


def _firmware_source(name: str) -> bool:
    """True for the firmware's own sources, built with -ffunction-sections -fdata-sections."""
    return bool(name) and (SOURCE_DIR / name).is_file()


REFERENCES = "references"       # cortexm/firmware/<core>.references.json (firmware_facts.py)


def reference_graph(path: str | Path) -> ReferenceGraph:
    """The pieces of a linked firmware ELF and their references (cached by the file's hash). For
    a shipped ELF both come from the file make firmware writes beside it when it is this ELF's
    (the references take capstone a second, the pieces pyelftools a few hundredths)."""
    key = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if key in _CACHE:
        return _CACHE[key]
    shipped = _shipped_graph(path, key)
    if shipped is not None:
        _CACHE[key] = shipped
        return shipped
    sections, pieces, names, mapping = _parsed(path)
    try:
        refs = _references(sections, pieces, mapping)
    except capstone.CsError as e:
        raise EmulationError(f"{Path(path).name}: cannot disassemble: {e}") from None
    graph = ReferenceGraph(pieces, refs, names)
    _CACHE[key] = graph
    return graph


def _names(pieces: list[Piece]) -> dict[str, int]:
    """Every symbol name's piece: the first that holds it, as _pieces names them."""
    names: dict[str, int] = {}
    for i, p in enumerate(pieces):
        for name in p.symbols:
            names.setdefault(name, i)
    return names


def _parsed(path: str | Path) -> tuple[list[_Section], list[Piece], dict[str, int], list]:
    """(sections, pieces, names, mapping symbols) of a linked firmware ELF."""
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        sections = _sections(elf)
        sized, mapping, files = _symbols(elf)
    pieces, names = _pieces(sections, sized, mapping, files, _firmware_source)
    return sections, pieces, names, mapping


def _shipped_graph(path: str | Path, sha256: str) -> Optional[ReferenceGraph]:
    """The pieces and references written beside the ELF for exactly this ELF, else None."""
    facts = read_facts(path, sha256, REFERENCES)
    if facts is None:
        return None
    try:
        pieces = [Piece(str(name), int(addr), int(size), str(kind), tuple(map(str, symbols)))
                  for name, addr, size, kind, symbols in facts["pieces"]]
        refs = {int(i): {int(j) for j in found} for i, found in facts["refs"].items()}
    except (KeyError, TypeError, ValueError):
        return None
    if any(not 0 <= i < len(pieces) or not all(0 <= j < len(pieces) for j in found) for i, found in refs.items()):
        return None
    return ReferenceGraph(pieces, refs, _names(pieces))


def write_shipped_references(path: str | Path) -> Path:
    """Compute the ELF's pieces and references afresh and write them beside it, tied to its hash."""
    sections, pieces, _, mapping = _parsed(path)
    refs = _references(sections, pieces, mapping)
    facts = {"pieces": [[p.name, p.addr, p.size, p.kind, list(p.symbols)] for p in pieces],
             "refs": {str(i): sorted(found) for i, found in sorted(refs.items())}}
    return write_facts(path, hashlib.sha256(Path(path).read_bytes()).hexdigest(), REFERENCES, facts)

