"""SVDF with an int8 input on the virtual MCU (cortexm/src/mrt_svdf.c: mrt_svdf_s8,
mrt_svdf_state_s16_s8) against its numpy twin (kernels/svdf.py), bit for bit: output and
activation state after every invoke of a sequence (the state carries over; reset on both sides
midway), on the M0+ (plain C) and the M4 (SMLAD); int8 and int16 states, rank > 1, batch > 1,
input sizes and memories that are not multiples of the DSP blocks, state zero points
(int8: the saturate-then-offset store that wraps; the time sums' subtraction), and the int32
wrap-around of the time sums. float32 (mrt_svdf_f32): bit for bit too, rank 1 and > 1, with
and without bias, every fused activation; TANH calls newlib's tanhf, so its output is held
within MAX_ULP of the host's (glibc) and bit-equal to the device's tanhf of the host's
pre-activation sums.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_model, shared_models
from devtools.op_models.svdf import svdf_model
from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.model import read_model
from test_kernels_svdf import INT_SHAPES
from vmcu_cases import MAX_ULP, assert_close_ulp, device_libm

CORES = ["cortex-m0plus", "cortex-m4"]


def assert_mcu_matches_host(data: bytes, core: str, inputs, reset_at=(), kernels: str = "cmsis-nn") -> None:
    host = Interpreter.from_bytes(data)
    mcu = Interpreter.from_bytes(data, target=core, kernels=kernels, emulate=True)
    state = mcu.nodes[0].inputs[4]
    for k, x in enumerate(inputs):
        if k in reset_at:
            host.reset()
            mcu.reset()
        for it in (host, mcu):
            it.set_input(x, 0)
            it.invoke()
        assert mcu.last_run[0].on_mcu and mcu.last_run[0].cycles > 0
        for what, a, b in (("output", host.get_output(0), mcu.get_output(0)),
                           ("state", host.get_tensor(state), mcu.get_tensor(state))):
            bits = f"u{a.dtype.itemsize}"         # bit for bit: -0.0 is not 0.0 (float32)
            diff = np.flatnonzero(a.reshape(-1).view(bits) != b.reshape(-1).view(bits))
            assert diff.size == 0, (f"{core} invoke {k} {what}: {diff.size} differ, first {diff[:5]}: "
                                    f"host {a.reshape(-1)[diff[:5]]} mcu {b.reshape(-1)[diff[:5]]}")


def _float_inputs(rng, shape, n):
    """Random float32 rows of growing spread, then the edges: all zero, all -0.0, large values."""
    edges = [np.zeros(shape, np.float32), np.full(shape, -0.0, np.float32), np.full(shape, 3.0e3, np.float32)]
    return [(rng.standard_normal(shape) * (1 + k % 4)).astype(np.float32) for k in range(n)] + edges


def _random_inputs(rng, shape, n):
    """Random int8 rows, then the edges: all -128, all 127, all zero."""
    edges = [np.full(shape, -128, np.int8), np.full(shape, 127, np.int8), np.zeros(shape, np.int8)]
    return [rng.integers(-128, 128, shape).astype(np.int8) for _ in range(n)] + edges


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("kind", ["int16", "int8"])
def test_svdf_s8_matches_twin(core, kind):
    for k, (batch, input_size, filters, rank, memory, act) in enumerate(INT_SHAPES):
        for seed in range(2):
            data = svdf_model(batch, input_size, filters, rank, memory, kind, act, seed=10 * k + seed)
            rng = np.random.default_rng(seed)
            run = _random_inputs(rng, (batch, input_size), memory + 3)
            assert_mcu_matches_host(data, core, run, reset_at=(memory + 1,))


FLAVOURS = ["cmsis-nn", "reference"]        # reference: cortexm/src/mrt_ref_svdf.c


@pytest.mark.parametrize("kernels", FLAVOURS)
@pytest.mark.parametrize("core", CORES)
def test_state_zero_points(core, kernels):
    for state_zp in (-128, -37, 55, 127):
        data = svdf_model(2, 13, 8, 2, 5, "int8", seed=200 + state_zp, state_zp=state_zp)
        assert_mcu_matches_host(data, core, _random_inputs(np.random.default_rng(state_zp & 0xFF), (2, 13), 8),
                                reset_at=(5,), kernels=kernels)
    data = svdf_model(2, 12, 8, 2, 4, "int16", seed=3, state_zp=300)
    assert_mcu_matches_host(data, core, _random_inputs(np.random.default_rng(1), (2, 12), 6), kernels=kernels)


@pytest.mark.parametrize("kernels", FLAVOURS)
@pytest.mark.parametrize("core", CORES)
def test_time_sums_wrap(core, kernels):
    """Full-scale int16 time weights against a saturated state: the int32 time and unit sums
    wrap, on the MCU as in the twin."""
    data = svdf_model(2, 16, 8, 2, 6, "int16", seed=21)
    b = ModelBuilder.from_model(read_model(data))
    op = b.operators[0]
    wt, st, bias = b.tensors[op.inputs[2]], b.tensors[op.inputs[4]], b.tensors[op.inputs[3]]
    sign = np.where(np.random.default_rng(0).random((8, 6)) < 0.9, 1, -1)
    b.buffers[wt.buffer] = (sign * 32767).astype(np.int16).tobytes()
    st.scales = [float(np.float32(st.scales[0]) / np.float32(64))]
    st.zero_points = [0]
    bias.scales = [float(np.float32(np.float32(st.scales[0]) * np.float32(wt.scales[0])))]
    data = b.build()
    assert Interpreter.from_bytes(data).nodes[0].user_data.wrap_time
    x = np.full((2, 16), 127, np.int8)
    rng = np.random.default_rng(3)
    inputs = [x] * 7 + [rng.integers(-128, 128, (2, 16)).astype(np.int8) for _ in range(3)] + [-x - 1] * 7
    assert_mcu_matches_host(data, core, inputs, reset_at=(12,), kernels=kernels)


@pytest.mark.parametrize("name", shared_models(["keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite"]))
def test_keyword_models_run_whole_on_the_mcu(name):
    """The real SVDF models (int16 and int8 states): every operator on the MCU, the profile
    complete, outputs and states equal to the host's over a sequence of invokes."""
    data = shared_model(name).read_bytes()
    d = Interpreter.from_bytes(data).get_input_details(0)
    shape, dtype = tuple(d["shape"]), np.dtype(d["dtype"])
    rng = np.random.default_rng(7)
    for core in CORES:
        mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
        host = Interpreter.from_bytes(data)
        states = [t.index for t in host.tensors if t.is_variable]
        for _ in range(4):
            x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, shape).astype(dtype)
            for it in (host, mcu):
                it.set_input(x, 0)
                it.invoke()
            assert all(r.on_mcu for r in mcu.last_run), [r.op for r in mcu.last_run if not r.on_mcu]
            assert np.array_equal(host.get_output(0), mcu.get_output(0))
            for t in states:
                assert np.array_equal(host.get_tensor(t), mcu.get_tensor(t))


