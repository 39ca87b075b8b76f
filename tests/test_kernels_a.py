"""Tests for kernels-A: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE/MAX_POOL_2D,
SOFTMAX, MEAN — bit-exact against the tflite-micro pip runtime (TFLM's reference kernels).

Two kinds of checks:
* single-op models built here (flatbuffers object API) covering the options the converter
  emits, run through the TFLM oracle and through our kernel;
* real models: every op of ours is fed the oracle's own input tensors
  (kPreserveAllTensors) and must reproduce the oracle's output tensor exactly.
The kernels run under a small fake KernelContext, so these tests do not need the interpreter.
"""
from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models" / "tflm"

try:
    import ai_edge_litert.schema_py_generated as schema
except Exception:  # pragma: no cover
    schema = None
try:
    from tflite_micro import runtime as tflm_runtime
except Exception:  # pragma: no cover
    tflm_runtime = None

needs_oracle = pytest.mark.skipif(schema is None or tflm_runtime is None,
                                  reason="needs ai_edge_litert schema and tflite_micro")

OUR_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
           "MAX_POOL_2D", "SOFTMAX", "MEAN")
MODULES = ("conv", "depthwise_conv", "fully_connected", "pooling", "softmax", "reduce")


def _kernels_pkg():
    try:
        return importlib.import_module("micro_rt.kernels").__name__
    except Exception:
        return "kernels"


def registrations() -> dict:
    pkg = _kernels_pkg()
    regs = {}
    for m in MODULES:
        mod = importlib.import_module(f"{pkg}.{m}")
        for name, reg, version in mod.BUILTINS:
            regs[name] = reg
    return regs


# ----------------------------------------------------------------------------- fake runtime

_NP_TYPES = {0: np.float32, 2: np.int32, 3: np.uint8, 4: np.int64, 6: np.bool_, 7: np.int16,
             9: np.int8, 10: np.float64}


class _Target:
    def sizeof(self, name: str) -> int:
        self.asked = getattr(self, "asked", []) + [name]
        return 64


@dataclass
class FakeTensor:
    index: int
    name: str
    dtype: object
    shape: tuple
    scales: np.ndarray
    zero_points: np.ndarray
    quantized_dimension: int
    is_constant: bool
    is_variable: bool = False
    _data: np.ndarray | None = None

    @property
    def data(self):
        return self._data

    @property
    def nbytes(self):
        return int(np.prod(self.shape)) * np.dtype(self.dtype).itemsize


@dataclass
class FakeCtx:
    tensors: dict
    target: _Target = field(default_factory=_Target)
    persistent: list = field(default_factory=list)
    scratch_requests: list = field(default_factory=list)

    def tensor(self, i):
        return None if i < 0 else self.tensors[i]

    def input(self, node, i):
        return self.tensor(node.inputs[i]) if i < len(node.inputs) else None

    def output(self, node, i):
        return self.tensors[node.outputs[i]]

    def allocate_persistent(self, nbytes):
        self.persistent.append(nbytes)
        return len(self.persistent)

    def request_scratch(self, nbytes):
        self.scratch_requests.append(nbytes)
        return len(self.scratch_requests) - 1

    def scratch(self, index):
        return np.zeros(self.scratch_requests[index], np.uint8)


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


_ACT = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
_PAD = {0: "SAME", 1: "VALID"}


def options_dict(op) -> dict:
    o = op.builtinOptions
    if o is None:
        return {}
    d = {}
    for k, v in vars(o).items():
        key = _snake(k)
        if key == "fused_activation_function":
            v = _ACT[v]
        elif key == "padding":
            v = _PAD[v]
        elif key == "weights_format":
            v = "DEFAULT" if v == 0 else str(v)
        d[key] = v
    return d


class LoadedModel:
    def __init__(self, data: bytes):
        self.bytes = data
        self.model = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
        self.sg = self.model.subgraphs[0]
        names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
        self.op_names = []
        for op in self.sg.operators:
            oc = self.model.operatorCodes[op.opcodeIndex]
            code = max(oc.builtinCode, oc.deprecatedBuiltinCode)
            self.op_names.append(names.get(code, "CUSTOM"))

    @classmethod
    def from_file(cls, path):
        return cls(Path(path).read_bytes())

    def const_data(self, t):
        buf = self.model.buffers[t.buffer]
        if buf is None or buf.data is None or len(buf.data) == 0:
            return None
        arr = np.frombuffer(bytes(bytearray(buf.data)), dtype=_NP_TYPES[t.type])
        return arr.reshape(tuple(t.shape) if t.shape is not None else ())

    def fake_tensor(self, i, value=None):
        t = self.sg.tensors[i]
        q = t.quantization
        scales = np.asarray(q.scale if q is not None and q.scale is not None else [], np.float32)
        zps = np.asarray(q.zeroPoint if q is not None and q.zeroPoint is not None else [], np.int64)
        qd = int(q.quantizedDimension) if q is not None else 0
        const = self.const_data(t)
        shape = tuple(int(d) for d in t.shape) if t.shape is not None else ()
        data = const if const is not None else (
            np.zeros(shape, _NP_TYPES[t.type]) if value is None else np.array(value, copy=True))
        return FakeTensor(i, (t.name or b"").decode() if isinstance(t.name, bytes) else str(t.name),
                          np.dtype(_NP_TYPES[t.type]), shape, scales, zps, qd,
                          const is not None, bool(t.isVariable), data)

    def run_op(self, op_index: int, values: dict, regs=None, return_ctx=False):
        """Run our kernel for one op; `values` maps tensor index -> array for non-constants."""
        from micro_rt.kernel_api import Node
        regs = regs or registrations()
        op = self.sg.operators[op_index]
        name = self.op_names[op_index]
        ins = tuple(int(i) for i in op.inputs)
        outs = tuple(int(i) for i in op.outputs)
        tensors = {i: self.fake_tensor(i, values.get(i)) for i in ins if i >= 0}
        for i in outs:
            tensors[i] = self.fake_tensor(i)
        ctx = FakeCtx(tensors)
        node = Node(index=op_index, op_name=name, version=1, inputs=ins, outputs=outs,
                    options=options_dict(op))
        reg = regs[name]
        node.user_data = reg.init(ctx, None) if reg.init else None
        if reg.prepare:
            reg.prepare(ctx, node)
        reg.invoke(ctx, node)
        res = tensors[outs[0]].data
        return (res, ctx) if return_ctx else res


