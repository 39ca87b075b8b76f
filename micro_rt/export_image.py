"""What an exported project's image (micro-rt export) takes of a board's flash and RAM, counted
as the project's linker script (export._linker_script) places it, so that `export` refuses a
model whose image would not link instead of writing a project that fails at `make`.

Everything micro_rt writes is counted exactly: the model's and the operators' constants, the
call table, the argument structs (RAM, with their initial values in flash), the arena, the
console buffer, the stack, and the seeded test inputs and variables' initial values model.c
embeds (read-only data, in flash). The runtime's and the kernels' code, read-only data and
static data are what `ld --gc-sections` keeps of micro_rt's firmware for the plan's kernels
(cortexm.image, the same sources and flags). Two parts are bounds, so the sum never falls short
of what the linker places: main.c and startup.c (compiled by the user's arm-none-eabi-gcc;
measured 882-910 B of code, vector table and strings with gcc 12.2 on the four cores, counted
as OWN_CODE_BYTES plus the model's and the board's names) and the alignment padding (each
placed object's alignment - 1, at most).

    image_size(board, plan, closure, inputs, variables, outputs, stack_bytes, names) -> ImageSize
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .report import compact_bytes

CONSOLE_HEAD = 512          # main.c's console lines before the outputs (names, status, cycles)
OWN_CODE_BYTES = 1024       # main.c + startup.c: code, vector table, string constants (a bound)
TENSOR_ROW_BYTES = 12       # mrt_tensor_t: offset, size, data pointer
PLAN_HEADER_BYTES = 8       # mrt_plan_t: the entry count and the entries' address


def console_bytes(output_sizes: Sequence[int]) -> int:
    """g_mrt_console's size: the head lines and every output byte in hex with its line."""
    return CONSOLE_HEAD + sum(2 * n + 24 for n in output_sizes)


def ram_span(board) -> tuple[int, int]:
    """(base, size) of the RAM the linker script gives .data, .bss and the stack: the board's
    arena regions, contiguous."""
    ram = [board.memory.region(n) for n in board.memory.arena_regions]
    return ram[0].base, ram[-1].end - ram[0].base


def _up(n: int, align: int) -> int:
    return -(-n // align) * align


@dataclass
class Region:
    """One memory region of the image: what is placed there, part by part."""
    name: str                 # FLASH or RAM, as board.ld names them
    where: str                # the board's regions behind it
    capacity: int
    parts: list[tuple[str, int]] = field(default_factory=list)

    @property
    def used(self) -> int:
        return sum(n for _, n in self.parts)

    @property
    def over(self) -> int:
        return self.used - self.capacity

    def describe(self) -> str:
        largest = sorted((p for p in self.parts if p[1]), key=lambda p: -p[1])[:3]
        return (f"{self.name} ({self.where}) {self.used:,} B of {self.capacity:,} B, over by "
                f"{self.over:,} B ({compact_bytes(self.over)}); largest: "
                + ", ".join(f"{name} {n:,} B" for name, n in largest))


@dataclass
class ImageSize:
    flash: Region
    ram: Region

    @property
    def fits(self) -> bool:
        return self.flash.over <= 0 and self.ram.over <= 0

    def refusal(self, board: str) -> str:
        """One line: what is over and by how much."""
        over = [r.describe() for r in (self.ram, self.flash) if r.over > 0]
        return f"the image does not fit board {board}: " + "; ".join(over)

    def as_dict(self) -> dict:
        return {r.name.lower(): {"where": r.where, "capacity": r.capacity, "used": r.used,
                                 "margin": -r.over, "parts": [{"part": p, "bytes": n} for p, n in r.parts]}
                for r in (self.flash, self.ram)}


def image_size(board, plan, closure, inputs: Sequence[int], variables: Sequence[int],
               outputs: Sequence[int], stack_bytes: int, names: str) -> ImageSize:
    """The image of `plan` (cortexm.firmware_plan.FirmwarePlan) on `board` with the runtime and
    kernels `closure` (cortexm.image.ImageParts) keeps; `inputs`, `variables`, `outputs`: the
    sizes of the embedded inputs, the variables' initial values and the outputs; `names`: the
    model's and the board's names main.c prints."""
    from .cortexm.firmware_plan import ENTRY_WORDS
    code = board.memory.region(board.memory.code_region)
    _, ram_size = ram_span(board)
    data = [("argument structs", _up(max(4, len(plan.plan_blob)), 4)),
            ("kernel state", _up(max(4, len(plan.state_blob)), 4)),
            ("static data", closure.data_bytes)]
    data_bytes = sum(n for _, n in data)
    flash = Region("FLASH", code.name, code.size, [
        ("start-up and main.c (bound)", OWN_CODE_BYTES + len(names)),
        ("runtime and kernel code", closure.code_bytes),
        ("kernels' read-only data", closure.rodata_bytes),
        ("seeded test inputs", sum(max(1, n) for n in inputs)),
        ("variables' initial values", sum(variables)),
        ("tensor tables", sum(TENSOR_ROW_BYTES * max(1, len(rows))
                              for rows in (inputs, outputs, variables))),
        ("constants", plan.constants_bytes),
        ("call table", 4 * ENTRY_WORDS * len(plan.entries) + PLAN_HEADER_BYTES),
        (".data initial values", data_bytes),
    ])
    # every 16-aligned array (inputs, variables, constants) and code piece may start padded
    flash.parts.append(("alignment (at most)", closure.padding_bytes(code.base)
                        + 15 * (len(inputs) + len(variables) + 2) + 3 * 4 + 16))
    arena = _up(max(16, plan.arena_bytes), 16)
    ram = Region("RAM", " + ".join(board.memory.arena_regions), ram_size, [
        *data, ("arena", arena),
        ("console", console_bytes(outputs) + 8),           # g_mrt_console, its length, SysTick wraps
        ("static .bss", closure.bss_bytes), ("stack", stack_bytes),
        ("alignment (at most)", 15 + 15 + 7 + 15 + 3 + 7 + 16)])
    return ImageSize(flash, ram)
