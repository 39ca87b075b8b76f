"""Tests of kernels-B: element-wise, activation, quantize and data-movement kernels.

Single-op models are built with micro_rt.builder and run both through our kernels (with a tiny
in-test executor, so these tests do not depend on the interpreter) and through the tflite-micro
pip runtime (the oracle; tests skip when it is not installed).  Outputs must be bit-identical.
Shared models (seanet integration test, simple_add_model) run when /work/shared/models exists.
"""
from __future__ import annotations

import importlib
import math
import os
from pathlib import Path

import numpy as np
import pytest

from micro_rt.builder import ModelBuilder
from micro_rt.kernel_api import Node
from micro_rt.model import read_model

try:
    from micro_rt.kernels import activations, elementwise, fixedpoint, quantize, shape_ops
except ImportError:  # running from a checkout without the package mapping
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from kernels import activations, elementwise, fixedpoint, quantize, shape_ops  # type: ignore

SHARED = Path(__file__).resolve().parents[2] / "shared" / "models"

KERNEL_MODULES = (elementwise, activations, quantize, shape_ops)


# --------------------------------------------------------------------------- tiny executor

class _Target:
    def __init__(self):
        self.names = []

    def sizeof(self, name):
        self.names.append(name)
        return 24


class _View:
    def __init__(self, info, store):
        self._info, self._store = info, store
        self.index, self.name = info.index, info.name
        self.dtype, self.shape = info.dtype, tuple(info.shape)
        q = info.quantization
        self.scales = q.scales if q is not None else np.zeros(0, np.float32)
        self.zero_points = q.zero_points if q is not None else np.zeros(0, np.int64)
        self.quantized_dimension = q.quantized_dimension if q is not None else 0
        self.is_constant = info.data is not None
        self.is_variable = info.is_variable

    @property
    def data(self):
        return self._info.data if self._info.data is not None else self._store[self.index]

    @property
    def nbytes(self):
        return self._info.nbytes


class _Ctx:
    def __init__(self, sg):
        self.sg, self.target = sg, _Target()
        self.store = {t.index: np.zeros(t.shape, t.dtype) for t in sg.tensors
                      if t.data is None and t.dtype is not None}
        self.persistent, self.scratch_sizes = [], []

    def tensor(self, i):
        return None if i < 0 else _View(self.sg.tensors[i], self.store)

    def input(self, node, i):
        return self.tensor(node.inputs[i])

    def output(self, node, i):
        return self.tensor(node.outputs[i])

    def allocate_persistent(self, n):
        self.persistent.append(n)
        return 0

    def request_scratch(self, n):
        self.scratch_sizes.append(n)
        return len(self.scratch_sizes) - 1

    def scratch(self, i):
        return np.zeros(self.scratch_sizes[i], np.uint8)


def _registry():
    reg = {}
    for mod in KERNEL_MODULES:
        for name, r, _ in mod.BUILTINS:
            reg[name] = r
    return reg


class Runner:
    def __init__(self, data: bytes):
        self.sg = read_model(data).main
        self.ctx = _Ctx(self.sg)
        reg = _registry()
        self.nodes = []
        for op in self.sg.operators:
            r = reg[op.op_name]
            node = Node(index=op.index, op_name=op.op_name, version=op.version, inputs=op.inputs,
                        outputs=op.outputs, options=op.options, custom_options=op.custom_options)
            node.user_data = r.init(self.ctx, op.custom_options) if r.init else None
            self.nodes.append((r, node))
        for r, node in self.nodes:
            if r.prepare:
                r.prepare(self.ctx, node)

    def run(self, *inputs):
        for i, x in zip(self.sg.inputs, inputs):
            self.ctx.store[i][...] = x
        for r, node in self.nodes:
            r.invoke(self.ctx, node)
        return [self.ctx.store[o].copy() for o in self.sg.outputs]


# --------------------------------------------------------------------------- model building

