"""UNIDIRECTIONAL_SEQUENCE_LSTM 8x8->16 and 16x8->16 on the virtual MCU (cortexm/src/mrt_lstm.c:
mrt_lstm_s8, mrt_lstm_s16) against the numpy twins (kernels/lstm_int8.py), bit for bit: the output and the
hidden and cell states after every invoke of a sequence (states carry over; reset on both
sides midway), on the M0+ (plain C) and the M4 (SXTAB16 / SMLAD, SMLALD): batch and time-major layouts,
input and state sizes off the DSP blocks, cell clips and cell scales (tanh's input rescale both
ways), saturating weights, edge inputs; the shared LSTM models whole on the MCU.
float32 (mrt_lstm_f32): newlib's expf / tanhf on the device, glibc's on the host, so the MCU is
held bit-equal to the numpy twin run with the firmware's own expf / tanhf, and within
LIBM_ULP ulp (or LIBM_ULP ulp of 1.0 absolutely) of the host's glibc results.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, shared_models
from devtools.op_models.lstm import lstm_model
from micro_rt import Interpreter
from micro_rt.kernels import lstm_float
from micro_rt.kernels.activations import logistic_float
from test_kernels_lstm import CASES, INT16_CASES
from vmcu_cases import assert_close_ulp_or_abs, device_libm

CORES = ["cortex-m0plus", "cortex-m4"]
INT8_LSTM_MODELS = ["trained_lstm_int8.tflite", "micro_speech_lstm.tflite", "dtln_noise_suppression.tflite"]
MCU_CASES = [c for c in CASES if c[0] == "int8"] + [
    ("int8", 2, 4, 13, 9, {"weight_std": 5.0}),
    ("int8", 1, 3, 33, 17, {"cell_clip": 0.0, "cell_scale_power": -10}),
    ("int8", 3, 2, 4, 8, {"time_major": True, "cell_scale_power": -14}),
] + [c for c in INT16_CASES]


def _inputs(rng, shape, n, dtype=np.int8):
    """Random sequences, then the edges: all minimum, all maximum, all 0."""
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    edges = [np.full(shape, lo, dtype), np.full(shape, hi, dtype), np.zeros(shape, dtype)]
    return [rng.integers(lo, hi + 1, shape).astype(dtype) for _ in range(n)] + edges


def assert_mcu_matches_host(data: bytes, core: str, inputs, reset_at=(), kernels: str = "cmsis-nn") -> None:
    host = Interpreter.from_bytes(data)
    mcu = Interpreter.from_bytes(data, target=core, kernels=kernels, emulate=True)
    lstm = [n for n in mcu.nodes if n.op_name == "UNIDIRECTIONAL_SEQUENCE_LSTM"]
    states = [t for n in lstm for t in (n.inputs[18], n.inputs[19])]
    for k, xs in enumerate(inputs):
        if k in reset_at:
            host.reset()
            mcu.reset()
        for it in (host, mcu):
            for i, x in enumerate(xs):
                it.set_input(x, i)
            it.invoke()
        assert all(r.on_mcu for r in mcu.last_run), [r.op for r in mcu.last_run if not r.on_mcu]
        pairs = [(f"output {i}", host.get_output(i), mcu.get_output(i)) for i in range(len(host.model.main.outputs))]
        pairs += [(f"state {t}", host.get_tensor(t), mcu.get_tensor(t)) for t in states]
        for what, a, b in pairs:
            diff = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
            assert diff.size == 0, (f"{core} invoke {k} {what}: {diff.size} differ, first {diff[:5]}: "
                                    f"host {a.reshape(-1)[diff[:5]]} mcu {b.reshape(-1)[diff[:5]]}")


@pytest.mark.parametrize("kernels", ["cmsis-nn", "reference"])     # reference: cortexm/src/mrt_ref_lstm.c
@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("case", MCU_CASES, ids=lambda c: f"{c[0]}-b{c[1]}-t{c[2]}-i{c[3]}-s{c[4]}-" +
                         ("-".join(f"{k}={v}" for k, v in c[5].items()) or "default"))
def test_lstm_s8_matches_twin(core, case, kernels):
    kind, batch, steps, n_input, n_state, options = case
    for seed in range(2):
        data = lstm_model(kind, batch, steps, n_input, n_state, seed=100 * seed + batch * 31 + steps, **options)
        shape = (steps, batch, n_input) if options.get("time_major") else (batch, steps, n_input)
        rng = np.random.default_rng(seed)
        inputs = _inputs(rng, shape, 4, np.int16 if kind == "int16" else np.int8)
        assert_mcu_matches_host(data, core, [[x] for x in inputs], reset_at=(3,), kernels=kernels)


@pytest.mark.parametrize("name", shared_models(INT8_LSTM_MODELS))
def test_shared_lstm_models_run_whole_on_the_mcu(name):
    """Every operator on the MCU (the profile complete), outputs and LSTM states as the host's."""
    data = (SHARED_MODELS / name).read_bytes()
    host = Interpreter.from_bytes(data)
    rng = np.random.default_rng(5)
    details = [host.get_input_details(i) for i in range(len(host.model.main.inputs))]
    seqs = [[rng.integers(np.iinfo(d["dtype"]).min, np.iinfo(d["dtype"]).max + 1, d["shape"]).astype(d["dtype"])
             for d in details] for _ in range(4)]
    for core in CORES:
        assert_mcu_matches_host(data, core, seqs, reset_at=(3,))


