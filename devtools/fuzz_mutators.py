"""Mutators for fuzzing micro_rt (issue 5): byte-level ones and schema-level ones.

Byte mutators take the bytes of a .tflite model and a `random.Random` and return new bytes
(bit flips, overwrites, truncation, forged offsets/vtable entries, splices): they break the
flatbuffer and reach the reader's checks.

Schema mutators work on the model decoded by micro_rt's own reader into an editable form
(`ModelBuilder.from_model`), change one thing the schema allows to be anything, and return
True when they applied; the builder re-encodes the result, so the file stays well formed
and the damage reaches the checks behind the reader: dataflow, planner, kernels' prepare
and invoke, the virtual MCU. They cover shapes, types, scales, zero points, per-channel
arrays, option values at their extremes, options tables of the wrong type or missing,
opcodes, custom options, dataflow cycles, control flow whose subgraph indices point at the
model's own subgraph or out of range, offline memory plans, and buffer offsets and sizes.
"""
from __future__ import annotations

import random
import struct
from typing import Callable

import numpy as np

from micro_rt import schema
from micro_rt.builder import ModelBuilder, OpcodeSpec

# Values that break code which trusts them: edges of signed/unsigned ranges, zero, -1.
INTERESTING_32 = (0, 1, 2, 3, 4, 7, 8, 15, 16, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF,
                  0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFF0)
INTERESTING_16 = (0, 1, 2, 3, 4, 6, 8, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0xFFFE)
INTERESTING_8 = (0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x10, 0x20)
HUGE_DIMS = (0, 2**31 - 1, 2**30, 2**24, 2**20, 65536, 65535, 4096, 1000003, 2, 7)
FORGED_INTS = (0, -1, 1, -2**31, 2**31 - 1, 2**30, -2**30, 65536, 1000, -1000, 2, 3, 4, 7, 8)
EXTREME_FLOATS = (0.0, -0.0, 1e-45, 1e-38, -1.0, 1e30, 3.4e38, -3.4e38, float("nan"),
                  float("inf"), -float("inf"))
# Scales the reader accepts (finite, >= 0) that still push multipliers and shifts to their ends.
EXTREME_SCALES = (0.0, 1e-45, 1e-38, 1e-20, 1e-10, 1e-3, 1.0, 1e10, 1e20, 1e38, 3.4e38)
ZERO_POINT_EDGES = {"INT8": (-128, 127, -1, 0), "UINT8": (0, 255), "INT16": (-32768, 32767, 0),
                    "INT32": (-2**31, 2**31 - 1, 0), "INT4": (-8, 7)}


