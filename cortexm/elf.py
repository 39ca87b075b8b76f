"""ELF loading for the virtual MCU (pyelftools): loadable segments and the symbol table."""
from __future__ import annotations

import bisect
import hashlib
import struct
from typing import NamedTuple, Optional
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.constants import P_FLAGS
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from micro_rt.errors import EmulationError


@dataclass
class Segment:
    vaddr: int          # run address (where the CPU sees it: .data in SRAM)
    paddr: int          # load address (the image in flash: .data's initial values)
    data: bytes         # file contents (filesz bytes)
    memsz: int          # >= len(data): the rest is zero (.bss)
    executable: bool


@dataclass
class Symbol:
    name: str           # the key in ElfImage.symbols: the ELF name, "name [file]" for a clash
    addr: int           # Thumb bit cleared
    size: int
    is_func: bool
    file: Optional[str] = None     # the source file of a local symbol (its STT_FILE)


@dataclass
class ElfImage:
    path: str
    entry: int
    segments: list[Segment]
    symbols: dict[str, Symbol]
    sha256: str
    architecture: Optional[str] = None   # what it was built for (build_architecture), if it says
    _starts: list[int] = field(default_factory=list, repr=False)
    _sorted: list[Symbol] = field(default_factory=list, repr=False)

    def __post_init__(self):
        syms = sorted((s for s in self.symbols.values() if s.is_func or s.size),
                      key=lambda s: (s.addr, not s.is_func, s.name))
        self._sorted = syms
        self._starts = [s.addr for s in syms]

    def symbol(self, name: str) -> int:
        sym = self.symbols.get(name)
        if sym is None:
            raise EmulationError(f"symbol '{name}' not found in {Path(self.path).name}")
        return sym.addr

    def symbol_at(self, pc: int) -> str:
        """'name+0xoff' for the function (or sized object) containing pc, else hex(pc)."""
        pc &= ~1
        i = bisect.bisect_right(self._starts, pc) - 1
        # several symbols may start at or before pc: walk back for one that contains it
        while i >= 0:
            s = self._sorted[i]
            if s.addr <= pc < s.addr + max(s.size, 1) or (s.size == 0 and s.addr == pc):
                off = pc - s.addr
                return s.name if off == 0 else f"{s.name}+0x{off:x}"
            if pc - s.addr > 1 << 20:
                break
            i -= 1
        return f"0x{pc:08x}"

    def function_at(self, pc: int) -> Optional[Symbol]:
        """The function symbol whose body contains pc, if any."""
        pc &= ~1
        i = bisect.bisect_right(self._starts, pc) - 1
        while i >= 0:
            s = self._sorted[i]
            if s.is_func and s.addr <= pc < s.addr + max(s.size, 1):
                return s
            if pc - s.addr > 1 << 20:
                break
            i -= 1
        return None

    def static_ram_bytes(self, ram_base: int) -> int:
        """.data + .bss: what the firmware itself occupies in SRAM."""
        return sum(s.memsz for s in self.segments if s.vaddr >= ram_base)

    def flash_end(self, flash_base: int, flash_limit: int) -> int:
        """First address after the image in flash [flash_base, flash_limit): code and constants
        (run address = load address) and the initial values of .data (load address)."""
        end = flash_base
        for seg in self.segments:
            for a in {seg.vaddr, seg.paddr}:
                if flash_base <= a < flash_limit:
                    end = max(end, a + (len(seg.data) if a == seg.paddr else seg.memsz))
        return end

    def ram_end(self, ram_base: int) -> int:
        """First address after .data and .bss (ram_base when the firmware has none)."""
        ends = [s.vaddr + s.memsz for s in self.segments if s.vaddr >= ram_base]
        return max(ends, default=ram_base)


_STT_NOTYPE, _STT_OBJECT, _STT_FUNC, _STT_FILE = 0, 1, 2, 4
_STB_LOCAL, _STB_GLOBAL, _SHN_UNDEF, _SHN_ABS = 0, 1, 0, 0xFFF1