# float32 outputs and states against the host's glibc: within this many ulp of the value or of
# 1.0 (the models/ops sweep's bound; measured max 2 ulp of 1.0: values near 0 carry the absolute
# error of the sums that made them).
LIBM_ULP = 4
# (batch, steps, n_input, n_state, options)
F32_CASES = [(1, 3, 4, 3, {}), (2, 4, 5, 7, {}), (1, 3, 33, 17, {"cell_clip": 0.0}),
             (3, 2, 4, 8, {"time_major": True}), (2, 5, 6, 9, {"time_major": True, "cell_clip": 0.5}),
             (1, 6, 8, 16, {"weight_std": 1.0, "cell_clip": 3.0})]


def _float_inputs(rng, shape, n):
    """Random sequences of growing spread, then the edges: all zero, all -0.0, all large."""
    edges = [np.zeros(shape, np.float32), np.full(shape, -0.0, np.float32), np.full(shape, 50.0, np.float32)]
    return [(rng.standard_normal(shape) * (1 + k)).astype(np.float32) for k in range(n)] + edges


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float32).reshape(-1).view(np.uint32)


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("case", F32_CASES, ids=lambda c: f"b{c[0]}-t{c[1]}-i{c[2]}-s{c[3]}-" +
                         ("-".join(f"{k}={v}" for k, v in c[4].items()) or "default"))
def test_lstm_f32_matches_twin(core, case, monkeypatch):
    """Output, hidden and cell state after every invoke (states carry over, a reset midway):
    bit-equal with the twin given the firmware's expf / tanhf; within LIBM_ULP of glibc's."""
    batch, steps, n_input, n_state, options = case
    data = lstm_model("float32", batch, steps, n_input, n_state, seed=batch * 7 + steps, **options)
    shape = (steps, batch, n_input) if options.get("time_major") else (batch, steps, n_input)
    glibc, twin = Interpreter.from_bytes(data), Interpreter.from_bytes(data)
    mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
    device_exp = lambda x: device_libm(core, "expf", x)          # noqa: E731
    node = mcu.nodes[0]
    for k, x in enumerate(_float_inputs(np.random.default_rng(steps), shape, 4)):
        if k == 3:
            for it in (glibc, twin, mcu):
                it.reset()
        for it in (glibc, twin, mcu):
            it.set_input(x, 0)
        glibc.invoke()
        mcu.invoke()
        with monkeypatch.context() as m:          # the twin with the device's C library
            m.setattr(lstm_float, "tanhf", lambda v: device_libm(core, "tanhf", v))
            m.setattr(lstm_float, "logistic_float", lambda v: logistic_float(v, exp=device_exp))
            twin.invoke()
        assert all(r.on_mcu for r in mcu.last_run), [r.op for r in mcu.last_run if not r.on_mcu]
        got = [mcu.get_output(0), mcu.get_tensor(node.inputs[18]), mcu.get_tensor(node.inputs[19])]
        for what, t, g in zip(("output", "hidden", "cell"), (twin.get_output(0), twin.get_tensor(node.inputs[18]),
                                                             twin.get_tensor(node.inputs[19])), got):
            diff = np.flatnonzero(_bits(t) != _bits(g))
            assert diff.size == 0, (f"{core} invoke {k} {what}: {diff.size} differ from the twin with newlib's "
                                    f"expf / tanhf, first {diff[:5]}")
        assert_close_ulp_or_abs([glibc.get_output(0), glibc.get_tensor(node.inputs[18]),
                                 glibc.get_tensor(node.inputs[19])], got, f"{core} invoke {k}", LIBM_ULP)


@pytest.mark.parametrize("name", shared_models(["trained_lstm.tflite"]))
def test_shared_float_lstm_model_runs_whole_on_the_mcu(name, monkeypatch):
    """The float LSTM model (LSTM, RESHAPE, FULLY_CONNECTED, SOFTMAX): every operator on the MCU
    over invokes that carry state; the output and LSTM states bit-equal to the host's run with
    the firmware's expf / tanhf, and within LIBM_ULP (states) and 2 * LIBM_ULP (the output:
    the states' difference goes through the FC's sums and SOFTMAX's own expf; measured max 4.75
    ulp of 1.0 over 40 invokes) of the host's glibc run."""
    from micro_rt.kernels import softmax
    data = (SHARED_MODELS / name).read_bytes()
    for core in CORES:
        glibc, twin = Interpreter.from_bytes(data), Interpreter.from_bytes(data)
        mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
        device_exp = lambda x: device_libm(core, "expf", x)          # noqa: E731
        d = glibc.get_input_details(0)
        lstm = [n for n in mcu.nodes if n.op_name == "UNIDIRECTIONAL_SEQUENCE_LSTM"]
        states = [t for n in lstm for t in (n.inputs[18], n.inputs[19])]
        rng = np.random.default_rng(11)
        for k in range(5):
            x = rng.standard_normal(d["shape"]).astype(np.float32)
            for it in (glibc, twin, mcu):
                it.set_input(x, 0)
            glibc.invoke()
            mcu.invoke()
            with monkeypatch.context() as m:
                m.setattr(lstm_float, "tanhf", lambda v: device_libm(core, "tanhf", v))
                m.setattr(lstm_float, "logistic_float", lambda v: logistic_float(v, exp=device_exp))
                m.setattr(softmax, "expf", device_exp)
                twin.invoke()
            assert all(r.on_mcu for r in mcu.last_run), [r.op for r in mcu.last_run if not r.on_mcu]
            got = [mcu.get_output(0)] + [mcu.get_tensor(t) for t in states]
            for a, b in zip([twin.get_output(0)] + [twin.get_tensor(t) for t in states], got):
                assert np.array_equal(_bits(a), _bits(b)), f"{name} {core} invoke {k}: not the twin's bits"
            assert_close_ulp_or_abs([glibc.get_tensor(t) for t in states], got[1:], f"{core} states", LIBM_ULP)
            assert_close_ulp_or_abs([glibc.get_output(0)], got[:1], f"{core} output", 2 * LIBM_ULP)
