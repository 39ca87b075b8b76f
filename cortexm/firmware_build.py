"""How the virtual MCU's firmware is built, read from cortexm/src/Makefile (its one home): the
compiler flags common to every core, each core's own, the link flags and the sources, so that
an image built elsewhere (micro-rt export, the tests' --gc-sections links) compiles the kernels
to the very instructions the emulator runs."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from micro_rt.errors import MicroRtError

SOURCE_DIR = Path(__file__).resolve().parent / "src"
MAKEFILE = SOURCE_DIR / "Makefile"
LINKER_SCRIPT = SOURCE_DIR / "firmware.ld"
# the Makefile's other product: the boot stage 2 of exported RP2040 images (export/rp2040_boot2.S)
RP2040_BOOT_STAGE_2 = SOURCE_DIR.parent / "firmware" / "rp2040-boot2.bin"


@dataclass(frozen=True)
class FirmwareBuild:
    cc: str                              # arm-none-eabi-gcc
    cflags: tuple[str, ...]              # every core (the Makefile's path-mapping flags left out)
    core_flags: dict[str, tuple[str, ...]]   # -mcpu=..., the float ABI and FPU, recipe flags
    ldflags: tuple[str, ...]             # without -T (each image brings its linker script)
    libs: tuple[str, ...]                # -lm -lgcc
    sources: tuple[str, ...]             # in link order

    def compile_flags(self, core: str) -> list[str]:
        if core not in self.core_flags:
            raise MicroRtError(f"the firmware is not built for '{core}' (cores: "
                               f"{', '.join(self.core_flags)})")
        return [*self.cflags, *self.core_flags[core]]


def _variables(text: str) -> dict[str, str]:
    joined = re.sub(r"\\\n", " ", text)
    found = {}
    for line in joined.splitlines():
        m = re.match(r"^([A-Za-z_][\w-]*)\s*[:?]?=\s*(.*)$", line)
        if m:
            found[m.group(1)] = " ".join(m.group(2).split())
    return found


def firmware_build(makefile: Path = MAKEFILE) -> FirmwareBuild:
    """The firmware's build as its Makefile states it."""
    text = makefile.read_text()
    var = _variables(text)
    recipe = next((line.split() for line in text.splitlines()
                   if line.startswith("\t$(CC)") and "$(SRCS)" in line), None)
    if recipe is None or "CFLAGS" not in var or "SRCS" not in var:
        raise MicroRtError(f"{makefile}: no CFLAGS, SRCS or link recipe found")
    plain = [t for t in recipe if t.startswith("-") and "$" not in t]
    cores = var.get("CORES", "").split()
    core_flags = {core: (f"-mcpu={core}", *var.get(f"FPFLAGS_{core}", "").split(),
                         *(t for t in plain if t.startswith(("-f", "-m")))) for core in cores}
    ld = var.get("LDFLAGS", "").split()
    ldflags = tuple(t for k, t in enumerate(ld) if t != "-T" and (k == 0 or ld[k - 1] != "-T")
                    and "strip-debug" not in t)
    return FirmwareBuild(cc=f"{var.get('CROSS', 'arm-none-eabi-').replace('?', '')}gcc",
                         cflags=tuple(t for t in var["CFLAGS"].split() if "$" not in t),
                         core_flags=core_flags, ldflags=ldflags,
                         libs=tuple(t for t in plain if t.startswith("-l")),
                         sources=tuple(var["SRCS"].split()))
