"""The builtin option struct sizes in micro_rt/targets.py are what a C compiler makes of
micro_rt/structs/builtin_params.h: x86-64 gcc for host64, arm-none-eabi-gcc (Cortex-M4,
its bare-metal defaults) for the 32-bit targets.

    python tests/test_struct_sizes.py      # print the table rows for targets.py
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

from elftools.elf.elffile import ELFFile

from micro_rt.builtin_params import BUILTIN_PARAMS
from micro_rt.targets import STRUCTS

ROOT = Path(__file__).resolve().parents[1]
HEADER = ROOT / "micro_rt" / "structs" / "builtin_params.h"
COMPILERS = {"host64": ["gcc"], "arm32": ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb"]}


def header_structs() -> list[str]:
    return re.findall(r"}\s*(TfLite\w+);", HEADER.read_text())


def compiled_layouts(compiler: list[str]) -> dict[str, tuple[int, int]]:
    """(sizeof, alignof) of every struct in the header, read back from the object file."""
    names = header_structs()
    source = f'#include "{HEADER}"\n' + "".join(
        f"const unsigned mr_size_{n} = sizeof({n});\nconst unsigned mr_align_{n} = _Alignof({n});\n"
        for n in names)
    with tempfile.TemporaryDirectory() as folder:
        c_file, o_file = Path(folder) / "sizes.c", Path(folder) / "sizes.o"
        c_file.write_text(source)
        subprocess.run([*compiler, "-std=c11", "-O0", "-c", str(c_file), "-o", str(o_file)],
                       check=True, capture_output=True)
        with open(o_file, "rb") as handle:
            elf = ELFFile(handle)
            symbols = elf.get_section_by_name(".symtab")
            values = {}
            for symbol in symbols.iter_symbols():
                if symbol.name.startswith("mr_"):
                    section = elf.get_section(symbol["st_shndx"])
                    data = section.data()[symbol["st_value"]:symbol["st_value"] + 4]
                    values[symbol.name] = int.from_bytes(data, "little")
    return {n: (values[f"mr_size_{n}"], values[f"mr_align_{n}"]) for n in names}


def test_every_parsed_struct_is_in_the_header():
    assert set(BUILTIN_PARAMS.values()) <= set(header_structs())


def test_targets_table_is_the_compiled_header():
    host = compiled_layouts(COMPILERS["host64"])
    arm = compiled_layouts(COMPILERS["arm32"])
    wrong = {n: (STRUCTS.get(n), (host[n][0], arm[n][0], host[n][1], arm[n][1]))
             for n in header_structs()
             if STRUCTS.get(n) != (host[n][0], arm[n][0], host[n][1], arm[n][1])}
    assert not wrong, f"targets.STRUCTS (table, compiled): {wrong}"


if __name__ == "__main__":
    host, arm = compiled_layouts(COMPILERS["host64"]), compiled_layouts(COMPILERS["arm32"])
    for n in header_structs():
        print(f'    "{n}": ({host[n][0]}, {arm[n][0]}, {host[n][1]}, {arm[n][1]}),')
    sys.exit(0)
