"""The firmware plan: a whole inference as the device runtime (cortexm/src/mrt_runtime.c) walks it.

One IR (its records: firmware_plan_ir.py), two emitters. The IR is an ordered list of kernel calls (`PlanEntry`: symbol, argument
words) and the argument structs they point to, where every word that is a pointer carries a
relocation (`Reloc`: region and offset) instead of an address:

    arena      the tensor arena (tensors, scratch buffers, variable tensors), offset from its start
    constants  the model's constants and each operator's constant parameters (weights, biases,
               multipliers, lookup tables, FFT twiddles): `FirmwarePlan.constants`, read-only
    plan       the argument structs of the calls (`plan_blob`), read-only
    state      argument structs a kernel writes (work buffers, the state Signal kernels keep between
               invokes: `state_blob`); RAM on a device

Emitters: `firmware_plan_binary.binary_image` lays the plan out with absolute addresses (the
emulator writes it into flash, cortexm/whole_invoke.py); a C emitter (micro-rt export) writes pointer words as expressions
over its arrays. API, stable:

    build_plan(program, core, arena_misalign=0, arena_bytes=0) -> FirmwarePlan
    plan_nodes(interpreter, scratch=None, persistent=None) -> program
                                           # [PlanNode | Label | Jump | Mark | Store]: IF / WHILE
                                           # unrolled, CALL_ONCE and resource variables
                                           # (firmware_plan_control.py)
    FirmwarePlan.entries[i]: PlanEntry(subgraph, node_index, op_name, symbol, args, blocks,
                                       refusal, after, opcode, target)
        opcode: CALL (symbol, args), JUMP_IF_FALSE (args[0]: a BOOL's or a StateFlag's address;
        to entry `target` when it is 0), JUMP (to `target`), ENTER / LEAVE (a control-flow
        operator starts / ends: for the profiler), NOTE (an operator with no work of its own
        ran: for the profiler), STORE (args[1] written as a byte at args[0]: a StateFlag)
        args: tuple of int (a plain word) or Reloc (a pointer)
        blocks: ((region "plan" | "state", offset, length), ...) its argument structs
    FirmwarePlan.plan_blob / state_blob: bytes, pointer words zero; plan_relocs / state_relocs:
        ((offset of a pointer word in the blob, Reloc), ...)
    FirmwarePlan.constants: (ConstantItem(offset, data, align), ...) laid out in constants_bytes
    FirmwarePlan.arena_bytes
    FirmwarePlan.flags: ((offset in the state region, StateFlag), ...): bytes the runtime keeps
        between invokes (CALL_ONCE: has its init subgraph run?), mirrored from / to the host's
        kernel data around each invoke (StateFlag.get / put); the state blob holds get() as built
    firmware_plan_binary.resolver(plan, arena_base, flash_base, state_base, place_constant)
        -> resolve(Reloc) -> address
    firmware_plan_binary.binary_image(plan, resolve, symbol_address, flash_base, state_base)
        -> PlanImage

How pointers are found: the runners (cortexm/ops/*.py) describe their calls twice, for two
layouts whose region bases differ by different deltas (alignment residues kept); a word that
moves by exactly a region's delta is a pointer into that region, every other word must not move
(PlanError otherwise). Constants the runners place (`ctx.const`, constant tensors) go to the
constants region, each once (the same bytes are shared, as in the emulator's flash).

A node whose calls cannot be planned ahead (no C kernel for it here; its runner reads a
non-constant tensor's values while describing its calls, a check of run-time data made on the
host before the call) is a host entry: a call of HOST_SYMBOL, the runtime's trap into the
emulator, which runs the node's host kernel; `PlanEntry.host_reason` says why. The emulator's
profile names it as not counted; `micro-rt export` refuses it.
Calls with an `after` callback (kernels keeping state on the host between invokes) are planned;
their argument structs are re-described before each invoke (`refresh_blocks`) and `after` runs
after the invoke with a reader that maps the plan's addresses (`AddressReader`).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional, Sequence, Union


from . import ops
from .calling import ArgsArea
from .firmware_plan_control import plan_control
from .firmware_plan_ir import (CALL, ENTER, JUMP, JUMP_IF_FALSE, LEAVE, MAX_ARGS, NOTE, OPCODES,
                               REGIONS, STORE, ConstantItem, FirmwarePlan, HostNode, Jump, Label, Mark,
                               PlanEntry, PlanError, PlanNode, Reloc, StateFlag, Store, Word, require_placed)
from .memory_map import as_bytes, round_up
from .op_windows import HOST_SYMBOL       # mrt_runtime.h: the trap an operator without a C kernel call runs
from .ops.context import KernelCall, UnsupportedOnMcu
from .ops.control import CopyStep

__all__ = ["CALL", "ENTER", "JUMP", "JUMP_IF_FALSE", "LEAVE", "MAX_ARGS", "NOTE", "OPCODES", "REGIONS", "STORE",
           "AddressReader", "ConstantItem", "FirmwarePlan", "Jump", "Label", "Mark", "PlanEntry", "PlanError",
           "PlanNode", "Reloc", "StateFlag", "Store", "build_plan", "plan_nodes", "refresh_blocks",
           "scratch_offsets"]

# Two layouts for finding pointer words: region bases far apart, 64 KiB-aligned deltas (so a
# runner that looks at an address's alignment sees the same residue in both).
# The bases avoid what parameter words often hold (small integers, Q31 multipliers below
# 0x8000_0000, INT32_MIN, float32 values of ordinary magnitude), so that a word equal in both
# layouts but pointing into a region of layout A is caught as an address a runner kept.
_LAYOUT_A = {"arena": 0x9000_0000, "constants": 0x9400_0000, "plan": 0x9800_0000, "state": 0x9C00_0000}
_LAYOUT_B = {"arena": 0x9110_0000, "constants": 0x9620_0000, "plan": 0x9B30_0000, "state": 0x9F40_0000}
_REGION_SPAN = 0x0100_0000      # the probe's regions hold at most 16 MiB of argument structs



# --------------------------------------------------------------------------- describing

class _ReadsValues(Exception):
    """A runner read a non-constant tensor's values while describing its calls."""