# (batch, input_size, num_filters, rank, memory)
F32_SHAPES = [(1, 16, 8, 1, 4), (3, 9, 12, 3, 5), (2, 40, 10, 2, 7), (1, 5, 4, 4, 1), (4, 33, 6, 1, 10)]


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1", "SIGN_BIT"])
def test_svdf_f32_matches_twin(core, activation):
    for k, (batch, input_size, filters, rank, memory) in enumerate(F32_SHAPES):
        for bias in (True, False):
            data = svdf_model(batch, input_size, filters, rank, memory, "float", activation, seed=40 + k, bias=bias)
            run = _float_inputs(np.random.default_rng(k), (batch, input_size), memory + 3)
            assert_mcu_matches_host(data, core, run, reset_at=(memory + 1,))


@pytest.mark.parametrize("core", CORES)
def test_svdf_f32_tanh_within_ulp_of_twin(core):
    """TANH: the state bit-equal, the output within MAX_ULP of the host's glibc tanhf and
    bit-equal to newlib's tanhf (the firmware's) of the host's NONE-activation output."""
    for k, (batch, input_size, filters, rank, memory) in enumerate(F32_SHAPES):
        tanh = svdf_model(batch, input_size, filters, rank, memory, "float", "TANH", seed=40 + k)
        plain = Interpreter.from_bytes(svdf_model(batch, input_size, filters, rank, memory, "float", "NONE",
                                                  seed=40 + k))
        host, mcu = Interpreter.from_bytes(tanh), Interpreter.from_bytes(tanh, target=core, kernels="cmsis-nn", emulate=True)
        state = mcu.nodes[0].inputs[4]
        for x in _float_inputs(np.random.default_rng(k), (batch, input_size), memory + 2):
            for it in (host, mcu, plain):
                it.set_input(x, 0)
                it.invoke()
            assert mcu.last_run[0].on_mcu
            assert np.array_equal(host.get_tensor(state).view(np.uint32), mcu.get_tensor(state).view(np.uint32))
            assert_close_ulp([host.get_output(0)], [mcu.get_output(0)], f"{core} svdf tanh", MAX_ULP)
            expected = device_libm(core, "tanhf", plain.get_output(0))
            assert np.array_equal(expected.view(np.uint32), mcu.get_output(0).view(np.uint32))
