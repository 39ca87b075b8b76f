"""Every number of micro_rt/targets.py's STRUCTS table comes from a C declaration in
micro_rt/structs/tflm_structs.h: compiled for the 32-bit Cortex-M build (arm-none-eabi-gcc,
no compression, short enums) and the host64 build the tflite-micro pip package is (host gcc,
USE_TFLM_COMPRESSION), its sizeof and alignment must equal the table's."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from conftest import ROOT, require_tool
from micro_rt.targets import STRUCTS

HEADER = ROOT / "micro_rt" / "structs" / "tflm_structs.h"
BUILDS = {   # column of STRUCTS -> (compiler, flags)
    "arm32": ("arm-none-eabi-gcc", ["-mthumb", "-mcpu=cortex-m4"]),
    "host64": ("gcc", ["-m64", "-DUSE_TFLM_COMPRESSION", "-DMRT_PIP_PACKAGE_BUILD"]),
}
KERNEL_ALLOC_ALIGN = 16


def _layout_source(names) -> str:
    lines = ['#include "tflm_structs.h"',
             "#define MRT_MARK(name) const unsigned char mrt_opdata_##name = 1;",
             "MRT_KERNEL_OP_DATA(MRT_MARK)"]
    lines += [f"const unsigned long long mrt_layout_{n}[2] = {{sizeof({n}), _Alignof({n})}};"
              for n in names]
    return "\n".join(lines) + "\n"


def _compile(build: str, tmp_path: Path) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """{struct: (sizeof, alignof)} and the kernel op data names, read back from the object."""
    cc, flags = BUILDS[build]
    cc = require_tool(cc)
    src, obj = tmp_path / f"layout_{build}.c", tmp_path / f"layout_{build}.o"
    src.write_text(_layout_source(STRUCTS))
    r = subprocess.run([cc, *flags, "-std=c11", "-O0", "-c", f"-I{HEADER.parent}", "-o", str(obj),
                        str(src)], capture_output=True, text=True)
    if r.returncode:
        undeclared = sorted(set(re.findall(r"'(\w+)' undeclared", r.stderr)))
        pytest.fail(f"{build}: STRUCTS entries without a declaration in {HEADER.name}: "
                    f"{undeclared or r.stderr[-2000:]}")
    layouts, opdata = {}, set()
    with obj.open("rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        for sym in symtab.iter_symbols():
            if sym.name.startswith("mrt_opdata_"):
                opdata.add(sym.name[len("mrt_opdata_"):])
            elif sym.name.startswith("mrt_layout_"):
                section = elf.get_section(sym["st_shndx"])
                raw = section.data()[sym["st_value"]:sym["st_value"] + 16]
                little = elf.little_endian
                size, align = (int.from_bytes(raw[k:k + 8], "little" if little else "big")
                               for k in (0, 8))
                layouts[sym.name[len("mrt_layout_"):]] = (size, align)
    return layouts, opdata


@pytest.fixture(scope="module", params=sorted(BUILDS))
def compiled(request, tmp_path_factory):
    return request.param, *_compile(request.param, tmp_path_factory.mktemp(request.param))


def test_every_table_entry_is_declared_and_read_back(compiled):
    build, layouts, _ = compiled
    assert set(layouts) == set(STRUCTS), f"{build}: {sorted(set(STRUCTS) ^ set(layouts))}"


def test_sizes_match_the_table(compiled):
    build, layouts, _ = compiled
    column = 0 if build == "host64" else 1
    wrong = {n: (STRUCTS[n][column], layouts[n][0]) for n in STRUCTS
             if STRUCTS[n][column] != layouts[n][0]}
    assert not wrong, f"{build} sizeof differs (table, C): {wrong}"


def test_alignments_match_the_table(compiled):
    """alignof, except kernel op data: 16, the arena alignment its allocation gets, which the
    struct's own alignment must divide."""
    build, layouts, opdata = compiled
    column = 2 if build == "host64" else 3
    assert opdata <= set(STRUCTS), sorted(opdata - set(STRUCTS))
    wrong = {}
    for name, (_, align) in layouts.items():
        if name in opdata:
            expected = KERNEL_ALLOC_ALIGN
            assert KERNEL_ALLOC_ALIGN % align == 0, f"{build} {name}: alignof {align}"
        else:
            expected = align
        if STRUCTS[name][column] != expected:
            wrong[name] = (STRUCTS[name][column], expected)
    assert not wrong, f"{build} alignment differs (table, C): {wrong}"


def test_host_compiler_is_lp64():
    """host64 means pointers and size_t of 8 bytes (the pip package's x86-64/arm64 build)."""
    cc = require_tool("gcc")
    r = subprocess.run([cc, "-m64", "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True, text=True)
    assert "__SIZEOF_POINTER__ 8" in r.stdout and "__SIZEOF_SIZE_T__ 8" in r.stdout
