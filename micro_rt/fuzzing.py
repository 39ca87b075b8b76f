"""Model mutators for fuzzing micro_rt's loader and interpreter (issue 5: hostile input).

Every mutator takes the bytes of a valid .tflite model and a `random.Random`, and returns
the bytes of a mutant (or None when it does not apply to that model). Byte-level mutators
(bit flips, overwrites, truncation, forged offsets) break the flatbuffer; structural ones
edit the model through `ModelBuilder` (huge dimensions, swapped tensor indices, operator
cycles, forged constants, options, quantization) so the file stays well formed and the
damage reaches the checks behind the reader: dataflow, planner, kernels' prepare.

`check_mutant(data)` is the property: loading (and, when it loads, one invoke on zeros)
raises nothing but `MicroRtError` subclasses. Used by tests/test_fuzz.py and
benchmarks/fuzz_campaign.py.
"""
from __future__ import annotations

import random
import struct
from typing import Callable, Optional

import numpy as np

from . import schema
from .errors import MicroRtError

# Values that break code which trusts them: edges of signed/unsigned ranges, zero, -1.
INTERESTING_32 = (0, 1, 2, 3, 4, 7, 8, 15, 16, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF,
                  0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFF0)
INTERESTING_16 = (0, 1, 2, 3, 4, 6, 8, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0xFFFE)
INTERESTING_8 = (0, 1, 0x7F, 0x80, 0xFF, 0xFE, 0x10, 0x20)
HUGE_DIMS = (0, 2**31 - 1, 2**30, 2**24, 2**20, 65536, 65535, 4096, 1000003, 2, 7)
FORGED_INTS = (0, -1, 1, -2**31, 2**31 - 1, 2**30, -2**30, 65536, 1000, -1000, 2, 3, 4, 7, 8)


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


def forge_offset(data: bytes, rng: random.Random) -> bytes:
    """Overwrite an aligned 32-bit word (a uoffset, vector length, index, dim or soffset)."""
    if len(data) < 8:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(out) // 4) * 4
        choice = rng.random()
        if choice < 0.5:
            value = rng.choice(INTERESTING_32)
        elif choice < 0.75:             # a plausible offset to somewhere else in the file
            value = (rng.randrange(len(out)) - pos) & 0xFFFFFFFF
        else:
            value = rng.getrandbits(32)
        struct.pack_into("<I", out, pos, value)
    return bytes(out)


