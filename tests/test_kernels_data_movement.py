"""Issue 12's data-movement family against the tflite-micro oracle: DEPTH_TO_SPACE,
SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND (kernels/space_depth.py), SLICE,
REVERSE_V2, SPLIT, SPLIT_V, UNPACK, DYNAMIC_UPDATE_SLICE (slicing.py), GATHER, GATHER_ND,
EMBEDDING_LOOKUP (gather.py), FILL, BROADCAST_TO, BROADCAST_ARGS, MIRROR_PAD (broadcast.py).

Each single-op case runs on 20 seeded inputs plus one of edge values (every int8 value, the
type's min / max and zero point; float32 NaN, infinities, -0.0 and denormals, whose bits a copy
must keep), bit for bit. Index inputs (positions, ids, start indices) get values in range
(TFLM reads out of bounds otherwise); the invoke-time refusals are tested on their own. The
oracle's arena is 64 MiB, so it is freshly mapped, zeroed memory: SPACE_TO_BATCH_ND pads with
a persistent byte nothing fills, 0 in a fresh arena (a reused heap block can hold anything).
Also: the op data, dims copies and scratch each kernel allocates, and head and tail equal to
the oracle's, multi-output operators included.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernel_cases import (assert_bits_equal, f32, i32, kernel_persistent, q8, q16, random_input, scratch_sizes,
                          single_op, space_to_batch_data_positions)
from micro_rt import Interpreter
from micro_rt.arena import align_up
from micro_rt.builder import ModelBuilder
from micro_rt.errors import KernelError
from micro_rt.model import read_model

FRESH_ARENA = 64 << 20          # above glibc's largest mmap threshold: always fresh zero pages
SEEDS = 20


def i64(shape, **kw) -> dict:
    return dict(shape=shape, type="INT64", **kw)


def typed(typ: str):
    """A spec maker for a data type (quantized types get a scale and zero point)."""
    makers = {"f32": f32, "i8": lambda s, **kw: q8(s, 0.05, -3, **kw), "i16": lambda s, **kw: q16(s, 0.01, **kw),
              "i32": i32, "i64": i64, "bool": lambda s, **kw: dict(shape=s, type="BOOL", **kw),
              "u8": lambda s, **kw: dict(shape=s, type="UINT8", scale=0.1, zp=128, **kw)}
    return makers[typ]


def const(values, typ="INT32") -> dict:
    values = np.asarray(values)
    return dict(shape=values.shape, type=typ, data=values)


def edge_input(dtype, shape, zero_point: int = 0) -> np.ndarray:
    """Edge values: the type's extremes and zero point, and for float32 the special values."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    if dtype == np.float32:
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -1e-45, np.finfo(np.float32).max,
                            np.finfo(np.float32).min, 1.0], np.float32)
        return np.resize(special, n).reshape(shape)
    if dtype == np.bool_:
        return np.resize(np.array([True, False]), n).reshape(shape)
    info = np.iinfo(dtype)
    return np.resize(np.array([info.min, info.max, zero_point, info.min + 1, info.max - 1], np.int64),
                     n).astype(dtype).reshape(shape)


def run_case(oracle, data: bytes, make_inputs=None, seeds: int = SEEDS) -> None:
    """Bit-exact with the oracle on `seeds` seeded inputs and one of edge values.
    `make_inputs(rng, k, tensor)` overrides the value of graph input k (index inputs)."""
    ours = Interpreter.from_bytes(data)
    theirs = oracle.interpreter(data, FRESH_ARENA)
    sg = read_model(data).main
    for trial in range(seeds + 1):
        rng = np.random.default_rng(trial)
        inputs = []
        for k, t in enumerate(sg.tensors[i] for i in sg.inputs):
            x = make_inputs(rng, k, t) if make_inputs is not None else None
            if x is None:
                zp = int(t.quantization.zero_points[0]) if t.quantization is not None else 0
                x = (edge_input(t.dtype, t.shape, zp) if trial == seeds else
                     random_input(t.dtype, t.shape, rng, first=trial == 0))
            inputs.append(np.asarray(x, t.dtype).reshape(t.shape))
        reached = space_to_batch_data_positions(ours, inputs)
        oracle.invoke_both(ours, theirs, inputs)
        for k in range(ours.num_outputs):
            got, want = ours.get_output(k), np.array(theirs.get_output(k))
            if reached[k] is not None:
                got, want = got[reached[k]], want.reshape(got.shape)[reached[k]]
            assert_bits_equal(got, want, f"trial {trial} output {k}")


