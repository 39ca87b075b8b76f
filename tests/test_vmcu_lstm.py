"""UNIDIRECTIONAL_SEQUENCE_LSTM 8x8->16 and 16x8->16 on the virtual MCU (cortexm/src/mrt_lstm.c:
mrt_lstm_s8, mrt_lstm_s16) against the numpy twins (kernels/lstm_int8.py), bit for bit: the output and the
hidden and cell states after every invoke of a sequence (states carry over; reset on both
sides midway), on the M0+ (plain C) and the M4 (SXTAB16 / SMLAD, SMLALD): batch and time-major layouts,
input and state sizes off the DSP blocks, cell clips and cell scales (tanh's input rescale both
ways), saturating weights, edge inputs; the shared LSTM models whole on the MCU.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, shared_models
from micro_rt import Interpreter
from test_kernels_lstm import CASES, INT16_CASES, lstm_model

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