def forge_vtable_entry(data: bytes, rng: random.Random) -> bytes:
    """Overwrite an aligned 16-bit word (vtable sizes and field offsets are 16-bit)."""
    if len(data) < 4:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randrange(len(out) // 2) * 2
        struct.pack_into("<H", out, pos, rng.choice(INTERESTING_16))
    return bytes(out)


def splice(data: bytes, rng: random.Random) -> bytes:
    """Copy a chunk of the file over another place (valid-looking structures in wrong spots)."""
    n = rng.randint(4, 64)
    if len(data) <= n:
        return data
    src, dst = rng.randrange(len(data) - n), rng.randrange(len(data) - n)
    out = bytearray(data)
    out[dst:dst + n] = data[src:src + n]
    return bytes(out)


# ---- structural (through the builder) ------------------------------------------------
def _builder(data: bytes):
    from .builder import ModelBuilder
    from .model import read_model
    return ModelBuilder.from_model(read_model(data))


def _build(b) -> Optional[bytes]:
    try:
        return b.build()
    except Exception:      # the builder refused the edit (not the code under test)
        return None


def huge_dim(data: bytes, rng: random.Random) -> Optional[bytes]:
    b = _builder(data)
    t = rng.choice(b.tensors)
    shape = list(t.shape) or [1]
    shape[rng.randrange(len(shape))] = rng.choice(HUGE_DIMS)
    t.shape = tuple(shape)
    return _build(b)


def reshape_tensor(data: bytes, rng: random.Random) -> Optional[bytes]:
    """Change a tensor's rank or dims to small wrong values (kernels' shape checks)."""
    b = _builder(data)
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
    return _build(b)


def retype_tensor(data: bytes, rng: random.Random) -> Optional[bytes]:
    b = _builder(data)
    t = rng.choice(b.tensors)
    t.type_name = rng.choice(schema.TENSOR_TYPES)
    return _build(b)


def swap_tensor_indices(data: bytes, rng: random.Random) -> Optional[bytes]:
    b = _builder(data)
    if not b.operators:
        return None
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
    return _build(b)


def operator_cycle(data: bytes, rng: random.Random) -> Optional[bytes]:
    """Make an operator read a later operator's output, reorder operators, or add a second writer."""
    b = _builder(data)
    ops = b.operators
    if len(ops) < 1:
        return None
    choice = rng.random()
    if choice < 0.4 and len(ops) >= 1:
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
    return _build(b)


def forge_constant(data: bytes, rng: random.Random) -> Optional[bytes]:
    """Overwrite values in a constant (shape, perm, paddings, begin/end, axis, bias, weights)."""
    b = _builder(data)
    consts = [t for t in b.tensors if t.buffer and b.buffers[t.buffer]]
    if not consts:
        return None
    ints = [t for t in consts if t.type_name in ("INT32", "INT64")]
    t = rng.choice(ints) if ints and rng.random() < 0.7 else rng.choice(consts)
    raw = bytearray(b.buffers[t.buffer])
    if t.type_name in ("INT32", "INT64") and len(raw) >= 4:
        size = 4 if t.type_name == "INT32" else 8
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(raw) // size)
            value = rng.choice(FORGED_INTS)
            raw[k * size:(k + 1) * size] = value.to_bytes(size, "little", signed=True)
    elif rng.random() < 0.3:
        raw = raw[:rng.randrange(len(raw) + 1)] + bytes(rng.randint(0, 8))   # wrong length
    else:
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        if t.type_name == "FLOAT32" and len(raw) >= 4 and rng.random() < 0.5:
            k = rng.randrange(len(raw) // 4)
            raw[4 * k:4 * k + 4] = struct.pack("<f", rng.choice([float("nan"), float("inf"),
                                                                  -float("inf"), 3e38, 0.0]))
    b.buffers[t.buffer] = bytes(raw)
    return _build(b)


def forge_options(data: bytes, rng: random.Random) -> Optional[bytes]:
    b = _builder(data)
    ops = [op for op in b.operators if op.options_table]
    if not ops:
        return None
    op = rng.choice(ops)
    index = schema.OPTION_TABLE_INDEX[op.options_table]
    fields = schema.OPTION_TABLES[index][1]
    if rng.random() < 0.2:                          # the wrong table for the op
        op.options_table = rng.choice(list(schema.OPTION_TABLE_INDEX))
        op.options = {}
        return _build(b)
    if not fields:
        return None
    options = dict(op.options or {})
    name, kind, _ = rng.choice(fields)
    if kind == "[int]":
        options[name] = [rng.choice(FORGED_INTS) for _ in range(rng.randint(0, 6))]
    elif kind in schema.ENUM_KINDS:
        options[name] = rng.choice(schema.ENUM_KINDS[kind])
    elif kind == "bool":
        options[name] = not options.get(name, False)
    elif kind == "float":
        options[name] = rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e30])
    elif kind == "byte":
        options[name] = rng.choice([0, 1, -1, 127, -128])
    else:
        options[name] = rng.choice(FORGED_INTS)
    op.options = options
    return _build(b)


def forge_quantization(data: bytes, rng: random.Random) -> Optional[bytes]:
    b = _builder(data)
    quantized = [t for t in b.tensors if t.scales]
    t = rng.choice(quantized or b.tensors)
    choice = rng.random()
    if choice < 0.25 or not t.scales:
        n = rng.choice([1, 2, 3, 8, 16, 1000])
        t.scales, t.zero_points = [0.1] * n, [0] * n
    elif choice < 0.45:
        t.quantized_dimension = rng.choice([-1, 0, 1, 2, 3, 7, 8, 100])
    elif choice < 0.7:
        t.scales = [rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e-45, 1e38])] * len(t.scales)
    elif choice < 0.85:
        t.zero_points = [rng.choice([2**31, -2**40, 300, -300, 2**62])] * len(t.zero_points)
    else:
        t.zero_points = t.zero_points[:-1] + [0, 0]
    return _build(b)


def forge_io(data: bytes, rng: random.Random) -> Optional[bytes]:
    """Subgraph inputs/outputs: out of range, duplicated, constants, empty, intermediate."""
    b = _builder(data)
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
    return _build(b)


