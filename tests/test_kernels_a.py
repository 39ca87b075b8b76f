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
        model_bytes, arena_size=max(len(model_bytes) * 10, 1 << 20),
        intrepreter_config=tflm_runtime.InterpreterConfig.kPreserveAllTensors)
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


# ----------------------------------------------------------------------------- single-op models

def _act(name):
    return {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}[name]


def conv_model(rng, dtype="int8", in_shape=(1, 9, 11, 3), oc=4, k=(3, 3), stride=(1, 1),
               dil=(1, 1), padding="SAME", act="NONE", per_channel=True, bias=True,
               depthwise=False, mult=1):
    b = ModelBuilder()
    n, h, w, c = in_shape
    kh, kw = k
    if depthwise:
        oc = c * mult
        fshape = (1, kh, kw, oc)
        qdim = 3
    else:
        fshape = (oc, kh, kw, c)
        qdim = 0
    pad_enum = 0 if padding == "SAME" else 1
    from micro_rt.kernels.padding import compute_out_size
    oh = compute_out_size(padding, h, kh, stride[0], dil[0])
    ow = compute_out_size(padding, w, kw, stride[1], dil[1])
    if dtype == "float32":
        x = b.tensor(in_shape, np.float32)
        f = b.tensor(fshape, np.float32, data=rng.normal(0, 0.5, fshape))
        bi = b.tensor((oc,), np.float32, data=rng.normal(0, 1, oc)) if bias else -1
        y = b.tensor((n, oh, ow, oc), np.float32)
    else:
        in_scale, in_zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20))
        fs = rng.uniform(0.002, 0.02, oc if per_channel else 1).astype(np.float32)
        x = b.tensor(in_shape, np.int8, _q(in_scale, in_zp))
        f = b.tensor(fshape, np.int8, _q(fs, np.zeros(fs.size, int), qdim),
                     data=rng.integers(-127, 128, fshape))
        bs = (np.float32(in_scale) * fs).astype(np.float32)
        bi = b.tensor((oc,), np.int32, _q(bs, np.zeros(bs.size, int)),
                      data=rng.integers(-3000, 3000, oc)) if bias else -1
        y = b.tensor((n, oh, ow, oc), np.int8, _q(float(rng.uniform(0.05, 0.5)), int(rng.integers(-30, 30))))
    if depthwise:
        o = schema.DepthwiseConv2DOptionsT()
        o.depthMultiplier = mult
        ot = schema.BuiltinOptions.DepthwiseConv2DOptions
        name = "DEPTHWISE_CONV_2D"
    else:
        o = schema.Conv2DOptionsT()
        ot = schema.BuiltinOptions.Conv2DOptions
        name = "CONV_2D"
    o.padding, o.strideH, o.strideW = pad_enum, stride[0], stride[1]
    o.dilationHFactor, o.dilationWFactor = dil
    o.fusedActivationFunction = _act(act)
    ins = [x, f, bi] if bias else [x, f]
    return b.build(name, ins, [y], ot, o)