class TableSymbol(NamedTuple):
    """One .symtab entry as the table holds it (Elf32_Sym), its name read from the string table."""
    number: int         # its index in the table (a NamedTuple field may not be named index)
    name: str
    value: int
    size: int
    type: int           # STT_*
    bind: int           # STB_*
    shndx: int

    @property
    def defined(self) -> bool:
        return self.shndx not in (_SHN_UNDEF, _SHN_ABS)

    @property
    def is_file(self) -> bool:
        return self.type == _STT_FILE

    @property
    def is_func(self) -> bool:
        return self.type == _STT_FUNC

    @property
    def is_object(self) -> bool:
        return self.type == _STT_OBJECT

    @property
    def is_global(self) -> bool:
        return self.bind == _STB_GLOBAL


def table_symbols(elf: ELFFile) -> Optional[list[TableSymbol]]:
    """Every named entry of .symtab in table order (None without one). Read straight from the
    table's bytes (Elf32_Sym, little-endian): pyelftools builds an object per symbol, which took a
    tenth of a second for the firmware at every machine's start."""
    symtab = elf.get_section_by_name(".symtab")
    if not isinstance(symtab, SymbolTableSection):
        return None
    strtab = elf.get_section(symtab["sh_link"]).data()
    data = symtab.data()
    step = symtab["sh_entsize"] or 16
    found = []
    for off in range(0, len(data) - 15, step):
        name_at, value, size, info, _, shndx = struct.unpack_from("<IIIBBH", data, off)
        if not name_at or name_at >= len(strtab):
            continue                       # no name, or one outside the string table: a symbol that lies
        end = strtab.find(b"\0", name_at)
        name = strtab[name_at:end if end >= 0 else len(strtab)].decode("utf-8", errors="replace")
        found.append(TableSymbol(off // step, name, value, size, info & 0xF, info >> 4, shndx))
    return found


def _symbols(elf: ELFFile) -> dict[str, Symbol]:
    """The defined function, object and untyped symbols of .symtab (not the $t / $d mapping
    symbols), a global or sized definition winning over another of the same name in one file.
    Local symbols of the same name in different files (C statics, C++ anonymous namespaces: every
    TFLM kernel has its own `(anonymous namespace)::Eval`) are all kept: those that clash are
    keyed "name [file]", the file being the STT_FILE symbol that precedes a file's locals."""
    found: list[tuple[Symbol, bool]] = []          # (symbol, is global), in table order
    current_file: Optional[str] = None
    for sym in table_symbols(elf) or ():
        if sym.is_file:
            current_file = sym.name
            continue
        if sym.type not in (_STT_FUNC, _STT_OBJECT, _STT_NOTYPE) or sym.shndx == _SHN_UNDEF:
            continue
        if sym.name.startswith("$"):
            continue
        local = sym.bind == _STB_LOCAL
        found.append((Symbol(sym.name, sym.value & ~1 if sym.is_func else sym.value, sym.size, sym.is_func,
                             current_file if local else None), not local))
    return keyed_symbols(found)


def keyed_symbols(found: list[tuple[Symbol, bool]]) -> dict[str, Symbol]:
    """{key: symbol} from (symbol, is global) in table order: a local name several files define
    is keyed "name [file]"; of one key, a global or sized definition wins."""
    files_of: dict[str, set] = {}
    for sym, _ in found:
        files_of.setdefault(sym.name, set()).add(sym.file)
    symbols: dict[str, Symbol] = {}
    for sym, is_global in found:
        if len(files_of[sym.name]) > 1 and sym.file is not None:
            sym.name = f"{sym.name} [{sym.file}]"
        old = symbols.get(sym.name)
        if old is None or is_global or (not old.size and sym.size):
            symbols[sym.name] = sym
    return symbols


# Tag_CPU_arch values (Arm's "Addenda to, and Errata in, the ABI for the Arm Architecture", build
# attributes) of the M profile; 10 ("v7") is v7-M when Tag_CPU_arch_profile is 'M'
M_PROFILE_ARCHITECTURES = {10: "v7-M", 11: "v6-M", 12: "v6S-M", 13: "v7E-M", 16: "v8-M.base",
                           17: "v8-M.main", 21: "v8.1-M.main"}


_NTBS_TAGS = {4, 5, 67}                   # Tag_CPU_raw_name, Tag_CPU_name, Tag_conformance: strings


def _uleb128(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while i < len(data):
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i
    raise ValueError("ULEB128 runs past the section")


def _aeabi_file_attributes(data: bytes) -> dict[int, object]:
    """The file-scope attributes of the "aeabi" subsection of an .ARM.attributes section's bytes
    (format-version 'A'; the ABI addenda's layout). Our own reader rather than pyelftools': a
    length of 0 there loops for ever, and a firmware image may be malformed."""
    if not data or data[0] != ord("A"):
        raise ValueError("not format-version 'A'")
    i = 1
    while i + 4 <= len(data):
        (length,) = struct.unpack_from("<I", data, i)
        if length < 5 or i + length > len(data):
            raise ValueError(f"subsection length {length}")
        sub, i = data[i + 4:i + length], i + length
        name_end = sub.find(b"\0")
        if name_end < 0 or sub[:name_end] != b"aeabi":
            continue
        j = name_end + 1
        while j + 5 <= len(sub):
            kind, (size,) = sub[j], struct.unpack_from("<I", sub, j + 1)
            if size < 5 or j + size > len(sub):
                raise ValueError(f"attribute block size {size}")
            block, j = sub[j + 5:j + size], j + size
            if kind != 1:                            # Tag_File; section and symbol scopes skipped
                continue
            tags: dict[int, object] = {}
            k = 0
            while k < len(block):
                tag, k = _uleb128(block, k)
                if tag in _NTBS_TAGS or (tag > 32 and tag % 2):
                    nul = block.find(b"\0", k)
                    if nul < 0:
                        raise ValueError(f"attribute {tag}'s string is not terminated")
                    tags[tag], k = block[k:nul].decode("latin-1"), nul + 1
                else:
                    tags[tag], k = _uleb128(block, k)
                    if tag == 32:                    # Tag_compatibility: a flag, then a string
                        nul = block.find(b"\0", k)
                        k = len(block) if nul < 0 else nul + 1
            return tags
    return {}


def build_architecture(elf: ELFFile) -> Optional[str]:
    """The architecture the compiler built for, from .ARM.attributes' Tag_CPU_arch ("v7E-M"),
    or None without a readable one. Advisory: a malformed attributes section is not an error."""
    section = elf.get_section_by_name(".ARM.attributes")
    if section is None:
        return None
    try:
        tags = _aeabi_file_attributes(section.data())
    except (ValueError, struct.error):
        return None
    arch = tags.get(6)                               # Tag_CPU_arch
    if not isinstance(arch, int):
        return None
    if arch == 10 and tags.get(7) != ord("M"):       # Tag_CPU_arch_profile
        return "v7"
    return M_PROFILE_ARCHITECTURES.get(arch, f"Tag_CPU_arch {arch}")


def load_elf(path: str | Path) -> ElfImage:
    path = Path(path)
    raw = path.read_bytes()
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        if elf["e_machine"] != "EM_ARM" or elf.elfclass != 32:
            raise EmulationError(f"{path.name} is not a 32-bit ARM ELF")
        segments = []
        for seg in elf.iter_segments():
            if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
                continue
            segments.append(Segment(vaddr=seg["p_vaddr"], paddr=seg["p_paddr"], data=seg.data(),
                                    memsz=seg["p_memsz"], executable=bool(seg["p_flags"] & P_FLAGS.PF_X)))
        symbols = _symbols(elf)
        entry = elf["e_entry"]
        architecture = build_architecture(elf)
    return ElfImage(str(path), entry, segments, symbols, hashlib.sha256(raw).hexdigest(), architecture)