def single_op(op, inputs, output, options=None, outputs=None):
    """inputs: list of dicts(shape, type, scale, zp, data); output likewise (or outputs list)."""
    b = ModelBuilder("kernels-B test")
    ins = []
    graph_inputs = []
    for k, spec in enumerate(inputs):
        if spec is None:
            ins.append(-1)
            continue
        t = b.add_tensor(f"in{k}", spec["shape"], spec.get("type", "INT8"), data=spec.get("data"),
                         scale=spec.get("scale"), zero_point=spec.get("zp"))
        ins.append(t)
        if spec.get("data") is None:
            graph_inputs.append(t)
    outs = []
    for k, spec in enumerate(outputs or [output]):
        outs.append(b.add_tensor(f"out{k}", spec["shape"], spec.get("type", "INT8"),
                                 scale=spec.get("scale"), zero_point=spec.get("zp")))
    b.add_operator(op, ins, outs, options=options or {})
    b.inputs, b.outputs = graph_inputs, outs
    return b.build()


def q8(shape, scale, zp, **kw):
    return dict(shape=shape, type="INT8", scale=scale, zp=zp, **kw)


def q16(shape, scale, zp=0, **kw):
    return dict(shape=shape, type="INT16", scale=scale, zp=zp, **kw)


def f32(shape, **kw):
    return dict(shape=shape, type="FLOAT32", **kw)


def i32(shape, **kw):
    return dict(shape=shape, type="INT32", **kw)


def _random_input(dtype, shape, rng, first):
    dtype = np.dtype(dtype)
    if dtype == np.int8:
        x = rng.integers(-128, 128, size=shape)
        if first:  # cover every int8 value
            x = np.resize(np.arange(-128, 128), int(np.prod(shape))).reshape(shape)
        return x.astype(np.int8)
    if dtype == np.int16:
        return rng.integers(-32768, 32768, size=shape).astype(np.int16)
    if dtype == np.int32:
        return rng.integers(-(1 << 31), 1 << 31, size=shape, dtype=np.int64).astype(np.int32) if not first \
            else rng.integers(-1000, 1000, size=shape).astype(np.int32)
    return (rng.standard_normal(size=shape) * 4).astype(np.float32)


def oracle_or_skip():
    try:
        from tflite_micro import runtime
    except Exception:
        pytest.skip("tflite-micro oracle not installed")
    return runtime


def assert_matches_oracle(data: bytes, trials: int = 5, seed: int = 0):
    runtime = oracle_or_skip()
    try:
        tm = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    except Exception:
        tm = None
    if tm is not None and len(tm_inputs := read_model(data).main.inputs) > 0:
        try:
            for k, i in enumerate(tm_inputs):
                t = read_model(data).main.tensors[i]
                tm.set_input(np.zeros(t.shape, t.dtype), k)
            tm.invoke()
        except RuntimeError:
            tm = None
    if tm is None:
        with pytest.raises(fixedpoint.KernelError):
            Runner(data)
        return
    ours = Runner(data)
    rng = np.random.default_rng(seed)
    for t in range(trials):
        ins = [_random_input(ours.sg.tensors[i].dtype, ours.sg.tensors[i].shape, rng, t == 0)
               for i in ours.sg.inputs]
        for k, x in enumerate(ins):
            tm.set_input(x, k)
        try:
            tm.invoke()
        except RuntimeError:
            # TFLM rejects this node only when it runs (e.g. an unsupported type): we reject
            # it in prepare already.
            pytest.fail("oracle failed to invoke but our prepare accepted the node")
        got = ours.run(*ins)
        for k, g in enumerate(got):
            e = np.asarray(tm.get_output(k))
            assert e.shape == g.shape and e.dtype == g.dtype, (e.shape, g.shape, e.dtype, g.dtype)
            if not np.array_equal(e.reshape(-1).view(np.uint8), g.reshape(-1).view(np.uint8)):
                bad = np.nonzero(e.ravel() != g.ravel())[0]
                raise AssertionError(f"trial {t} output {k}: {len(bad)} differ, e.g. at {bad[:5]}: "
                                     f"expected {e.ravel()[bad[:5]]} got {g.ravel()[bad[:5]]}")


