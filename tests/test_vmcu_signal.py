"""TFLM's Signal operators on the virtual MCU (cortexm/src/mrt_signal*.c) against their numpy
twins (kernels/signal_*.py), bit for bit on every core: single-op models with edge data (the
stateful ones over streams with a reset), and the audio preprocessor in shared/ over a stream
of frames (the noise estimate carried on the MCU, cleared by reset())."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_model
from micro_rt import Interpreter
from devtools.op_models.signal import audio_frames, signal_cases, wide_fft_cases

CORES = ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"]
ON_MCU = {"SignalWindow", "SignalFftAutoScale", "SignalRfft", "SignalEnergy", "SignalFilterBank",
          "SignalFilterBankSquareRoot", "SignalFilterBankSpectralSubtraction", "SignalPCAN",
          "SignalFilterBankLog"}


def host_and_mcu(data: bytes, core: str):
    return (Interpreter.from_bytes(data, target=core, preserve_all_tensors=True),
            Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True, preserve_all_tensors=True))


def assert_stream_equal(data: bytes, core: str, frames, reset_at: int = -1, defined=None) -> list:
    """Every tensor each node writes equal on host and MCU, frame after frame; the MCU's
    records of the last frame. `defined` (op name -> slice) limits what an op defines."""
    host, mcu = host_and_mcu(data, core)
    for n, inputs in enumerate(frames):
        if n == reset_at:
            host.reset()
            mcu.reset()
        for it in (host, mcu):
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
        for node in host.nodes:
            where = (defined or {}).get(node.op_name, slice(None))
            for t in node.outputs:
                a, b = host.get_tensor(t), mcu.get_tensor(t)
                if a.ndim:
                    a, b = a[where], b[where]
                assert np.array_equal(a, b), f"{core} frame {n} op {node.index} {node.op_name}"
    return mcu.last_run


@pytest.mark.parametrize("name,core", [("audio_preprocessor_float.tflite", core) for core in CORES] +
                         [("audio_preprocessor_int8.tflite", core) for core in ("cortex-m0plus", "cortex-m4")])
def test_audio_preprocessor_on_every_core(name, core):
    data = shared_model(name).read_bytes()
    records = assert_stream_equal(data, core, [[x] for x in audio_frames(16)], reset_at=10,
                                  defined={"SignalEnergy": slice(5, 241)})
    signal = [r for r in records if r.op.startswith("Signal")]
    assert {r.op for r in signal} == ON_MCU
    assert all(r.on_mcu and r.cycles > 0 for r in signal)


@pytest.mark.parametrize("core", CORES)
def test_wide_ffts_match_their_twins(core):
    """int32 and float32 FFTs bit-equal to the numpy twin (no libm: the twiddles come from the
    host plan) on every core, the soft-float M0+ and the three FPUs."""
    for name, data, frames, defined in wide_fft_cases(np.random.default_rng(5)):
        records = assert_stream_equal(data, core, frames)
        assert all(r.on_mcu and r.cycles > 0 for r in records), name


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4", "cortex-m7"])
def test_single_signal_ops_match_their_twins(core):
    for name, data, frames, defined in signal_cases(np.random.default_rng(21)):
        records = assert_stream_equal(data, core, frames, reset_at=len(frames) // 2, defined=defined)
        assert all(r.on_mcu for r in records), name
