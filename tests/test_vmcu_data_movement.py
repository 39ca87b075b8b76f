"""Issue 12's data-movement family on the virtual MCU vs the numpy twins, byte for byte:
the strided copies of cortexm/ops/data_movement.py (DEPTH_TO_SPACE, SPACE_TO_DEPTH,
SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, SPLIT, SPLIT_V, UNPACK, REVERSE_V2, BROADCAST_TO, FILL)
and the kernels of mrt_gather.c, mrt_slice.c and mrt_broadcast_args.c, in every element size
the operators take. The M0+ (Thumb-1, faults on unaligned access) and the M4 differ in code;
the hybrid EMBEDDING_LOOKUP multiplies in float32, so it runs on all four cores (soft float,
FPv4-SP, FPv5-DP, FPv5-SP). Indices read at run time that TFLM refuses (or does not check)
make the kernel return -1 and the glue raise micro_rt's KernelError.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from vmcu_cases import CORES_ALL, CORES_FAST, T, assert_same, run_both, shared_mcu
from micro_rt.errors import KernelError

DTYPES = {"f32": np.float32, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def tensor(idx, shape, kind, data=None):
    dt = np.dtype(DTYPES[kind])
    q = dict(scales=[0.05], zero_points=[-3]) if kind in ("i8", "i16") else {}
    return T(idx, shape, dt, data=data, **q)


def values(rng, shape, kind):
    dt = np.dtype(DTYPES[kind])
    if dt == np.float32:      # with the special values whose bits a copy must keep
        x = rng.normal(0, 3, size=shape).astype(np.float32).reshape(-1)
        special = np.array([np.nan, -np.inf, np.inf, -0.0, 1e-45, -1e-45], np.float32)
        x[:min(x.size, special.size)] = special[:x.size]
        return x.reshape(shape)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dt)
    return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(dt)


def i32(idx, data):
    data = np.asarray(data)
    return T(idx, data.shape, np.int32, data=data)


def check(core, op, options, inputs, outputs, feed, what):
    h, m, result = run_both(core, op, options, inputs, outputs, feed)
    assert_same([a.reshape(-1) for a in h], [a.reshape(-1) for a in m], f"{what} on {core}")
    assert result.instructions > 0


# --------------------------------------------------------------------------- strided copies

@pytest.mark.parametrize("core", CORES_FAST)
def test_space_depth(core):
    rng = np.random.default_rng(1)
    for kind in ("f32", "i8"):
        for bs, (n, h, w, c) in ((2, (1, 2, 3, 8)), (3, (2, 2, 1, 18)), (2, (1, 3, 3, 4))):
            x = tensor(0, (n, h, w, c), kind)
            y = tensor(1, (n, h * bs, w * bs, c // bs // bs), kind)
            check(core, "DEPTH_TO_SPACE", {"block_size": bs}, [x], [y], {0: values(rng, x.shape, kind)},
                  f"depth_to_space {kind} {x.shape}")
            check(core, "SPACE_TO_DEPTH", {"block_size": bs}, [tensor(0, y.shape, kind)], [tensor(1, x.shape, kind)],
                  {0: values(rng, y.shape, kind)}, f"space_to_depth {kind} {y.shape}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_space_batch(core):
    rng = np.random.default_rng(2)
    for kind in ("f32", "i8"):
        for in_shape, block, pads in (((1, 4, 5, 2), [2, 2], [[0, 0], [1, 0]]), ((2, 3, 4, 3), [3, 2], [[1, 2], [0, 2]]),
                                      ((1, 5, 3), [2], [[1, 0]]), ((2, 2, 2, 1), [1, 1], [[0, 0], [0, 0]]),
                                      ((1, 6, 4, 1), [2, 4], [[0, 0], [2, 2]])):
            spatial = [in_shape[1 + j] + sum(pads[j]) for j in range(len(block))]
            out = ((in_shape[0] * math.prod(block),) + tuple(s // b for s, b in zip(spatial, block))
                   + in_shape[1 + len(block):])
            x, y = tensor(0, in_shape, kind), tensor(3, out, kind)
            check(core, "SPACE_TO_BATCH_ND", {}, [x, i32(1, block), i32(2, pads)], [y],
                  {0: values(rng, in_shape, kind)}, f"space_to_batch {kind} {in_shape} {block} {pads}")
            check(core, "BATCH_TO_SPACE_ND", {}, [tensor(0, out, kind), i32(1, block), i32(2, pads)],
                  [tensor(3, in_shape, kind)], {0: values(rng, out, kind)}, f"batch_to_space {kind} {out}")
            # block shape and paddings / crops computed at run time: the kernels read them
            live = [T(1, (len(block),), np.int32), T(2, (len(block), 2), np.int32)]
            feed = {1: np.array(block), 2: np.array(pads)}
            check(core, "SPACE_TO_BATCH_ND", {}, [x, *live], [y], {0: values(rng, in_shape, kind), **feed},
                  f"space_to_batch {kind} {in_shape} run-time block")
            check(core, "BATCH_TO_SPACE_ND", {}, [tensor(0, out, kind), *live], [tensor(3, in_shape, kind)],
                  {0: values(rng, out, kind), **feed}, f"batch_to_space {kind} {out} run-time block")


@pytest.mark.parametrize("core", CORES_FAST)
def test_split_unpack_reverse(core):
    rng = np.random.default_rng(3)
    for kind in ("f32", "i8", "i16", "i32"):
        for shape, axis, n in (((4, 6), 1, 3), ((4, 6), -2, 2), ((2, 3, 4), 2, 4), ((6,), 0, 1), ((2, 2, 3, 4, 2), 3, 2)):
            a = axis % len(shape)
            x = tensor(1, shape, kind)
            part = tuple(d // n if j == a else d for j, d in enumerate(shape))
            outs = [tensor(2 + k, part, kind) for k in range(n)]
            check(core, "SPLIT", {"num_splits": n}, [i32(0, axis), x], outs, {1: values(rng, shape, kind)},
                  f"split {kind} {shape} axis {axis}")
            sizes = [1] * (n - 1) + [shape[a] - (n - 1)]
            outs = [tensor(3 + k, tuple(s if j == a else d for j, d in enumerate(shape)), kind)
                    for k, s in enumerate(sizes)]
            check(core, "SPLIT_V", {"num_splits": n}, [tensor(0, shape, kind), i32(1, sizes), i32(2, axis)], outs,
                  {0: values(rng, shape, kind)}, f"split_v {kind} {shape}")
            rest = tuple(d for j, d in enumerate(shape) if j != a)
            outs = [tensor(1 + k, rest, kind) for k in range(shape[a])]
            check(core, "UNPACK", {"num": shape[a], "axis": axis}, [tensor(0, shape, kind)], outs,
                  {0: values(rng, shape, kind)}, f"unpack {kind} {shape}")
    for kind in ("f32", "i8", "i16", "i32", "i64", "bool"):
        for shape, axes in (((2, 3, 4), [1]), ((2, 3, 4), [0, 1, 2]), ((5,), [0]), ((2, 3, 4, 5), [-2, 1]),
                            ((1, 2, 3, 2, 2, 3), [3, 4, 5]), ((3, 4), [1])):
            check(core, "REVERSE_V2", {}, [tensor(0, shape, kind), i32(1, axes)], [tensor(2, shape, kind)],
                  {0: values(rng, shape, kind)}, f"reverse {kind} {shape} {axes}")
            check(core, "REVERSE_V2", {}, [tensor(0, shape, kind), T(1, (len(axes),), np.int32)],
                  [tensor(2, shape, kind)], {0: values(rng, shape, kind), 1: np.array(axes)},
                  f"reverse {kind} {shape} {axes} run-time axes")


@pytest.mark.parametrize("core", CORES_FAST)
def test_broadcast_to_and_fill(core):
    rng = np.random.default_rng(4)
    for kind in ("f32", "i8", "i16", "i32", "i64", "bool"):
        for src, dst in (((1, 3), (2, 4, 3)), ((3,), (4, 3)), ((2, 1, 3), (2, 5, 3)), ((), (2, 2)),
                         ((1, 2, 1, 1, 3), (2, 2, 3, 2, 3)), ((4, 1), (4, 1))):
            check(core, "BROADCAST_TO", {}, [tensor(0, src, kind), i32(1, list(dst))], [tensor(2, dst, kind)],
                  {0: values(rng, src, kind)}, f"broadcast_to {kind} {src}->{dst}")
    for kind in ("f32", "i8", "i32"):
        for shape in ((2, 3, 4), (7,), (1,)):
            check(core, "FILL", {}, [i32(0, list(shape)), tensor(1, (), kind)], [tensor(2, shape, kind)],
                  {1: values(rng, (), kind)}, f"fill {kind} {shape}")


# --------------------------------------------------------------------------- own kernels

@pytest.mark.parametrize("core", CORES_FAST)
def test_slice(core):
    rng = np.random.default_rng(5)
    for k in range(30):
        kind = ("f32", "i8", "i16", "i32", "bool")[k % 5]
        rank = 1 + k % 5
        shape = tuple(int(v) for v in rng.integers(1, 5, size=rank))
        begin = [int(rng.integers(0, d)) for d in shape]
        size = [int(rng.integers(1, d - b + 1)) if rng.random() < 0.7 else -1 for d, b in zip(shape, begin)]
        out = tuple(d - b if s == -1 else s for d, b, s in zip(shape, begin, size))
        index_type = np.int64 if k % 3 == 0 else np.int32
        if k % 2:         # begin from a tensor computed at run time
            b = T(1, (rank,), index_type)
            feed = {0: values(rng, shape, kind), 1: np.array(begin)}
        else:
            b = T(1, (rank,), index_type, data=begin)
            feed = {0: values(rng, shape, kind)}
        check(core, "SLICE", {}, [tensor(0, shape, kind), b, T(2, (rank,), index_type, data=size)],
              [tensor(3, out, kind)], feed, f"slice {kind} {shape} {begin} {size}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_dynamic_update_slice(core):
    rng = np.random.default_rng(6)
    for kind in ("f32", "i8", "i16", "i32"):
        for shape, upd in (((3, 4, 5), (1, 2, 3)), ((4, 6), (4, 2)), ((5,), (2,)), ((2, 3), (2, 3)),
                           ((2, 1, 3, 2), (1, 1, 2, 2))):
            for index_type in (np.int32, np.int64):
                start = rng.integers(-3, max(shape) + 3, size=len(shape))
                check(core, "DYNAMIC_UPDATE_SLICE", {}, [tensor(0, shape, kind), tensor(1, upd, kind),
                                                         T(2, (len(shape),), index_type)], [tensor(3, shape, kind)],
                      {0: values(rng, shape, kind), 1: values(rng, upd, kind), 2: start},
                      f"dynamic_update_slice {kind} {shape} {upd} {start}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_gather_family(core):
    rng = np.random.default_rng(7)
    for kind in ("f32", "i8"):
        for shape, axis, bd, cshape in (((3, 4, 5), 1, 0, (2,)), ((3, 4, 5), 0, 0, (2, 3)), ((3, 4, 5), -1, 0, ()),
                                        ((2, 4, 5), 2, 1, (2, 3)), ((2, 3, 4, 2), 2, -1, (2, 3, 2))):
            a, b = axis % len(shape), bd % len(cshape) if bd < 0 else bd
            out = shape[:a] + cshape[b:] + shape[a + 1:]
            coords = rng.integers(0, shape[a], size=cshape)
            check(core, "GATHER", {"axis": axis, "batch_dims": bd}, [tensor(0, shape, kind), T(1, cshape, np.int32)],
                  [tensor(2, out, kind)], {0: values(rng, shape, kind), 1: coords}, f"gather {kind} {shape} {axis}")
        for shape, ishape in (((3, 4, 5), (2, 2)), ((3, 4, 5), (4, 3)), ((3, 4, 5), (2, 1, 1)), ((6, 2), (3, 0))):
            out = ishape[:-1] + shape[ishape[-1]:]
            idx = rng.integers(0, np.asarray(shape[:ishape[-1]], np.int64) if ishape[-1] else 1, size=ishape)
            check(core, "GATHER_ND", {}, [tensor(0, shape, kind), T(1, ishape, np.int32)], [tensor(2, out, kind)],
                  {0: values(rng, shape, kind), 1: idx}, f"gather_nd {kind} {shape} {ishape}")
        check(core, "EMBEDDING_LOOKUP", {}, [T(0, (5,), np.int32), tensor(1, (7, 3, 2), kind)],
              [tensor(2, (5, 3, 2), kind)], {0: rng.integers(0, 7, size=5), 1: values(rng, (7, 3, 2), kind)},
              f"embedding_lookup {kind}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_hybrid_embedding_lookup(core):
    """int8 table to float32: (float)v * scale with the table's first scale (row 0's)."""
    rng = np.random.default_rng(8)
    table = rng.integers(-128, 128, size=(64, 16)).astype(np.int8)
    scales = rng.uniform(1e-3, 0.2, size=64).astype(np.float32)
    t = T(1, table.shape, np.int8, data=table, scales=scales, zero_points=np.zeros(64, np.int64))
    check(core, "EMBEDDING_LOOKUP", {}, [T(0, (9,), np.int32), t], [T(2, (9, 16), np.float32)],
          {0: rng.integers(0, 64, size=9)}, "hybrid embedding_lookup")


@pytest.mark.parametrize("core", CORES_FAST)
def test_mirror_pad_and_broadcast_args(core):
    rng = np.random.default_rng(9)
    for kind in ("f32", "i8"):
        for mode in (0, 1):
            for shape, pads in (((4, 5), [[1, 2], [3, 0]]), ((1, 4, 4, 2), [[0, 0], [1, 2], [2, 1], [0, 0]]),
                                ((3, 2, 5), [[2, 2], [1, 1], [4, 3]]), ((6,), [[0, 0]]),
                                ((2, 1, 2, 3, 1, 2, 2), [[1, 1], [0, 0], [1, 0], [2, 1], [0, 0], [0, 1], [1, 1]])):
                room = [d - (1 - mode) for d in shape]
                pads = [[min(p, r), min(q, r)] for (p, q), r in zip(pads, room)]
                out = tuple(d + p + q for d, (p, q) in zip(shape, pads))
                for pad_type in (np.int32, np.int64):
                    check(core, "MIRROR_PAD", {"mode": mode}, [tensor(0, shape, kind), T(1, (len(shape), 2), pad_type,
                                                                                         data=pads)],
                          [tensor(2, out, kind)], {0: values(rng, shape, kind)}, f"mirror_pad {kind} {mode} {shape}")
    for dt in (np.int32, np.int64):
        for a, b, n in (((2, 1, 3), (4, 1), 3), ((5,), (1, 1, 5), 3), ((3, 1), (1, 4), 2), ((2, 3), (1, 2, 3), 4)):
            check(core, "BROADCAST_ARGS", {}, [T(0, (len(a),), dt), T(1, (len(b),), dt)], [T(2, (n,), dt)],
                  {0: np.array(a), 1: np.array(b)}, f"broadcast_args {a} {b}")


# --------------------------------------------------------------------------- run-time refusals

def _mcu_refuses(core, op, options, inputs, outputs, feed, words):
    """The kernel returns -1 and the glue raises the KernelError (the twin is not run)."""
    from micro_rt.cortexm import ops
    from micro_rt.kernel_api import Node
    tensors = {t.index: t for t in inputs + outputs}
    node = Node(0, op, 1, tuple(t.index for t in inputs), tuple(t.index for t in outputs), options=dict(options))
    mcu = shared_mcu(core)
    offsets, pos = {}, 0
    for t in tensors.values():
        if not t.is_constant:
            offsets[t.index] = pos
            data = np.asarray(feed.get(t.index, np.zeros(t.shape)), t.dtype).tobytes()
            mcu.write(mcu.arena_base + pos, data)
            pos += (t.nbytes + 15) // 16 * 16
    with pytest.raises(KernelError, match=words):
        ops.run_op(mcu, node, tensors, offsets)


@pytest.mark.parametrize("core", CORES_FAST)
def test_run_time_refusals(core):
    f = lambda i, s: T(i, s, np.float32)  # noqa: E731
    _mcu_refuses(core, "GATHER", {"axis": 0}, [f(0, (3, 4)), T(1, (2,), np.int32)], [f(2, (2, 4))],
                 {1: np.array([0, 3])}, "GATHER: a position is outside")
    _mcu_refuses(core, "GATHER_ND", {}, [f(0, (3, 4)), T(1, (2, 2), np.int32)], [f(2, (2,))],
                 {1: np.array([[0, 1], [3, 0]])}, "gather_nd index out of bounds")
    _mcu_refuses(core, "EMBEDDING_LOOKUP", {}, [T(0, (2,), np.int32), f(1, (5, 3))], [f(2, (2, 3))],
                 {0: np.array([1, -1])}, "index out of bounds")
    _mcu_refuses(core, "SLICE", {}, [f(0, (3, 4)), T(1, (2,), np.int32), T(2, (2,), np.int32, data=[2, 2])],
                 [f(3, (2, 2))], {1: np.array([2, 0])}, "reach outside")
    _mcu_refuses(core, "REVERSE_V2", {}, [f(0, (2, 3, 4)), T(1, (2,), np.int32)], [f(2, (2, 3, 4))],
                 {1: np.array([0, 2])}, "Non-contiguous `axes` not supported")
    _mcu_refuses(core, "REVERSE_V2", {}, [f(0, (2, 3, 4)), T(1, (1,), np.int32)], [f(2, (2, 3, 4))],
                 {1: np.array([3])}, "out of range")
    for op in ("SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"):
        _mcu_refuses(core, op, {}, [f(0, (4, 2, 2, 1)), T(1, (2,), np.int32), T(2, (2, 2), np.int32)],
                     [f(3, (4, 2, 2, 1))], {1: np.array([0, 1]), 2: np.zeros((2, 2))}, "block shape must be positive")
    _mcu_refuses(core, "BROADCAST_ARGS", {}, [T(0, (2,), np.int32), T(1, (2,), np.int32)], [T(2, (2,), np.int32)],
                 {0: np.array([2, 3]), 1: np.array([2, 4])}, "do not broadcast")
