"""C kernels on the virtual MCU vs their numpy twins (micro_rt.kernels), bit for bit.

- random seeded cases per kernel (shapes, strides, paddings, per-channel) on several cores,
  int8, float32 and int16 (16x8); float32 is bit-equal too, except LOGISTIC / TANH (within
  MAX_ULP = 2) and SOFTMAX (within SOFTMAX_MAX_ULP = 4), whose exp / tanh come from newlib on
  the device and glibc on the host (those are also checked bit-equal against TFLM's formula
  evaluated with the firmware's own expf / tanhf);
- every models/*_f32.tflite, hello_world_float and test_conv_model run whole on the MCU with
  the host Interpreter's outputs; the float tests run on every core: soft-float on the M0+,
  hardware VFP on the M4 / M7 / M33 (-mfloat-abi=softfp), with no fused multiply-add in the
  kernels and IEEE denormals;
- scratch_bytes() (Python mirror) == the C *_get_buffer_size functions;
- every int8 op of the shared TFLM models run both ways;
- `make firmware` into a temp dir reproduces the shipped ELFs byte for byte.
Skips when the emulator, the firmware, the cross compiler or the shared models are missing.
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import SHARED_MODELS, missing, require_tool

ROOT = Path(__file__).resolve().parents[1]
FIRMWARE = ROOT / "cortexm" / "firmware"
SRC = ROOT / "cortexm" / "src"
SHARED = SHARED_MODELS
CORES_FAST = ["cortex-m0plus", "cortex-m4"]
CORES_ALL = ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"]
# float32 kernels: the soft-float M0+ and all three hardware-FPU builds (M4 FPv4-SP, M7 FPv5-DP,
# M33 FPv5-SP), which must all give the same bits
CORES_FLOAT = CORES_ALL


def _machine_cls():
    stub = os.environ.get("MICRO_RT_VMCU_STUB")      # developer hook: a stand-in VirtualMCU module
    if stub:
        sys.path.insert(0, str(Path(stub).parent))
        return importlib.import_module(Path(stub).stem).VirtualMCU
    from micro_rt.cortexm.machine import VirtualMCU
    return VirtualMCU


def _elf(core: str) -> Path:
    p = FIRMWARE / f"{core}.elf"
    if not p.exists():
        missing(f"firmware {p.name} not built (make firmware)")
    return p


_MCUS: dict = {}


def _mcu(core: str, arena_bytes: int = 1 << 20):
    key = (core, arena_bytes)
    if key not in _MCUS:
        _MCUS[key] = _machine_cls()(core, str(_elf(core)), arena_bytes=arena_bytes)
    return _MCUS[key]


# --------------------------------------------------------------------------- host twin harness

class T:
    """A TensorView for tests."""

    def __init__(self, index, shape, dtype, data=None, scales=(), zero_points=(), qdim=0, name=None):
        self.index, self.name = index, name or f"t{index}"
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.scales = np.asarray(scales, np.float32)
        self.zero_points = np.asarray(zero_points, np.int64)
        self.quantized_dimension = qdim
        self.is_constant = data is not None
        self.is_variable = False
        self._data = None if data is None else np.asarray(data, self.dtype).reshape(self.shape)

    @property
    def data(self):
        return self._data

    @property
    def nbytes(self):
        return int(np.prod(self.shape)) * self.dtype.itemsize


class HostCtx:
    def __init__(self, tensors):
        from micro_rt.targets import get_target
        self.target = get_target("cortex-m4")
        self.tensors = tensors
        self.scratch_bufs = []

    def tensor(self, i):
        return None if i < 0 else self.tensors[i]

    def input(self, node, i):
        return None if i >= len(node.inputs) or node.inputs[i] < 0 else self.tensors[node.inputs[i]]

    def output(self, node, i):
        return self.tensors[node.outputs[i]]

    def allocate_persistent(self, n):
        return 0

    def request_scratch(self, n):
        self.scratch_bufs.append(np.zeros(int(n), np.uint8))
        return len(self.scratch_bufs) - 1

    def scratch(self, i):
        return self.scratch_bufs[i]


def _registration(op_name):
    from micro_rt import kernels as _k  # noqa: F401
    import pkgutil
    import micro_rt.kernels as pkg
    for mod in pkgutil.iter_modules(pkg.__path__):
        m = importlib.import_module(f"micro_rt.kernels.{mod.name}")
        for name, reg, _ in getattr(m, "BUILTINS", []):
            if name == op_name:
                return reg
    raise KeyError(op_name)


def run_both(core, op_name, options, inputs, outputs, seed_inputs=None, arena_misalign=0):
    """inputs/outputs: lists of T (constants carry data). Activation inputs get data from
    `seed_inputs` (index -> array). Returns (host outputs, mcu outputs, CallResult)."""
    from micro_rt.cortexm import ops
    from micro_rt.kernel_api import Node
    tensors = {t.index: t for t in inputs + outputs if t is not None}
    node = Node(index=0, op_name=op_name, version=1,
                inputs=tuple(-1 if t is None else t.index for t in inputs),
                outputs=tuple(t.index for t in outputs), options=dict(options))
    # host twin
    reg = _registration(op_name)
    ctx = HostCtx(tensors)
    node.user_data = reg.init(ctx, None) if reg.init else None
    if reg.prepare:
        reg.prepare(ctx, node)
    for t in tensors.values():
        if not t.is_constant:
            t._data = np.zeros(t.shape, t.dtype)
    for i, arr in (seed_inputs or {}).items():
        tensors[i]._data = np.asarray(arr, tensors[i].dtype).reshape(tensors[i].shape).copy()
    host_in = {i: tensors[i]._data.copy() for i in (seed_inputs or {})}
    reg.invoke(ctx, node)
    host_out = [t._data.copy() for t in outputs]
    # mcu
    mcu = _mcu(core)
    offsets, pos = {}, 0
    for t in tensors.values():
        if not t.is_constant:
            offsets[t.index] = pos
            pos += (t.nbytes + 15) // 16 * 16
    scratch = ops.scratch_bytes(mcu, core, node, tensors)
    scratch_off = pos if scratch else None
    pos += (scratch + 15) // 16 * 16
    for t in tensors.values():
        if not t.is_constant:
            fill = host_in.get(t.index)
            data = fill.tobytes() if fill is not None else bytes([0x5A]) * t.nbytes
            mcu.write(mcu.arena_base + offsets[t.index], data)
    res = ops.run_op(mcu, node, tensors, offsets, scratch_off)
    mcu_out = [np.frombuffer(mcu.read(mcu.arena_base + offsets[t.index], t.nbytes), t.dtype).reshape(t.shape)
               for t in outputs]
    return host_out, mcu_out, res


def assert_same(host, mcu, what=""):
    for h, m in zip(host, mcu):
        if not np.array_equal(h.view(np.uint8) if h.dtype != np.float32 else h.view(np.uint32),
                              m.view(np.uint8) if m.dtype != np.float32 else m.view(np.uint32)):
            diff = np.argwhere(h.reshape(-1) != m.reshape(-1)).reshape(-1)
            raise AssertionError(f"{what}: {diff.size} of {h.size} differ, first at {diff[:5]}: "
                                 f"host {h.reshape(-1)[diff[:5]]} mcu {m.reshape(-1)[diff[:5]]}")


# --------------------------------------------------------------------------- random case builders

def _q_act(rng, idx, shape, name="x"):
    return T(idx, shape, np.int8, scales=[rng.uniform(0.01, 0.1)], zero_points=[int(rng.integers(-20, 20))],
             name=name)


def _rand_i8(rng, shape):
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def conv_case(rng, n, ih, iw, ic, oc, fh, fw, stride, pad, dil=1, per_channel=True, act="NONE", groups=1,
              bias=True):
    x = _q_act(rng, 0, (n, ih, iw, ic))
    fic = ic // groups
    w = _rand_i8(rng, (oc, fh, fw, fic))
    ws = rng.uniform(0.002, 0.02, size=oc if per_channel else 1)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(ws.size, np.int64))
    b = T(2, (oc,), np.int32, data=rng.integers(-5000, 5000, size=oc), scales=ws * x.scales[0],
          zero_points=np.zeros(ws.size, np.int64)) if bias else None
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.int8, scales=[rng.uniform(0.05, 0.3)], zero_points=[int(rng.integers(-10, 10))])
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                fused_activation_function=act)
    return "CONV_2D", opts, [x, wt, b], [y], {0: _rand_i8(rng, x.shape)}


def dw_case(rng, ih, iw, ic, mult, fh, fw, stride, pad, dil=1, act="NONE", n=1):
    x = _q_act(rng, 0, (n, ih, iw, ic))
    oc = ic * mult
    w = _rand_i8(rng, (1, fh, fw, oc))
    ws = rng.uniform(0.002, 0.02, size=oc)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(oc, np.int64), qdim=3)
    b = T(2, (oc,), np.int32, data=rng.integers(-5000, 5000, size=oc))
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.int8, scales=[rng.uniform(0.05, 0.3)], zero_points=[int(rng.integers(-10, 10))])
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                depth_multiplier=mult, fused_activation_function=act)
    return "DEPTHWISE_CONV_2D", opts, [x, wt, b], [y], {0: _rand_i8(rng, x.shape)}


def fc_case(rng, batches, depth, out_depth, per_channel=False, act="NONE"):
    x = _q_act(rng, 0, (batches, depth))
    w = _rand_i8(rng, (out_depth, depth))
    ws = rng.uniform(0.002, 0.02, size=out_depth if per_channel else 1)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(ws.size, np.int64))
    b = T(2, (out_depth,), np.int32, data=rng.integers(-5000, 5000, size=out_depth),
          scales=np.float32(ws[0]) * x.scales[:1], zero_points=[0])
    y = T(3, (batches, out_depth), np.int8, scales=[rng.uniform(0.1, 0.5)], zero_points=[int(rng.integers(-10, 10))])
    return "FULLY_CONNECTED", dict(fused_activation_function=act), [x, wt, b], [y], {0: _rand_i8(rng, x.shape)}


def binary_case(rng, op, shape1, shape2, act="NONE"):
    a = _q_act(rng, 0, shape1)
    b = _q_act(rng, 1, shape2)
    if op in ("MAXIMUM", "MINIMUM"):
        b.scales, b.zero_points = a.scales, a.zero_points
    shape = np.broadcast_shapes(shape1, shape2)
    y = T(2, shape, np.int8, scales=a.scales if op in ("MAXIMUM", "MINIMUM") else [rng.uniform(0.02, 0.2)],
          zero_points=a.zero_points if op in ("MAXIMUM", "MINIMUM") else [int(rng.integers(-10, 10))])
    return op, dict(fused_activation_function=act), [a, b], [y], {0: _rand_i8(rng, shape1), 1: _rand_i8(rng, shape2)}


def pool_case(rng, op, n, ih, iw, c, fh, fw, stride, pad, act="NONE"):
    x = _q_act(rng, 0, (n, ih, iw, c))
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, 1, 1, ih, iw, fh, fw, pad)
    y = T(1, (n, oh, ow, c), np.int8, scales=x.scales, zero_points=x.zero_points)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, filter_width=fw, filter_height=fh,
                fused_activation_function=act)
    return op, opts, [x], [y], {0: _rand_i8(rng, x.shape)}


def softmax_case(rng, rows, depth, beta=1.0, out16=False):
    x = _q_act(rng, 0, (rows, depth))
    y = T(1, (rows, depth), np.int16 if out16 else np.int8, scales=[1 / 65536 if out16 else 1 / 256],
          zero_points=[-32768 if out16 else -128])
    return "SOFTMAX", dict(beta=beta), [x], [y], {0: _rand_i8(rng, x.shape)}


def unary_case(rng, op, shape, opts=None):
    x = _q_act(rng, 0, shape)
    zp, sc = int(rng.integers(-20, 20)), rng.uniform(0.01, 0.2)
    if op == "LOGISTIC":
        zp, sc = -128, 1 / 256
    if op == "TANH":
        zp, sc = 0, 1 / 128
    if op == "RELU6":
        zp, sc = int(x.zero_points[0]), float(x.scales[0])
    y = T(1, shape, np.int8, scales=[sc], zero_points=[zp])
    return op, dict(opts or {}), [x], [y], {0: _rand_i8(rng, shape)}


# --------------------------------------------------------------------------- tests

CONV_SHAPES = [
    # n, ih, iw, ic, oc, fh, fw, stride, pad, dil, per_channel, act, groups
    (1, 7, 9, 3, 5, 3, 3, 1, "SAME", 1, True, "NONE", 1),
    (1, 8, 8, 8, 6, 3, 3, 2, "SAME", 1, True, "RELU6", 1),
    (2, 6, 5, 5, 7, 2, 3, 1, "VALID", 1, False, "RELU", 1),
    (1, 6, 6, 16, 8, 1, 1, 1, "VALID", 1, True, "NONE", 1),   # 1x1 fast
    (1, 7, 7, 12, 9, 1, 1, 2, "VALID", 1, True, "NONE", 1),   # 1x1 strided
    (1, 1, 12, 4, 4, 1, 3, 1, "SAME", 1, True, "NONE", 1),    # 1xN
    (1, 9, 9, 4, 6, 3, 3, 1, "SAME", 2, True, "NONE", 1),     # dilation
    (1, 6, 6, 8, 6, 3, 3, 1, "SAME", 1, True, "NONE", 2),     # grouped
    (1, 5, 5, 7, 3, 5, 5, 2, "SAME", 1, True, "RELU_N1_TO_1", 1),
]


@pytest.mark.parametrize("core", CORES_ALL)
def test_conv(core):
    rng = np.random.default_rng(1)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        case = conv_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups, bias=(i != 2))
        h, m, _ = run_both(core, *case)
        assert_same(h, m, f"conv {args}")


DW_SHAPES = [
    # ih, iw, ic, mult, fh, fw, stride, pad, dil, act, n
    (8, 8, 8, 1, 3, 3, 1, "SAME", 1, "NONE", 1),       # 3x3
    (9, 7, 6, 1, 3, 3, 2, "SAME", 1, "RELU6", 1),      # 3x3 strided
    (7, 7, 5, 1, 5, 5, 1, "SAME", 1, "NONE", 1),       # opt
    (6, 6, 4, 2, 3, 3, 1, "VALID", 1, "NONE", 1),      # ch_mult 2 -> generic
    (8, 8, 3, 1, 3, 3, 1, "SAME", 2, "NONE", 1),       # dilation -> generic
    (5, 5, 7, 1, 3, 3, 1, "SAME", 1, "NONE", 2),       # batch 2 -> generic
    (10, 10, 16, 1, 3, 3, 2, "VALID", 1, "RELU", 1),
]


@pytest.mark.parametrize("core", CORES_ALL)
def test_depthwise(core):
    rng = np.random.default_rng(2)
    for args in DW_SHAPES:
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        h, m, _ = run_both(core, *dw_case(rng, ih, iw, ic, mult, fh, fw, st, pad, dil, act, n))
        assert_same(h, m, f"dw {args}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_fully_connected(core):
    rng = np.random.default_rng(3)
    for args in [(1, 16, 10, False, "NONE"), (3, 37, 9, False, "RELU"), (2, 64, 5, True, "NONE"),
                 (1, 7, 1, False, "RELU6"), (4, 250, 12, True, "NONE")]:
        h, m, _ = run_both(core, *fc_case(rng, *args))
        assert_same(h, m, f"fc {args}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_binary(core):
    rng = np.random.default_rng(4)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        for s1, s2, act in [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                            ((1, 4, 1, 3), (1, 1, 6, 1), "NONE"), ((37,), (37,), "RELU")]:
            h, m, _ = run_both(core, *binary_case(rng, op, s1, s2, act))
            assert_same(h, m, f"{op} {s1} {s2}")


@pytest.mark.parametrize("core", CORES_FAST + ["cortex-m33"])
def test_pooling(core):
    rng = np.random.default_rng(5)
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for args in [(1, 8, 8, 5, 2, 2, 2, "VALID", "NONE"), (1, 7, 9, 3, 3, 3, 2, "SAME", "RELU6"),
                     (2, 5, 5, 4, 5, 5, 1, "VALID", "NONE"), (1, 6, 6, 16, 3, 3, 1, "SAME", "NONE")]:
            h, m, _ = run_both(core, *pool_case(rng, op, *args))
            assert_same(h, m, f"{op} {args}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_softmax(core):
    rng = np.random.default_rng(6)
    for args in [(1, 10, 1.0, False), (4, 37, 1.0, False), (2, 12, 0.5, True), (3, 300, 1.0, False)]:
        h, m, _ = run_both(core, *softmax_case(rng, *args))
        assert_same(h, m, f"softmax {args}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_unary(core):
    rng = np.random.default_rng(7)
    for _ in range(3):
        for op, opts in [("RELU", {}), ("RELU6", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("LOGISTIC", {}),
                         ("TANH", {}), ("HARD_SWISH", {}), ("QUANTIZE", {})]:
            h, m, _ = run_both(core, *unary_case(rng, op, (2, 129), opts))
            assert_same(h, m, op)
        # every int8 value once
        op, opts, ins, outs, _ = unary_case(rng, "LOGISTIC", (256,))
        h, m, _ = run_both(core, op, opts, ins, outs, {0: np.arange(-128, 128)})
        assert_same(h, m, "logistic all")


@pytest.mark.parametrize("core", CORES_FAST)
def test_quantize_dequantize(core):
    rng = np.random.default_rng(8)
    x = T(0, (3, 50), np.float32)
    y = T(1, (3, 50), np.int8, scales=[0.05], zero_points=[3])
    vals = np.concatenate([rng.normal(0, 4, 140), [0.025, -0.025, 0.075, 1e10, -1e10, 6.4, -6.45, 0.0, 2.5, -2.5]])
    h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y], {0: vals.astype(np.float32)})
    assert_same(h, m, "quantize")
    x = T(0, (4, 33), np.int8, scales=[0.0371], zero_points=[-7])
    y = T(1, (4, 33), np.float32)
    h, m, _ = run_both(core, "DEQUANTIZE", {}, [x], [y], {0: _rand_i8(rng, (4, 33))})
    assert_same(h, m, "dequantize")


@pytest.mark.parametrize("core", CORES_FAST)
def test_data_movement(core):
    rng = np.random.default_rng(9)
    x = _q_act(rng, 0, (2, 3, 4, 5))
    # reshape
    y = T(1, (6, 20), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "RESHAPE", {}, [x], [y], {0: _rand_i8(rng, x.shape)})
    assert_same(h, m, "reshape")
    # transpose
    perm = T(1, (4,), np.int32, data=[2, 0, 3, 1])
    y = T(2, (4, 2, 5, 3), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "TRANSPOSE", {}, [x, perm], [y], {0: _rand_i8(rng, x.shape)})
    assert_same(h, m, "transpose")
    # pad
    pads = T(1, (4, 2), np.int32, data=[[0, 0], [1, 2], [0, 1], [2, 0]])
    y = T(2, (2, 6, 5, 7), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "PAD", {}, [x, pads], [y], {0: _rand_i8(rng, x.shape)})
    assert_same(h, m, "pad")
    # concatenation along axis 2 and pack along axis 1
    a = _q_act(rng, 0, (2, 3, 4, 5))
    b = T(1, (2, 3, 2, 5), np.int8, scales=a.scales, zero_points=a.zero_points)
    y = T(2, (2, 3, 6, 5), np.int8, scales=a.scales, zero_points=a.zero_points)
    h, m, _ = run_both(core, "CONCATENATION", {"axis": 2}, [a, b], [y],
                       {0: _rand_i8(rng, a.shape), 1: _rand_i8(rng, b.shape)})
    assert_same(h, m, "concat")
    a = T(0, (3, 4), np.float32)
    b = T(1, (3, 4), np.float32)
    y = T(2, (3, 2, 4), np.float32)
    h, m, _ = run_both(core, "PACK", {"axis": 1, "values_count": 2}, [a, b], [y],
                       {0: rng.normal(size=(3, 4)), 1: rng.normal(size=(3, 4))})
    assert_same(h, m, "pack")
    # strided slice
    x = _q_act(rng, 0, (1, 8, 6, 4))
    begin = T(1, (4,), np.int32, data=[0, 1, 5, 0])
    end = T(2, (4,), np.int32, data=[1, 7, 0, 4])
    strides = T(3, (4,), np.int32, data=[1, 2, -2, 1])
    y = T(4, (1, 3, 3, 4), np.int8, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "STRIDED_SLICE", {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0},
                       [x, begin, end, strides], [y], {0: _rand_i8(rng, x.shape)})
    assert_same(h, m, "strided_slice")


@pytest.mark.parametrize("core", CORES_FAST)
def test_mean(core):
    rng = np.random.default_rng(10)
    for shape, axes, keep in [((1, 5, 7, 16), [1, 2], True), ((2, 3, 4, 5), [3], False), ((3, 10), [0], False)]:
        x = _q_act(rng, 0, shape)
        ax = T(1, (len(axes),), np.int32, data=axes)
        out_shape = tuple(1 if (d in axes and keep) else s for d, s in enumerate(shape) if keep or d not in axes)
        y = T(2, out_shape, np.int8, scales=[rng.uniform(0.01, 0.1)], zero_points=[int(rng.integers(-10, 10))])
        h, m, _ = run_both(core, "MEAN", {"keep_dims": keep}, [x, ax], [y], {0: _rand_i8(rng, shape)})
        assert_same(h, m, f"mean {shape} {axes}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_scratch_bytes_match_c(core):
    """ops.scratch_bytes (Python mirror) equals the C *_get_buffer_size functions."""
    from micro_rt.cortexm import ops
    from micro_rt.kernel_api import Node
    import struct
    mcu = _mcu(core)
    rng = np.random.default_rng(11)
    for args in CONV_SHAPES:
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        op, opts, ins, outs, _ = conv_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups)
        node = Node(0, op, 1, tuple(t.index for t in ins), (outs[0].index,), options=opts)
        tensors = {t.index: t for t in ins + outs}
        g = ops._conv_geom(node, ins[0], ins[1], outs[0], False)
        mcu.args_reset()
        a = [mcu.args_alloc(struct.pack("<10i", g.in_off, g.out_off, g.sw, g.sh, g.pw, g.ph, g.dw, g.dh, 0, 0)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.ih, g.iw, g.ic)),
             mcu.args_alloc(struct.pack("<4i", g.oc, g.fh, g.fw, g.fc)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.oh, g.ow, g.oc))]
        c_size = mcu.call("arm_convolve_wrapper_s8_get_buffer_size", *a).return_value
        assert ops.scratch_bytes(mcu, core, node, tensors) == c_size, args
    for args in DW_SHAPES:
        op, opts, ins, outs, _ = dw_case(rng, *args[:10], n=args[10])
        node = Node(0, op, 1, tuple(t.index for t in ins), (outs[0].index,), options=opts)
        tensors = {t.index: t for t in ins + outs}
        g = ops._conv_geom(node, ins[0], ins[1], outs[0], True)
        mcu.args_reset()
        a = [mcu.args_alloc(struct.pack("<11i", g.in_off, g.out_off, g.oc // g.ic, g.sw, g.sh, g.pw, g.ph, g.dw,
                                        g.dh, 0, 0)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.ih, g.iw, g.ic)),
             mcu.args_alloc(struct.pack("<4i", 1, g.fh, g.fw, g.oc)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.oh, g.ow, g.oc))]
        c_size = mcu.call("arm_depthwise_conv_wrapper_s8_get_buffer_size", *a).return_value
        assert ops.scratch_bytes(mcu, core, node, tensors) == c_size, args
    for c in (1, 8, 13):
        op, opts, ins, outs, _ = pool_case(rng, "AVERAGE_POOL_2D", 1, 6, 6, c, 2, 2, 2, "VALID")
        node = Node(0, op, 1, (0,), (1,), options=opts)
        c_size = mcu.call("arm_avgpool_s8_get_buffer_size", 3, c).return_value
        assert ops.scratch_bytes(mcu, core, node, {0: ins[0], 1: outs[0]}) == c_size


# --------------------------------------------------------------------------- float32 kernels
# Bit-equal with the numpy twins (same float32 operation order), except the ops that call a
# transcendental (LOGISTIC, TANH, SOFTMAX): the device uses newlib's expf / tanhf as TFLM on
# the device does, the host twin glibc's, and the two libms differ in the last bit or two, so
# those are held within MAX_ULP units in the last place instead.

MAX_ULP = 2            # LOGISTIC, TANH: one libm call per element (+ one add and divide)
SOFTMAX_MAX_ULP = 4    # SOFTMAX: each exp's difference also enters the normalising sum, and
                       # the division adds its own rounding (measured max: 4 over 16k outputs)


def _ordered(bits: np.ndarray) -> np.ndarray:
    b = bits.astype(np.int64)
    return np.where(b & 0x80000000, -(b & 0x7FFFFFFF), b)


def ulp_diff(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    return np.abs(_ordered(np.asarray(h, np.float32).view(np.uint32)) -
                  _ordered(np.asarray(m, np.float32).view(np.uint32)))


def assert_close_ulp(host, mcu, what="", max_ulp=MAX_ULP):
    for h, m in zip(host, mcu):
        d = ulp_diff(h.reshape(-1), m.reshape(-1))
        assert d.max(initial=0) <= max_ulp, (f"{what}: {int((d > max_ulp).sum())} of {d.size} differ by more "
                                              f"than {max_ulp} ulp (max {int(d.max())})")


def _f32(rng, shape, scale=1.0):
    return (rng.normal(0, scale, size=shape)).astype(np.float32)


def conv_f32_case(rng, n, ih, iw, ic, oc, fh, fw, stride, pad, dil=1, act="NONE", groups=1, bias=True):
    x = T(0, (n, ih, iw, ic), np.float32)
    wt = T(1, (oc, fh, fw, ic // groups), np.float32, data=_f32(rng, (oc, fh, fw, ic // groups), 0.5))
    b = T(2, (oc,), np.float32, data=_f32(rng, oc)) if bias else None
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.float32)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                fused_activation_function=act)
    return "CONV_2D", opts, [x, wt] + ([b] if bias else []), [y], {0: _f32(rng, x.shape)}


def dw_f32_case(rng, ih, iw, ic, mult, fh, fw, stride, pad, dil=1, act="NONE", n=1, bias=True):
    x = T(0, (n, ih, iw, ic), np.float32)
    oc = ic * mult
    wt = T(1, (1, fh, fw, oc), np.float32, data=_f32(rng, (1, fh, fw, oc), 0.5))
    b = T(2, (oc,), np.float32, data=_f32(rng, oc)) if bias else None
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.float32)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                depth_multiplier=mult, fused_activation_function=act)
    return "DEPTHWISE_CONV_2D", opts, [x, wt] + ([b] if bias else []), [y], {0: _f32(rng, x.shape)}


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_conv_f32(core):
    rng = np.random.default_rng(21)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        h, m, _ = run_both(core, *conv_f32_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, act, groups,
                                                bias=(i != 2)))
        assert_same(h, m, f"conv f32 {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_depthwise_f32(core):
    rng = np.random.default_rng(22)
    for i, args in enumerate(DW_SHAPES):
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        h, m, _ = run_both(core, *dw_f32_case(rng, ih, iw, ic, mult, fh, fw, st, pad, dil, act, n, bias=(i != 3)))
        assert_same(h, m, f"dw f32 {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_fully_connected_f32(core):
    rng = np.random.default_rng(23)
    for in_shape, out_depth, act, bias, keep in [((1, 16), 10, "NONE", True, False), ((3, 37), 9, "RELU", False, False),
                                                 ((2, 3, 8), 5, "RELU6", True, True), ((4, 250), 12, "NONE", True, False),
                                                 ((1, 7), 1, "RELU_N1_TO_1", False, False)]:
        depth = in_shape[-1]
        x = T(0, in_shape, np.float32)
        w = T(1, (out_depth, depth), np.float32, data=_f32(rng, (out_depth, depth), 0.3))
        b = T(2, (out_depth,), np.float32, data=_f32(rng, out_depth))
        out_shape = tuple(in_shape[:-1]) + (out_depth,) if keep else (int(np.prod(in_shape)) // depth, out_depth)
        y = T(3, out_shape, np.float32)
        h, m, _ = run_both(core, "FULLY_CONNECTED", dict(fused_activation_function=act, keep_num_dims=keep),
                           [x, w] + ([b] if bias else []), [y], {0: _f32(rng, in_shape)})
        assert_same(h, m, f"fc f32 {in_shape} {out_depth}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_pooling_f32(core):
    rng = np.random.default_rng(24)
    from micro_rt.kernels.padding import compute_padding_height_width
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for n, ih, iw, c, fh, fw, st, pad, act in [(1, 8, 8, 5, 2, 2, 2, "VALID", "NONE"),
                                                   (1, 7, 9, 3, 3, 3, 2, "SAME", "RELU6"),
                                                   (2, 5, 5, 4, 5, 5, 1, "VALID", "NONE"),
                                                   (1, 6, 6, 16, 3, 3, 1, "SAME", "RELU")]:
            x = T(0, (n, ih, iw, c), np.float32)
            _, oh, ow = compute_padding_height_width(st, st, 1, 1, ih, iw, fh, fw, pad)
            y = T(1, (n, oh, ow, c), np.float32)
            opts = dict(padding=pad, stride_w=st, stride_h=st, filter_width=fw, filter_height=fh,
                        fused_activation_function=act)
            h, m, _ = run_both(core, op, opts, [x], [y], {0: _f32(rng, x.shape, 3.0)})
            assert_same(h, m, f"{op} f32 {(n, ih, iw, c, fh, fw, st, pad)}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_pooling_f32_windows_clip_to_the_image(core):
    """TFLM's float pooling loops visit only the taps inside the image, so a window far larger
    than the image costs what a window covering it costs; NaN inputs are skipped by max pooling
    (std::max keeps its first operand), an all-NaN window gives the type's lowest value."""
    rng = np.random.default_rng(26)
    from micro_rt.kernels.padding import compute_padding_height_width
    x = _f32(rng, (1, 6, 7, 3), 3.0)
    x[0, 0, :3, 0] = np.nan
    x[0, :2, :2, 1] = np.nan                      # the corner window of a 2x2 stride-2 pool
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        counts = []
        for fh, fw, st in ((13, 15, 1), (1001, 2001, 1), (2, 2, 2)):
            _, oh, ow = compute_padding_height_width(st, st, 1, 1, 6, 7, fh, fw, "SAME")
            opts = dict(padding="SAME", stride_w=st, stride_h=st, filter_width=fw, filter_height=fh,
                        fused_activation_function="NONE")
            h, m, res = run_both(core, op, opts, [T(0, x.shape, np.float32)], [T(1, (1, oh, ow, 3), np.float32)],
                                 {0: x})
            assert_same(h, m, f"{op} f32 {fh}x{fw} stride {st}")
            counts.append(res.instructions)
            if op == "MAX_POOL_2D" and st == 2:
                assert h[0][0, 0, 0, 1] == -np.finfo(np.float32).max and not np.isnan(h[0]).any()
        assert counts[1] < 1.2 * counts[0], (op, counts)


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_binary_f32(core):
    rng = np.random.default_rng(25)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        for s1, s2, act in [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                            ((1, 4, 1, 3), (1, 1, 6, 1), "RELU_N1_TO_1"), ((37,), (37,), "RELU"), ((), (7,), "NONE")]:
            shape = np.broadcast_shapes(s1, s2)
            a, b, y = T(0, s1, np.float32), T(1, s2, np.float32), T(2, shape, np.float32)
            h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y],
                               {0: _f32(rng, s1, 4.0), 1: _f32(rng, s2, 4.0)})
            assert_same(h, m, f"{op} f32 {s1} {s2}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
def test_float_denormals_f32(core):
    """Denormal products, sums and operands come out as numpy's (IEEE, no flush to zero) on the
    FPU cores as on the soft-float M0+."""
    tiny = np.array([1e-20, -1e-20, 1e-40, 1e-45, 3e-39, -2e-39, 2.0 ** -126, 1.5e-38, 0.0, 1e-22], np.float32)
    other = np.array([1e-20, 3e-19, 2.0, 0.5, -1.0, 1e-39, 0.75, 0.5, 1e-40, 1e-22], np.float32)
    for op in ("MUL", "ADD", "SUB"):
        a, b, y = T(0, tiny.shape, np.float32), T(1, tiny.shape, np.float32), T(2, tiny.shape, np.float32)
        h, m, _ = run_both(core, op, dict(fused_activation_function="NONE"), [a, b], [y], {0: tiny, 1: other})
        assert_same(h, m, f"{op} denormals")
        if op == "MUL":
            assert np.count_nonzero((m[0] != 0) & (np.abs(m[0]) < np.finfo(np.float32).tiny)) >= 4   # denormal results


# fused multiply-adds round once: they must not appear in the kernels (newlib's expf / expm1f,
# compiled with GCC's default -ffp-contract=fast, use VFMA; those are held within MAX_ULP anyway)
_FUSED = {"vfma", "vfms", "vfnma", "vfnms"}
_LIBM_FUSED_OK = {"expf", "__ieee754_expf", "expm1f", "tanhf", "__ieee754_tanhf"}


@pytest.mark.parametrize("core", CORES_ALL)
def test_firmware_float_instructions(core):
    """M0+ has no VFP instruction; the M4 / M7 / M33 kernels use the FPU and no fused multiply-add."""
    from micro_rt.cortexm import cycles as cyc
    from micro_rt.cortexm.elf import load_elf
    elf = load_elf(_elf(core))
    seg = next(sg for sg in elf.segments if sg.executable)
    names: dict = {}
    unpriced = set()
    for sym in elf.symbols.values():
        if sym.is_func and sym.size and seg.vaddr <= sym.addr < seg.vaddr + len(seg.data):
            code = seg.data[sym.addr - seg.vaddr:sym.addr - seg.vaddr + sym.size]
            insns = cyc.decode(code, sym.addr)
            names[sym.name] = {i.name for i in insns if i.cls in ("fp", "vld", "vst", "vldm", "vstm")}
            if sym.name.startswith(("mrt_", "arm_")):
                # every VFP instruction of the kernels has a cycle rule (not the ALU default)
                # (Advanced SIMD encodings, first halfword 0xEFxx / 0xFFxx / 0xF9xx, do not exist on
                # M-profile: those are literal-pool words capstone decodes as NEON)
                unpriced |= {i.name for i in insns if cyc._is_vfp(i.name) and i.cls == "alu"
                             and code[i.addr - sym.addr + 1] not in (0xEF, 0xFF, 0xF9)}
    assert not unpriced, unpriced
    if core == "cortex-m0plus":
        assert not any(names.values())
        return
    assert {"vmul", "vadd"} <= names["mrt_conv_f32"]
    fused = {fn for fn, ns in names.items() if ns & _FUSED}
    assert fused <= _LIBM_FUSED_OK, fused


def device_libm(core, fn: str, x: np.ndarray) -> np.ndarray:
    """newlib's `fn` (expf / tanhf) as linked in the firmware, called once per element."""
    mcu = _mcu(core)
    bits = np.asarray(x, np.float32).reshape(-1).view(np.uint32)
    out = [mcu.call(fn, int(b)).return_value & 0xFFFFFFFF for b in bits]
    return np.array(out, np.uint32).view(np.float32).reshape(np.shape(x))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
def test_unary_f32(core):
    rng = np.random.default_rng(26)
    special = np.array([0.0, -0.0, 3.0, -3.0, 6.0, -6.0, 1e-40, -1e-40, 16.619047, 16.62, -9.0, -9.0001, 30.0,
                        -30.0, 1e30, -1e30, 88.0, -104.0, 0.5, -0.5], np.float32)
    x_vals = np.concatenate([special, _f32(rng, 400, 3.0), _f32(rng, 200, 12.0), _f32(rng, 100, 0.01)])
    for op, opts in [("RELU", {}), ("RELU6", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("LEAKY_RELU", {"alpha": -1.5}),
                     ("HARD_SWISH", {}), ("LOGISTIC", {}), ("TANH", {})]:
        x, y = T(0, x_vals.shape, np.float32), T(1, x_vals.shape, np.float32)
        h, m, _ = run_both(core, op, opts, [x], [y], {0: x_vals})
        if op in ("LOGISTIC", "TANH"):
            assert_close_ulp(h, m, op)
            # ... and bit-equal to TFLM's formula evaluated with the device's own libm.
            xs = x_vals[:120]
            if op == "TANH":
                ref = device_libm(core, "tanhf", xs)
            else:
                f1 = np.float32(1.0)
                e_neg = device_libm(core, "expf", -xs)
                e_pos = device_libm(core, "expf", xs)
                ref = np.where(xs > np.float32(16.619047164916992188), f1,
                               np.where(xs < np.float32(-9.0), e_pos, f1 / (f1 + e_neg)))
            assert_same([ref], [m[0][:120]], f"{op} with newlib")
        else:
            assert_same(h, m, f"{op} f32")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_softmax_f32(core):
    rng = np.random.default_rng(27)
    for rows, depth, beta, scale in [(1, 10, 1.0, 1.0), (4, 37, 1.0, 5.0), (2, 12, 0.5, 20.0), (3, 300, 1.0, 2.0),
                                     (2, 1, 1.0, 1.0)]:
        x, y = T(0, (rows, depth), np.float32), T(1, (rows, depth), np.float32)
        xv = _f32(rng, (rows, depth), scale)
        h, m, _ = run_both(core, "SOFTMAX", dict(beta=beta), [x], [y], {0: xv})
        assert_close_ulp(h, m, f"softmax f32 {(rows, depth, beta)}", SOFTMAX_MAX_ULP)
        if rows * depth <= 100:
            # TFLM's float softmax with the device's expf: bit-equal.
            arg = (xv - xv.max(axis=1, keepdims=True)) * np.float32(beta)
            e = device_libm(core, "expf", arg)
            total = np.add.accumulate(e, axis=1, dtype=np.float32)[:, -1:]
            assert_same([e / total], m, f"softmax f32 {(rows, depth, beta)} with newlib expf")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_mean_f32(core):
    rng = np.random.default_rng(28)
    for shape, axes, keep in [((1, 5, 7, 16), [1, 2], True), ((2, 3, 4, 5), [3], False), ((3, 10), [0], False),
                              ((2, 3, 4, 5), [-1, 0, 3], False), ((4, 6), [0, 1], True)]:
        x = T(0, shape, np.float32)
        ax = T(1, (len(axes),), np.int32, data=axes)
        norm = {a % len(shape) for a in axes}
        out_shape = tuple(1 if (d in norm and keep) else s for d, s in enumerate(shape) if keep or d not in norm)
        y = T(2, out_shape, np.float32)
        h, m, _ = run_both(core, "MEAN", {"keep_dims": keep}, [x, ax], [y], {0: _f32(rng, shape, 3.0)})
        assert_same(h, m, f"mean f32 {shape} {axes}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_quantize_dequantize_int16_float(core):
    rng = np.random.default_rng(29)
    x = T(0, (3, 50), np.float32)
    y = T(1, (3, 50), np.int16, scales=[0.001], zero_points=[0])
    vals = np.concatenate([rng.normal(0, 10, 140), [0.0005, -0.0005, 0.0015, 1e10, -1e10, 32.7675, -32.7685,
                                                   0.0, 2.5, -2.5]])
    h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y], {0: vals.astype(np.float32)})
    assert_same(h, m, "quantize f32->i16")
    x = T(0, (4, 33), np.int16, scales=[0.000371], zero_points=[0])
    y = T(1, (4, 33), np.float32)
    h, m, _ = run_both(core, "DEQUANTIZE", {}, [x], [y], {0: rng.integers(-32768, 32768, size=(4, 33))})
    assert_same(h, m, "dequantize i16->f32")


# --------------------------------------------------------------------------- int16 kernels (bit-equal)

def _q16(rng, idx, shape, zp=0):
    return T(idx, shape, np.int16, scales=[rng.uniform(0.0005, 0.002)], zero_points=[zp])


def _rand_i16(rng, shape):
    return rng.integers(-32768, 32768, size=shape).astype(np.int16)


@pytest.mark.parametrize("core", CORES_FAST)
def test_conv_depthwise_fc_16x8(core):
    from micro_rt.kernels.padding import compute_padding_height_width
    rng = np.random.default_rng(31)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        x = _q16(rng, 0, (n, ih, iw, ic))
        w = _rand_i8(rng, (oc, fh, fw, ic // groups))
        ws = rng.uniform(0.002, 0.02, size=oc if pc else 1)
        wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(ws.size, np.int64))
        bdt = np.int64 if i % 2 == 0 else np.int32
        b = T(2, (oc,), bdt, data=rng.integers(-200000, 200000, size=oc))
        _, oh, ow = compute_padding_height_width(st, st, dil, dil, ih, iw, fh, fw, pad)
        y = T(3, (n, oh, ow, oc), np.int16, scales=[rng.uniform(0.01, 0.05)], zero_points=[0])
        opts = dict(padding=pad, stride_w=st, stride_h=st, dilation_w_factor=dil, dilation_h_factor=dil,
                    fused_activation_function=act)
        h, m, _ = run_both(core, "CONV_2D", opts, [x, wt] + ([b] if i != 2 else []), [y], {0: _rand_i16(rng, x.shape)})
        assert_same(h, m, f"conv 16x8 {args}")
    for i, args in enumerate(DW_SHAPES):
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        x = _q16(rng, 0, (n, ih, iw, ic))
        oc = ic * mult
        w = _rand_i8(rng, (1, fh, fw, oc))
        ws = rng.uniform(0.002, 0.02, size=oc)
        wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(oc, np.int64), qdim=3)
        b = T(2, (oc,), np.int64, data=rng.integers(-200000, 200000, size=oc))
        _, oh, ow = compute_padding_height_width(st, st, dil, dil, ih, iw, fh, fw, pad)
        y = T(3, (n, oh, ow, oc), np.int16, scales=[rng.uniform(0.01, 0.05)], zero_points=[0])
        opts = dict(padding=pad, stride_w=st, stride_h=st, dilation_w_factor=dil, dilation_h_factor=dil,
                    depth_multiplier=mult, fused_activation_function=act)
        h, m, _ = run_both(core, "DEPTHWISE_CONV_2D", opts, [x, wt, b], [y], {0: _rand_i16(rng, x.shape)})
        assert_same(h, m, f"dw 16x8 {args}")
    # One input channel: the twin's im2col shortcut must use the 16x8 int64 output stage too.
    x = _q16(rng, 0, (1, 6, 6, 1))
    wt = T(1, (1, 3, 3, 2), np.int8, data=_rand_i8(rng, (1, 3, 3, 2)), scales=[0.01, 0.01], zero_points=[0, 0],
           qdim=3)
    y = T(3, (1, 6, 6, 2), np.int16, scales=[0.02], zero_points=[0])
    h, m, _ = run_both(core, "DEPTHWISE_CONV_2D", dict(padding="SAME", depth_multiplier=2), [x, wt], [y],
                       {0: _rand_i16(rng, x.shape)})
    assert_same(h, m, "dw 16x8 one input channel")
    for batches, depth, out_depth, act, bias in [(1, 16, 10, "NONE", True), (3, 37, 9, "RELU", False),
                                                 (4, 250, 12, "RELU6", True)]:
        x = _q16(rng, 0, (batches, depth))
        w = _rand_i8(rng, (out_depth, depth))
        wt = T(1, w.shape, np.int8, data=w, scales=[0.01], zero_points=[0])
        b = T(2, (out_depth,), np.int64, data=rng.integers(-200000, 200000, size=out_depth))
        y = T(3, (batches, out_depth), np.int16, scales=[rng.uniform(0.05, 0.2)], zero_points=[0])
        h, m, _ = run_both(core, "FULLY_CONNECTED", dict(fused_activation_function=act),
                           [x, wt] + ([b] if bias else []), [y], {0: _rand_i16(rng, x.shape)})
        assert_same(h, m, f"fc 16x8 {(batches, depth, out_depth)}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_binary_int16(core):
    rng = np.random.default_rng(32)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        for s1, s2, act in [((1, 4, 4, 8), (1, 4, 4, 8), "NONE"), ((2, 3, 5), (1, 1, 5), "RELU6"),
                            ((1, 4, 1, 3), (1, 1, 6, 1), "RELU"), ((37,), (37,), "NONE")]:
            a, b = _q16(rng, 0, s1), _q16(rng, 1, s2)
            if op in ("MAXIMUM", "MINIMUM"):
                b.scales = a.scales
            y = _q16(rng, 2, np.broadcast_shapes(s1, s2))
            if op == "MUL":
                y.scales = np.asarray([rng.uniform(0.2, 1.0)], np.float32)
            h, m, _ = run_both(core, op, dict(fused_activation_function=act), [a, b], [y],
                               {0: _rand_i16(rng, s1), 1: _rand_i16(rng, s2)})
            assert_same(h, m, f"{op} int16 {s1} {s2}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_unary_and_requantize_int16(core):
    rng = np.random.default_rng(33)
    for op, opts in [("RELU", {}), ("RELU6", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("LEAKY_RELU", {"alpha": -0.7})]:
        x = _q16(rng, 0, (3, 100))
        y = _q16(rng, 1, (3, 100)) if op != "RELU6" else T(1, (3, 100), np.int16, scales=x.scales, zero_points=[0])
        h, m, _ = run_both(core, op, opts, [x], [y], {0: _rand_i16(rng, x.shape)})
        assert_same(h, m, f"{op} int16")
    for idt, odt, ozp, ratio in [(np.int16, np.int8, 5, 200.0), (np.int8, np.int16, 0, 0.01), (np.int16, np.int16, 0, 0.7),
                                 (np.int16, np.int16, 0, 3.0), (np.int16, np.int32, 0, 0.3), (np.int8, np.int32, 0, 0.05)]:
        sc = rng.uniform(0.0005, 0.05)
        x = T(0, (2, 77), idt, scales=[sc], zero_points=[3 if idt == np.int8 else 0])
        y = T(1, (2, 77), odt, scales=[sc * ratio * rng.uniform(0.8, 1.2)], zero_points=[ozp])
        info = np.iinfo(idt)
        h, m, _ = run_both(core, "QUANTIZE", {}, [x], [y],
                           {0: rng.integers(info.min, int(info.max) + 1, size=x.shape)})
        assert_same(h, m, f"requantize {np.dtype(idt).name}->{np.dtype(odt).name}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_data_movement_int16(core):
    rng = np.random.default_rng(34)
    x = _q16(rng, 0, (2, 3, 4, 5))
    pads = T(1, (4, 2), np.int32, data=[[0, 0], [1, 2], [0, 1], [2, 0]])
    y = T(2, (2, 6, 5, 7), np.int16, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "PAD", {}, [x, pads], [y], {0: _rand_i16(rng, x.shape)})
    assert_same(h, m, "pad int16")
    x = _q16(rng, 0, (1, 8, 6, 4))
    begin = T(1, (4,), np.int32, data=[0, 1, 5, 0])
    end = T(2, (4,), np.int32, data=[1, 7, 0, 4])
    strides = T(3, (4,), np.int32, data=[1, 2, -2, 1])
    y = T(4, (1, 3, 3, 4), np.int16, scales=x.scales, zero_points=x.zero_points)
    h, m, _ = run_both(core, "STRIDED_SLICE", {"begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0},
                       [x, begin, end, strides], [y], {0: _rand_i16(rng, x.shape)})
    assert_same(h, m, "strided_slice int16")


# --------------------------------------------------------------------------- whole float models

F32_MODELS = sorted(p.name for p in (ROOT / "models").glob("*_f32.tflite"))
SHARED_FLOAT_MODELS = ["hello_world_float.tflite", "test_conv_model.tflite"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
@pytest.mark.parametrize("model", F32_MODELS + SHARED_FLOAT_MODELS)
def test_float_model_whole_on_mcu(model, core):
    """Every op of the float32 models (and the shared float / mixed models) runs on the MCU,
    with the host Interpreter's outputs: bit-equal, or within SOFTMAX_MAX_ULP when the model
    has a transcendental op (newlib vs glibc, see above)."""
    path = ROOT / "models" / model if model in F32_MODELS else SHARED / model
    if not path.exists():
        missing(f"shared model {model} not available (needs ../shared/models)")
    _elf(core)
    from micro_rt import Interpreter, oracle
    from micro_rt.cortexm.ops import TRANSCENDENTAL_F32_OPS
    data = path.read_bytes()
    host = Interpreter.from_bytes(data, target=core)
    emu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn")
    approx = any(op.op_name in TRANSCENDENTAL_F32_OPS for op in host.model.main.operators)
    for seed in range(2):
        for i, x in enumerate(oracle.random_inputs(host, seed)):
            host.set_input(x, i)
            emu.set_input(x, i)
        host.invoke()
        emu.invoke()
        off = [f"{r.index} {r.op}" for r in emu.last_run if not r.on_mcu]
        assert not off, f"ran on the host: {off}"
        for k in range(host.num_outputs):
            h, m = host.get_output(k), emu.get_output(k)
            if approx and h.dtype == np.float32:
                assert_close_ulp([h], [m], f"{model} output {k}", SOFTMAX_MAX_ULP)
            else:
                assert_same([h], [m], f"{model} output {k}")


# --------------------------------------------------------------------------- shared models

MODELS = ["person_detect.tflite", "micro_speech_quantized.tflite", "network_tester_model.tflite",
          "mobilenet_v2_quantized_1x3x224x224.tflite"]


@pytest.mark.parametrize("model", MODELS)
def test_model_ops(model):
    path = SHARED / model
    if not path.exists():
        missing(f"shared model {model} not available (needs ../shared/models)")
    from micro_rt.model import read_model
    from micro_rt.cortexm import ops
    m = read_model(path.read_bytes())
    sg = m.main
    rng = np.random.default_rng(12)
    seen: dict = {}
    for op in sg.operators:
        if op.op_name in seen and seen[op.op_name] >= (2 if "mobilenet" in model else 1000):
            continue
        infos = [sg.tensors[i] for i in op.inputs if i >= 0]
        if not infos or not ops.supported(op.op_name, infos[0].dtype):
            continue
        if "mobilenet" in model and any(int(np.prod(sg.tensors[i].shape)) > 200000 for i in op.outputs):
            continue
        seen[op.op_name] = seen.get(op.op_name, 0) + 1

        def mk(i):
            ti = sg.tensors[i]
            q = ti.quantization
            return T(i, ti.shape, ti.dtype, data=ti.data if ti.is_constant else None,
                     scales=q.scales if q is not None else (), zero_points=q.zero_points if q is not None else (),
                     qdim=q.quantized_dimension if q is not None else 0, name=ti.name)
        ins = [None if i < 0 else mk(i) for i in op.inputs]
        outs = [mk(i) for i in op.outputs]
        seeds = {t.index: (rng.integers(-128, 128, size=t.shape) if t.dtype == np.int8 else
                           rng.normal(size=t.shape)) for t in ins if t is not None and not t.is_constant}
        for core in ("cortex-m0plus", "cortex-m4"):
            h, mm, _ = run_both(core, op.op_name, dict(op.options), ins, outs, seeds)
            assert_same(h, mm, f"{model} op {op.index} {op.op_name} on {core}")
    assert seen, "no op ran"


# --------------------------------------------------------------------------- reproducible build

def test_firmware_reproducible(tmp_path):
    require_tool("arm-none-eabi-gcc")
    require_tool("make")
    r = subprocess.run(["make", "-s", "-C", str(SRC), f"OUT={tmp_path}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for core in CORES_ALL:
        shipped = FIRMWARE / f"{core}.elf"
        assert shipped.exists(), f"{shipped} missing: run make firmware"
        assert (tmp_path / f"{core}.elf").read_bytes() == shipped.read_bytes(), f"{core}.elf differs from a rebuild"