def _rscale(rng, lo=1e-3, hi=0.5):
    return float(np.float32(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


# --------------------------------------------------------------------------- case lists

def _binary_cases():
    rng = np.random.default_rng(1234)
    cases = []
    S = (1, 3, 4, 5)
    for op in ("ADD", "SUB", "MUL"):
        for k, act in enumerate(("NONE", "RELU", "RELU6", "RELU_N1_TO_1", "NONE", "NONE")):
            shape2 = S if k % 2 == 0 else (1, 1, 4, 1) if k == 1 else (5,)
            a = q8(S, _rscale(rng), int(rng.integers(-128, 128)))
            b = q8(shape2, _rscale(rng), int(rng.integers(-128, 128)))
            o = q8(S, _rscale(rng, 1e-2, 0.5), int(rng.integers(-128, 128)))
            cases.append((f"{op}-i8-{k}-{act}", single_op(op, [a, b], o, {"fused_activation_function": act})))
        cases.append((f"{op}-f32", single_op(op, [f32(S), f32((4, 1))], f32(S),
                                             {"fused_activation_function": "RELU_N1_TO_1"})))
        cases.append((f"{op}-i32", single_op(op, [i32(S), i32(S)], i32(S))))
        for k in range(2):
            a, b = q16(S, _rscale(rng, 1e-5, 1e-2)), q16((1, 3, 1, 5), _rscale(rng, 1e-5, 1e-2))
            cases.append((f"{op}-i16-{k}", single_op(op, [a, b], q16(S, _rscale(rng, 1e-4, 1e-2)))))
    for op in ("MAXIMUM", "MINIMUM"):
        for typ, mk in (("i8", lambda s: q8(s, 0.1, 3)), ("i16", lambda s: q16(s, 0.01)),
                        ("f32", f32), ("i32", i32)):
            cases.append((f"{op}-{typ}", single_op(op, [mk(S), mk((1, 3, 1, 1))], mk(S))))
    return cases


def _unary_cases():
    rng = np.random.default_rng(99)
    cases = []
    S = (2, 3, 50)
    for k in range(4):
        si, zi = _rscale(rng, 0.005, 0.2), int(rng.integers(-100, 100))
        cases.append((f"LOGISTIC-i8-{k}", single_op("LOGISTIC", [q8(S, si, zi)], q8(S, 1 / 256, -128))))
        cases.append((f"TANH-i8-{k}", single_op("TANH", [q8(S, si, zi)], q8(S, 1 / 128, 0))))
        cases.append((f"RELU-i8-{k}", single_op("RELU", [q8(S, si, zi)],
                                                q8(S, _rscale(rng, 0.005, 0.2), int(rng.integers(-128, 0))))))
        cases.append((f"RELU6-i8-{k}", single_op("RELU6", [q8(S, si, zi)], q8(S, si, zi))))
        alpha = [0.2, 0.01, 1.7, -0.3][k]
        cases.append((f"LEAKY_RELU-i8-{k}", single_op("LEAKY_RELU", [q8(S, si, zi)],
                                                      q8(S, _rscale(rng, 0.005, 0.2), int(rng.integers(-50, 50))),
                                                      {"alpha": alpha})))
        cases.append((f"LEAKY_RELU-i16-{k}", single_op("LEAKY_RELU", [q16(S, si / 256)],
                                                       q16(S, _rscale(rng, 1e-4, 1e-3)), {"alpha": alpha})))
        cases.append((f"HARD_SWISH-i8-{k}", single_op("HARD_SWISH", [q8(S, si * 0.5, zi)],
                                                      q8(S, _rscale(rng, 0.005, 0.05), int(rng.integers(-128, -50))))))
    cases.append(("RELU-i16", single_op("RELU", [q16(S, 0.001)], q16(S, 0.0007))))
    cases.append(("RELU6-i16", single_op("RELU6", [q16(S, 0.001)], q16(S, 0.001))))
    for op in ("LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH"):
        opts = {"alpha": 0.3} if op == "LEAKY_RELU" else None
        cases.append((f"{op}-f32", single_op(op, [f32(S)], f32(S), opts)))
    return cases


def _quant_cases():
    rng = np.random.default_rng(7)
    S = (3, 40)
    cases = [
        ("QUANTIZE-f32-i8", single_op("QUANTIZE", [f32(S)], q8(S, 0.037, -5))),
        ("QUANTIZE-f32-i16", single_op("QUANTIZE", [f32(S)], q16(S, 0.0003))),
        ("DEQUANTIZE-i8", single_op("DEQUANTIZE", [q8(S, 0.0371, 17)], f32(S))),
        ("DEQUANTIZE-i16", single_op("DEQUANTIZE", [q16(S, 0.00037)], f32(S))),
    ]
    for k in range(3):
        cases.append((f"QUANTIZE-i8-i8-{k}", single_op("QUANTIZE", [q8(S, _rscale(rng), int(rng.integers(-128, 128)))],
                                                        q8(S, _rscale(rng), int(rng.integers(-128, 128))))))
        cases.append((f"QUANTIZE-i16-i8-{k}", single_op("QUANTIZE", [q16(S, _rscale(rng, 1e-5, 1e-3))],
                                                         q8(S, _rscale(rng), int(rng.integers(-128, 128))))))
        cases.append((f"QUANTIZE-i8-i16-{k}", single_op("QUANTIZE", [q8(S, _rscale(rng), int(rng.integers(-128, 128)))],
                                                         q16(S, _rscale(rng, 1e-5, 1e-3)))))
        cases.append((f"QUANTIZE-i16-i16-{k}", single_op("QUANTIZE", [q16(S, _rscale(rng, 1e-5, 1e-3))],
                                                          q16(S, _rscale(rng, 1e-5, 1e-3)))))
    return cases


def _shape_cases():
    rng = np.random.default_rng(5)
    cases = []
    S = (2, 3, 4, 5)
    for typ, mk in (("i8", lambda s: q8(s, 0.1, 3)), ("f32", f32), ("i16", lambda s: q16(s, 0.01)),
                    ("i32", i32)):
        cases.append((f"RESHAPE-{typ}", single_op("RESHAPE", [mk(S), i32((2,), data=np.array([6, 20]))],
                                                  mk((6, 20)), {"new_shape": [6, 20]})))
        cases.append((f"SQUEEZE-{typ}", single_op("SQUEEZE", [mk((1, 3, 1, 5))], mk((3, 5)),
                                                  {"squeeze_dims": [0, 2]})))
        cases.append((f"EXPAND_DIMS-{typ}", single_op("EXPAND_DIMS", [mk((3, 5)), i32((1,), data=np.array([-1]))],
                                                      mk((3, 5, 1)))))
        if typ != "i32":
            cases.append((f"TRANSPOSE-{typ}", single_op("TRANSPOSE", [mk(S), i32((4,), data=np.array([2, 0, 3, 1]))],
                                                        mk((4, 2, 5, 3)))))
            cases.append((f"TRANSPOSE3-{typ}", single_op("TRANSPOSE", [mk((3, 4, 5)), i32((3,), data=np.array([2, 1, 0]))],
                                                         mk((5, 4, 3)))))
        pads = np.array([[0, 1], [2, 0], [1, 1], [0, 2]])
        cases.append((f"PAD-{typ}", single_op("PAD", [mk(S), i32((4, 2), data=pads)], mk((3, 5, 6, 7)))))
        cases.append((f"PAD-img-{typ}", single_op("PAD", [mk(S), i32((4, 2), data=np.array([[0, 0], [1, 2], [3, 0], [0, 0]]))],
                                                  mk((2, 6, 7, 5)))))
        cv = mk((1,))
        cv["data"] = np.array([7])
        cases.append((f"PADV2-{typ}", single_op("PADV2", [mk(S), i32((4, 2), data=pads), cv], mk((3, 5, 6, 7)))))
        cases.append((f"CONCAT-{typ}", single_op("CONCATENATION", [mk((2, 3, 1)), mk((2, 3, 4)), mk((2, 3, 2))],
                                                 mk((2, 3, 7)), {"axis": -1})))
        cases.append((f"PACK-{typ}", single_op("PACK", [mk((3, 4)), mk((3, 4))], mk((3, 2, 4)),
                                               {"values_count": 2, "axis": 1})))
    # int8 CONCATENATION with differing input scales: TFLM copies raw values.
    cases.append(("CONCAT-i8-scales", single_op("CONCATENATION", [q8((2, 3), 0.1, 3), q8((2, 5), 0.7, -20)],
                                                q8((2, 8), 0.3, 0), {"axis": 1})))
    cases.append(("SHAPE", single_op("SHAPE", [f32(S)], i32((4,)), {"out_type": "INT32"})))
    for src, dst in (("f32", "i32"), ("i8", "f32"), ("i32", "f32"), ("i16", "i32"), ("i8", "i32"),
                     ("f32", "i16"), ("i32", "i8")):
        mk = {"f32": f32, "i32": i32, "i8": lambda s: dict(shape=s, type="INT8"),
              "i16": lambda s: dict(shape=s, type="INT16")}
        cases.append((f"CAST-{src}-{dst}", single_op("CAST", [mk[src]((3, 7))], mk[dst]((3, 7)))))
    # STRIDED_SLICE: random begin/end/strides/masks, including negative strides; oracle decides
    # which are valid (our prepare must then reject the same ones).
    for k in range(40):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 7, size=rank))
        begin = [int(rng.integers(-d - 1, d + 2)) for d in shape]
        end = [int(rng.integers(-d - 1, d + 2)) for d in shape]
        strides = [int(rng.choice([-3, -2, -1, 1, 1, 2, 3])) for _ in shape]
        bm, em = int(rng.integers(0, 1 << rank)), int(rng.integers(0, 1 << rank))
        sm = int(rng.integers(0, 1 << rank)) if k % 3 == 0 else 0
        strides = [1 if sm >> ax & 1 else s for ax, s in enumerate(strides)]
        axes, out_shape = shape_ops.strided_slice_plan(shape, begin, end, strides, bm, em, sm)
        if 0 in out_shape:
            continue  # zero-size tensors are dynamic for TFLM: the interpreter rejects them
        if math.prod(len(a) for a in axes) != math.prod(out_shape):
            continue  # shrink index out of range: TFLM leaves the output unwritten (garbage)
        typ = ["INT8", "FLOAT32", "INT16", "INT32"][k % 4]
        mk = lambda s: dict(shape=s, type=typ, **({"scale": 0.1, "zp": 1} if typ in ("INT8", "INT16") else {}))  # noqa: E731
        cases.append((f"STRIDED_SLICE-{k}", single_op(
            "STRIDED_SLICE", [mk(shape), i32((rank,), data=np.array(begin)), i32((rank,), data=np.array(end)),
                              i32((rank,), data=np.array(strides))],
            mk(tuple(out_shape)), {"begin_mask": bm, "end_mask": em, "shrink_axis_mask": sm})))
    return cases