class _DescribeView:
    """A tensor as a runner sees it while the plan is built: all of it but a non-constant
    tensor's values (they exist only when the invoke runs)."""

    def __init__(self, tensor: Any):
        self.__dict__["_tensor"] = tensor

    def __getattr__(self, name: str):
        tensor = self.__dict__["_tensor"]
        if name == "data" and not getattr(tensor, "is_constant", False):
            raise _ReadsValues(getattr(tensor, "name", "?"))
        return getattr(tensor, name)


class _Area(ArgsArea):
    """A region the layout lays structs out in, which can be told where to continue."""

    def start_at(self, offset: int) -> None:
        self._next = self.base + offset


class _PlanArea(_Area):
    """The plan's argument structs: calls do not share them (no reset between calls); blocks a
    kernel writes go to the state region."""

    def __init__(self, bases: dict[str, int]):
        super().__init__(bases["plan"], bases["plan"] + _REGION_SPAN)
        self.state = _Area(bases["state"], bases["state"] + _REGION_SPAN)

    def reset(self) -> None:
        pass

    def reserve(self, nbytes: int, align: int = 4, writable: bool = False) -> int:
        if writable:
            return self.state.reserve(nbytes, align)
        return super().reserve(nbytes, align)


class _Layout:
    """Stands in for the VirtualMCU while the runners describe their calls: the arena, the
    constants and the argument structs at this layout's bases."""

    def __init__(self, core: str, bases: dict[str, int], arena_misalign: int):
        self.core = core
        self.bases = dict(bases)
        self.arena_base = bases["arena"] + arena_misalign
        self.area = _PlanArea(bases)
        self._constants: list[ConstantItem] = []
        self._constants_end = 0
        self._by_digest: dict[tuple[bytes, int], int] = {}

    def new_args_area(self) -> ArgsArea:
        return self.area

    def place_constant(self, data, align: int = 16) -> int:
        raw = as_bytes(data)
        key = (raw, align)
        offset = self._by_digest.get(key)
        if offset is None:
            offset = round_up(self._constants_end, max(1, align))
            self._constants.append(ConstantItem(offset, raw, align))
            self._constants_end = offset + len(raw)
            self._by_digest[key] = offset
        return self.bases["constants"] + offset


