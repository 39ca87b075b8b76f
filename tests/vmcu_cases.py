"""The harness the tests/test_vmcu_*.py files share: a C kernel on the virtual MCU and its numpy
twin (micro_rt.kernels) run on the same node and tensors (run_both), compared bit for bit
(assert_same) or in units in the last place (assert_close_ulp), with seeded random case builders
per operator. One test file per operator family, as cortexm/src has one C file per family.
Tests skip (fail under MICRO_RT_REQUIRE_ALL) when the firmware, the cross compiler or the shared
models are missing.
"""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import SHARED_MODELS, missing

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


def firmware_elf(core: str) -> Path:
    p = FIRMWARE / f"{core}.elf"
    if not p.exists():
        missing(f"firmware {p.name} not built (make firmware)")
    return p


_MCUS: dict = {}


def shared_mcu(core: str, arena_bytes: int = 1 << 20):
    key = (core, arena_bytes)
    if key not in _MCUS:
        _MCUS[key] = _machine_cls()(core, str(firmware_elf(core)), arena_bytes=arena_bytes)
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
        self.node = None
        # the reference kernels' requests, as the host twin makes them
        self.target = get_target("cortex-m4")
        self.tensors = tensors
        self.scratch_bufs = []

    def tensor(self, i):
        return None if i < 0 else self.tensors[i]

    def input(self, node, i):
        return None if i >= len(node.inputs) or node.inputs[i] < 0 else self.tensors[node.inputs[i]]

    def required_input(self, node, i):
        tensor = self.input(node, i)
        assert tensor is not None, f"input {i} of op {node.op_name} is omitted"
        return tensor

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


def run_both(core, op_name, options, inputs, outputs, seed_inputs=None, arena_misalign=0, kernels="cmsis-nn"):
    """inputs/outputs: lists of T (constants carry data). Activation inputs get data from
    `seed_inputs` (index -> array). `kernels`: the flavour of C kernels run on the MCU.
    Returns (host outputs, mcu outputs, CallResult)."""
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
    mcu = shared_mcu(core)
    offsets, pos = {}, 0
    for t in tensors.values():
        if not t.is_constant:
            offsets[t.index] = pos
            pos += (t.nbytes + 15) // 16 * 16
    scratch_offs = []
    for nbytes in ops.scratch_requests(mcu, core, node, tensors, kernels):
        scratch_offs.append(pos)
        pos += (nbytes + 15) // 16 * 16
    scratch_off = tuple(scratch_offs) if len(scratch_offs) > 1 else (scratch_offs[0] if scratch_offs else None)
    persistent = []
    for nbytes in ops.persistent_requests(node, tensors):
        persistent.append(pos)
        pos += (nbytes + 15) // 16 * 16
    for t in tensors.values():
        if not t.is_constant:
            fill = host_in.get(t.index)
            data = fill.tobytes() if fill is not None else bytes([0x5A]) * t.nbytes
            mcu.write(mcu.arena_base + offsets[t.index], data)
    res = ops.run_op(mcu, node, tensors, offsets, scratch_off, kernels=kernels, persistent_offsets=persistent)
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


def assert_same_any_nan(host, mcu, what: str = "") -> None:
    """assert_same, except that NaNs count equal whatever their bits: a NaN made from non-NaN
    operands has the machine's default NaN sign (x86: negative, Arm: positive)."""
    for h, m in zip(host, mcu):
        if h.dtype.kind == "f":
            both_nan = np.isnan(h) & np.isnan(m)
            h, m = np.where(both_nan, 0, h), np.where(both_nan, 0, m)
            h, m = h.view(np.uint32), m.view(np.uint32)
        bad = np.flatnonzero(h.reshape(-1) != m.reshape(-1))
        assert bad.size == 0, f"{what}: {bad.size} of {h.size} differ, first at {bad[:5]}: " \
                              f"host {h.reshape(-1)[bad[:5]]} mcu {m.reshape(-1)[bad[:5]]}"


# --------------------------------------------------------------------------- random case builders

def q8_tensor(rng, idx, shape, name="x"):
    return T(idx, shape, np.int8, scales=[rng.uniform(0.01, 0.1)], zero_points=[int(rng.integers(-20, 20))],
             name=name)


def rand_i8(rng, shape):
    return rng.integers(-128, 128, size=shape).astype(np.int8)


def conv_case(rng, n, ih, iw, ic, oc, fh, fw, stride, pad, dil=1, per_channel=True, act="NONE", groups=1,
              bias=True):
    x = q8_tensor(rng, 0, (n, ih, iw, ic))
    fic = ic // groups
    w = rand_i8(rng, (oc, fh, fw, fic))
    ws = rng.uniform(0.002, 0.02, size=oc if per_channel else 1)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(ws.size, np.int64))
    b = T(2, (oc,), np.int32, data=rng.integers(-5000, 5000, size=oc), scales=ws * x.scales[0],
          zero_points=np.zeros(ws.size, np.int64)) if bias else None
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.int8, scales=[rng.uniform(0.05, 0.3)], zero_points=[int(rng.integers(-10, 10))])
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                fused_activation_function=act)
    return "CONV_2D", opts, [x, wt, b], [y], {0: rand_i8(rng, x.shape)}


