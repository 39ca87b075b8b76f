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

A piece is one function or data object of the symbol table, or anonymous data (a $d span no
object symbol covers: string constants, switch tables). `ld` keeps whole input sections; with
-ffunction-sections -fdata-sections that is one function or object each, except in hand-written
library objects (libgcc's soft-float, newlib's string functions) where several functions share
one section; functions of the firmware that fall into each other without a branch (no padding
between them and no return instruction at the end of the first) are joined into one piece for
that reason.
"""
from __future__ import annotations

import bisect
import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

import capstone
from capstone import arm as csarm
from elftools.elf.elffile import ELFFile

from micro_rt.errors import EmulationError

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

    @property
    def end(self) -> int:
        return self.addr + self.size


@dataclass
class ImageParts:
    """The bytes of an image keeping `pieces` (what `ld --gc-sections` would keep)."""
    pieces: list[Piece]

    def total(self, kind: str) -> int:
        return sum(p.size for p in self.pieces if p.kind == kind)

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
    def flash_bytes(self) -> int:
        """Code, read-only data and the initial values of .data."""
        return self.code_bytes + self.rodata_bytes + self.data_bytes

    @property
    def static_ram_bytes(self) -> int:
        return self.data_bytes + self.bss_bytes

    def names(self, kind: Optional[str] = None) -> set[str]:
        return {p.name for p in self.pieces if kind is None or p.kind == kind}


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
    _starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self):
        self._starts = [p.addr for p in self.pieces]

    def piece_at(self, addr: int) -> Optional[int]:
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0 and self.pieces[i].addr <= addr < self.pieces[i].end:
            return i
        return None

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


def _symbols(elf: ELFFile) -> tuple[list, list]:
    """(sized symbols [(addr, size, name, is_func, is_global)], mapping symbols [(addr, 't'|'d')])."""
    sized, mapping = [], []
    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        raise EmulationError("the firmware ELF has no symbol table")
    for sym in symtab.iter_symbols():
        if sym["st_shndx"] in ("SHN_UNDEF", "SHN_ABS"):
            continue
        name, typ = sym.name, sym["st_info"]["type"]
        if name in ("$t", "$d", "$a") or name.startswith(("$t.", "$d.", "$a.")):
            mapping.append((sym["st_value"] & ~1, name[1]))
        elif typ in ("STT_FUNC", "STT_OBJECT") and sym["st_size"]:
            sized.append((sym["st_value"] & ~1 if typ == "STT_FUNC" else sym["st_value"],
                          sym["st_size"], name, typ == "STT_FUNC", sym["st_info"]["bind"] == "STB_GLOBAL"))
    return sized, sorted(set(mapping))


def _falls_through(code: bytes, base: int, lo: int, hi: int, kind_at) -> bool:
    """True when the function at [lo, hi) ends in an instruction that does not end the flow
    (no return, no branch): the next function's code follows it in the same input section."""
    if kind_at(hi - 1) != "t":
        return False                        # ends in a literal pool: nothing runs into the next
    last = None
    for insn in disassembler(detail=False).disasm(code[lo - base:hi - base], lo):
        last = insn
    if last is None or last.address + last.size != hi:
        return False
    name, ops = last.mnemonic.split(".")[0], last.op_str
    ends = (name in ("b", "bx") or (name in ("pop", "ldm", "ldmia") and "pc" in ops)
            or (name in ("ldr", "mov") and ops.startswith("pc")) or name in ("bkpt", "udf"))
    return not ends