ALL_CASES = _binary_cases() + _unary_cases() + _quant_cases() + _shape_cases()


@pytest.mark.parametrize("name,data", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_single_op_matches_tflm(name, data):
    assert_matches_oracle(data, trials=4, seed=len(name))


# --------------------------------------------------------------------------- pure functions

def test_gemmlowp_logistic_tanh_close_to_real():
    x = np.linspace(-7.9, 7.9, 101)
    raw = np.round(x * 2 ** 27).astype(np.int64)
    lo = fixedpoint.gemmlowp_logistic(raw, 4) / 2 ** 31
    th = fixedpoint.gemmlowp_tanh(raw, 4) / 2 ** 31
    assert np.max(np.abs(lo - 1 / (1 + np.exp(-x)))) < 1e-6
    assert np.max(np.abs(th - np.tanh(x))) < 1e-6


def test_add_sub_multipliers():
    # ADD and SUB compute their rescaling multipliers in double (seanet sub0/1/3 need it).
    class T:
        def __init__(self, s, z, dt=np.int8):
            self.scales, self.zero_points, self.dtype = np.float32([s]), np.int64([z]), np.dtype(dt)
    a, b, o = T(0.0123, 3), T(0.0456, -7), T(0.0789, 1)
    pa = elementwise.add_sub_params(a, b, o, "NONE", is_sub=False)
    ps = elementwise.add_sub_params(a, b, o, "NONE", is_sub=True)
    assert pa["left_shift"] == ps["left_shift"] == 20
    assert pa["sh2"] == 0 and pa["m2"] == 1 << 30  # input2 has the larger scale: 1/2


def test_persistent_allocations_follow_tflm():
    data = single_op("CONCATENATION", [q8((2, 3), 0.1, 3), q8((2, 5), 0.1, 3), q8((2, 1), 0.1, 3)],
                     q8((2, 9), 0.1, 3), {"axis": 1})
    r = Runner(data)
    assert r.ctx.target.names == ["OpDataConcatenation"]
    assert r.ctx.persistent == [24]       # measured: no per-input arrays in the oracle's TFLM
    r = Runner(single_op("ADD", [q8((4,), 0.1, 0), q8((4,), 0.2, 0)], q8((4,), 0.3, 0)))
    assert r.ctx.target.names == ["OpDataAdd"]
    r = Runner(single_op("RESHAPE", [q8((4,), 0.1, 0), i32((1,), data=np.array([4]))], q8((4,), 0.1, 0)))
    assert r.ctx.target.names == [] and r.ctx.persistent == []


def test_prepare_errors_name_op_and_tensor():
    data = single_op("LOGISTIC", [q8((4,), 0.1, 0)], q8((4,), 1 / 256, 0))
    with pytest.raises(fixedpoint.KernelError, match=r"op 0 LOGISTIC: output 'out0'.*-128"):
        Runner(data)
    data = single_op("STRIDED_SLICE", [f32((4, 4)), i32((2,), data=np.array([0, 0])),
                                       i32((2,), data=np.array([4, 4])), i32((2,), data=np.array([1, 1]))],
                     f32((4, 3)))
    with pytest.raises(fixedpoint.KernelError, match="STRIDED_SLICE"):
        Runner(data)


# --------------------------------------------------------------------------- shared models

def _need(path: Path):
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


def test_seanet_models():
    """int16 ADD/SUB/PAD/QUANTIZE/STRIDED_SLICE/LEAKY_RELU graphs: exact against the oracle,
    within 1 LSB of the golden csv (the csv files come from another TFLM build: a few
    leaky_relu elements differ by one there, for the oracle as well)."""
    d = _need(SHARED / "tflm" / "integration_tests" / "seanet")
    try:
        from tflite_micro import runtime
    except Exception:
        runtime = None
    reg = _registry()
    ran = 0
    for m in sorted(d.rglob("*.tflite")):
        data = m.read_bytes()
        sg = read_model(data).main
        if any(op.op_name not in reg for op in sg.operators):
            continue
        inputs = sorted(m.parent.glob(m.stem + "_input*.csv"))
        goldens = sorted(m.parent.glob(m.stem + "_golden*.csv"))
        if len(inputs) != len(sg.inputs) or not goldens:
            continue
        ins = [np.loadtxt(p, delimiter=",").astype(sg.tensors[i].dtype).reshape(sg.tensors[i].shape)
               for p, i in zip(inputs, sg.inputs)]
        got = Runner(data).run(*ins)[0]
        exp = np.loadtxt(goldens[0], delimiter=",").reshape(-1).astype(np.int64)
        assert np.max(np.abs(got.reshape(-1).astype(np.int64) - exp)) <= 1, m.name
        if runtime is not None:
            tm = runtime.Interpreter.from_bytes(data, arena_size=1 << 22)
            for k, x in enumerate(ins):
                tm.set_input(x, k)
            tm.invoke()
            assert np.array_equal(np.asarray(tm.get_output(0)), got), m.name
        ran += 1
    assert ran > 0


def test_simple_add_model():
    p = _need(SHARED / "tflm" / "simple_add_model.tflite")
    data = p.read_bytes()
    r = Runner(data)
    runtime = oracle_or_skip()
    tm = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    rng = np.random.default_rng(3)
    for _ in range(3):
        ins = [_random_input(r.sg.tensors[i].dtype, r.sg.tensors[i].shape, rng, False) for i in r.sg.inputs]
        for k, x in enumerate(ins):
            tm.set_input(x, k)
        tm.invoke()
        got = r.run(*ins)
        for k, g in enumerate(got):
            assert np.array_equal(np.asarray(tm.get_output(k)), g)