# ---- byte level ---------------------------------------------------------------------
def bit_flips(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        pos = rng.randrange(len(out))
        out[pos] ^= 1 << rng.randrange(8)
    return bytes(out)


def byte_overwrite(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(out))
        n = rng.randint(1, 16)
        for i in range(pos, min(pos + n, len(out))):
            out[i] = rng.choice(INTERESTING_8) if rng.random() < 0.5 else rng.randrange(256)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    cut = rng.choice([rng.randrange(len(data)), rng.randrange(min(64, len(data))),
                      len(data) - rng.randint(1, min(256, len(data)))])
    return data[:cut]


def _overwrite_words(data: bytes, rng: random.Random, fmt: str,
                     value: Callable[[random.Random, int, int], int]) -> bytes:
    """Overwrite 1-3 aligned words of struct format `fmt` with `value(rng, file size, pos)`;
    a file shorter than two words is left alone."""
    width = struct.calcsize(fmt)
    if len(data) < 2 * width:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(out) // width) * width
        struct.pack_into(fmt, out, pos, value(rng, len(out), pos))
    return bytes(out)


def _offset_value(rng: random.Random, size: int, pos: int) -> int:
    choice = rng.random()
    if choice < 0.5:
        return rng.choice(INTERESTING_32)
    if choice < 0.75:                   # a plausible offset to somewhere else in the file
        return (rng.randrange(size) - pos) & 0xFFFFFFFF
    return rng.getrandbits(32)


def forge_offset(data: bytes, rng: random.Random) -> bytes:
    """Overwrite an aligned 32-bit word (a uoffset, vector length, index, dim or soffset)."""
    return _overwrite_words(data, rng, "<I", _offset_value)


def forge_vtable_entry(data: bytes, rng: random.Random) -> bytes:
    """Overwrite an aligned 16-bit word (vtable sizes and field offsets are 16-bit)."""
    return _overwrite_words(data, rng, "<H", lambda rng, size, pos: rng.choice(INTERESTING_16))


def splice(data: bytes, rng: random.Random) -> bytes:
    """Copy a chunk of the file over another place (valid-looking structures in wrong spots)."""
    n = rng.randint(4, 64)
    if len(data) <= n:
        return data
    src, dst = rng.randrange(len(data) - n), rng.randrange(len(data) - n)
    out = bytearray(data)
    out[dst:dst + n] = data[src:src + n]
    return bytes(out)


# ---- schema level: tensors -----------------------------------------------------------
def huge_dim(b: ModelBuilder, rng: random.Random) -> bool:
    t = rng.choice(b.tensors)
    shape = list(t.shape) or [1]
    shape[rng.randrange(len(shape))] = rng.choice(HUGE_DIMS)
    t.shape = tuple(shape)
    return True


def reshape_tensor(b: ModelBuilder, rng: random.Random) -> bool:
    """Change a tensor's rank or dims to small wrong values (kernels' shape checks)."""
    t = rng.choice(b.tensors)
    choice = rng.random()
    if choice < 0.3:
        t.shape = t.shape[:-1]
    elif choice < 0.5:
        t.shape = tuple(t.shape) + (rng.randint(1, 3),)
    elif choice < 0.6:
        t.shape = tuple(rng.randint(0, 4) for _ in range(rng.randint(0, 9)))
    elif t.shape:
        shape = list(t.shape)
        i = rng.randrange(len(shape))
        shape[i] = max(0, shape[i] + rng.choice((-1, 1, 2, -2)))
        t.shape = tuple(shape)
    return True


def retype_tensor(b: ModelBuilder, rng: random.Random) -> bool:
    t = rng.choice(b.tensors)
    t.type_name = rng.choice(schema.TENSOR_TYPES)
    return True


def _quantized(b: ModelBuilder, rng: random.Random):
    quantized = [t for t in b.tensors if t.scales]
    return rng.choice(quantized) if quantized else None


def forge_scales(b: ModelBuilder, rng: random.Random) -> bool:
    """Scales at the ends of the float range (one, some or all channels): multipliers and
    shifts computed from them overflow or vanish."""
    t = _quantized(b, rng)
    if t is None:
        return False
    scales = list(t.scales)
    if rng.random() < 0.5:
        scales = [rng.choice(EXTREME_SCALES)] * len(scales)
    else:
        for _ in range(rng.randint(1, len(scales))):
            scales[rng.randrange(len(scales))] = rng.choice(EXTREME_SCALES)
    if rng.random() < 0.05:             # invalid ones too: the reader must name them
        scales[0] = rng.choice([float("nan"), float("inf"), -1.0])
    t.scales = scales
    return True


def forge_zero_points(b: ModelBuilder, rng: random.Random) -> bool:
    t = _quantized(b, rng)
    if t is None:
        return False
    edges = ZERO_POINT_EDGES.get(t.type_name, (0, -1, 2**31 - 1))
    if rng.random() < 0.1:
        edges = (2**31, -2**40, 300, -300, 2**62)          # out of range: refused by the reader
    zps = list(t.zero_points or [0] * len(t.scales))
    for _ in range(rng.randint(1, len(zps))):
        zps[rng.randrange(len(zps))] = rng.choice(edges)
    t.zero_points = zps
    return True


def forge_per_channel(b: ModelBuilder, rng: random.Random) -> bool:
    """Per-channel arrays of the wrong length or dimension, or where none belong."""
    t = rng.choice(b.tensors)
    choice = rng.random()
    if choice < 0.3 or not t.scales:
        dim = rng.randrange(len(t.shape)) if t.shape else 0
        n = t.shape[dim] if t.shape and rng.random() < 0.7 else rng.choice([1, 2, 3, 8, 16, 1000])
        t.scales, t.zero_points = [rng.choice((0.1, 0.02, 1.0))] * n, [0] * n
        t.quantized_dimension = dim
    elif choice < 0.5:
        t.quantized_dimension = rng.choice([0, 1, 2, 3, 7, 8, 100, -1])
    elif choice < 0.7:
        n = len(t.scales) + rng.choice([-1, 1, 2])
        t.scales, t.zero_points = (list(t.scales) * 2)[:max(n, 1)], (list(t.zero_points) * 2)[:max(n, 1)]
    elif choice < 0.85:                 # per-tensor again: one scale for every channel
        t.scales, t.zero_points = t.scales[:1], t.zero_points[:1]
    else:
        t.zero_points = list(t.zero_points[:-1]) + [0, 0]
    return True


def forge_constant(b: ModelBuilder, rng: random.Random) -> bool:
    """Overwrite values in a constant (shape, perm, paddings, begin/end, axis, bias, weights)."""
    consts = [t for t in b.tensors if t.buffer and b.buffers[t.buffer]]
    if not consts:
        return False
    ints = [t for t in consts if t.type_name in ("INT32", "INT64")]
    t = rng.choice(ints) if ints and rng.random() < 0.7 else rng.choice(consts)
    raw = bytearray(b.buffers[t.buffer])
    if t.type_name in ("INT32", "INT64") and len(raw) >= 4:
        size = 4 if t.type_name == "INT32" else 8
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(raw) // size)
            value = rng.choice(FORGED_INTS + ((2**62, -2**62, 2**40) if size == 8 else ()))
            raw[k * size:(k + 1) * size] = value.to_bytes(size, "little", signed=True)
    elif rng.random() < 0.3:
        raw = raw[:rng.randrange(len(raw) + 1)] + bytes(rng.randint(0, 8))   # wrong length
    else:
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        if t.type_name == "FLOAT32" and len(raw) >= 4 and rng.random() < 0.5:
            k = rng.randrange(len(raw) // 4)
            raw[4 * k:4 * k + 4] = struct.pack("<f", rng.choice(EXTREME_FLOATS))
    b.buffers[t.buffer] = bytes(raw)
    return True


def forge_buffer_location(b: ModelBuilder, rng: random.Random) -> bool:
    """A buffer in the large-model form (offset, size into the file) with forged numbers:
    into the flatbuffer itself, past the end, huge, zero."""
    used = sorted({t.buffer for t in b.tensors if t.buffer}) or [rng.randrange(len(b.buffers))]
    index = rng.choice(used)
    size = len(b.buffers[index]) or rng.choice([1, 4, 16])
    offset = rng.choice([2, 8, 16, 64, 256, 4096, 2**20, 2**31, 2**63, 2**64 - 1])
    size = rng.choice([size, size, 0, size + 1, 2**32, 2**63])
    if rng.random() < 0.8:
        b.buffers[index] = b""          # else inline data wins, the location is only read
    b.buffer_locations[index] = (offset, size)
    return True


# ---- schema level: operators ---------------------------------------------------------
def swap_tensor_indices(b: ModelBuilder, rng: random.Random) -> bool:
    if not b.operators:
        return False
    n = len(b.tensors)
    for _ in range(rng.randint(1, 3)):
        op = rng.choice(b.operators)
        lists = [op.inputs, op.outputs] + ([op.intermediates] if op.intermediates else [])
        target = rng.choice([lst for lst in lists if lst] or [op.inputs])
        choice = rng.random()
        if choice < 0.4 and target:
            other = rng.choice(b.operators)
            src = rng.choice([lst for lst in (other.inputs, other.outputs) if lst] or [[0]])
            target[rng.randrange(len(target))] = rng.choice(src)
        elif choice < 0.7 and len(target) > 1:
            i, j = rng.sample(range(len(target)), 2)
            target[i], target[j] = target[j], target[i]
        elif choice < 0.85 and target:
            target[rng.randrange(len(target))] = rng.choice([-1, n, n + 5, -2, 2**31 - 1,
                                                             rng.randrange(n)])
        elif choice < 0.93 and target:
            del target[rng.randrange(len(target))]
        else:
            target.append(rng.randrange(-1, n))
    return True


def operator_cycle(b: ModelBuilder, rng: random.Random) -> bool:
    """Make an operator read a later operator's (or its own) output, reorder operators, or add
    a second writer."""
    ops = b.operators
    if not ops:
        return False
    choice = rng.random()
    if choice < 0.4:
        i = rng.randrange(len(ops))
        j = rng.randrange(i, len(ops))
        if ops[j].outputs and ops[i].inputs:
            ops[i].inputs[rng.randrange(len(ops[i].inputs))] = rng.choice(ops[j].outputs)
    elif choice < 0.6:
        rng.shuffle(ops)
    elif choice < 0.75:
        ops.reverse()
    else:
        i, j = rng.randrange(len(ops)), rng.randrange(len(ops))
        if ops[i].outputs and ops[j].outputs:
            ops[j].outputs[rng.randrange(len(ops[j].outputs))] = rng.choice(ops[i].outputs)
    return True


def _extreme(kind: str, rng: random.Random):
    if kind == "[int]":
        return [rng.choice(FORGED_INTS) for _ in range(rng.randint(0, 9))]
    if kind in schema.ENUM_KINDS:
        return rng.choice(schema.ENUM_KINDS[kind])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "float":
        return rng.choice(EXTREME_FLOATS)
    if kind == "byte":
        return rng.choice([0, 1, -1, 127, -128])
    if kind == "uint":
        return rng.choice([0, 1, 2**31 - 1, 2**32 - 1])
    return rng.choice(FORGED_INTS)


def forge_options(b: ModelBuilder, rng: random.Random) -> bool:
    """One option, or all of them, at extreme values; now and then the wrong table."""
    ops = [op for op in b.operators if op.options_table]
    if not ops:
        return False
    op = rng.choice(ops)
    if rng.random() < 0.15:                          # the wrong table for the op
        op.options_table = rng.choice(list(schema.OPTION_TABLE_INDEX))
        op.options = {}
        return True
    fields = schema.OPTION_TABLES[schema.OPTION_TABLE_INDEX[op.options_table]][1]
    if not fields:
        return False
    options = dict(op.options or {})
    chosen = fields if rng.random() < 0.3 else [rng.choice(fields)]
    for name, kind, _ in chosen:
        options[name] = _extreme(kind, rng)
    op.options = options
    return True


def drop_options_table(b: ModelBuilder, rng: random.Random) -> bool:
    """The options type is set but the options table is absent."""
    ops = [op for op in b.operators if op.options_table]
    if not ops:
        return False
    rng.choice(ops).omit_options_table = True
    return True


def _supported_builtins() -> list[str]:
    from micro_rt.resolver import builtin_op_resolver
    resolver = builtin_op_resolver()
    return [name for name in schema.BUILTIN_OPS if resolver.supports(name, False)]


def forge_opcode(b: ModelBuilder, rng: random.Random) -> bool:
    """Operator codes: another builtin micro_rt runs (with that op's options), an unknown
    code, a forged version, or an opcode index out of range."""
    if not b.opcodes or not b.operators:
        return False
    choice = rng.random()
    if choice < 0.45:
        op = rng.choice(b.operators)
        name = rng.choice(_supported_builtins())
        op.opcode_index = b.opcode(name, rng.choice([1, 1, 2, 3]))
        op.options_table = schema.OP_OPTIONS.get(name)
        fields = schema.OPTION_TABLES[schema.OPTION_TABLE_INDEX[op.options_table]][1] if op.options_table else []
        op.options = {n: _extreme(k, rng) for n, k, _ in fields if rng.random() < 0.3}
        op.omit_options_table = False
        return True
    i = rng.randrange(len(b.opcodes))
    c = b.opcodes[i]
    if choice < 0.7:
        code = rng.choice([rng.randrange(len(schema.BUILTIN_OPS)), 200, 127, 1000])
        b.opcodes[i] = OpcodeSpec(code, None, c.version)
    elif choice < 0.9:
        b.opcodes[i] = OpcodeSpec(c.builtin_code, c.custom_code, rng.choice([0, -1, 2, 3, 99]))
    else:
        rng.choice(b.operators).opcode_index = rng.choice([len(b.opcodes), 2**31 - 1])
    return True


def forge_custom_options(b: ModelBuilder, rng: random.Random) -> bool:
    """Custom options: garbage, truncated, empty or large bytes, on a custom operator or on
    a builtin turned into a custom one."""
    if not b.operators:
        return False
    op = rng.choice(b.operators)
    if rng.random() < 0.4:
        name = rng.choice(["ATAN", "SignalWindow", "TFLite_Detection_PostProcess", "", "CONV_2D"])
        op.opcode_index = b.opcode(name, 1, custom=True)
        op.options_table, op.options = None, None
    choice = rng.random()
    if choice < 0.3 and op.custom_options:
        op.custom_options = op.custom_options[:rng.randrange(len(op.custom_options))]
    elif choice < 0.5:
        op.custom_options = b""
    elif choice < 0.6:
        op.custom_options = bytes(rng.randrange(256) for _ in range(rng.choice([1 << 12, 1 << 16])))
    else:
        op.custom_options = bytes(rng.choice(INTERESTING_8 + (rng.randrange(256),))
                                  for _ in range(rng.randint(1, 64)))
    return True


def control_flow(b: ModelBuilder, rng: random.Random) -> bool:
    """An IF / WHILE / CALL_ONCE whose subgraph indices point at the model's own (only)
    subgraph, past the last one, or below zero; replacing an operator or added anywhere."""
    kind = rng.choice(["IF", "WHILE", "CALL_ONCE"])
    pick = lambda: rng.choice([0, 0, 1, 2, -1, 2**31 - 1])  # noqa: E731
    options = {"IF": lambda: {"then_subgraph_index": pick(), "else_subgraph_index": pick()},
               "WHILE": lambda: {"cond_subgraph_index": pick(), "body_subgraph_index": pick()},
               "CALL_ONCE": lambda: {"init_subgraph_index": pick()}}[kind]()
    if b.operators and rng.random() < 0.5:
        op = rng.choice(b.operators)
        op.opcode_index = b.opcode(kind)
        op.options_table, op.options, op.omit_options_table = schema.OP_OPTIONS[kind], options, False
        return True
    inputs = [rng.randrange(len(b.tensors))] if kind != "CALL_ONCE" and b.tensors else []
    out = b.add_tensor(f"{kind.lower()}_out", rng.choice([(1,), (1, 8)]), rng.choice(["BOOL", "INT8", "FLOAT32"]))
    b.add_operator(kind, inputs, [] if kind == "CALL_ONCE" else [out], options=options)
    b.operators.insert(rng.randrange(len(b.operators)), b.operators.pop())
    return True


# ---- schema level: the model -----------------------------------------------------------
def forge_io(b: ModelBuilder, rng: random.Random) -> bool:
    """Subgraph inputs/outputs: out of range, duplicated, constants, empty, intermediate."""
    n = len(b.tensors)
    target = b.inputs if rng.random() < 0.5 else b.outputs
    choice = rng.random()
    if choice < 0.3 and target:
        target[rng.randrange(len(target))] = rng.choice([-1, n, 2**31 - 1, rng.randrange(n)])
    elif choice < 0.5:
        target.append(rng.randrange(n))
    elif choice < 0.7:
        target.clear()
    elif target:
        target.append(target[0])
    return True


def forge_offline_plan(b: ModelBuilder, rng: random.Random) -> bool:
    n = len(b.tensors)
    count = n if rng.random() < 0.7 else rng.choice([0, n + 1, 2**31 - 1])
    values = [rng.choice([-1, 0, 16, 2**30, 2**31 - 16, 48, 7]) for _ in range(min(count, n + 1))]
    raw = np.array([1, 1, count] + values, "<i4").tobytes()
    if rng.random() < 0.2:
        raw = raw[:rng.randrange(len(raw))]
    b.metadata = [m for m in b.metadata if m[0] != "OfflineMemoryAllocation"]
    b.add_metadata("OfflineMemoryAllocation", raw)
    return True


BYTE_MUTATORS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "bit_flips": bit_flips, "byte_overwrite": byte_overwrite, "truncate": truncate,
    "forge_offset": forge_offset, "forge_vtable_entry": forge_vtable_entry, "splice": splice,
}
STRUCT_MUTATORS: dict[str, Callable[[ModelBuilder, random.Random], bool]] = {
    "huge_dim": huge_dim, "reshape_tensor": reshape_tensor, "retype_tensor": retype_tensor,
    "forge_scales": forge_scales, "forge_zero_points": forge_zero_points,
    "forge_per_channel": forge_per_channel, "forge_constant": forge_constant,
    "forge_buffer_location": forge_buffer_location, "swap_tensor_indices": swap_tensor_indices,
    "operator_cycle": operator_cycle, "forge_options": forge_options,
    "drop_options_table": drop_options_table, "forge_opcode": forge_opcode,
    "forge_custom_options": forge_custom_options, "control_flow": control_flow,
    "forge_io": forge_io, "forge_offline_plan": forge_offline_plan,
}
MUTATORS: dict[str, Callable] = {**BYTE_MUTATORS, **STRUCT_MUTATORS}
