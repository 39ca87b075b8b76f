"""TFLM's Signal custom operators (SignalWindow ... SignalOverlapAdd) as one-operator models
(`single_op`, options as a flexbuffer), the stream cases that reach their edges
(`signal_cases`, `wide_fft_cases`) and the frames fed to them (`int16_frames`, `wide_frames`,
`audio_frames`). The Signal tests (tests/test_kernels_signal.py, test_vmcu_signal.py, ...) and
benchmarks/bench_op_cycles.py share them."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from flatbuffers import flexbuffers

from micro_rt.builder import ModelBuilder


def single_op(op: str, inputs: Sequence[tuple], outputs: Sequence[tuple], options: dict) -> bytes:
    """inputs/outputs: (shape, type[, constant data]); returns a one-operator model."""
    b = ModelBuilder()
    ins, model_inputs = [], []
    for k, (shape, kind, *data) in enumerate(inputs):
        t = b.add_tensor(f"in{k}", shape, kind, data=data[0] if data else None)
        ins.append(t)
        if not data:
            model_inputs.append(t)
    outs = [b.add_tensor(f"out{k}", shape, kind) for k, (shape, kind) in enumerate(outputs)]
    b.add_operator(op, ins, outs, custom_options=flexbuffers.Dumps(options) if options else b"")
    b.inputs, b.outputs = model_inputs, outs
    return b.build()


def int16_frames(rng: np.random.Generator, shape: Sequence[int], count: int) -> list:
    amps = [1, 50, 3000, 32768]
    frames = [[rng.integers(-amps[n % 4], amps[n % 4], shape).astype(np.int16)] for n in range(count)]
    frames[0][0].reshape(-1)[:3] = (-32768, 32767, 0)
    return frames


def wide_frames(rng: np.random.Generator, kind: str, shape: Sequence[int], count: int) -> list:
    if kind == "FLOAT32":
        return [[rng.normal(0, 10.0 ** (n % 5 - 1), shape).astype(np.float32)] for n in range(count)]
    frames = []
    for n in range(count):
        bound = [1 << 8, 1 << 20, (1 << 31) - 1][n % 3]
        frames.append([rng.integers(-bound, bound, shape).astype(np.int32)])
    frames[0][0].reshape(-1)[:2] = (-(1 << 31), (1 << 31) - 1)
    return frames


def audio_frames(count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    t = np.arange(480) / 16000
    frames = []
    for n in range(count):
        tone = 6000 * np.sin(2 * np.pi * (300 + 40 * n) * t) * (n % 5 != 0)
        noise = rng.normal(0, [30, 300, 3000][n % 3], 480)
        frames.append(np.clip(tone + noise, -32768, 32767).astype(np.int16).reshape(1, 480))
    return frames


def filter_bank_config(rng: np.random.Generator, channels: int, bins: int) -> tuple[np.ndarray, ...]:
    widths = rng.integers(0, 9, channels + 1).astype(np.int16)
    freq_starts = np.sort(rng.integers(0, bins - 9, channels + 1)).astype(np.int16)
    weight_starts = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int16)
    total = int(widths.sum())
    weights = rng.integers(0, 4096, total).astype(np.int16)
    return weights, (4096 - weights).astype(np.int16), freq_starts, weight_starts, widths


SPECTRAL = {"alternate_one_minus_smoothing": 15401, "alternate_smoothing": 983, "clamping": False,
            "min_signal_remaining": 819, "num_channels": 16, "one_minus_smoothing": 15975,
            "smoothing": 409, "smoothing_bits": 10, "spectral_subtraction_bits": 14}


def signal_cases(rng: np.random.Generator) -> list:
    """(name, model, frames, defined) single-op cases with the data that reaches the edges."""
    shape: tuple[int, ...]            # the loops below take shapes of every rank
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


def wide_fft_cases(rng: np.random.Generator) -> list:
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