def _describe(layout: _Layout, pn: PlanNode) -> list[KernelCall]:
    views = {i: _DescribeView(t) for i, t in pn.tensors.items()}
    node = pn.node
    try:
        return ops.describe(layout, node, views, pn.offsets, pn.scratch, pn.kernels, pn.persistent)
    except _ReadsValues as e:
        raise PlanError(f"op {node.index} {node.op_name} reads the values of tensor '{e}' when its "
                        "kernel call is set up (a check of run-time data on the host), so it "
                        "cannot be planned ahead") from None
    except UnsupportedOnMcu as e:
        message = str(e)
        raise PlanError(message if message.startswith(f"op {node.index} ") else
                        f"op {node.index} {node.op_name}: {message}") from None


def _classify(a: int, b: int, deltas: dict[str, int], layout_a: _Layout, where: str) -> Word:
    """A word seen as `a` in layout A and `b` in layout B: plain, or a pointer into a region."""
    if a == b:
        for region, base in layout_a.bases.items():
            if base <= a < base + _REGION_SPAN:
                raise PlanError(f"{where}: the word 0x{a:08x} points into the {region} region but "
                                "did not move with it (an address kept from an earlier layout)")
        return a
    diff = (b - a) & 0xFFFFFFFF
    for region, delta in deltas.items():
        if diff == delta & 0xFFFFFFFF:
            start = layout_a.arena_base if region == "arena" else layout_a.bases[region]
            return Reloc(region, (a - start) & 0xFFFFFFFF)
    raise PlanError(f"{where}: a word is 0x{a:08x} in one layout and 0x{b:08x} in the other, "
                    "which no region's move explains")


def _words(data: bytes) -> list[int]:
    n = len(data) // 4
    return list(struct.unpack("<%dI" % n, data[:4 * n]))


def _host_entry(node: Any, reason: str, index: int) -> PlanEntry:
    """A call of the host trap for `node` (its argument: the entry's own index); a kTfLiteAbort
    from its host kernel ends the invoke there, from the main subgraph as TFLM's does."""
    reason = reason.removeprefix(f"op {node.index} {node.op_name}").removeprefix(":").strip() or "no reason given"
    return PlanEntry(node.subgraph, node.index, node.op_name, HOST_SYMBOL, (index,), (),
                     ends_run=node.subgraph == 0, host_reason=reason)


def _plan_calls(a: "_Layout", b: "_Layout", deltas: dict, pn: PlanNode) -> tuple[list, list, list]:
    """One node's entries, the argument-struct bytes they need ((region, offset, bytes)) and
    their pointer words ((region, (offset, Reloc))), or PlanError; nothing is kept of a node
    that fails."""
    calls_a, calls_b = _describe(a, pn), _describe(b, pn)
    node = pn.node
    where = f"op {node.index} {node.op_name}"
    if len(calls_a) != len(calls_b):
        raise PlanError(f"{where}: its calls depend on where memory lies")
    entries, writes, relocs = [], [], []
    for ca, cb in zip(calls_a, calls_b):
        if ca.symbol != cb.symbol or len(ca.args) != len(cb.args) or len(ca.blocks) != len(cb.blocks):
            raise PlanError(f"{where}: its calls depend on where memory lies")
        if len(ca.args) > MAX_ARGS:
            raise PlanError(f"{where}: {ca.symbol} takes {len(ca.args)} argument words; the "
                            f"runtime passes at most {MAX_ARGS}")
        args = tuple(_classify(x & 0xFFFFFFFF, y & 0xFFFFFFFF, deltas, a, f"{where} {ca.symbol} argument {k}")
                     for k, (x, y) in enumerate(zip(ca.args, cb.args)))
        blocks = []
        for (addr_a, data_a), (addr_b, data_b) in zip(ca.blocks, cb.blocks):
            region = "plan" if a.bases["plan"] <= addr_a < a.bases["plan"] + _REGION_SPAN else "state"
            offset = addr_a - a.bases[region]
            if addr_b - b.bases[region] != offset or len(data_a) != len(data_b) or len(data_a) % 4 and \
                    data_a[-(len(data_a) % 4):] != data_b[-(len(data_b) % 4):]:
                raise PlanError(f"{where}: its argument structs depend on where memory lies")
            data = bytearray(data_a)
            for k, (x, y) in enumerate(zip(_words(data_a), _words(data_b))):
                word = _classify(x, y, deltas, a, f"{where} {ca.symbol} struct word {k}")
                if isinstance(word, Reloc):
                    relocs.append((region, (offset + 4 * k, word)))
                    data[4 * k:4 * k + 4] = bytes(4)
            writes.append((region, offset, bytes(data)))
            blocks.append((region, offset, len(data_a)))
        if ca.ends_run and node.subgraph:
            raise PlanError(f"{where} in subgraph {node.subgraph} can end the invoke early "
                            "(kTfLiteAbort): the runtime ends it only from the main subgraph")
        entries.append(PlanEntry(node.subgraph, node.index, node.op_name, ca.symbol, args, tuple(blocks),
                                 ca.refusal, ca.after, ends_run=ca.ends_run))
    return entries, writes, relocs


