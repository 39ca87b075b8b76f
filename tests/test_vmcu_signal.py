"""TFLM's Signal operators on the virtual MCU (cortexm/src/mrt_signal.c) against their numpy
twins (kernels/signal_*.py), bit for bit on every core: single-op models with edge data (the
stateful ones over streams with a reset), and the audio preprocessor in shared/ over a stream
of frames (the noise estimate carried on the MCU, cleared by reset())."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_model
from micro_rt import Interpreter
from test_kernels_signal import (SPECTRAL, audio_frames, filter_bank_config, int16_frames,
                                 single_op, wide_frames)

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


def signal_cases(rng) -> list:
    """(name, model, frames, defined) single-op cases with the data that reaches the edges."""
    w, u, fs, ws, wd = filter_bank_config(rng, 12, 80)
    lut = rng.integers(-32768, 32767, 125).astype(np.int16)
    u32 = lambda n, top: rng.integers(0, top, n, dtype=np.uint64).astype(np.uint32)   # noqa: E731
    big = np.array([0, 1, 2, 3, (1 << 32) - 1, (1 << 31), 1 << 16], np.uint64)
    sqrt_in = [np.concatenate([big, rng.integers(0, 1 << 63, 33, dtype=np.uint64) >> (np.uint64(63) - rng.integers(0, 64, 33).astype(np.uint64))])
               for _ in range(4)]
    cases = [
        ("window", single_op("SignalWindow", [((2, 64), "INT16"), ((64,), "INT16", lut[:64])],
                             [((2, 64), "INT16")], {"shift": 3}), int16_frames(rng, (2, 64), 6), None),
        ("auto scale", single_op("SignalFftAutoScale", [((100,), "INT16")],
                                 [((100,), "INT16"), ((), "INT32")], {}),
         int16_frames(rng, (100,), 6) + [[np.zeros(100, np.int16)]], None),
        ("energy", single_op("SignalEnergy", [((258,), "INT16")], [((129,), "UINT32")],
                             {"end_index": 120, "start_index": 4}),
         int16_frames(rng, (258,), 4), {"SignalEnergy": slice(4, 120)}),
        ("filter bank", single_op("SignalFilterBank", [((80,), "UINT32")] + [((len(a),), "INT16", a)
                                  for a in (w, u, fs, ws, wd)], [((12,), "UINT64")], {"num_channels": 12}),
         [[u32(80, 1 << 32)] for _ in range(4)], None),
        ("sqrt", single_op("SignalFilterBankSquareRoot", [((40,), "UINT64"), ((), "INT32")],
                           [((40,), "UINT32")], {}),
         [[x, np.array(k * 3, np.int32)] for k, x in enumerate(sqrt_in)], None),
        ("spectral subtraction", single_op("SignalFilterBankSpectralSubtraction", [((16,), "UINT32")],
                                           [((16,), "UINT32"), ((16,), "UINT32")],
                                           dict(SPECTRAL, clamping=True)),
         [[u32(16, [1 << 12, 1 << 32][k % 2])] for k in range(8)], None),
        ("pcan", single_op("SignalPCAN", [((24,), "UINT32"), ((24,), "UINT32"), ((125,), "INT16", lut)],
                           [((24,), "UINT32")], {"snr_shift": 6}),
         [[u32(24, 1 << 32), u32(24, [1 << 8, 1 << 32][k % 2])] for k in range(4)], None),
        ("log", single_op("SignalFilterBankLog", [((64,), "UINT32")], [((64,), "INT16")],
                          {"input_correction_bits": 3, "output_scale": 64}),
         [[u32(64, [4, 1 << 16, 1 << 32][k % 3])] for k in range(6)], None),
    ]
    for shape, delay in (((160,), 100), ((3, 16), 40), ((8,), 0), ((2, 10), 7)):
        cases.append((f"delay {shape} {delay}", single_op("SignalDelay", [(shape, "INT16")],
                                                          [(shape, "INT16")], {"delay_length": delay}),
                      int16_frames(rng, shape, 6), None))
    for shape, size, step, prefill in (((160,), 400, 160, True), ((2, 64), 48, 16, False),
                                       ((30,), 70, 10, True)):
        out = shape[:-1] + (shape[-1] // step, size)
        cases.append((f"framer {size}/{step}", single_op(
            "SignalFramer", [(shape, "INT16")], [(out, "INT16"), ((), "BOOL")],
            {"frame_size": size, "frame_step": step, "prefill": prefill}),
            int16_frames(rng, shape, 9), None))
    for channels, left, right, step in ((40, 2, 1, 1), (5, 3, 2, 2), (4, 1, 3, 5)):
        size = channels * (left + right + 1)
        cases.append((f"stacker {channels} {left} {right} {step}", single_op(
            "SignalStacker", [((channels,), "INT16")], [((size,), "INT16"), ((), "BOOL")],
            {"num_channels": channels, "stacker_left_context": left,
             "stacker_right_context": right, "stacker_step": step}),
            int16_frames(rng, (channels,), 12), None))
    for kind, shape, step in (("INT16", (2, 64), 16), ("FLOAT32", (2, 3, 20), 5)):
        frames = (int16_frames(rng, shape, 6) if kind == "INT16" else
                  [[rng.normal(0, 10.0 ** (n % 4), shape).astype(np.float32)] for n in range(6)])
        cases.append((f"overlap-add {kind}", single_op("SignalOverlapAdd", [(shape, kind)],
                                                       [(shape[:-2] + (shape[-2] * step,), kind)],
                                                       {"T": 7 if kind == "INT16" else 0,
                                                        "frame_step": step}), frames, None))
    for fft_length, n in ((512, 480), (60, 60), (250, 200), (96, 90)):
        cases.append((f"rfft {fft_length}", single_op("SignalRfft", [((n,), "INT16")],
                                                     [((fft_length + 2,), "INT16")],
                                                     {"T": 7, "fft_length": fft_length}),
                      int16_frames(rng, (n,), 4), None))
        shape = (2, fft_length + 2)
        cases.append((f"irfft {fft_length}", single_op("SignalIrfft", [(shape, "INT16")],
                                                       [((2, fft_length), "INT16")],
                                                       {"T": 7, "fft_length": fft_length}),
                      int16_frames(rng, shape, 4), None))
    return cases


def wide_fft_cases(rng) -> list:
    """SignalRfft / SignalIrfft int32 (KISS FFT FIXED_POINT=32) and float32 cases: lengths whose
    halves use radix 4, 2, 3 and 5, frames up to full scale (int32 with INT32_MIN / MAX)."""
    cases = []
    for kind in ("INT32", "FLOAT32"):
        options = {"T": 2 if kind == "INT32" else 0}
        for fft_length, n in ((512, 480), (60, 60), (250, 200), (96, 90)):
            cases.append((f"rfft {kind} {fft_length}", single_op(
                "SignalRfft", [((2, n), kind)], [((2, fft_length + 2), kind)],
                dict(options, fft_length=fft_length)), wide_frames(rng, kind, (2, n), 4), None))
            shape = (2, fft_length + 2)
            cases.append((f"irfft {kind} {fft_length}", single_op(
                "SignalIrfft", [(shape, kind)], [((2, fft_length), kind)],
                dict(options, fft_length=fft_length)), wide_frames(rng, kind, shape, 4), None))
    return cases


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
