"""Write micro_rt/struct_layouts.py, the sizes and alignments of TFLM's structs per build, from
micro_rt/structs/tflm_structs.h, the one place they are declared (dev-only: needs gcc and
arm-none-eabi-gcc).

    python -m devtools.struct_layouts            # (re)write the table
    python -m devtools.struct_layouts --check    # exit 1 if the table is not what the header gives

The header is compiled twice, as the two builds micro_rt accounts for:
  host64  the host gcc with USE_TFLM_COMPRESSION: the tflite-micro pip package's build, 8-byte
          pointers, 4-byte C enums;
  arm32   arm-none-eabi-gcc -mthumb -mcpu=cortex-m4: a default Cortex-M build, no compression,
          the bare-metal ABI's short enums.
Each struct named by the header's MRT_TABLE_RECORDS and MRT_KERNEL_OP_DATA becomes one row,
(host64 sizeof, arm32 sizeof, host64 alignment, arm32 alignment), read back from the compiled
objects' data. A kernel's op data comes from AllocatePersistentBuffer, which TFLM aligns to 16
(MRT_KERNEL_ALLOC_ALIGN) whatever the struct's own alignment: its row says 16, and the struct's
alignment must divide it.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Literal

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "micro_rt" / "structs" / "tflm_structs.h"
TABLE = ROOT / "micro_rt" / "struct_layouts.py"
BUILDS = {   # build -> (compiler, flags)
    "host64": ("gcc", ["-m64", "-DUSE_TFLM_COMPRESSION", "-DMRT_PIP_PACKAGE_BUILD"]),
    "arm32": ("arm-none-eabi-gcc", ["-mthumb", "-mcpu=cortex-m4"]),
}
KERNEL_ALLOC_ALIGN = 16
SOURCE = """#include "tflm_structs.h"
#define MRT_ROW(name, kind) const unsigned long long mrt_##kind##_##name[2] = {sizeof(name), _Alignof(name)};
#define MRT_RECORD(name) MRT_ROW(name, record)
#define MRT_OPDATA(name) MRT_ROW(name, opdata)
MRT_TABLE_RECORDS(MRT_RECORD)
MRT_KERNEL_OP_DATA(MRT_OPDATA)
"""


class LayoutError(Exception):
    """The header does not compile, or a row cannot be made."""


def compile_rows(build: str, workdir: Path) -> list[tuple[str, str, int, int]]:
    """(kind, name, sizeof, alignof) of every row, in the header's order, for one build."""
    cc, flags = BUILDS[build]
    if shutil.which(cc) is None:
        raise LayoutError(f"{cc} is not installed (needed for the {build} build)")
    src, obj = workdir / f"layouts_{build}.c", workdir / f"layouts_{build}.o"
    src.write_text(SOURCE)
    r = subprocess.run([cc, *flags, "-std=c11", "-O0", "-c", f"-I{HEADER.parent}", "-o", str(obj), str(src)],
                       capture_output=True, text=True)
    if r.returncode:
        raise LayoutError(f"{HEADER.name} does not compile for {build}:\n{r.stderr[-3000:]}")
    rows = []
    with obj.open("rb") as f:
        elf = ELFFile(f)
        order: Literal["little", "big"] = "little" if elf.little_endian else "big"
        symtab = elf.get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            raise LayoutError(f"{obj.name} has no symbol table")
        for sym in sorted(symtab.iter_symbols(), key=lambda s: (s["st_shndx"] if isinstance(s["st_shndx"], int)
                                                                 else -1, s["st_value"])):
            for kind in ("record", "opdata"):
                prefix = f"mrt_{kind}_"
                if sym.name.startswith(prefix):
                    data = elf.get_section(sym["st_shndx"]).data()[sym["st_value"]:sym["st_value"] + 16]
                    size, align = (int.from_bytes(data[k:k + 8], order) for k in (0, 8))
                    rows.append((kind, sym.name[len(prefix):], size, align))
    return rows


def table_rows() -> list[tuple[str, int, int, int, int]]:
    """(name, host64 bytes, arm32 bytes, host64 alignment, arm32 alignment) per row."""
    with tempfile.TemporaryDirectory() as tmp:
        builds = {b: compile_rows(b, Path(tmp)) for b in BUILDS}
    host, arm = builds["host64"], builds["arm32"]
    if [r[:2] for r in host] != [r[:2] for r in arm]:
        raise LayoutError("the two builds list different rows")
    names = [name for _, name, _, _ in host]
    if len(set(names)) != len(names):
        raise LayoutError(f"a struct is listed twice: {sorted({n for n in names if names.count(n) > 1})}")
    rows = []
    for (kind, name, hsize, halign), (_, _, asize, aalign) in zip(host, arm):
        if kind == "opdata":
            for build, align in (("host64", halign), ("arm32", aalign)):
                if KERNEL_ALLOC_ALIGN % align:
                    raise LayoutError(f"{name} ({build}): alignof {align} does not divide the "
                                      f"{KERNEL_ALLOC_ALIGN}-byte alignment of a persistent buffer")
            halign = aalign = KERNEL_ALLOC_ALIGN
        rows.append((name, hsize, asize, halign, aalign))
    return rows


def render(rows: list[tuple[str, int, int, int, int]]) -> str:
    lines = ['"""The C layouts of TFLM\'s structs per build: written by `python -m devtools.struct_layouts`',
             "(make structs) from micro_rt/structs/tflm_structs.h, where each is declared and its",
             "comments say what it is. Do not edit: change the header and run it again.",
             '"""',
             "",
             "# name -> (host64 bytes, arm32 bytes, host64 alignment, arm32 alignment)",
             "STRUCTS: dict[str, tuple[int, int, int, int]] = {"]
    lines += [f'    "{name}": ({h}, {a}, {ha}, {aa}),' for name, h, a, ha, aa in rows]
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare with the table written")
    args = parser.parse_args(argv)
    try:
        text = render(table_rows())
    except LayoutError as e:
        print(f"struct_layouts: {e}", file=sys.stderr)
        return 2
    if args.check:
        if not TABLE.exists() or TABLE.read_text(encoding="utf-8") != text:
            print(f"{TABLE.relative_to(ROOT)} is not what {HEADER.name} gives: run make structs", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}: {text.count(chr(10)) - 8} structs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