def build_plan(nodes: Sequence[Union[PlanNode, HostNode, Label, Jump, Mark, Store]], core: str, arena_misalign: int = 0,
               arena_bytes: int = 0) -> FirmwarePlan:
    """The plan of `nodes` (in run order: PlanNodes and HostNodes, and for control flow Labels,
    Jumps and Marks, as `plan_nodes` makes them) on `core`; a node whose calls cannot be planned
    becomes a host entry naming why."""
    a, b = _Layout(core, _LAYOUT_A, arena_misalign), _Layout(core, _LAYOUT_B, arena_misalign)
    deltas = {r: _LAYOUT_B[r] - _LAYOUT_A[r] for r in REGIONS}
    entries: list[PlanEntry] = []
    blobs = {"plan": bytearray(), "state": bytearray()}
    relocs: dict[str, list[tuple[int, Reloc]]] = {"plan": [], "state": []}
    labels: dict[str, int] = {}
    jumps: list[tuple[PlanEntry, str]] = []
    flagged: dict[StateFlag, list[tuple[PlanEntry, tuple]]] = {}   # entries whose args[0] is the flag
    for pn in nodes:
        if isinstance(pn, Label):
            labels[pn.name] = len(entries)
            continue
        if isinstance(pn, (Jump, Mark, Store)):
            node = pn.node
            if isinstance(pn, Mark):
                entries.append(PlanEntry(node.subgraph, node.index, node.op_name, "", (), (), opcode=pn.opcode))
                continue
            if isinstance(pn, Store):
                entries.append(PlanEntry(node.subgraph, node.index, node.op_name, "", (), (), opcode=STORE))
                flagged.setdefault(pn.flag, []).append((entries[-1], (pn.value & 0xFF,)))
                continue
            args = (Reloc("arena", pn.condition),) if isinstance(pn.condition, int) else ()
            entries.append(PlanEntry(node.subgraph, node.index, node.op_name, "", args, (),
                                     opcode=JUMP if pn.condition is None else JUMP_IF_FALSE))
            if isinstance(pn.condition, StateFlag):
                flagged.setdefault(pn.condition, []).append((entries[-1], ()))
            jumps.append((entries[-1], pn.label))
            continue
        if isinstance(pn, HostNode):
            entries.append(_host_entry(pn.node, pn.reason, len(entries)))
            continue
        try:
            planned, writes, new_relocs = _plan_calls(a, b, deltas, pn)
        except PlanError as e:      # its kernel calls cannot be planned ahead: the host runs it, named
            entries.append(_host_entry(pn.node, str(e), len(entries)))
            continue
        for region, offset, data in writes:
            blob = blobs[region]
            if len(blob) < offset + len(data):
                blob.extend(bytes(offset + len(data) - len(blob)))
            blob[offset:offset + len(data)] = data
        for region, item in new_relocs:
            relocs[region].append(item)
        entries += planned
    for entry, label in jumps:
        entry.target = labels[label]
    flags = []
    state = blobs["state"]
    state.extend(bytes(-len(state) % 4))
    for flag, users in flagged.items():        # after the kernels' state: each a word of its own
        flags.append((len(state), flag))
        for entry, rest in users:
            entry.args = (Reloc("state", len(state)), *rest)
        state.extend(struct.pack("<I", flag.get() & 0xFF))
    for region in ("plan", "state"):
        blobs[region].extend(bytes(-len(blobs[region]) % 16))
    return FirmwarePlan(core, entries, bytes(blobs["plan"]), tuple(relocs["plan"]), bytes(blobs["state"]),
                        tuple(relocs["state"]), tuple(a._constants), round_up(a._constants_end, 16),
                        arena_bytes, arena_misalign, list(nodes), tuple(flags))