def dw_case(rng, ih, iw, ic, mult, fh, fw, stride, pad, dil=1, act="NONE", n=1):
    x = q8_tensor(rng, 0, (n, ih, iw, ic))
    oc = ic * mult
    w = rand_i8(rng, (1, fh, fw, oc))
    ws = rng.uniform(0.002, 0.02, size=oc)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(oc, np.int64), qdim=3)
    b = T(2, (oc,), np.int32, data=rng.integers(-5000, 5000, size=oc))
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.int8, scales=[rng.uniform(0.05, 0.3)], zero_points=[int(rng.integers(-10, 10))])
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                depth_multiplier=mult, fused_activation_function=act)
    return "DEPTHWISE_CONV_2D", opts, [x, wt, b], [y], {0: rand_i8(rng, x.shape)}


def fc_case(rng, batches, depth, out_depth, per_channel=False, act="NONE"):
    x = q8_tensor(rng, 0, (batches, depth))
    w = rand_i8(rng, (out_depth, depth))
    ws = rng.uniform(0.002, 0.02, size=out_depth if per_channel else 1)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(ws.size, np.int64))
    b = T(2, (out_depth,), np.int32, data=rng.integers(-5000, 5000, size=out_depth),
          scales=np.float32(ws[0]) * x.scales[:1], zero_points=[0])
    y = T(3, (batches, out_depth), np.int8, scales=[rng.uniform(0.1, 0.5)], zero_points=[int(rng.integers(-10, 10))])
    return "FULLY_CONNECTED", dict(fused_activation_function=act), [x, wt, b], [y], {0: rand_i8(rng, x.shape)}


def binary_case(rng, op, shape1, shape2, act="NONE"):
    a = q8_tensor(rng, 0, shape1)
    b = q8_tensor(rng, 1, shape2)
    if op in ("MAXIMUM", "MINIMUM"):
        b.scales, b.zero_points = a.scales, a.zero_points
    shape = np.broadcast_shapes(shape1, shape2)
    y = T(2, shape, np.int8, scales=a.scales if op in ("MAXIMUM", "MINIMUM") else [rng.uniform(0.02, 0.2)],
          zero_points=a.zero_points if op in ("MAXIMUM", "MINIMUM") else [int(rng.integers(-10, 10))])
    return op, dict(fused_activation_function=act), [a, b], [y], {0: rand_i8(rng, shape1), 1: rand_i8(rng, shape2)}


def pool_case(rng, op, n, ih, iw, c, fh, fw, stride, pad, act="NONE"):
    x = q8_tensor(rng, 0, (n, ih, iw, c))
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, 1, 1, ih, iw, fh, fw, pad)
    y = T(1, (n, oh, ow, c), np.int8, scales=x.scales, zero_points=x.zero_points)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, filter_width=fw, filter_height=fh,
                fused_activation_function=act)
    return op, opts, [x], [y], {0: rand_i8(rng, x.shape)}


def softmax_case(rng, rows, depth, beta=1.0, out16=False):
    x = q8_tensor(rng, 0, (rows, depth))
    y = T(1, (rows, depth), np.int16 if out16 else np.int8, scales=[1 / 65536 if out16 else 1 / 256],
          zero_points=[-32768 if out16 else -128])
    return "SOFTMAX", dict(beta=beta), [x], [y], {0: rand_i8(rng, x.shape)}


def unary_case(rng, op, shape, opts=None):
    x = q8_tensor(rng, 0, shape)
    zp, sc = int(rng.integers(-20, 20)), rng.uniform(0.01, 0.2)
    if op == "LOGISTIC":
        zp, sc = -128, 1 / 256
    if op == "TANH":
        zp, sc = 0, 1 / 128
    if op == "RELU6":
        zp, sc = int(x.zero_points[0]), float(x.scales[0])
    y = T(1, shape, np.int8, scales=[sc], zero_points=[zp])
    return op, dict(opts or {}), [x], [y], {0: rand_i8(rng, shape)}


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


def rand_f32(rng, shape, scale=1.0):
    return (rng.normal(0, scale, size=shape)).astype(np.float32)


def conv_f32_case(rng, n, ih, iw, ic, oc, fh, fw, stride, pad, dil=1, act="NONE", groups=1, bias=True):
    x = T(0, (n, ih, iw, ic), np.float32)
    wt = T(1, (oc, fh, fw, ic // groups), np.float32, data=rand_f32(rng, (oc, fh, fw, ic // groups), 0.5))
    b = T(2, (oc,), np.float32, data=rand_f32(rng, oc)) if bias else None
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.float32)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                fused_activation_function=act)
    return "CONV_2D", opts, [x, wt] + ([b] if bias else []), [y], {0: rand_f32(rng, x.shape)}