def fc_model(rng, dtype="int8", in_shape=(2, 10), oc=5, act="NONE", per_channel=False,
             bias=True, keep_num_dims=False):
    b = ModelBuilder()
    d = in_shape[-1]
    out_shape = tuple(in_shape[:-1]) + (oc,) if keep_num_dims else (int(np.prod(in_shape[:-1])), oc)
    if dtype == "float32":
        x = b.tensor(in_shape, np.float32)
        f = b.tensor((oc, d), np.float32, data=rng.normal(0, 0.5, (oc, d)))
        bi = b.tensor((oc,), np.float32, data=rng.normal(0, 1, oc)) if bias else -1
        y = b.tensor(out_shape, np.float32)
    else:
        in_scale, in_zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20))
        fs = rng.uniform(0.002, 0.02, oc if per_channel else 1).astype(np.float32)
        x = b.tensor(in_shape, np.int8, _q(in_scale, in_zp))
        f = b.tensor((oc, d), np.int8, _q(fs, np.zeros(fs.size, int), 0),
                     data=rng.integers(-127, 128, (oc, d)))
        bs = (np.float32(in_scale) * fs).astype(np.float32)
        bi = b.tensor((oc,), np.int32, _q(bs, np.zeros(bs.size, int)),
                      data=rng.integers(-3000, 3000, oc)) if bias else -1
        y = b.tensor(out_shape, np.int8, _q(float(rng.uniform(0.05, 0.5)), int(rng.integers(-30, 30))))
    o = schema.FullyConnectedOptionsT()
    o.fusedActivationFunction = _act(act)
    o.keepNumDims = keep_num_dims
    return b.build("FULLY_CONNECTED", [x, f, bi], [y], schema.BuiltinOptions.FullyConnectedOptions, o)


def pool_model(rng, kind="AVERAGE_POOL_2D", dtype="int8", in_shape=(1, 9, 10, 3), k=(3, 3),
               stride=(2, 2), padding="SAME", act="NONE"):
    b = ModelBuilder()
    n, h, w, c = in_shape
    from micro_rt.kernels.padding import compute_out_size
    oh = compute_out_size(padding, h, k[0], stride[0])
    ow = compute_out_size(padding, w, k[1], stride[1])
    if dtype == "float32":
        x = b.tensor(in_shape, np.float32)
        y = b.tensor((n, oh, ow, c), np.float32)
    else:
        q = _q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        x = b.tensor(in_shape, np.int8, q)
        y = b.tensor((n, oh, ow, c), np.int8, q)
    o = schema.Pool2DOptionsT()
    o.padding = 0 if padding == "SAME" else 1
    o.strideH, o.strideW = stride
    o.filterHeight, o.filterWidth = k
    o.fusedActivationFunction = _act(act)
    return b.build(kind, [x], [y], schema.BuiltinOptions.Pool2DOptions, o)


def softmax_model(rng, dtype="int8", out_dtype=None, shape=(2, 7), beta=1.0, in_scale=None):
    b = ModelBuilder()
    out_dtype = out_dtype or dtype
    if dtype == "float32":
        x = b.tensor(shape, np.float32)
        y = b.tensor(shape, np.float32)
    else:
        x = b.tensor(shape, np.int8, _q(in_scale or float(rng.uniform(0.02, 0.3)), int(rng.integers(-20, 20))))
        if out_dtype == "int16":
            y = b.tensor(shape, np.int16, _q(1.0 / 65536, -32768))
        else:
            y = b.tensor(shape, np.int8, _q(1.0 / 256, -128))
    o = schema.SoftmaxOptionsT()
    o.beta = beta
    return b.build("SOFTMAX", [x], [y], schema.BuiltinOptions.SoftmaxOptions, o)


