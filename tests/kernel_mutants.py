"""Seeded kernel-level mutants of the project's models (test_kernels_mutants.py): corrupt
quantization (zero, negative, infinite, NaN, huge or tiny scales; missing quantization; per-
channel arrays of the wrong length; out-of-range zero points; wrong quantized dimension),
odd shapes, absent inputs and forged operator options. Each mutant must load and run, or be refused with a
MicroRtError that is micro_rt's own: never a Python error the interpreter had to wrap.
"""
from __future__ import annotations

import random
from pathlib import Path
from typing import Optional

from micro_rt import schema
from micro_rt.builder import ModelBuilder
from micro_rt.model import read_model

ROOT = Path(__file__).resolve().parents[1]

BAD_SCALES = [0.0, -1.0, -0.5, float("inf"), float("-inf"), float("nan"), 1e-45, 1e-30, 1e30, 3e38]
BAD_ZERO_POINTS = [128, -129, 255, 300, -300, 32768, -32769, 2 ** 31 - 1, -(2 ** 31)]
BAD_INTS = [0, -1, -2, 2, 3, 7, 255, 32767, 32768, 40000, 65537, 2 ** 31 - 1, -(2 ** 31)]
BAD_FLOATS = [0.0, -1.0, float("nan"), float("inf"), float("-inf"), 1e30, -1e30, 1e-40]


def seed_models() -> dict[str, bytes]:
    seeds = {p.name: p.read_bytes() for p in sorted((ROOT / "models").glob("*.tflite"))}
    seeds.pop("custom_atan.tflite", None)      # its custom op has no kernel
    from devtools.fuzzing import builder_seeds
    seeds.update(builder_seeds())
    return seeds


def _quantized(b: ModelBuilder):
    return [t for t in b.tensors if t.scales]


def _pick_quantized(b: ModelBuilder, rng: random.Random):
    """A random quantized tensor spec, or None when the model has none."""
    ts = _quantized(b)
    return rng.choice(ts) if ts else None


def mutate_scale(b: ModelBuilder, rng: random.Random) -> bool:
    t = _pick_quantized(b, rng)
    if t is None:
        return False
    value = rng.choice(BAD_SCALES)
    if len(t.scales) > 1 and rng.random() < 0.5:
        t.scales = list(t.scales)
        t.scales[rng.randrange(len(t.scales))] = value
    else:
        t.scales = [value] * len(t.scales)
    return True


def drop_quantization(b: ModelBuilder, rng: random.Random) -> bool:
    ts = [t for t in b.tensors if t.scales or t.type_name in ("INT8", "INT16")]
    if not ts:
        return False
    t = rng.choice(ts)
    t.scales = t.zero_points = None
    return True


def per_channel_length(b: ModelBuilder, rng: random.Random) -> bool:
    t = _pick_quantized(b, rng)
    if t is None:
        return False
    n = max(1, len(t.scales) + rng.choice([-2, -1, 1, 2, 5])) if rng.random() < 0.7 else rng.choice([2, 3, 64])
    t.scales = (list(t.scales) * n)[:n]
    t.zero_points = [0] * n
    if rng.random() < 0.3:
        t.zero_points = [0] * max(1, n - 1)
    return True


def zero_point(b: ModelBuilder, rng: random.Random) -> bool:
    t = _pick_quantized(b, rng)
    if t is None:
        return False
    t.zero_points = [rng.choice(BAD_ZERO_POINTS)] * len(t.zero_points)
    return True


def quantized_dimension(b: ModelBuilder, rng: random.Random) -> bool:
    ts = [t for t in _quantized(b) if len(t.scales) > 1] or _quantized(b)
    if not ts:
        return False
    rng.choice(ts).quantized_dimension = rng.choice([-1, 1, 2, 3, 4, 9])
    return True


def odd_shape(b: ModelBuilder, rng: random.Random) -> bool:
    """A non-constant tensor with one dimension changed (constants keep their byte count)."""
    ts = [t for t in b.tensors if not t.buffer and t.shape]
    if not ts:
        return False
    t = rng.choice(ts)
    shape = list(t.shape)
    shape[rng.randrange(len(shape))] = rng.choice([1, 2, 3, 5, 7])
    if rng.random() < 0.2:
        shape = shape[1:] if len(shape) > 1 else shape + [1]
    t.shape = tuple(shape)
    return True


def _pick_op_with_options(b: ModelBuilder, rng: random.Random):
    ops = [op for op in b.operators if op.options_table]
    return rng.choice(ops) if ops else None


def forge_option(b: ModelBuilder, rng: random.Random) -> bool:
    op = _pick_op_with_options(b, rng)
    if op is None:
        return False
    fields = schema.OPTION_TABLES[schema.OPTION_TABLE_INDEX[op.options_table]][1]
    if not fields:
        return False
    options = dict(op.options or {})
    name, kind, _ = rng.choice(fields)
    if kind == "[int]":
        options[name] = [rng.choice(BAD_INTS + [0, 1, 2]) for _ in range(rng.randint(0, 5))]
    elif kind in schema.ENUM_KINDS:
        options[name] = rng.choice(schema.ENUM_KINDS[kind])
    elif kind == "bool":
        options[name] = not options.get(name, False)
    elif kind == "float":
        options[name] = rng.choice(BAD_FLOATS)
    elif kind == "byte":
        options[name] = rng.choice([0, 1, -1, 127, -128])
    else:
        options[name] = rng.choice(BAD_INTS)
    op.options = options
    return True


def wrong_options_table(b: ModelBuilder, rng: random.Random) -> bool:
    """An operator's builtin options written as another operator's table."""
    op = _pick_op_with_options(b, rng)
    if op is None:
        return False
    op.options_table = rng.choice(sorted(schema.OPTION_TABLE_INDEX))
    op.options = {}
    return True


def absent_input(b: ModelBuilder, rng: random.Random) -> bool:
    """An operator input replaced by -1 (absent), or dropped from the end of the list."""
    ops = [op for op in b.operators if len(op.inputs) > 1]
    if not ops:
        return False
    op = rng.choice(ops)
    if rng.random() < 0.7:
        op.inputs[rng.randrange(1, len(op.inputs))] = -1
    else:
        op.inputs = op.inputs[:-1]
    return True


MUTATORS = [absent_input, wrong_options_table, mutate_scale, mutate_scale, drop_quantization, per_channel_length, zero_point,
            quantized_dimension, odd_shape, forge_option, forge_option]


def make_mutant(seeds: dict[str, bytes], k: int, campaign: int = 0) -> tuple[str, str, Optional[bytes]]:
    """Mutant `k`: (seed name, mutator names, bytes or None when no mutator applied)."""
    rng = random.Random(campaign * 1_000_003 + k)
    name = rng.choice(sorted(seeds))
    b = ModelBuilder.from_model(read_model(seeds[name]))
    done = []
    for _ in range(1 if rng.random() < 0.8 else 2):
        mutator = rng.choice(MUTATORS)
        if mutator(b, rng):
            done.append(mutator.__name__)
    if not done:
        return name, "", None
    try:
        return name, "+".join(done), b.build()
    except Exception:          # the builder cannot write it (a value out of its field's range)
        return name, "+".join(done), None
