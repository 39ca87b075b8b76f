"""The test programs of tests/firmware_src, built with arm-none-eabi-gcc for the core asked:
newlib with rdimon (semihosting) and the shared vector table and linker script."""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import require_tool

SOURCES = Path(__file__).parent / "firmware_src"
CPU_FLAGS = {"cortex-m0plus": ["-mcpu=cortex-m0plus"], "cortex-m4": ["-mcpu=cortex-m4"],
             "cortex-m7": ["-mcpu=cortex-m7"], "cortex-m33": ["-mcpu=cortex-m33"]}


def build(program: str, out_dir: Path, core: str = "cortex-m4", *extra: str, flash_at_zero: bool = False) -> Path:
    """tests/firmware_src/<program>.c linked for `core` into out_dir (built once per name), with
    flash at 0x08000000 (link.ld) or, `flash_at_zero`, at 0 (link_flash0.ld)."""
    return build_source(SOURCES / f"{program}.c", out_dir, core, *extra, flash_at_zero=flash_at_zero)


def build_source(source: Path, out_dir: Path, core: str = "cortex-m4", *extra: str,
                 flash_at_zero: bool = False) -> Path:
    """A C file linked as the test programs are (their vector table, newlib with rdimon)."""
    gcc = require_tool("arm-none-eabi-gcc")
    script = "link_flash0.ld" if flash_at_zero else "link.ld"
    elf = out_dir / f"{source.stem}-{core}{'-flash0' if flash_at_zero else ''}.elf"
    if not elf.exists():
        cmd = [gcc, *CPU_FLAGS[core], "-mthumb", "-O2", "-g", "-specs=rdimon.specs", f"-L{SOURCES}",
               "-T", str(SOURCES / script), str(SOURCES / "vectors.c"), str(source),
               "-Wl,--gc-sections", "-o", str(elf), *extra]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    return elf