def forge_opcode(data: bytes, rng: random.Random) -> Optional[bytes]:
    from .builder import OpcodeSpec
    b = _builder(data)
    if not b.opcodes:
        return None
    i = rng.randrange(len(b.opcodes))
    c = b.opcodes[i]
    choice = rng.random()
    if choice < 0.5:
        code = rng.choice([rng.randrange(len(schema.BUILTIN_OPS)), 200, 127, 1000])
        b.opcodes[i] = OpcodeSpec(code, None, c.version)
    elif choice < 0.8:
        b.opcodes[i] = OpcodeSpec(c.builtin_code, c.custom_code, rng.choice([0, -1, 2, 3, 99]))
    else:
        op = rng.choice(b.operators) if b.operators else None
        if op is not None:
            op.opcode_index = rng.choice([len(b.opcodes), 2**31 - 1, rng.randrange(len(b.opcodes))])
    return _build(b)


def forge_offline_plan(data: bytes, rng: random.Random) -> Optional[bytes]:
    b = _builder(data)
    n = len(b.tensors)
    count = n if rng.random() < 0.7 else rng.choice([0, n + 1, 2**31 - 1])
    values = [rng.choice([-1, 0, 16, 2**30, 2**31 - 16, 48, 7]) for _ in range(min(count, n + 1))]
    raw = np.array([1, 1, count] + values, "<i4").tobytes()
    if rng.random() < 0.2:
        raw = raw[:rng.randrange(len(raw))]
    b.metadata = [m for m in b.metadata if m[0] != "OfflineMemoryAllocation"]
    b.add_metadata("OfflineMemoryAllocation", raw)
    return _build(b)


BYTE_MUTATORS: dict[str, Callable] = {
    "bit_flips": bit_flips, "byte_overwrite": byte_overwrite, "truncate": truncate,
    "forge_offset": forge_offset, "forge_vtable_entry": forge_vtable_entry, "splice": splice,
}
STRUCT_MUTATORS: dict[str, Callable] = {
    "huge_dim": huge_dim, "reshape_tensor": reshape_tensor, "retype_tensor": retype_tensor,
    "swap_tensor_indices": swap_tensor_indices, "operator_cycle": operator_cycle,
    "forge_constant": forge_constant, "forge_options": forge_options,
    "forge_quantization": forge_quantization, "forge_io": forge_io,
    "forge_opcode": forge_opcode, "forge_offline_plan": forge_offline_plan,
}
MUTATORS: dict[str, Callable] = {**BYTE_MUTATORS, **STRUCT_MUTATORS}


def mutate(data: bytes, rng: random.Random, name: Optional[str] = None) -> tuple[str, bytes]:
    """Apply one mutator (`name`, or a random one; structural ones fall back to byte level)."""
    name = name or rng.choice(sorted(MUTATORS))
    result = MUTATORS[name](data, rng)
    if result is None:
        name = rng.choice(sorted(BYTE_MUTATORS))
        result = BYTE_MUTATORS[name](data, rng)
    return name, result


# ---- seeds ----------------------------------------------------------------------------
def builder_seeds() -> dict[str, bytes]:
    """Small models whose ops read parameters from constant tensors (the prepare paths
    that index with model data), plus a float and an int8 chain."""
    from .builder import ModelBuilder
    seeds = {}

    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4, 4, 2], "FLOAT32")
    shape = b.add_tensor("shape", [2], "INT32", data=np.array([4, 8]))
    r = b.add_tensor("r", [4, 8], "FLOAT32")
    perm = b.add_tensor("perm", [2], "INT32", data=np.array([1, 0]))
    t = b.add_tensor("t", [8, 4], "FLOAT32")
    pads = b.add_tensor("pads", [2, 2], "INT32", data=np.array([[1, 0], [0, 2]]))
    p = b.add_tensor("p", [9, 6], "FLOAT32")
    begin = b.add_tensor("begin", [2], "INT32", data=np.array([1, 0]))
    end = b.add_tensor("end", [2], "INT32", data=np.array([8, 6]))
    strides = b.add_tensor("strides", [2], "INT32", data=np.array([2, 3]))
    s = b.add_tensor("s", [4, 2], "FLOAT32")
    axis = b.add_tensor("axis", [1], "INT32", data=np.array([1]))
    m = b.add_tensor("m", [4, 1], "FLOAT32")
    b.add_operator("RESHAPE", [x, shape], [r], options={"new_shape": [4, 8]})
    b.add_operator("TRANSPOSE", [r, perm], [t])
    b.add_operator("PAD", [t, pads], [p])
    b.add_operator("STRIDED_SLICE", [p, begin, end, strides], [s])
    b.add_operator("MEAN", [s, axis], [m], options={"keep_dims": True})
    b.inputs, b.outputs = [x], [m]
    seeds["builder_shape_ops_f32"] = b.build()

    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "INT8", scale=0.5, zero_point=-1)
    w = b.add_tensor("w", [3, 4], "INT8", data=np.arange(12).reshape(3, 4), scale=[0.1, 0.2, 0.3],
                     zero_point=0, quantized_dimension=0)
    bias = b.add_tensor("b", [3], "INT32", data=np.array([1, 2, 3]), scale=[0.05, 0.1, 0.15])
    y = b.add_tensor("y", [1, 3], "INT8", scale=0.25, zero_point=2)
    z = b.add_tensor("z", [1, 3], "INT8", scale=0.25, zero_point=2)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y], version=4,
                   options={"fused_activation_function": "RELU", "keep_num_dims": True})
    b.add_operator("RELU", [y], [z])
    b.inputs, b.outputs = [x], [z]
    seeds["builder_fc_int8"] = b.build()
    return seeds