def with_constants_at(plan: FirmwarePlan, offsets: Sequence[int]) -> FirmwarePlan:
    """The same plan with its constants moved to `offsets` (one per item of plan.constants, in
    order, each aligned as its item asks): every pointer word into an item, or just past its end,
    moves with it."""
    items = plan.constants
    if len(offsets) != len(items):
        raise PlanError(f"{len(offsets)} offsets for {len(items)} constants")
    starts = {item.offset: k for k, item in enumerate(items)}

    def moved(word: Word) -> Word:
        return moved_reloc(word) if isinstance(word, Reloc) else word

    def moved_reloc(word: Reloc) -> Reloc:
        if word.region != "constants":
            return word
        k = starts.get(word.offset)
        if k is None:           # inside an item, else just past its end
            k = next((j for j, item in enumerate(items)
                      if item.offset < word.offset <= item.offset + len(item.data)), None)
        if k is None:
            raise PlanError(f"a pointer to constants offset {word.offset} points into no constant")
        return Reloc("constants", offsets[k] + word.offset - items[k].offset)

    entries = [replace(e, args=tuple(moved(a) for a in e.args)) for e in plan.entries]
    constants = tuple(ConstantItem(o, item.data, item.align) for o, item in zip(offsets, items))
    end = max((c.offset + len(c.data) for c in constants), default=0)
    return replace(plan, entries=entries, constants=constants, constants_bytes=round_up(end, 16),
                   plan_relocs=tuple((o, moved_reloc(r)) for o, r in plan.plan_relocs),
                   state_relocs=tuple((o, moved_reloc(r)) for o, r in plan.state_relocs))


def scratch_offsets(interpreter: Any) -> dict[tuple[int, int], tuple[int, ...]]:
    """Each node's scratch buffers (by subgraph and node) in request order (the kernel
    library's own come last)."""
    found: dict[tuple[int, int], tuple[int, ...]] = {}
    for buf in interpreter.plan.buffers:
        if buf.kind == "scratch":
            found[(buf.subgraph, buf.tensor)] = found.get((buf.subgraph, buf.tensor), ()) + (buf.offset,)
    return found


def plan_nodes(interpreter: Any, scratch: Optional[dict] = None, persistent: Optional[dict] = None) -> list:
    """The model as a program for `build_plan`: subgraph 0's nodes in order; IF and WHILE
    unrolled into their copies (the mrt_copy calls TFLM's kernels make), jumps and the
    subgraphs' nodes; CALL_ONCE and the resource-variable operators as firmware_plan_control
    plans them; a node that cannot be planned is a HostNode naming why.
    `persistent`: each node's persistent buffers' arena offsets (default: where the
    interpreter's McuExecutor placed them, after the variable tensors); the C kernels are those
    of `interpreter.kernels`' flavour."""
    scratch = scratch_offsets(interpreter) if scratch is None else scratch
    if persistent is None:
        persistent = getattr(getattr(interpreter, "executor", None), "persistent_offsets", None)
    context = _Context(scratch, persistent or {}, getattr(interpreter, "kernels", "cmsis-nn"))
    program: list = []
    _plan_subgraph(interpreter, 0, context, program, [0])
    return program


