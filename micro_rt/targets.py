"""Targets: the machines micro_rt accounts memory for and (for Cortex-M) emulates.

TFLM's persistent arena use is made of its own C structs, so it depends on the build:
pointer size and struct layout. `host64` is the x86-64 build the `tflite-micro` pip package
is; the Cortex-M targets are 32-bit arm-none-eabi builds. Struct sizes are the C
layouts of TFLM's structs on each: declared member by member in structs/tflm_structs.h, and
compiled by `make structs` (devtools/struct_layouts.py) with the host gcc (host64, the pip
package's build with compression) and arm-none-eabi-gcc (arm32: no compression, short enums)
into struct_layouts.STRUCTS; tests/test_struct_layouts.py rebuilds that table and finds it the
same. host64 figures were also measured against the pip package's RecordingMicroAllocator
(TfLiteFullyConnectedParams has 16 bytes there that the TFLM sources do not show and a device
build of them does not have; the header says so). Kernel OpData is allocated 16-aligned
whatever its alignof. Variants (compression on a device build: OpDataConv 64, fixed block 252;
armclang's 4-byte enums: TfLiteTensor 40) are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .errors import MicroRtError
from .struct_layouts import STRUCTS


@dataclass(frozen=True)
class Target:
    name: str
    pointer_size: int
    cpu: Optional[str] = None          # Unicorn CPU model for the virtual MCU
    has_dsp: bool = False
    flash_bytes: int = 0               # defaults for `fit` when the user gives none
    sram_bytes: int = 0
    description: str = ""
    overrides: dict = field(default_factory=dict)
    # The allocator objects TFLM builds inside the arena: the pip package's interpreter
    # records allocations (RecordingMicroAllocator); a device build uses the plain one.
    allocator_objects: str = "AllocatorFixedPlain"
    # the architectures (as ELF build attributes name them) whose code the core runs, its own
    # first: Armv7-M and Armv8-M Mainline include the Armv6-M instruction set, Armv7E-M adds the
    # DSP extension to Armv7-M, and Armv8-M Mainline with the DSP extension (the M33's) holds both
    architectures: tuple[str, ...] = ()

    @property
    def is_host(self) -> bool:
        return self.cpu is None

    def sizeof(self, struct: str) -> int:
        if struct in self.overrides:
            return self.overrides[struct]
        if struct not in STRUCTS:
            raise MicroRtError(f"no size known for struct {struct} on target {self.name}")
        host, arm = STRUCTS[struct][:2]
        return host if self.pointer_size == 8 else arm

    def alignof(self, struct: str) -> int:
        host, arm = STRUCTS.get(struct, (0, 0, 8, 4))[2:]
        return host if self.pointer_size == 8 else arm


V7EM_RUNS = ("v7E-M", "v7-M", "v6-M", "v6S-M")
TARGETS: dict[str, Target] = {
    "host64": Target("host64", 8, description="x86-64/arm64 host build (the tflite-micro pip package)",
                     allocator_objects="AllocatorFixed"),
    "cortex-m0plus": Target("cortex-m0plus", 4, cpu="cortex-m0", has_dsp=False,
                            flash_bytes=256 * 1024, sram_bytes=32 * 1024,
                            description="Armv6-M, no DSP (runs on Unicorn's M0 model)",
                            architectures=("v6-M", "v6S-M")),
    "cortex-m4": Target("cortex-m4", 4, cpu="cortex-m4", has_dsp=True,
                        flash_bytes=1024 * 1024, sram_bytes=256 * 1024,
                        description="Armv7E-M with DSP", architectures=V7EM_RUNS),
    "cortex-m7": Target("cortex-m7", 4, cpu="cortex-m7", has_dsp=True,
                        flash_bytes=2048 * 1024, sram_bytes=512 * 1024,
                        description="Armv7E-M with DSP, dual issue", architectures=V7EM_RUNS),
    "cortex-m33": Target("cortex-m33", 4, cpu="cortex-m33", has_dsp=True,
                         flash_bytes=1024 * 1024, sram_bytes=256 * 1024,
                         description="Armv8-M Mainline with DSP",
                         architectures=("v8-M.main", "v8-M.base") + V7EM_RUNS),
}


def cores_running(architecture: str) -> list[str]:
    """The emulated cores that run code built for `architecture`, those whose own it is first."""
    cores = [t for t in TARGETS.values() if architecture in t.architectures]
    return [t.name for t in sorted(cores, key=lambda t: t.architectures[0] != architecture)]


ALIASES = {"m0+": "cortex-m0plus", "m0plus": "cortex-m0plus", "cortex-m0+": "cortex-m0plus",
           "m4": "cortex-m4", "m7": "cortex-m7", "m33": "cortex-m33", "host": "host64"}


def get_target(name: str) -> Target:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in TARGETS:
        raise MicroRtError(f"unknown target '{name}'; choose from {', '.join(TARGETS)}")
    return TARGETS[key]