def oracle_all_tensors(model_bytes: bytes, inputs: list) -> dict:
    """Run the tflite-micro runtime, return {tensor index: array} for every tensor."""
    it = tflm_runtime.Interpreter.from_bytes(
        model_bytes, intrepreter_config=tflm_runtime.InterpreterConfig.kPreserveAllTensors)
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    sg = schema.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0).subgraphs[0]
    return {i: np.array(it.GetTensor(i, 0)["tensor_data"]) for i in range(len(sg.tensors))}


def random_inputs(lm: LoadedModel, rng) -> list:
    xs = []
    for i in lm.sg.inputs:
        t = lm.sg.tensors[i]
        dt = np.dtype(_NP_TYPES[t.type])
        shape = tuple(int(d) for d in t.shape)
        if dt == np.float32:
            xs.append(rng.uniform(-2, 2, size=shape).astype(np.float32))
        else:
            info = np.iinfo(dt)
            xs.append(rng.integers(info.min, info.max + 1, size=shape, dtype=dt))
    return xs


def compare_model_ops(lm: LoadedModel, inputs: list, regs=None) -> dict:
    """Feed each of our ops the oracle's inputs; return {op name: ops checked}. Asserts equality."""
    regs = regs or registrations()
    tensors = oracle_all_tensors(lm.bytes, inputs)
    checked: dict = {}
    for k, name in enumerate(lm.op_names):
        if name not in OUR_OPS:
            continue
        op = lm.sg.operators[k]
        values = {int(i): tensors[int(i)] for i in op.inputs if i >= 0}
        got = lm.run_op(k, values, regs)
        want = tensors[int(op.outputs[0])]
        got = np.asarray(got).reshape(want.shape)
        if not np.array_equal(got, want, equal_nan=True):
            diff = np.nonzero(got != want)
            raise AssertionError(
                f"op {k} {name}: {len(diff[0])} of {want.size} elements differ; first at "
                f"{tuple(int(d[0]) for d in diff)}: got {got[diff][0]} want {want[diff][0]}")
        checked[name] = checked.get(name, 0) + 1
    return checked


# ----------------------------------------------------------------------------- model builder

def _q(scale, zp, dim=0):
    q = schema.QuantizationParametersT()
    q.scale = [float(s) for s in np.atleast_1d(scale)]
    q.zeroPoint = [int(z) for z in np.atleast_1d(zp)]
    q.quantizedDimension = dim
    return q


_TT = {np.dtype(np.float32): 0, np.dtype(np.int32): 2, np.dtype(np.int16): 7,
       np.dtype(np.int8): 9, np.dtype(np.int64): 4}


class ModelBuilder:
    """A one-subgraph model with one operator, for option coverage."""

    def __init__(self):
        self.tensors, self.buffers = [], [schema.BufferT()]
        self.inputs, self.outputs = [], []

    def tensor(self, shape, dtype, quant=None, data=None, name=None):
        t = schema.TensorT()
        t.shape = [int(d) for d in shape]
        t.type = _TT[np.dtype(dtype)]
        t.name = name or f"t{len(self.tensors)}"
        t.quantization = quant
        if data is not None:
            b = schema.BufferT()
            b.data = np.ascontiguousarray(np.asarray(data, dtype=dtype)).tobytes()
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        else:
            t.buffer = 0
        self.tensors.append(t)
        return len(self.tensors) - 1

    def build(self, op_name, inputs, outputs, options_type, options, version=1) -> bytes:
        import flatbuffers
        oc = schema.OperatorCodeT()
        code = getattr(schema.BuiltinOperator, op_name)
        oc.builtinCode = code
        oc.deprecatedBuiltinCode = min(code, 127)
        oc.version = version
        op = schema.OperatorT()
        op.opcodeIndex = 0
        op.inputs, op.outputs = list(inputs), list(outputs)
        op.builtinOptionsType = options_type
        op.builtinOptions = options
        sg = schema.SubGraphT()
        sg.tensors = self.tensors
        sg.inputs = [i for i in inputs if i >= 0 and self.tensors[i].buffer == 0]
        sg.outputs = list(outputs)
        sg.operators = [op]
        m = schema.ModelT()
        m.version = 3
        m.operatorCodes = [oc]
        m.subgraphs = [sg]
        m.buffers = self.buffers
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def check_single_op(model_bytes: bytes, rng, n_inputs=3):
    lm = LoadedModel(model_bytes)
    total = 0
    for _ in range(n_inputs):
        compare_model_ops(lm, random_inputs(lm, rng))
        total += 1
    return total