# --------------------------------------------------------------------------- cases

def _space_depth_cases():
    cases = []
    for typ in ("f32", "i8"):
        mk = typed(typ)
        for bs, shape in ((2, (1, 2, 3, 8)), (3, (2, 2, 1, 18)), (1, (1, 3, 3, 2))):
            n, h, w, c = shape
            cases.append((f"D2S-{typ}-b{bs}", single_op("DEPTH_TO_SPACE", [mk(shape)],
                                                        mk((n, h * bs, w * bs, c // bs // bs)), {"block_size": bs})))
            cases.append((f"S2D-{typ}-b{bs}", single_op("SPACE_TO_DEPTH", [mk((n, h * bs, w * bs, c // bs // bs))],
                                                        mk(shape), {"block_size": bs})))
        # 4-D and 3-D (NHC) block shapes, paddings and crops
        for k, (in_shape, block, pads) in enumerate((((1, 4, 5, 2), [2, 2], [[0, 0], [1, 0]]),
                                                     ((2, 3, 4, 3), [3, 2], [[1, 2], [0, 2]]),
                                                     ((1, 5, 3), [2], [[1, 0]]),
                                                     ((2, 2, 2, 1), [1, 1], [[0, 0], [0, 0]]))):
            spatial = [in_shape[1 + j] + sum(pads[j]) for j in range(len(block))]
            out = ((in_shape[0] * math.prod(block),) + tuple(s // b for s, b in zip(spatial, block))
                   + in_shape[1 + len(block):])
            cases.append((f"S2B-{typ}-{k}", single_op("SPACE_TO_BATCH_ND", [mk(in_shape), const(block), const(pads)],
                                                      mk(out))))
            cases.append((f"B2S-{typ}-{k}", single_op("BATCH_TO_SPACE_ND", [mk(out), const(block), const(pads)],
                                                      mk(tuple(in_shape[:1]) + tuple(
                                                          s * b - sum(p) for s, b, p in zip(out[1:], block, pads))
                                                          + in_shape[1 + len(block):]))))
    return cases


def _slicing_cases():
    rng = np.random.default_rng(12)
    cases = []
    for k in range(24):
        typ = ("f32", "i8", "i16", "i32", "bool")[k % 5]
        mk = typed(typ)
        rank = 1 + k % 5
        shape = tuple(int(v) for v in rng.integers(1, 5, size=rank))
        begin = [int(rng.integers(0, d)) for d in shape]
        size = [int(rng.integers(1, d - b + 1)) if rng.random() < 0.7 else -1 for d, b in zip(shape, begin)]
        out = tuple(d - b if s == -1 else s for d, b, s in zip(shape, begin, size))
        idx = (const(begin, "INT64"), const(size, "INT64")) if k % 3 == 0 else (const(begin), const(size))
        cases.append((f"SLICE-{typ}-{k}", single_op("SLICE", [mk(shape), *idx], mk(out))))
    for k in range(18):
        typ = ("f32", "i8", "i16", "i32", "i64", "bool")[k % 6]
        mk = typed(typ)
        rank = 1 + k % 6
        shape = tuple(int(v) for v in rng.integers(1, 5, size=rank))
        first = int(rng.integers(0, rank))
        last = int(rng.integers(first, rank))
        axes = [a - rank if rng.random() < 0.3 else a for a in range(first, last + 1)]
        rng.shuffle(axes)
        cases.append((f"REVERSE-{typ}-{k}", single_op("REVERSE_V2", [mk(shape), const(axes)], mk(shape))))
    for k, (shape, axis, n) in enumerate((((4, 6), 1, 3), ((4, 6), -2, 2), ((2, 3, 4), 2, 4), ((6,), 0, 1),
                                          ((2, 2, 3, 4, 2), 3, 2))):
        for typ in ("f32", "i8", "i16", "i32"):
            mk = typed(typ)
            a = axis + len(shape) if axis < 0 else axis
            part = tuple(d // n if j == a else d for j, d in enumerate(shape))
            cases.append((f"SPLIT-{typ}-{k}", single_op("SPLIT", [const(axis), mk(shape)], outputs=[mk(part)] * n,
                                                        options={"num_splits": n})))
            sizes = [1] * (n - 1) + [shape[a] - (n - 1)]
            parts = [tuple(s if j == a else d for j, d in enumerate(shape)) for s in sizes]
            split_sizes = sizes[:-1] + [-1]
            cases.append((f"SPLIT_V-{typ}-{k}", single_op("SPLIT_V", [mk(shape), const(split_sizes), const(axis)],
                                                          outputs=[mk(p) for p in parts], options={"num_splits": n})))
            unpacked = tuple(d for j, d in enumerate(shape) if j != a)
            cases.append((f"UNPACK-{typ}-{k}", single_op("UNPACK", [mk(shape)], outputs=[mk(unpacked)] * shape[a],
                                                         options={"num": shape[a], "axis": axis})))
    for k, (shape, upd) in enumerate((((3, 4, 5), (1, 2, 3)), ((4, 6), (4, 2)), ((5,), (2,)), ((2, 3), (2, 3)),
                                      ((2, 1, 3, 2), (1, 1, 2, 2)))):
        for typ in ("f32", "i8", "i16", "i32"):
            mk = typed(typ)
            for st in ("INT32", "INT64"):
                cases.append((f"DUS-{typ}-{k}-{st}", single_op("DYNAMIC_UPDATE_SLICE",
                                                               [mk(shape), mk(upd), dict(shape=(len(shape),), type=st)],
                                                               mk(shape))))
    return cases


def _gather_cases():
    cases = []
    for typ in ("f32", "i8"):
        mk = typed(typ)
        for k, (shape, axis, bd, cshape) in enumerate((((3, 4, 5), 1, 0, (2,)), ((3, 4, 5), 0, 0, (2, 3)),
                                                       ((3, 4, 5), -1, 0, ()), ((2, 4, 5), 2, 1, (2, 3)),
                                                       ((2, 3, 4, 2), 2, -1, (2, 3, 2)), ((6,), 0, 0, (4, 2)))):
            rank, crank = len(shape), len(cshape)
            a, b = axis % rank, bd % crank if bd < 0 else bd
            out = shape[:a] + cshape[b:] + shape[a + 1:]
            cases.append((f"GATHER-{typ}-{k}", single_op("GATHER", [mk(shape), i32(cshape)], mk(out),
                                                         {"axis": axis, "batch_dims": bd})))
        cases.append((f"GATHER-{typ}-const", single_op("GATHER", [mk((3, 4)), const([[2, 0], [1, 1]])],
                                                       mk((2, 2, 4)), {"axis": 0})))
        for k, (shape, ishape) in enumerate((((3, 4, 5), (2, 2)), ((3, 4, 5), (4, 3)), ((3, 4, 5), (2, 1, 1)),
                                             ((6, 2), (3, 0)), ((2, 2, 2, 2, 2, 3), (3, 5)))):
            out = ishape[:-1] + shape[ishape[-1]:]
            cases.append((f"GATHER_ND-{typ}-{k}", single_op("GATHER_ND", [mk(shape), i32(ishape)], mk(out))))
        cases.append((f"EMBEDDING-{typ}", single_op("EMBEDDING_LOOKUP", [i32((5,)), mk((7, 3, 2))], mk((5, 3, 2)))))
    # hybrid: an int8 table (one scale, or per-row scales: TFLM uses row 0's for all) into float32
    rng = np.random.default_rng(3)
    table = rng.integers(-127, 128, size=(9, 6))
    for name, scales in (("one-scale", 0.013), ("per-row", [float(np.float32(s)) for s in rng.uniform(0.001, 0.1, 9)])):
        zps = 0 if np.isscalar(scales) else [0] * 9
        cases.append((f"EMBEDDING-hybrid-{name}", single_op(
            "EMBEDDING_LOOKUP", [i32((4,)), dict(shape=(9, 6), type="INT8", data=table, scale=scales, zp=zps)],
            f32((4, 6)))))
    return cases


def _broadcast_cases():
    cases = []
    for typ in ("f32", "i8", "i32"):
        mk = typed(typ)
        for dt in ("INT32", "INT64"):
            cases.append((f"FILL-{typ}-{dt}", single_op("FILL", [const([2, 3, 4], dt), mk(())], mk((2, 3, 4)))))
    for typ in ("f32", "i8", "i16", "i32", "i64", "bool", "u8"):
        mk = typed(typ)
        for k, (src, dst) in enumerate((((1, 3), (2, 4, 3)), ((3,), (4, 3)), ((2, 1, 3), (2, 5, 3)),
                                        ((), (2, 2)), ((1, 2, 1, 1, 3), (2, 2, 3, 2, 3)), ((4, 1), (4, 1)))):
            cases.append((f"BROADCAST_TO-{typ}-{k}", single_op("BROADCAST_TO", [mk(src), const(list(dst),
                                                                              "INT64" if k % 2 else "INT32")],
                                                            mk(dst))))
    for dt in ("INT32", "INT64"):
        for k, (a, b, n) in enumerate((((2, 1, 3), (4, 1), 3), ((5,), (1, 1, 5), 3), ((3, 1), (1, 4), 2),
                                       ((1,), (7,), 1), ((2, 3), (1, 2, 3), 4))):
            cases.append((f"BROADCAST_ARGS-{dt}-{k}", single_op("BROADCAST_ARGS", [const(list(a), dt), const(list(b), dt)],
                                                               dict(shape=(n,), type=dt))))
    for typ in ("f32", "i8"):
        mk = typed(typ)
        for mode in (0, 1):
            for k, (shape, pads) in enumerate((((4, 5), [[1, 2], [3, 0]]), ((1, 4, 4, 2), [[0, 0], [1, 2], [2, 1], [0, 0]]),
                                               ((3, 2, 5), [[2, 2], [1, 1], [4, 3]]), ((6,), [[0, 0]]))):
                room = [d - mode for d in shape]        # REFLECT pads at most dim - 1, SYMMETRIC dim
                pads = [[min(p, r), min(q, r)] for (p, q), r in zip(pads, room)]
                out = tuple(d + p + q for d, (p, q) in zip(shape, pads))
                dt = "INT64" if k % 2 else "INT32"
                cases.append((f"MIRROR_PAD-{typ}-m{mode}-{k}", single_op("MIRROR_PAD", [mk(shape), const(pads, dt)],
                                                                        mk(out), {"mode": 1 - mode})))
    return cases


CASES = _space_depth_cases() + _slicing_cases() + _gather_cases() + _broadcast_cases()


def index_inputs(data: bytes):
    """In-range values for the index inputs of the model's one operator (others: None)."""
    sg = read_model(data).main
    op = sg.operators[0]
    shape_of = {i: tuple(sg.tensors[i].shape) for i in op.inputs if i >= 0}
    graph_inputs = list(sg.inputs)

    def make(rng, k, t):
        slot = op.inputs.index(graph_inputs[k])
        if op.op_name == "GATHER" and slot == 1:
            params = shape_of[op.inputs[0]]
            return rng.integers(0, params[op.options.get("axis", 0) % len(params)], size=t.shape)
        if op.op_name == "GATHER_ND" and slot == 1:
            params = shape_of[op.inputs[0]]
            return rng.integers(0, np.asarray(params[:t.shape[-1]], np.int64) if t.shape[-1] else 1, size=t.shape)
        if op.op_name == "EMBEDDING_LOOKUP" and slot == 0:
            return rng.integers(0, shape_of[op.inputs[1]][0], size=t.shape)
        if op.op_name == "DYNAMIC_UPDATE_SLICE" and slot == 2:
            return rng.integers(-3, max(shape_of[op.inputs[0]]) + 3, size=t.shape)   # clamped by the kernel
        return None
    return make


@pytest.mark.parametrize("name,data", [pytest.param(n, d, id=n) for n, d in CASES])
def test_single_op_matches_tflm(name, data, oracle):
    run_case(oracle, data, index_inputs(data))


@pytest.mark.parametrize("name,data", [pytest.param(n, d, id=n) for n, d in CASES[::7]])
def test_arena_equals_oracle(name, data, oracle):
    """Head and tail (op data, dims copies, scratch) as TFLM's allocator prints them."""
    it = Interpreter.from_bytes(data, target="host64", plan_only=True)
    theirs = oracle.allocations(data, align_up(max(it.plan.required_bytes * 2, 1 << 16)))
    assert (it.plan.head_bytes, it.plan.tail_bytes) == (theirs["head"], theirs["tail"])


# --------------------------------------------------------------------------- multiple outputs

def _multi_output_model() -> bytes:
    """SPLIT, SPLIT_V and UNPACK feeding later operators, with outputs nobody reads: lifetimes
    as TFLM's planner gives them (an unread output lives through its operator only)."""
    b = ModelBuilder("multi-output")
    x = b.add_tensor("x", (4, 6), "FLOAT32")
    axis = b.add_tensor("axis", (), "INT32", data=np.array(1))
    parts = [b.add_tensor(f"p{k}", (4, 2), "FLOAT32") for k in range(3)]
    b.add_operator("SPLIT", [axis, x], parts, options={"num_splits": 3})
    sizes = b.add_tensor("sizes", (2,), "INT32", data=np.array([1, -1]))
    v = [b.add_tensor("v0", (4, 1), "FLOAT32"), b.add_tensor("v1", (4, 1), "FLOAT32")]
    b.add_operator("SPLIT_V", [parts[2], sizes, axis], v, options={"num_splits": 2})
    rows = [b.add_tensor(f"row{k}", (2,), "FLOAT32") for k in range(4)]
    b.add_operator("UNPACK", [parts[0]], rows, options={"num": 4, "axis": 0})
    y = b.add_tensor("y", (4,), "FLOAT32")
    b.add_operator("CONCATENATION", [rows[3], rows[0]], [y], options={"axis": 0})
    b.inputs, b.outputs = [x], [y, v[1]]
    return b.build()


def test_multi_output_operators_plan_and_run_as_tflm(oracle):
    data = _multi_output_model()
    run_case(oracle, data)
    for target in ("host64",):
        it = Interpreter.from_bytes(data, target=target, plan_only=True)
        theirs = oracle.allocations(data, align_up(max(it.plan.required_bytes * 2, 1 << 16)))
        assert (it.plan.head_bytes, it.plan.tail_bytes) == (theirs["head"], theirs["tail"])
    lifetimes = {b.name: (b.first_use, b.last_use) for b in it.plan.buffers}
    assert lifetimes["p1"] == (1, 1)            # an unread SPLIT output lives through SPLIT only
    assert lifetimes["row1"] == (3, 3)


# --------------------------------------------------------------------------- what the kernels allocate

def _persistent_cases():
    rank4 = 4 + 4 * 4
    return [
        (single_op("DEPTH_TO_SPACE", [f32((1, 2, 2, 4))], f32((1, 4, 4, 1)), {"block_size": 2}), [rank4], []),
        (single_op("SPACE_TO_DEPTH", [f32((1, 4, 4, 1))], f32((1, 2, 2, 4)), {"block_size": 2}), [rank4], []),
        (single_op("GATHER", [f32((3, 4)), const([1])], f32((1, 4))), [4 + 4 * 2], []),
        (single_op("GATHER_ND", [f32((3, 4)), const([[1]])], f32((1, 4))), [4 + 4 * 2], []),
        (single_op("EMBEDDING_LOOKUP", [const([1]), f32((3, 4))], f32((1, 4))), [4 + 4 * 2, "OpDataEmbeddingLookup"],
         []),
        (single_op("SPACE_TO_BATCH_ND", [f32((1, 2, 2, 1)), const([2, 2]), const([[0, 0], [0, 0]])],
                   f32((4, 1, 1, 1))), ["SpaceToBatchParams"], []),
        (single_op("MIRROR_PAD", [f32((2, 3, 4)), const([[0, 1], [1, 0], [0, 0]])], f32((3, 4, 4))),
         ["OpDataMirrorPad"], [12, 12]),
        (single_op("SLICE", [f32((3, 4)), const([0, 0]), const([1, 1])], f32((1, 1))), [], []),
        (single_op("FILL", [const([2]), f32(())], f32((2,))), [], []),
    ]


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_kernels_allocate_what_tflm_allocates(target):
    for data, persistent, scratch in _persistent_cases():
        it = Interpreter.from_bytes(data, target=target)
        want = [it.target.sizeof(p) if isinstance(p, str) else p for p in persistent]
        assert kernel_persistent(it) == (len(want), sum(want)), it.nodes[0].op_name
        assert scratch_sizes(it) == scratch, it.nodes[0].op_name


# --------------------------------------------------------------------------- refusals

def _refused_by_both(oracle, data: bytes, words: str) -> None:
    """TFLM refuses the model (at load or first invoke) and micro_rt's prepare with its words."""
    with pytest.raises(RuntimeError):
        theirs = oracle.interpreter(data, FRESH_ARENA)
        sg = read_model(data).main
        for k, i in enumerate(sg.inputs):
            theirs.set_input(np.zeros(sg.tensors[i].shape, sg.tensors[i].dtype), k)
        theirs.invoke()
    with pytest.raises(KernelError, match=words):
        Interpreter.from_bytes(data)


def _shape_then(op: str, out_shape, extra_inputs=(), options=None) -> bytes:
    """x -> SHAPE -> op: the op's shape-like input computed at run time."""
    b = ModelBuilder("runtime shape")
    x = b.add_tensor("x", out_shape, "FLOAT32")
    s = b.add_tensor("s", (len(out_shape),), "INT32")
    b.add_operator("SHAPE", [x], [s], options={"out_type": "INT32"})
    y = b.add_tensor("y", out_shape, "FLOAT32")
    if op == "FILL":
        v = b.add_tensor("v", (), "FLOAT32", data=np.array(2.5))
        b.add_operator("FILL", [s, v], [y])
    else:
        src = b.add_tensor("src", (1,) * len(out_shape), "FLOAT32", data=np.ones((1,) * len(out_shape)))
        b.add_operator("BROADCAST_TO", [src, s], [y])
    b.inputs, b.outputs = [x], [y]
    return b.build()


def test_refusals_carry_tflm_words(oracle):
    _refused_by_both(oracle, _shape_then("FILL", (2, 3)), r"Non-constant >dims< tensor is not supported")
    _refused_by_both(oracle, _shape_then("BROADCAST_TO", (2, 3)), r"Non-constant >shape< tensor is not supported")
    _refused_by_both(oracle, single_op("SPLIT", [i32(()), f32((4, 6))], outputs=[f32((2, 6))] * 2,
                                       options={"num_splits": 2}), r"Non-constant >axis< tensor is not supported")
    _refused_by_both(oracle, single_op("REVERSE_V2", [f32((2, 3, 4)), const([0, 2])], f32((2, 3, 4))),
                     r"Non-contiguous `axes` not supported")
    _refused_by_both(oracle, single_op("GATHER_ND", [f32((3, 4)), const([[1, 2, 0]])], f32((1,))),
                     r"Index innermost dimension length must be <= params rank.")
    _refused_by_both(oracle, single_op("MIRROR_PAD", [q16((2, 3), 0.1), const([[1, 1], [1, 1]])], q16((4, 5), 0.1)),
                     r"MIRROR_PAD supports float32 and int8 only")
    _refused_by_both(oracle, single_op("EMBEDDING_LOOKUP", [const([1]), q8((3, 4), 0.1, 2)], f32((1, 4))),
                     r"zero point 2")


def _invoke_error_both(oracle, data: bytes, inputs, words: str) -> None:
    theirs = oracle.interpreter(data, FRESH_ARENA)
    for k, x in enumerate(inputs):
        theirs.set_input(x, k)
    with pytest.raises(RuntimeError):
        theirs.invoke()
    ours = Interpreter.from_bytes(data)
    for k, x in enumerate(inputs):
        ours.set_input(x, k)
    with pytest.raises(KernelError, match=words):
        ours.invoke()


def test_invoke_time_index_errors(oracle):
    table = f32((5, 3))
    _invoke_error_both(oracle, single_op("EMBEDDING_LOOKUP", [i32((3,)), table], f32((3, 3))),
                       [np.array([1, 5, 0], np.int32), np.zeros((5, 3), np.float32)],
                       r"EMBEDDING_LOOKUP: index out of bounds. Got 5, and bounds are \[0, 4\]")
    _invoke_error_both(oracle, single_op("GATHER_ND", [f32((3, 4)), i32((2, 2))], f32((2,))),
                       [np.zeros((3, 4), np.float32), np.array([[0, 1], [3, 0]], np.int32)],
                       "gather_nd index out of bounds")
    # TFLM checks the flat start only: a negative index made up for by another passes
    run_case(oracle, single_op("GATHER_ND", [f32((3, 4)), const([[1, -1], [2, -3]])], f32((2,))))


def test_what_tflm_does_not_check_is_refused_at_invoke():
    """Out-of-range GATHER positions (TFLM reads past the input), a SLICE begin from a tensor
    that reaches outside the input, shapes BROADCAST_ARGS cannot join (TFLM aborts)."""
    ours = Interpreter.from_bytes(single_op("GATHER", [f32((3, 4)), i32((2,))], f32((2, 4))))
    ours.set_input(np.zeros((3, 4), np.float32), 0)
    ours.set_input(np.array([0, 3], np.int32), 1)
    with pytest.raises(KernelError, match=r"position 3 .* outside \[0, 3\)"):
        ours.invoke()
    ours = Interpreter.from_bytes(single_op("SLICE", [f32((3, 4)), i32((2,)), const([2, 2])], f32((2, 2))))
    ours.set_input(np.zeros((3, 4), np.float32), 0)
    ours.set_input(np.array([2, 0], np.int32), 1)
    with pytest.raises(KernelError, match="outside input"):
        ours.invoke()
    ours = Interpreter.from_bytes(single_op("BROADCAST_ARGS", [i32((2,)), i32((2,))], i32((2,))))
    ours.set_input(np.array([2, 3], np.int32), 0)
    ours.set_input(np.array([2, 4], np.int32), 1)
    with pytest.raises(KernelError, match="do not broadcast"):
        ours.invoke()


def test_output_shape_must_be_the_one_tflm_computes():
    with pytest.raises(KernelError, match=r"shape TFLM computes from the inputs, \[2, 4\]"):
        Interpreter.from_bytes(single_op("GATHER", [f32((3, 4)), const([0, 1])], f32((8,))))


def test_hybrid_embedding_uses_row_zero_scale_for_every_row():
    """TFLM's quirk, stated directly: per-row scales, each row dequantized with row 0's."""
    table = np.arange(-12, 12).reshape(4, 6)
    scales = [0.5, 0.25, 2.0, 4.0]
    data = single_op("EMBEDDING_LOOKUP", [i32((2,)), dict(shape=(4, 6), type="INT8", data=table, scale=scales,
                                                         zp=[0] * 4)], f32((2, 6)))
    it = Interpreter.from_bytes(data)
    it.set_input(np.array([3, 1], np.int32), 0)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0), table[[3, 1]].astype(np.float32) * np.float32(0.5))
