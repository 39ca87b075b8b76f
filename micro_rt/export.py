"""`micro-rt export MODEL --board B -o DIR`: a C project that builds the model's firmware image
for a board with arm-none-eabi-gcc.

The project is what `fit` counts and `profile` times: the model's constants and its firmware
plan (micro_rt.cortexm.firmware_plan, written as C by firmware_plan_c), micro_rt's device
runtime (mrt_runtime.c) and the C sources of the kernels the plan reaches, compiled with the
flags of micro_rt's own firmware for the board's core (cortexm/src/Makefile), a main.c that runs
one inference and prints its outputs and cycle count, a start-up file that sets the flash
interface profile assumed (mrt_board.h: export_bringup), a linker script made from the board's
memory regions in the catalog that places the kernels and constants as profile's machine had
them modulo the flash line (export_image), a Makefile and a README.txt. The kernels are the
CMSIS-NN-style ones unless `kernels="reference"` (then TFLM-reference-style plain C loops).

    export_project(model_path, data, board, out_dir) -> ExportResult
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from .errors import InputError, MicroRtError
from .export_boot import BOOT_SOURCE, boot_header_contents, boot_header_source, boot_linker_section, has_boot_header
from .export_bringup import assumed, board_header, left_to_user, set_by_startup
from .export_image import (ImageSize, PlacedCode, code_placement, console_bytes, constant_layout,
                           constants_alignment, image_size, ram_span)
from .inputs import random_inputs
from .interpreter import Interpreter

if TYPE_CHECKING:
    from .cortexm.firmware_plan import FirmwarePlan
    from .cortexm.image import ImageParts

TEMPLATES = "export"                 # cortexm/src/export: main.c, startup.c
RUNTIME_SOURCES = ("mrt_runtime.c",)
ELF, SEMIHOSTING_ELF = "model.elf", "model-semihosting.elf"
STACK_MARGIN = 1024                  # above the measured inference: main, start-up, printing
CONSTANTS_SECTION = ".mrt_constants"


class ExportError(MicroRtError):
    """The model cannot be exported as asked; says why."""


class ImageTooLarge(ExportError):
    """The image would not link on the board: its RAM or flash is over (`size` says by how
    much). `micro-rt export` answers no (exit 1) and writes nothing."""

    def __init__(self, message: str, size: ImageSize):
        super().__init__(message)
        self.size = size


@dataclass
class ExportResult:
    directory: Path
    board: str
    core: str
    files: list[str]
    kernel_sources: list[str]
    entries: int                     # kernel calls of the plan
    stack_bytes: int                 # the linker script's stack
    outputs: list[bytes] = field(default_factory=list)     # the inference's outputs, as exported
    profile_cycles: int = 0          # what the whole-invoke run measured (the board's flash)
    profile_instructions: int = 0
    image: Optional[ImageSize] = None    # flash and RAM as board.ld places them
    left_to_user: list[str] = field(default_factory=list)   # the clock, loading
    assumed: str = ""                # what profile assumed of the clock and flash, in one line
    kernels: str = "cmsis-nn"        # the flavour of the C kernels exported
    set_by_startup: list[str] = field(default_factory=list)  # flash latency, prefetch, caches


def _empty_directory(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"-o {out}: exists and is not an empty directory (give a new one)")


# a name followed by its parameter list and a body (not a call, not a prototype)
_DEFINITION = re.compile(r"\b(\w+)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*\{")
# a function the source puts in a section of its own choosing: section("...") in its attributes
# (mrt_runtime.c), or mrt_data_checks.c's MRT_LATE(name), which means section .mrt_late.<name>
_SECTION_ATTRIBUTE = re.compile(r'section\("([^"]+)"\)\)\)[^;{}()]*?\b(\w+)\s*\(')
_LATE = re.compile(r"\bMRT_LATE\((\w+)\)")


def _defined_in(sources: dict[str, str], names: set[str]) -> list[str]:
    """The C files (of `sources`: name -> text) that define one of the functions `names`
    (GCC's clones, name.isra.0 / .constprop.0 / .part.0, as the function they come from)."""
    wanted = {n.split(".")[0] for n in names}
    return [path for path, text in sources.items() if set(_DEFINITION.findall(text)) & wanted]


def _input_sections(sources: dict[str, str]) -> dict[str, str]:
    """Every function `sources` define -> the input section GCC puts it in: its own
    (-ffunction-sections: .text.<name>) unless an attribute names another."""
    out: dict[str, str] = {}
    for text in sources.values():
        out.update((name, f".text.{name}") for name in _DEFINITION.findall(text))
    for text in sources.values():
        out.update((name, section) for section, name in _SECTION_ATTRIBUTE.findall(text))
        out.update((name, f".mrt_late.{name}") for name in _LATE.findall(text))
    return out


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _header(model: str, board: str, arena: int, inputs: int, outputs: list[int], variables: int) -> str:
    return f"""/* Generated by micro-rt export: the model's data and plan, as main.c and plan.c see them. */
#ifndef MRT_MODEL_H
#define MRT_MODEL_H

#include <stdint.h>
#include "mrt_runtime.h"

#define MRT_MODEL_NAME {_c_string(model)}
#define MRT_BOARD_NAME {_c_string(board)}
#define MRT_ARENA_BYTES {arena}u
#define MRT_N_INPUTS {inputs}u
#define MRT_N_OUTPUTS {len(outputs)}u
#define MRT_CONSOLE_BYTES {console_bytes(outputs)}u   /* every output byte in hex */
#define MRT_N_VARIABLES {variables}u

typedef struct {{
    uint32_t offset;               /* in the arena */
    uint32_t size;                 /* bytes */
    const uint8_t *data;           /* initial bytes (inputs, variable tensors); 0 for outputs */
}} mrt_tensor_t;

extern uint8_t g_mrt_arena[];             /* the tensor arena (RAM) */
extern const uint8_t g_mrt_constants[];   /* the model's constants and the operators' own (flash) */
extern const mrt_tensor_t g_mrt_inputs[];
extern const mrt_tensor_t g_mrt_outputs[];
extern const mrt_tensor_t g_mrt_variables[];
extern const mrt_plan_t g_mrt_plan;

#endif
"""


def _tensor_table(name: str, rows: list[tuple[int, int, Optional[str]]]) -> str:
    items = [f"    {{{offset}u, {size}u, {data or '0'}}}," for offset, size, data in rows] or ["    {0u, 0u, 0},"]
    return f"const mrt_tensor_t {name}[{max(1, len(rows))}] = {{\n" + "\n".join(items) + "\n};\n"


def _linker_script(board, stack_bytes: int, plan_sections: Sequence[str],
                   placed: Sequence[PlacedCode], constants_align: int) -> str:
    code = board.memory.region(board.memory.code_region)
    ram = [board.memory.region(n) for n in board.memory.arena_regions]
    ram_base, ram_size = ram_span(board)
    keep = "\n".join(f"        KEEP(*({section}))" for section in plan_sections)
    line = board.accelerator.line_bytes
    # `.` counts from the section's start, the code region's base
    kernels = "\n".join(f"        . = . + ((0x{(c.offset - code.base) % line:x} - .) & {line - 1});"
                        f" *({c.section})" for c in placed)
    return f"""/* Generated by micro-rt export for {board.title} ({board.vendor} {board.mcu}, {board.core}),
 * from the board catalog ({board.path.name}): code in {code.name}, data, arena and stack in
 * {' + '.join(r.name for r in ram)} (where the vendor's linker script puts .bss). */
ENTRY(Reset_Handler)

MEMORY
{{
    FLASH (rx)  : ORIGIN = 0x{code.base:08x}, LENGTH = {code.size}
    RAM   (rwx) : ORIGIN = 0x{ram_base:08x}, LENGTH = {ram_size}
}}

MRT_STACK_BYTES = {stack_bytes};   /* the inference's measured stack + {STACK_MARGIN} */

SECTIONS
{{
{boot_linker_section(board)}    .text :
    {{
        KEEP(*(.vectors))
        /* The runtime and the kernels first, in micro_rt's firmware order, each at its firmware
         * address modulo the {line}-byte flash line, so they fetch the lines `profile` counted
         * (whatever main.c and startup.c are built with); then the rest. */
{kernels}
        *(.text .text.*)
        *(.mrt_runtime.*)
        *(.mrt_late.*)
        *(.rodata .rodata.*)
        . = ALIGN(16);
    }} > FLASH

    .ARM.exidx : {{ *(.ARM.exidx .ARM.exidx.*) }} > FLASH

    /* The model's constants, then the plan: argument structs, entries, mrt_plan_t. */
    .mrt_constants : ALIGN({constants_align})
    {{
        KEEP(*({CONSTANTS_SECTION}))
{keep}
    }} > FLASH

    .data : ALIGN(4)
    {{
        __data_start = .;
        *(.data .data.*)
        . = ALIGN(4);
        __data_end = .;
    }} > RAM AT > FLASH
    __data_load = LOADADDR(.data);

    .bss (NOLOAD) : ALIGN(16)
    {{
        __bss_start = .;
        *(.bss .bss.* COMMON)
        . = ALIGN(4);
        __bss_end = .;
    }} > RAM

    .stack (NOLOAD) : ALIGN(8)
    {{
        . += MRT_STACK_BYTES;
    }} > RAM
    __stack_top = .;

    /DISCARD/ : {{ *(.comment) *(.note*) }}
}}
"""


def _makefile(build, core: str, board: str, sources: list[str]) -> str:
    cflags = " ".join([*build.cflags, *build.core_flags[core]])
    return f"""# Generated by micro-rt export for board {board} ({core}): micro_rt's firmware flags for
# this core (cortexm/src/Makefile), so the kernels compile to the instructions micro_rt emulates.
#   make             -> {ELF} (flash it; see README.txt)
#   make semihosting -> {SEMIHOSTING_ELF} (-DMRT_SEMIHOSTING: prints to the debugger and exits
#                       with main's status; `micro-rt emulate {SEMIHOSTING_ELF} --board {board}`
#                       runs it from its reset vector, timing mrt_invoke as profile counts it)
CROSS   ?= arm-none-eabi-
CC      := $(CROSS)gcc
SIZE    := $(CROSS)size
CFLAGS  := {cflags}
LDFLAGS := {' '.join(build.ldflags)} -T board.ld
LIBS    := {' '.join(build.libs)}
SRCS    := {' '.join(sources)}
HDRS    := $(wildcard *.h)

.PHONY: all semihosting clean
all: {ELF}
semihosting: {SEMIHOSTING_ELF}

{ELF}: $(SRCS) $(HDRS) board.ld Makefile
\t$(CC) $(CFLAGS) $(DEFS) $(LDFLAGS) -o $@ $(SRCS) $(LIBS)
\t$(SIZE) $@

{SEMIHOSTING_ELF}: $(SRCS) $(HDRS) board.ld Makefile
\t$(CC) $(CFLAGS) -DMRT_SEMIHOSTING $(LDFLAGS) -o $@ $(SRCS) $(LIBS)

clean:
\trm -f {ELF} {SEMIHOSTING_ELF}
"""


def _readme(model: str, board, result: "ExportResult", fit_lines: list[str]) -> str:
    image = result.image
    assert image is not None                    # export_project measured it
    placed = "\n".join(f"  {r.name} ({r.where}): {r.used:,} B of {r.capacity:,} B, margin "
                       f"{-r.over:,} B: " + ", ".join(f"{part} {n:,}" for part, n in r.parts if n)
                       for r in (image.flash, image.ram))
    emulate = (f"""make semihosting -> {SEMIHOSTING_ELF}, which `micro-rt emulate
         {SEMIHOSTING_ELF} --board {board.name}` runs from its reset vector (start-up
         included, the flash interface following the registers it writes) to main's exit,
         printing the program's console and exiting with its status; its report times
         mrt_invoke (cycles, instructions as profile counts them, stack).""")
    return f"""micro-rt export of {model} for {board.title} ({board.vendor} {board.mcu}, {board.core})

Build:   make                  (needs arm-none-eabi-gcc; CROSS=... for another prefix)
Load:    {ELF}, see "Left to you" below for this board
Output:  main.c runs one inference on seeded random inputs (those of `micro-rt profile
         --seed 0`) and prints the status, the cycles of mrt_invoke and every output byte in
         hex to g_mrt_console (a RAM buffer: read it with the debugger, e.g. gdb
         `x/s &g_mrt_console`); `make semihosting` builds {SEMIHOSTING_ELF}, which prints
         through the debugger's semihosting console as well and ends with main's status
         (SYS_EXIT_EXTENDED; a debugger must then be attached).
Cycles:  the DWT cycle counter (SysTick on Cortex-M0+). startup.c sets the flash interface
         profile assumed through the registers mrt_board.h lists ("Set by startup.c" below)
         but not the clock: the core runs at its reset clock until you set it ("Left to you").
Emulate: {emulate}

Files
  main.c, startup.c      one inference, the vector table and reset handler
""" + (f"""  {BOOT_SOURCE}          what the boot ROM reads first: {boot_header_contents(board)}
""" if has_boot_header(board) else "") + f"""  mrt_board.h            the flash-control register writes of the start-up ({board.path.name})
  mrt_model.h, model.c   the arena ({result.stack_bytes} B stack besides it), the model's
                         constants, the inputs, the input/output/variable tensor places
  plan.c                 the firmware plan: {result.entries} kernel calls, walked by mrt_invoke
  mrt_runtime.c/.h       micro_rt's device runtime
  {', '.join(result.kernel_sources)}
                         the kernel sources the plan reaches (the linker keeps only what it calls)
  board.ld               memory regions of {board.name} from micro_rt's board catalog
  Makefile               micro_rt's firmware flags for {board.core}

Set by startup.c (as `micro-rt profile --board {board.name}` assumed; the vendor's call doing it)
""" + "\n".join(f"  - {line}" for line in result.set_by_startup) + f"""

Left to you (what `micro-rt profile --board {board.name}` assumed; the vendor's call for each)
""" + "\n".join(f"  - {line}" for line in result.left_to_user) + f"""

The image as board.ld places it (micro-rt export counts it before writing the project; the
start-up and main.c code and the alignment are upper bounds):
{placed}

What micro-rt fit counts for this model on this board (the runtime's image is smaller: its arena
is the head and the variables, not TFLM's whole arena; no seeded input, no console):
""" + "\n".join(f"  {line}" for line in fit_lines) + "\n"


@dataclass
class _ModelRun:
    """What one emulated inference (as `profile --board` runs it) gives the project."""
    plan: FirmwarePlan
    fit_lines: list[str]
    stack_bytes: int
    functions: set[str]              # what the image keeps of the firmware's code
    image_parts: ImageParts          # the runtime and kernels it keeps
    inputs: list[tuple[int, int, bytes]]       # (arena offset, size, seeded bytes)
    outputs: list[tuple[int, int, bytes]]      # (arena offset, size, bytes computed)
    variables: list[tuple[int, bytes]]         # (arena offset, initial bytes)
    cycles: int
    instructions: int
    constant_addresses: list[int]              # where profile's machine placed each plan constant
    table_address: int                         # and the plan's entry table


def _run(model_path: str, data: bytes, board, setup, seed: int) -> _ModelRun:
    """One emulated inference with `setup`'s kernels on the board, as `profile --board` runs it."""
    from .cortexm.image import reference_graph
    from .fit import assess
    from .fit_measure import RUNTIME_ROOTS, kernel_measurement, ops_not_simulated, ops_without_kernels
    name = Path(model_path).name
    options = {"clock_hz": setup.clock_hz,
               "memory_system": setup.mcu_memory_system()}
    with Interpreter.from_bytes(data, target=board.core, kernels=setup.kernels, emulate=True,
                                mcu_options=options, plan_only=True) as it:
        missing = ops_without_kernels(it) + [f"{i} {op} ({why})" for i, op, why in ops_not_simulated(it)]
        if missing:
            raise ExportError(f"{name} cannot be exported: no C kernel for op {', op '.join(missing)}")
        tensors = it.tensors
        initial = {t.index: np.ascontiguousarray(t.data).tobytes() for t in tensors
                   if t.is_variable and not t.is_constant}
        resources = it.resource_variables.variables if it.resource_variables is not None else []
        buffers = [(offset, np.ascontiguousarray(v.data).tobytes()) for v in resources   # their default bytes
                   if v.allocated and v.data is not None and (offset := v.offset) is not None]
        inputs = random_inputs(it, seed)
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
        executor = it.executor
        on_host = executor.host_entries()
        if on_host:         # the emulator ran them on its host kernels; a device has no host
            raise ExportError(f"{name} cannot be exported: op " + ", op ".join(
                f"{e.node_index} {e.op_name} ({e.host_reason})" for e in on_host)
                + " has no C kernel call in the firmware plan (the emulator ran it on the host)")
        plan = executor.firmware_plan
        addresses = [executor.mcu.place_constant(item.data, item.align) for item in plan.constants]
        measured = kernel_measurement(it)
        fit = assess(model_path, data, it, setup.ram_budget, setup.flash_budget, measured=measured)
        fit.board, fit.budget_source = setup.board, setup.budget_source
        graph = reference_graph(executor.mcu.elf.path)
        symbols = [e.symbol for e in plan.entries if e.symbol]
        roots = [n for n in RUNTIME_ROOTS if n in graph.by_name] + symbols
        main = it.model.main

        def placed(k: int) -> int:
            offset = tensors[k].offset
            if offset is None:
                raise ExportError(f"{name} cannot be exported: tensor {k} has no place in the arena")
            return offset

        return _ModelRun(
            plan, fit.text().splitlines(), measured.stack_bytes, graph.closure(roots).names("code"),
            graph.closure(["mrt_invoke", *symbols]),     # without the firmware's own start-up
            [(placed(k), tensors[k].nbytes, np.ascontiguousarray(x).tobytes())
             for k, x in zip(main.inputs, inputs)],
            [(placed(k), tensors[k].nbytes, np.ascontiguousarray(it.get_output(i)).tobytes())
             for i, k in enumerate(main.outputs)],
            [(offset, raw) for k, raw in initial.items()
             if (offset := tensors[k].offset) is not None and any(raw)] + [(o, raw) for o, raw in buffers if any(raw)],
            sum(r.cycles for r in it.last_run) + executor.last_runtime.cycles,
            sum(r.instructions for r in it.last_run) + executor.last_runtime.instructions,
            addresses, executor.plan_image.flash_base)


def _model_source(run: _ModelRun, header: str, seed: int) -> str:
    """model.c: the arena, the constants region at the plan's offsets, inputs, tensor places."""
    from .cortexm.firmware_plan_c import c_bytes
    plan = run.plan
    constants = bytearray(plan.constants_bytes)
    for item in plan.constants:
        constants[item.offset:item.offset + len(item.data)] = item.data
    out = [f"/* {header}: the arena, the constants, the inputs. */\n",
           "#include <stdint.h>\n#include \"mrt_model.h\"\n\n",
           f"uint8_t g_mrt_arena[{max(16, plan.arena_bytes)}] __attribute__((aligned(16)));\n\n",
           "/* The model's constant tensors and the operators' constants, at the plan's offsets. */\n",
           c_bytes("g_mrt_constants", bytes(constants), section=CONSTANTS_SECTION), "\n"]
    for i, (_, _, raw) in enumerate(run.inputs):
        out += [f"/* input {i}: seed {seed} */\nstatic ", c_bytes(f"g_mrt_input_{i}", raw), "\n"]
    for k, (_, raw) in enumerate(run.variables):
        out += [f"/* variable {k} (a variable tensor or a resource variable's buffer): its initial value */\nstatic ", c_bytes(f"g_mrt_variable_{k}", raw), "\n"]
    out.append(_tensor_table("g_mrt_inputs", [(o, n, f"g_mrt_input_{i}") for i, (o, n, _) in enumerate(run.inputs)]))
    out.append(_tensor_table("g_mrt_outputs", [(o, n, None) for o, n, _ in run.outputs]))
    out.append(_tensor_table("g_mrt_variables", [(o, len(raw), f"g_mrt_variable_{k}")
                                                 for k, (o, raw) in enumerate(run.variables)]))
    return "".join(out)


def export_project(model_path: str, data: bytes, board_name: str, out_dir: str | Path, *,
                   board_dirs: Optional[Sequence[str]] = None, seed: int = 0,
                   kernels: Optional[str] = None) -> ExportResult:
    """Write the project for `data` (the .tflite) on the catalog board `board_name` into
    `out_dir` (new or empty), with the C kernels of the flavour `kernels` (None: the board's
    core's, flavours.default_kernels: cmsis-nn)."""
    from .cortexm.boards import load_board
    from .cortexm.firmware_build import SOURCE_DIR, firmware_build
    from .cortexm.firmware_plan import with_constants_at
    from .cortexm.firmware_plan_c import PLAN_SECTIONS, by_region, c_plan_source
    from .run_setup import board_setup

    out = Path(out_dir)
    _empty_directory(out)
    board = load_board(board_name, board_dirs)
    setup = board_setup(board.name, board_dirs=board_dirs, kernels=kernels)
    setup.kernels = kernels or setup.kernels
    name = Path(model_path).name
    run = _run(model_path, data, board, setup, seed)
    line = board.accelerator.line_bytes
    # the constants at profile's addresses modulo the flash line (export_image: code placement)
    offsets, constants_bytes = constant_layout(run.plan.constants, run.constant_addresses,
                                               run.table_address, line)
    run.plan = replace(with_constants_at(run.plan, offsets), constants_bytes=constants_bytes)
    c_sources = {p.name: p.read_text() for p in sorted(SOURCE_DIR.glob("*.c"))
                 if p.name not in ("start.c", *RUNTIME_SOURCES)}
    kernel_sources = _defined_in(c_sources, run.functions)
    runtime = {name: (SOURCE_DIR / name).read_text() for name in RUNTIME_SOURCES}
    placed = code_placement(run.image_parts, _input_sections({**c_sources, **runtime}), line)
    stack = -(-(run.stack_bytes + STACK_MARGIN) // 256) * 256
    size = image_size(board, run.plan, run.image_parts, [n for _, n, _ in run.inputs],
                      [len(raw) for _, raw in run.variables], [n for _, n, _ in run.outputs],
                      stack, name + board.name, placed)
    if not size.fits:
        raise ImageTooLarge(size.refusal(board.name), size)
    result = ExportResult(out, board.name, board.core, [], kernel_sources, len(run.plan.entries), stack,
                          [raw for _, _, raw in run.outputs], run.cycles, run.instructions, size,
                          left_to_user(board, setup.clock_hz, setup.flash_wait_states),
                          assumed(board, setup.clock_hz, setup.flash_wait_states), setup.flavour,
                          set_by_startup(board, setup.clock_hz, setup.flash_wait_states))
    header = f"Generated by micro-rt export from {name} for board {board.name} ({board.core})"
    boot_source = boot_header_source(board, header)
    sources = ["main.c", "startup.c", *([BOOT_SOURCE] if boot_source else []), "model.c", "plan.c",
               *RUNTIME_SOURCES, *kernel_sources]
    texts = {
        "mrt_model.h": _header(name, board.name, run.plan.arena_bytes, len(run.inputs),
                               [n for _, n, _ in run.outputs], len(run.variables)),
        "model.c": _model_source(run, header, seed),
        "plan.c": c_plan_source(run.plan, by_region({"arena": "g_mrt_arena", "constants": "g_mrt_constants"}),
                                header),
        "board.ld": _linker_script(board, stack, PLAN_SECTIONS, placed,
                                   constants_alignment(run.plan.constants, line)),
        "Makefile": _makefile(firmware_build(), board.core, board.name, sources),
        "mrt_board.h": board_header(board, setup.clock_hz, setup.flash_wait_states),
        "README.txt": _readme(name, board, result, run.fit_lines),
        **({BOOT_SOURCE: boot_source} if boot_source else {}),
    }
    try:
        out.mkdir(parents=True, exist_ok=True)
        for file, text in texts.items():
            (out / file).write_text(text)
        for file in (*RUNTIME_SOURCES, *kernel_sources, *(p.name for p in SOURCE_DIR.glob("*.h"))):
            shutil.copyfile(SOURCE_DIR / file, out / file)
        for file in ("main.c", "startup.c"):
            shutil.copyfile(SOURCE_DIR / TEMPLATES / file, out / file)
    except OSError as e:
        raise MicroRtError(f"cannot write the project into '{out}': {e.strerror}") from None
    result.files = sorted(p.name for p in out.iterdir())
    return result
