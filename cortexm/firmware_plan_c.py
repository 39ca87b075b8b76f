"""The firmware plan's C emitter (firmware_plan.py holds the IR and the binary emitter): the plan
as C source for a device project (micro-rt export), every pointer word an expression over the
project's arrays that the linker resolves, so the plan lies wherever the board's linker script
puts it.

    c_plan_source(plan, locate) -> str     # plan.c: argument structs, state, entry table, g_mrt_plan
    c_bytes(name, data, align, const=True, section=None) -> str    # a C array of bytes

`locate(reloc)` gives the C array (and the offset in it) a pointer word of the arena or
constants region points to; the plan's argument structs and the state region are emitted here.
The argument structs are RAM (initialised data), as the emulator's whole-invoke mode and TFLM
keep them; the entry table and g_mrt_plan go to flash sections of their own (PLAN_SECTIONS, in
that order) so that a linker script lays them out as the binary emitter does.
"""
from __future__ import annotations

import struct
from typing import Callable, Mapping, Optional

from .firmware_plan_ir import CALL, JUMP, JUMP_IF_FALSE, MAX_ARGS, FirmwarePlan, Reloc, Word

PLAN_STRUCTS = "g_mrt_plan_structs"
STATE = "g_mrt_state"
ENTRIES = "g_mrt_entries"
PLAN = "g_mrt_plan"
ADDRESS_MACRO = "MRT_AT"
PLAN_SECTIONS = (".mrt_plan.entries", ".mrt_plan.plan")
Locate = Callable[[Reloc], tuple[str, int]]


def by_region(names: Mapping[str, str]) -> Locate:
    """Each region in one array, at the plan's offsets."""
    return lambda reloc: (names[reloc.region], reloc.offset)


def c_word(word: Word, locate: Locate) -> str:
    """A plain word as a hex literal, a pointer word as MRT_AT(array, offset)."""
    if isinstance(word, Reloc):
        array, offset = locate(word)
        return f"{ADDRESS_MACRO}({array}, {offset})"
    return f"0x{word & 0xFFFFFFFF:08x}u"


def _blob_words(blob: bytes, relocs, locate: Locate) -> list[str]:
    pointers = dict(relocs)
    padded = blob + bytes(-len(blob) % 4)
    words = struct.unpack("<%dI" % (len(padded) // 4), padded)
    return [c_word(pointers.get(4 * k, w), locate) for k, w in enumerate(words)]


def _array(decl: str, items: list[str], per_line: int) -> str:
    if not items:
        items = ["0"]           # C has no empty arrays
    lines = ["    " + ", ".join(items[k:k + per_line]) + "," for k in range(0, len(items), per_line)]
    return f"{decl} = {{\n" + "\n".join(lines) + "\n};\n"


def _attributes(align: int, section: Optional[str] = None) -> str:
    where = f', section("{section}")' if section else ""
    return f"__attribute__((aligned({align}){where}))"


def c_bytes(name: str, data: bytes, align: int = 16, const: bool = True,
            section: Optional[str] = None) -> str:
    """`[const] uint8_t name[n] __attribute__((aligned(align)[, section])) = {...};`"""
    qualifier = "const " if const else ""
    decl = f"{qualifier}uint8_t {name}[{max(len(data), 1)}] {_attributes(align, section)}"
    return _array(decl, [f"0x{b:02x}" for b in data], 16)


def c_plan_source(plan: FirmwarePlan, locate: Locate, header: str = "") -> str:
    """plan.c: the plan's argument structs and the structs kernels write (RAM, initial values),
    the entry table and `g_mrt_plan` (flash), for mrt_invoke (mrt_runtime.h). `locate` places
    the arena's and the constants' pointer words (their arrays are declared by mrt_model.h)."""
    def where(reloc: Reloc) -> tuple[str, int]:
        own = {"plan": PLAN_STRUCTS, "state": STATE}.get(reloc.region)
        return (own, reloc.offset) if own else locate(reloc)

    symbols = sorted({e.symbol for e in plan.entries if e.opcode == CALL})
    entries, table = PLAN_SECTIONS
    out = [f"/* {header} */\n" if header else "",
           "#include <stdint.h>\n#include \"mrt_runtime.h\"\n#include \"mrt_model.h\"\n\n",
           f"#define {ADDRESS_MACRO}(base, offset) ((uint32_t)((const uint8_t *)(base) + (offset)))\n\n",
           "/* The kernels the plan calls. Their prototypes differ; the runtime calls each through\n"
           " * mrt_kernel_fn (mrt_runtime.h), so only their addresses are needed here. */\n",
           *(f"void {s}(void);\n" for s in symbols), "\n",
           "/* The argument structs of the calls (RAM, as TFLM's are); pointer words are resolved by the\n"
           " * linker. */\n",
           _array(f"uint32_t {PLAN_STRUCTS}[{max(1, len(plan.plan_blob) // 4)}] {_attributes(16)}",
                  _blob_words(plan.plan_blob, plan.plan_relocs, where), 4),
           "\n/* Argument structs kernels write: work buffers and the state kept between invokes. */\n",
           _array(f"uint32_t {STATE}[{max(1, (len(plan.state_blob) + 3) // 4)}] {_attributes(16)}",
                  _blob_words(plan.state_blob, plan.state_relocs, where), 4),
           f"\nconst mrt_entry_t {ENTRIES}[{max(1, len(plan.entries))}] {_attributes(4, entries)} = {{\n"]
    for e in plan.entries:
        # as binary_image lays an entry out: kernel, control word, words
        control = e.control
        args = [c_word(w, where) for w in e.args]
        if e.opcode in (JUMP, JUMP_IF_FALSE):          # the condition byte's address, the target
            args += ["0u"] * (1 - len(args)) + [f"{e.target}u"]
        args += ["0u"] * (MAX_ARGS - len(args))
        kernel = f"(mrt_kernel_fn){e.symbol}" if e.opcode == CALL else "0"
        scope = f"subgraph {e.subgraph} " if e.subgraph else ""
        what = "" if e.opcode == CALL else f" {e.opcode}"
        out.append(f"    /* {scope}op {e.node_index} {e.op_name}{what} */\n"
                   f"    {{{kernel}, 0x{control:x}u, {{{', '.join(args)}}}}},\n")
    out.append(f"}};\n\nconst mrt_plan_t {PLAN} {_attributes(4, table)} = {{{len(plan.entries)}u, {ENTRIES}}};\n")
    return "".join(out)