@dataclass(frozen=True)
class _Context:
    scratch: dict
    persistent: dict
    kernels: str
    flags: dict = field(default_factory=dict)     # (subgraph, node) -> its StateFlag


def _plan_subgraph(it: Any, index: int, context: _Context, program: list, labels: list) -> None:
    sub = it.subgraphs[index]
    for node in sub.nodes:
        start = len(program)
        try:
            _plan_node(it, sub, node, context, program, labels)
        except PlanError as e:          # the node runs on the host, named (build_plan does the same)
            del program[start:]
            program.append(HostNode(node, str(e)))


def _plan_node(it: Any, sub: Any, node: Any, context: _Context, program: list, labels: list) -> None:
    if ops.copies_only(node.op_name):       # IF, WHILE, CALL_ONCE, resource variables
        plan_control(it, node, context, program, labels, _plan_subgraph)
        return
    tensors = {i: sub.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0}
    for t in tensors.values():
        require_placed(t, node)
    offsets = {i: t.offset for i, t in tensors.items() if t.offset is not None}
    key = (node.subgraph, node.index)
    program.append(PlanNode(node, tensors, offsets, context.scratch.get(key), context.persistent.get(key, ()),
                            context.kernels))


def refresh_blocks(plan: FirmwarePlan, entry_indices: Sequence[int],
                   resolve: Callable[[Reloc], int]) -> list[tuple[str, int, bytes]]:
    """The argument structs of these entries as their runners describe them now ((region,
    offset, bytes) at the plan's places, pointer words resolved), for kernels whose structs
    carry state kept on the host into the call (it may have changed since: a reset). Each node
    is described again at its own offsets, so the entries' `after` become the new calls' (which
    read the host objects as they are now)."""
    layout = _Layout(plan.core, _LAYOUT_A, plan.arena_misalign)
    by_node = {(pn.node.subgraph, pn.node.index): pn for pn in plan.nodes
               if isinstance(pn, PlanNode) and not isinstance(pn.node, CopyStep)}
    pointers = {region: dict(relocs) for region, relocs in (("plan", plan.plan_relocs),
                                                            ("state", plan.state_relocs))}
    wanted = set(entry_indices)
    out = []
    for key in dict.fromkeys((plan.entries[i].subgraph, plan.entries[i].node_index) for i in sorted(wanted)):
        indices = [j for j, e in enumerate(plan.entries) if (e.subgraph, e.node_index) == key and e.opcode == CALL]
        for region, area in (("plan", layout.area), ("state", layout.area.state)):
            offsets = [o for j in indices for r, o, _ in plan.entries[j].blocks if r == region]
            area.start_at(min(offsets) if offsets else 0)
        calls = _describe(layout, by_node[key])
        if len(calls) != len(indices):
            raise PlanError(f"op {key[1]}: its kernel calls changed")
        for j, call in zip(indices, calls):
            entry = plan.entries[j]
            if [(_LAYOUT_A[r] + o, n) for r, o, n in entry.blocks] != [(a, len(d)) for a, d in call.blocks]:
                raise PlanError(f"op {entry.node_index} {entry.op_name}: its argument structs changed")
            if j not in wanted:
                continue
            for (region, offset, n), (_, written) in zip(entry.blocks, call.blocks):
                data = bytearray(written)
                for k in range(0, n - 3, 4):
                    reloc = pointers[region].get(offset + k)
                    if reloc is not None:
                        data[k:k + 4] = struct.pack("<I", resolve(reloc) & 0xFFFFFFFF)
                out.append((region, offset, bytes(data)))
            entry.after = call.after
    return out


class AddressReader:
    """What an entry's `after` reads through: the emulator's memory at layout-A addresses (those
    the runners described with), mapped to where the plan's regions are."""

    def __init__(self, mcu: Any, resolve: Callable[[Reloc], int]):
        self._mcu, self._resolve = mcu, resolve

    def read(self, addr: int, n: int) -> bytes:
        for region, base in _LAYOUT_A.items():
            if region != "arena" and base <= addr < base + _REGION_SPAN:
                return self._mcu.read(self._resolve(Reloc(region, addr - base)), n)
        return self._mcu.read(addr, n)
