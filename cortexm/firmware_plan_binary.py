"""The binary emitter of a firmware plan (firmware_plan.py builds the plan): its entry table
and structs laid out at a machine's addresses, pointer words resolved, as mrt_runtime.c reads
them (whole_invoke.py writes the image into the virtual MCU; firmware_plan_c.py emits the same
IR as C for an exported project)."""
from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from typing import Callable, Optional

from .firmware_plan_ir import CALL, ENTRY_WORDS, JUMP, JUMP_IF_FALSE, FirmwarePlan, PlanError, Reloc
from .memory_map import round_up

__all__ = ["PlanImage", "binary_image", "resolver"]


@dataclass(frozen=True)
class PlanImage:
    """The binary plan at absolute addresses: `flash` (the plan region's structs unless they go
    to RAM, then the entry table and mrt_plan_t) at `flash_base`, `state` (RAM: the state
    region, then the plan region's structs when in RAM) at `state_base`; mrt_invoke's argument
    is `plan_address`."""
    flash_base: int
    flash: bytes
    state_base: int
    state: bytes
    plan_address: int


def _patch(blob: bytes, relocs, resolve: Callable[[Reloc], int]) -> bytearray:
    out = bytearray(blob)
    for offset, reloc in relocs:
        out[offset:offset + 4] = struct.pack("<I", resolve(reloc) & 0xFFFFFFFF)
    return out


def binary_image(plan: FirmwarePlan, resolve: Callable[[Reloc], int],
                 symbol_address: Callable[[str], int], flash_base: int, state_base: int,
                 plan_base: Optional[int] = None) -> PlanImage:
    """The plan laid out for the firmware runtime: `resolve` gives a relocation's address (the
    plan region must resolve to `flash_base` + offset, or with `plan_base` to it, the state
    region to `state_base` + offset), `symbol_address` a kernel's address. `plan_base`: the
    plan region's structs go to RAM there, right after the state region (16-byte aligned), and
    are part of `state`; the entry table stays in flash.

    Layout at flash_base: plan_blob (unless plan_base) | entries (mrt_entry_t: kernel address | 1 (0: not a call),
    control: opcode << 8 | 1 when the entry has a refusal (its kernel returns a status) | 2 when
    a nonzero return ends the invoke early (ends_run),
    MAX_ARGS words: the call's, or a jump's condition address and target index) | mrt_plan_t
    {n_entries, entries}."""
    structs = _patch(plan.plan_blob, plan.plan_relocs, resolve)
    state = _patch(plan.state_blob, plan.state_relocs, resolve)
    if plan_base is not None:
        if plan_base != state_base + round_up(len(state), 16):
            raise PlanError("the plan's structs must follow the state region")
        state += bytes(-len(state) % 16) + structs
        structs = bytearray()
    flash = structs
    table_at = flash_base + len(flash)
    for e in plan.entries:
        words = [symbol_address(e.symbol) | 1 if e.opcode == CALL else 0, e.control]
        words += [resolve(w) if isinstance(w, Reloc) else w & 0xFFFFFFFF for w in e.args]
        if e.opcode in (JUMP, JUMP_IF_FALSE):
            words += [0] * (3 - len(words)) + [e.target]
        words += [0] * (ENTRY_WORDS - len(words))
        flash += struct.pack("<%dI" % ENTRY_WORDS, *words)
    plan_address = flash_base + len(flash)
    flash += struct.pack("<II", len(plan.entries), table_at)
    flash.extend(bytes(-len(flash) % 16))
    return PlanImage(flash_base, bytes(flash), state_base, bytes(state), plan_address)


def resolver(plan: FirmwarePlan, arena_base: int, flash_base: int, state_base: int,
             place_constant: Callable[[bytes, int], int]) -> Callable[[Reloc], int]:
    """A relocation's address on a machine: the arena at `arena_base` (its offset 0), the plan
    region at `flash_base`, the state region at `state_base`, each constant where
    `place_constant(data, align)` puts it (the emulator's flash shares equal bytes)."""
    starts = [item.offset for item in plan.constants]
    addresses = [place_constant(item.data, item.align) for item in plan.constants]
    bases = {"arena": arena_base, "plan": flash_base, "state": state_base}

    def resolve(reloc: Reloc) -> int:
        if reloc.region != "constants":
            return bases[reloc.region] + reloc.offset
        k = bisect.bisect_right(starts, reloc.offset) - 1
        if k < 0:
            raise PlanError(f"constants offset {reloc.offset} lies before the first constant")
        return addresses[k] + reloc.offset - starts[k]

    return resolve