# ---- the property ---------------------------------------------------------------------
def zeros_for(details: dict) -> Optional[np.ndarray]:
    if details["dtype"] is None:
        return None
    return np.zeros(tuple(int(d) for d in details["shape"]), details["dtype"])


def run_mutant(data: bytes) -> tuple[str, Optional[MicroRtError]]:
    """Load `data` and, when it loads, invoke once on zeros. Returns ("loaded", None),
    ("rejected", error) or ("invoke-error", error); anything not a MicroRtError propagates."""
    from .interpreter import Interpreter
    try:
        it = Interpreter.from_bytes(data)
    except MicroRtError as e:
        return "rejected", e
    try:
        for i in range(it.num_inputs):
            value = zeros_for(it.get_input_details(i))
            if value is not None:
                it.set_input(value, i)
        it.invoke()
        for i in range(it.num_outputs):
            it.get_output(i)
    except MicroRtError as e:
        return "invoke-error", e
    return "loaded", None


def check_mutant(data: bytes) -> str:
    """`run_mutant` as one string: "loaded", "rejected: <ErrorClass>", "invoke-error: ..."."""
    status, error = run_mutant(data)
    return status if error is None else f"{status}: {type(error).__name__}"


def wrapped_cause(error: Optional[BaseException]) -> Optional[str]:
    """For a KernelError the interpreter made from a foreign exception inside a kernel, the
    exception's type and where it was raised (a kernel check that should have caught it)."""
    import traceback
    cause = getattr(error, "__cause__", None)
    if cause is None or isinstance(cause, MicroRtError):
        return None
    frames = traceback.extract_tb(cause.__traceback__)
    where = f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
    return f"{type(cause).__name__} at {where}"


def seed_models(root, shared=None, max_bytes: int = 1 << 20) -> dict[str, bytes]:
    """The seeds: models/*.tflite, the builder-made ones and, when given and present, the
    shared TFLM models up to `max_bytes`."""
    from pathlib import Path
    seeds = {f"models/{p.name}": p.read_bytes() for p in sorted(Path(root, "models").glob("*.tflite"))}
    if shared is not None and Path(shared).is_dir():
        for p in sorted(Path(shared).glob("*.tflite")):
            if p.stat().st_size <= max_bytes:
                seeds[f"shared/{p.name}"] = p.read_bytes()
    seeds.update(builder_seeds())
    return seeds


def make_mutant(seeds: dict[str, bytes], campaign_seed: int, k: int) -> tuple[str, str, bytes]:
    """Mutant number `k` of a campaign: (seed name, mutator name, bytes), reproducible."""
    rng = random.Random(campaign_seed * 1_000_003 + k)
    seed = rng.choice(sorted(seeds))
    mutator, data = mutate(seeds[seed], rng)
    if rng.random() < 0.15:                        # a second mutation on top, now and then
        mutator2, data2 = mutate(data, rng, rng.choice(sorted(BYTE_MUTATORS)))
        mutator, data = f"{mutator}+{mutator2}", data2
    return seed, mutator, data
