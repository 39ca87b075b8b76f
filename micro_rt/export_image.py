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
measured 960-1130 B of code, vector table, register-write table and strings besides the names
with gcc 12.2 on the catalog's boards, the most on a Cortex-M7, whose start-up also enables the
L1 caches; counted as OWN_CODE_BYTES plus the model's and the board's names) and the alignment
padding (each placed object's alignment - 1, at most).

Code placement: a function's cycles depend on where its code falls in the flash lines (the
line buffer, the prefetcher, which cache lines a loop spans), and micro_rt's firmware, which
`profile` runs, places each function at an address of its own (cortexm/src/firmware.ld). The
project's linker script puts each runtime and kernel function the image keeps first, in the
firmware's order, each at the address its firmware copy has modulo the board's flash line
(`code_placement`), so the image fetches the lines profile counted, whatever main.c and the
start-up are built with; the padding that costs is counted exactly. The model's constants are
laid out the same way: each at the address profile's machine gave it modulo the line
(`constant_layout`), and the entry table after them, so the kernels' and the runtime's data
reads from flash meet the lines profile counted.

    code_placement(closure, sections, line_bytes) -> list[PlacedCode]
    constant_layout(items, addresses, table_address, line_bytes)  # the same for the constants
    image_size(board, plan, closure, inputs, variables, outputs, stack_bytes, names, placed)
        -> ImageSize
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .report import compact_bytes

CONSOLE_HEAD = 512          # main.c's console lines before the outputs (names, status, cycles)
OWN_CODE_BYTES = 1280       # main.c + startup.c: code, vector table, string constants (a bound)
TENSOR_ROW_BYTES = 12       # mrt_tensor_t: offset, size, data pointer
PLAN_HEADER_BYTES = 8       # mrt_plan_t: the entry count and the entries' address
VECTOR_TABLE_BYTES = 64     # startup.c's 16 words, first in flash


@dataclass(frozen=True)
class PlacedCode:
    """A function board.ld places at its firmware address modulo the board's flash line."""
    section: str          # its input section (.text.<name>, or the one its attribute names)
    offset: int           # its address in micro_rt's firmware
    size: int


def code_placement(closure, sections: dict[str, str], line_bytes: int) -> list[PlacedCode]:
    """The functions of `closure` (cortexm.image.ImageParts, in the firmware's order) compiled
    from micro_rt's sources, whose input sections `sections` names (function -> section; a
    GCC clone, name.isra.0, has a section of its full name); libm's and libgcc's code, one
    section per object, is left to the linker."""
    from .cortexm.image import CODE
    placed = []
    for piece in closure.pieces:
        base = piece.name.split(".")[0]
        if piece.kind != CODE or base not in sections:
            continue
        section = sections[base]
        if section == f".text.{base}":
            section = f".text.{piece.name}"
        placed.append(PlacedCode(section, piece.addr, piece.size))
    return placed


def placement_padding(placed: Sequence[PlacedCode], start: int, line_bytes: int) -> int:
    """The bytes board.ld pads between the placed functions, laid out from `start`."""
    addr, padding = start, 0
    for code in placed:
        gap = (code.offset - addr) % line_bytes
        padding += gap
        addr += gap + code.size
    return padding


def constant_layout(items, addresses: Sequence[int], table_address: int,
                    line_bytes: int) -> tuple[list[int], int]:
    """(offsets, size) of the project's constants region (aligned to constants_alignment) for the
    plan's constants `items` (cortexm.firmware_plan.ConstantItem), in their order: each at the
    address `profile` placed it at (`addresses`) modulo the flash line, or its own alignment if
    larger, so the kernels' data reads from flash meet the lines profile counted; the size ends
    where the entry table that follows the region sat in profile's machine (`table_address`),
    modulo the line, so the runtime's reads of it do too."""
    offsets, end = [], 0
    for item, addr in zip(items, addresses):
        unit = max(line_bytes, item.align)
        offset = _up(end, item.align)
        offset += (addr - offset) % unit
        offsets.append(offset)
        end = offset + len(item.data)
    end = _up(end, 16)                       # the entry table's alignment (firmware_plan_c)
    return offsets, end + (table_address - end) % max(16, line_bytes)


def constants_alignment(items, line_bytes: int) -> int:
    """The alignment of the project's constants section: every placement unit divides it."""
    return max([16, line_bytes, *(item.align for item in items)])


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
               outputs: Sequence[int], stack_bytes: int, names: str,
               placed: Sequence[PlacedCode] = ()) -> ImageSize:
    """The image of `plan` (cortexm.firmware_plan.FirmwarePlan) on `board` with the runtime and
    kernels `closure` (cortexm.image.ImageParts) keeps; `inputs`, `variables`, `outputs`: the
    sizes of the embedded inputs, the variables' initial values and the outputs; `names`: the
    model's and the board's names main.c prints; `placed`: the functions board.ld places at
    their firmware line offsets (code_placement), whose padding is counted."""
    from .cortexm.firmware_plan_ir import ENTRY_WORDS
    from .export_boot import boot_header_bytes, boot_header_label
    code = board.memory.region(board.memory.code_region)
    _, ram_size = ram_span(board)
    data = [("argument structs", _up(max(4, len(plan.plan_blob)), 4)),
            ("kernel state", _up(max(4, len(plan.state_blob)), 4)),
            ("static data", closure.data_bytes)]
    data_bytes = sum(n for _, n in data)
    boot = boot_header_bytes(board)
    flash = Region("FLASH", code.name, code.size, [
        *([(f"boot header ({boot_header_label(board)})", boot)] if boot else []),
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
                        + placement_padding(placed, code.base + boot + VECTOR_TABLE_BYTES,
                                            board.accelerator.line_bytes)
                        + 15 * (len(inputs) + len(variables) + 2) + 3 * 4 + 16
                        + constants_alignment(plan.constants, board.accelerator.line_bytes) - 16))
    arena = _up(max(16, plan.arena_bytes), 16)
    ram = Region("RAM", " + ".join(board.memory.arena_regions), ram_size, [
        *data, ("arena", arena),
        ("console", console_bytes(outputs) + 8),           # g_mrt_console, its length, SysTick wraps
        ("static .bss", closure.bss_bytes), ("stack", stack_bytes),
        ("alignment (at most)", 15 + 15 + 7 + 15 + 3 + 7 + 16)])
    return ImageSize(flash, ram)