def mean_model(rng, dtype="int8", in_shape=(1, 5, 6, 4), axis=(1, 2), keep_dims=True,
               same_quant=False):
    b = ModelBuilder()
    ax = [a + len(in_shape) if a < 0 else a for a in axis]
    out_shape = tuple(1 if i in ax else d for i, d in enumerate(in_shape)) if keep_dims else \
        tuple(d for i, d in enumerate(in_shape) if i not in ax)
    if dtype == "float32":
        x = b.tensor(in_shape, np.float32)
        y = b.tensor(out_shape, np.float32)
    else:
        qi = _q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        qo = qi if same_quant else _q(float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        x = b.tensor(in_shape, np.int8, qi)
        y = b.tensor(out_shape, np.int8, qo)
    a = b.tensor((len(axis),), np.int32, data=np.array(axis))
    o = schema.ReducerOptionsT()
    o.keepDims = keep_dims
    return b.build("MEAN", [x, a], [y], schema.BuiltinOptions.ReducerOptions, o)


def _single_op_cases():
    cases = []
    for dt in ("int8", "float32"):
        for pad in ("SAME", "VALID"):
            for stride, dil in (((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (1, 1)), ((1, 1), (2, 2)),
                                ((1, 2), (2, 1))):
                cases.append(("conv", dict(dtype=dt, padding=pad, stride=stride, dil=dil)))
                cases.append(("dw", dict(dtype=dt, padding=pad, stride=stride, dil=dil, depthwise=True)))
        for act in ("RELU", "RELU6", "RELU_N1_TO_1"):
            cases.append(("conv", dict(dtype=dt, act=act)))
            cases.append(("dw", dict(dtype=dt, act=act, depthwise=True)))
            cases.append(("fc", dict(dtype=dt, act=act)))
        cases.append(("conv", dict(dtype=dt, bias=False, k=(1, 1))))
        cases.append(("conv", dict(dtype=dt, k=(5, 2), in_shape=(2, 8, 7, 5))))
        cases.append(("conv", dict(dtype=dt, k=(3, 3), in_shape=(1, 6, 6, 4), oc=6)))
        cases.append(("dw", dict(dtype=dt, depthwise=True, mult=3, in_shape=(1, 7, 8, 2))))
        cases.append(("dw", dict(dtype=dt, depthwise=True, mult=2, stride=(2, 2), padding="VALID")))
        cases.append(("fc", dict(dtype=dt, bias=False)))
        cases.append(("fc", dict(dtype=dt, in_shape=(2, 3, 8), keep_num_dims=True)))
        cases.append(("fc", dict(dtype=dt, in_shape=(1, 1, 1, 64))))
        for kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            for pad in ("SAME", "VALID"):
                cases.append(("pool", dict(kind=kind, dtype=dt, padding=pad)))
                cases.append(("pool", dict(kind=kind, dtype=dt, padding=pad, k=(2, 3), stride=(1, 2),
                                           act="RELU6")))
        cases.append(("softmax", dict(dtype=dt)))
        cases.append(("softmax", dict(dtype=dt, shape=(1, 1, 3, 30), beta=0.5)))
        cases.append(("mean", dict(dtype=dt)))
        cases.append(("mean", dict(dtype=dt, keep_dims=False)))
        cases.append(("mean", dict(dtype=dt, axis=(2, 1))))
        cases.append(("mean", dict(dtype=dt, axis=(-3, -2))))
        cases.append(("mean", dict(dtype=dt, axis=(3,), keep_dims=False)))
        cases.append(("mean", dict(dtype=dt, in_shape=(2, 3, 4), axis=(0, 2), keep_dims=True)))
    cases.append(("conv", dict(per_channel=False)))
    cases.append(("dw", dict(depthwise=True, mult=4, in_shape=(1, 9, 8, 1), k=(4, 3), stride=(2, 2))))
    cases.append(("dw", dict(depthwise=True, mult=2, in_shape=(1, 9, 8, 1), k=(3, 3), padding="VALID",
                             per_channel=False)))
    cases.append(("dw", dict(per_channel=False, depthwise=True)))
    cases.append(("fc", dict(per_channel=True)))
    cases.append(("fc", dict(per_channel=True, bias=False, in_shape=(3, 17), oc=9)))
    cases.append(("softmax", dict(out_dtype="int16")))
    cases.append(("softmax", dict(in_scale=1.0, shape=(3, 10))))
    cases.append(("softmax", dict(in_scale=0.004, shape=(3, 10), beta=2.0)))
    cases.append(("mean", dict(same_quant=True, keep_dims=False)))
    cases.append(("mean", dict(same_quant=True, in_shape=(1, 3, 3, 8), axis=(1,))))
    cases.append(("mean", dict(in_shape=(1, 7, 7, 16))))
    return cases


_BUILDERS = {"conv": conv_model, "dw": conv_model, "fc": fc_model, "pool": pool_model,
             "softmax": softmax_model, "mean": mean_model}
SINGLE_OP_CASES = _single_op_cases()


@needs_oracle
@pytest.mark.parametrize("case", range(len(SINGLE_OP_CASES)),
                         ids=[f"{k}-{'-'.join(f'{a}={v}' for a, v in kw.items())}"
                              for k, kw in SINGLE_OP_CASES])
def test_single_op_matches_tflm(case):
    kind, kw = SINGLE_OP_CASES[case]
    rng = np.random.default_rng(1000 + case)
    model = _BUILDERS[kind](rng, **kw)
    assert check_single_op(model, rng, n_inputs=3) == 3


# ----------------------------------------------------------------------------- real models

REAL_MODELS = ["person_detect", "micro_speech_quantized", "network_tester_model",
               "test_conv_model", "hello_world_int8", "hello_world_float", "keyword_scrambled",
               "keyword_scrambled_8bit"]


@needs_oracle
@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="shared models not present")
@pytest.mark.parametrize("name", REAL_MODELS)
def test_real_model_ops_match_tflm(name):
    lm = LoadedModel.from_file(SHARED_MODELS / f"{name}.tflite")
    rng = np.random.default_rng(7)
    checked = {}
    for _ in range(2):
        for k, v in compare_model_ops(lm, random_inputs(lm, rng)).items():
            checked[k] = checked.get(k, 0) + v
    assert checked


@needs_oracle
@pytest.mark.skipif(not (SHARED_MODELS / "mobilenet_v2_quantized_1x3x224x224.tflite").exists(),
                    reason="shared models not present")
def test_mobilenet_v2_ops_match_tflm():
    lm = LoadedModel.from_file(SHARED_MODELS / "mobilenet_v2_quantized_1x3x224x224.tflite")
    checked = compare_model_ops(lm, random_inputs(lm, np.random.default_rng(3)))
    assert checked.get("MEAN") == 1 and checked.get("CONV_2D") == 35


@pytest.mark.skipif(not SHARED_MODELS.exists(), reason="shared models not present")
def test_network_tester_golden_output():
    lm = LoadedModel.from_file(SHARED_MODELS / "network_tester_model.tflite")
    x = np.load(SHARED_MODELS / "testdata" / "network_tester_input_data.npy")
    want = np.load(SHARED_MODELS / "testdata" / "network_tester_expected_output_data.npy")
    op = lm.sg.operators[0]
    inp = int(op.inputs[0])
    shape = tuple(lm.sg.tensors[inp].shape)
    got = lm.run_op(0, {inp: np.asarray(x).reshape(shape).astype(np.int8)})
    assert np.array_equal(np.asarray(got).ravel(), np.asarray(want).ravel().astype(got.dtype))


# ----------------------------------------------------------------------------- arithmetic units

def test_requantize_matches_reference():
    from micro_rt.kernels.quant import Requantizer, multiply_by_quantized_multiplier, requantize
    rng = np.random.default_rng(0)
    x = rng.integers(-2**31, 2**31, (300, 40))
    m = rng.integers(2**30, 2**31, 40)
    for lo, hi in ((-31, 8), (-20, 1), (0, 1)):
        s = rng.integers(lo, hi, 40)
        want = multiply_by_quantized_multiplier(x, m, s)
        assert np.array_equal(requantize(x, m, s), want)
    rq = Requantizer((300, 40), m, s, None, 0, -2**31, 2**31 - 1, tile=3)
    out = np.empty((300, 40), np.int64)
    rq.run(x, out)
    assert np.array_equal(out, multiply_by_quantized_multiplier(x, m, s))


def test_padding_matches_tflm_formulas():
    from micro_rt.kernels.padding import compute_padding_height_width
    pv, oh, ow = compute_padding_height_width(2, 2, 1, 1, 96, 96, 3, 3, "SAME")
    assert (oh, ow, pv.height, pv.width, pv.height_offset) == (48, 48, 0, 0, 1)
    pv, oh, ow = compute_padding_height_width(1, 1, 2, 2, 10, 9, 3, 3, "VALID")
    assert (oh, ow, pv.height, pv.width) == (6, 5, 0, 0)
    pv, oh, ow = compute_padding_height_width(1, 1, 1, 1, 5, 5, 3, 3, "SAME")
    assert (oh, ow, pv.height, pv.width) == (5, 5, 1, 1)


def test_persistent_and_scratch_requests():
    if schema is None:
        pytest.skip("needs the flatbuffers schema")
    rng = np.random.default_rng(0)
    lm = LoadedModel(conv_model(rng, oc=6))
    _, ctx = lm.run_op(0, {0: np.zeros((1, 9, 11, 3), np.int8)}, return_ctx=True)
    assert ctx.target.asked == ["OpDataConv"] and ctx.persistent == [64, 24, 24]
    lm = LoadedModel(fc_model(rng, per_channel=True))
    _, ctx = lm.run_op(0, {0: np.zeros((2, 10), np.int8)}, return_ctx=True)
    assert ctx.target.asked == ["OpDataFullyConnected"] and ctx.persistent == [64, 20, 20]
    lm = LoadedModel(mean_model(rng))
    _, ctx = lm.run_op(0, {0: np.zeros((1, 5, 6, 4), np.int8)}, return_ctx=True)
    assert ctx.target.asked == ["OpDataReduce"] and ctx.scratch_requests == [16, 8, 16]


# ----------------------------------------------------------------------------- whole models

CONVERTER_MODELS = ROOT / "models"


def _interpreter():
    try:
        import micro_rt
        return micro_rt.Interpreter
    except Exception:
        return None


def _model_paths():
    paths = []
    for name in REAL_MODELS + ["mobilenet_v2_quantized_1x3x224x224"]:
        p = SHARED_MODELS / f"{name}.tflite"
        if p.exists():
            paths.append(p)
    if CONVERTER_MODELS.exists():
        paths += sorted(CONVERTER_MODELS.glob("*.tflite"))
    return paths


@needs_oracle
@pytest.mark.skipif(_interpreter() is None, reason="micro_rt.Interpreter not importable")
@pytest.mark.parametrize("path", _model_paths(), ids=lambda p: p.stem)
def test_whole_model_matches_tflm(path):
    lm = LoadedModel.from_file(path)
    try:
        ours = _interpreter().from_file(path)
    except Exception as e:  # ops owned by other kernel groups may not exist yet
        if type(e).__name__ == "UnsupportedOpError":
            pytest.skip(f"unsupported op: {e}")
        raise
    orc = tflm_runtime.Interpreter.from_file(str(path), arena_size=max(len(lm.bytes) * 10, 1 << 20))
    rng = np.random.default_rng(11)
    for _ in range(1 if "mobilenet_v2" in path.stem else 3):
        xs = random_inputs(lm, rng)
        for i, x in enumerate(xs):
            ours.set_input(x, i)
            orc.set_input(x, i)
        ours.invoke()
        orc.invoke()
        for j in range(len(lm.sg.outputs)):
            want = orc.get_output(j)
            got = np.asarray(ours.get_output(j)).reshape(want.shape)
            assert np.array_equal(got, want, equal_nan=True), f"output {j}"


@needs_oracle
@pytest.mark.skipif(not CONVERTER_MODELS.exists(), reason="converter models not present")
@pytest.mark.parametrize("path", sorted(CONVERTER_MODELS.glob("*.tflite")) if CONVERTER_MODELS.exists() else [],
                         ids=lambda p: p.stem)
def test_converter_model_ops_match_tflm(path):
    lm = LoadedModel.from_file(path)
    rng = np.random.default_rng(5)
    for _ in range(2):
        compare_model_ops(lm, random_inputs(lm, rng))