def _pieces(sections: list[_Section], sized: list, mapping: list) -> tuple[list[Piece], dict[str, int]]:
    """The pieces of every allocated section, and every symbol name's piece.

    The assembler puts a mapping symbol ($t or $d) at the start of every input section, so an
    input section starts at a mapping symbol that lies outside every function body; one that
    starts a function the previous function falls into is not a new section."""
    map_addrs = [a for a, _ in mapping]

    def kind_at(addr: int) -> str:
        i = bisect.bisect_right(map_addrs, addr) - 1
        return mapping[i][1] if i >= 0 else "d"

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

        bounds = {lo} | {a for a in map_addrs if lo <= a < hi and not in_body(a)}
        for k, (a, b) in enumerate(inside):
            if k and inside[k - 1][1] == a and sec.kind == CODE and \
                    _falls_through(sec.data, lo, inside[k - 1][0], a, kind_at):
                bounds.discard(a)
        bounds = sorted(bounds) + [hi]
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
            pieces.append(Piece(label, start, end - start, kind))
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

    map_addrs = [a for a, _ in mapping]

    def kind_at(addr: int) -> str:
        i = bisect.bisect_right(map_addrs, addr) - 1
        return mapping[i][1] if i >= 0 else "d"

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
            found = {piece_at(t) for t in targets} - {None, index}
            if found:
                refs[index] = found
    return refs


def _join_unreferenced(pieces: list[Piece], refs: dict[int, set[int]], names: dict[str, int],
                       kept: Callable[[str], bool]) -> tuple[list[Piece], dict[int, set[int]], dict[str, int]]:
    """A function nothing refers to and the firmware's linker script does not keep is in the
    image only because it shares an input section with the function before it (newlib's
    math_errf.o: one section, several functions separated by literal pools): join them."""
    referred = set().union(*refs.values()) if refs else set()
    aliases: dict[int, list[str]] = {}
    for name, i in names.items():
        aliases.setdefault(i, []).append(name)
    owner = list(range(len(pieces)))
    for i in range(1, len(pieces)):
        p, prev = pieces[i], pieces[owner[i - 1]]
        if (p.kind == CODE and prev.kind == CODE and i not in referred
                and not any(kept(n) for n in aliases.get(i, ())) and p.addr - prev.end < 16):
            owner[i] = owner[i - 1]
    spans: dict[int, Piece] = {}
    for i, o in enumerate(owner):
        base = spans.get(o, pieces[o])
        spans[o] = Piece(base.name, base.addr, max(base.end, pieces[i].end) - base.addr, base.kind)
    order = sorted(spans)
    new = {o: k for k, o in enumerate(order)}
    merged_refs: dict[int, set[int]] = {}
    for i, targets in refs.items():
        found = {new[owner[t]] for t in targets} - {new[owner[i]]}
        if found:
            merged_refs.setdefault(new[owner[i]], set()).update(found)
    return ([spans[o] for o in order], merged_refs,
            {n: new[owner[i]] for n, i in names.items()})


_CACHE: dict[str, ReferenceGraph] = {}


def firmware_keeps(name: str) -> bool:
    """What cortexm/src/firmware.ld keeps whatever refers to it: the vector table, the export
    table and every .text.arm_* / .text.mrt_* section (the emulator calls kernels by name)."""
    return name in ("mrt_vectors", "mrt_exports") or name.startswith(("arm_", "mrt_"))


def reference_graph(path: str | Path, kept_roots: Callable[[str], bool] = firmware_keeps) -> ReferenceGraph:
    """The pieces of a linked firmware ELF and their references (cached by the file's hash).
    `kept_roots`: the symbols the ELF's link kept without a reference (its KEEP lines)."""
    raw = Path(path).read_bytes()
    key = hashlib.sha256(raw).hexdigest()
    if key in _CACHE:
        return _CACHE[key]
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        sections = _sections(elf)
        sized, mapping = _symbols(elf)
    pieces, names = _pieces(sections, sized, mapping)
    try:
        refs = _references(sections, pieces, mapping)
    except capstone.CsError as e:
        raise EmulationError(f"{Path(path).name}: cannot disassemble: {e}") from None
    pieces, refs, names = _join_unreferenced(pieces, refs, names, kept_roots)
    graph = ReferenceGraph(pieces, refs, names)
    _CACHE[key] = graph
    return graph


def _align_of(piece: Piece) -> int:
    """A piece's alignment as placed in the full firmware: GCC gives Thumb code sections 4
    bytes; data at most 8 (doubles), less when its address says so."""
    cap = 4 if piece.kind == CODE else 8
    return min(cap, piece.addr & -piece.addr) if piece.addr else cap