def dw_f32_case(rng, ih, iw, ic, mult, fh, fw, stride, pad, dil=1, act="NONE", n=1, bias=True):
    x = T(0, (n, ih, iw, ic), np.float32)
    oc = ic * mult
    wt = T(1, (1, fh, fw, oc), np.float32, data=rand_f32(rng, (1, fh, fw, oc), 0.5))
    b = T(2, (oc,), np.float32, data=rand_f32(rng, oc)) if bias else None
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.float32)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, dilation_w_factor=dil, dilation_h_factor=dil,
                depth_multiplier=mult, fused_activation_function=act)
    return "DEPTHWISE_CONV_2D", opts, [x, wt] + ([b] if bias else []), [y], {0: rand_f32(rng, x.shape)}


def device_libm(core, fn: str, x: np.ndarray) -> np.ndarray:
    """newlib's `fn` (expf / tanhf) as linked in the firmware, called once per element."""
    mcu = shared_mcu(core)
    bits = np.asarray(x, np.float32).reshape(-1).view(np.uint32)
    out = [mcu.call(fn, int(b)).return_value & 0xFFFFFFFF for b in bits]
    return np.array(out, np.uint32).view(np.float32).reshape(np.shape(x))

# --------------------------------------------------------------------------- int16

def q16_tensor(rng, idx, shape, zp=0):
    return T(idx, shape, np.int16, scales=[rng.uniform(0.0005, 0.002)], zero_points=[zp])


def rand_i16(rng, shape):
    return rng.integers(-32768, 32768, size=shape).astype(np.int16)


@pytest.fixture
def called(monkeypatch):
    """The kernel symbols the runs of a test call (ops.perform spied on)."""
    from micro_rt.cortexm import ops
    symbols: list[str] = []
    perform = ops.perform

    def spy(mcu, calls, budget=None):
        symbols.extend(c.symbol for c in calls)
        return perform(mcu, calls, budget)
    monkeypatch.setattr(ops, "perform", spy)
    return symbols


def assert_close_ulp_or_abs(host, mcu, what="", max_ulp=4):
    """Each pair within `max_ulp` ulp of the host's value or `max_ulp` ulp of 1.0 absolutely (a
    libm result such as log(sum) near 0: its absolute error follows the sum's, not its own
    size); NaN matches NaN."""
    for h, m in zip(host, mcu):
        h, m = np.asarray(h, np.float32).reshape(-1), np.asarray(m, np.float32).reshape(-1)
        absolute = np.abs(h.astype(np.float64) - m.astype(np.float64))
        ok = (ulp_diff(h, m) <= max_ulp) | (absolute <= max_ulp * float(np.spacing(np.float32(1.0))))
        ok |= np.isnan(h) & np.isnan(m)
        assert ok.all(), (f"{what}: {int((~ok).sum())} of {h.size} outside {max_ulp} ulp, first host "
                          f"{h[~ok][:3]} mcu {m[~ok][:3]}")


def assert_model_whole_on_mcu(data: bytes, name: str, core: str, seeds=range(2), close=None,
                              kernels: str = "cmsis-nn") -> None:
    """Every operator of the model runs in a C kernel of the flavour `kernels` on `core` (a
    complete profile) and the outputs equal the host Interpreter's on `seeds`; float32 outputs of a model
    with a libm op (cortexm.ops.TRANSCENDENTAL_F32_OPS) are compared by `close(host, mcu, what)`
    instead (default: assert_close_ulp within SOFTMAX_MAX_ULP)."""
    from micro_rt import Interpreter
    from micro_rt.cortexm.ops import TRANSCENDENTAL_F32_OPS
    from micro_rt.inputs import random_inputs
    close = close or (lambda h, m, what: assert_close_ulp(h, m, what, SOFTMAX_MAX_ULP))
    host = Interpreter.from_bytes(data, target=core)
    emu = Interpreter.from_bytes(data, target=core, kernels=kernels, emulate=True)
    approx = any(op.op_name in TRANSCENDENTAL_F32_OPS for op in host.model.main.operators)
    for seed in seeds:
        for i, x in enumerate(random_inputs(host, seed)):
            host.set_input(x, i)
            emu.set_input(x, i)
        host.invoke()
        emu.invoke()
        off = [f"{r.index} {r.op}" for r in emu.last_run if not r.on_mcu]
        assert not off, f"{name}: ran on the host: {off}"
        for k in range(host.num_outputs):
            h, m = host.get_output(k).reshape(-1), emu.get_output(k).reshape(-1)
            if approx and h.dtype == np.float32:
                close([h], [m], f"{name} output {k}")
            else:
                assert_same([h], [m], f"{name} output {k}")
