"""TFLM's Signal custom operators (SignalWindow ... SignalFilterBankLog): options read by
micro_rt's flexbuffer reader, host kernels bit-exact with the tflite-micro oracle (which
registers them) on builder-made single-op models and on the audio preprocessors in shared/,
op data and state in the tail as TFLM allocates them, state carried and cleared by reset()."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pytest
from flatbuffers import flexbuffers

from conftest import shared_model
from devtools.op_models.signal import (SPECTRAL, audio_frames, filter_bank_config, int16_frames, single_op,
                                       wide_frames)
from micro_rt import Interpreter, KernelError, ModelError, builtin_op_resolver
from micro_rt.flexbuffer import read_options
from micro_rt.kernels.signal_filterbank import sqrt64
from micro_rt.kernels.signal_kissfft import KissFftr

SIGNAL_OPS = ["SignalWindow", "SignalFftAutoScale", "SignalRfft", "SignalEnergy",
              "SignalFilterBank", "SignalFilterBankSquareRoot",
              "SignalFilterBankSpectralSubtraction", "SignalFilterBankLog", "SignalPCAN",
              "SignalIrfft", "SignalFramer", "SignalStacker", "SignalDelay", "SignalOverlapAdd"]


# ---- flexbuffer options ---------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    {}, {"shift": 12}, {"T": 7, "fft_length": 512},
    {"a": -5, "b": 1 << 40, "c": 2.5, "d": True, "e": [1, 2, 3], "f": "text", "g": {"x": -1},
     "h": [1, "a", 2.0, False], "i": [1.5, 2.5], "j": -(1 << 62)},
])
def test_flexbuffer_reader_matches_the_flexbuffers_package(options):
    assert read_options(flexbuffers.Dumps(options)) == options


def test_flexbuffer_reader_refuses_malformed_bytes_cleanly():
    good = flexbuffers.Dumps({"alpha": 1, "beta": [1, 2, 3], "gamma": "abc"})
    rng = np.random.default_rng(0)
    for n in range(1, len(good)):
        with pytest.raises(ModelError):
            read_options(good[-n:] if n < 3 else good[:n])   # truncations: never another error
    for _ in range(300):
        noisy = bytearray(good)
        noisy[rng.integers(len(noisy))] = int(rng.integers(256))
        try:
            read_options(bytes(noisy))
        except ModelError:
            pass
    with pytest.raises(ModelError, match="not a map"):
        read_options(flexbuffers.Dumps([1, 2]))


# ---- single-op models -----------------------------------------------------------------------
# (single_op, the frames and SPECTRAL: devtools/op_models/signal.py)
def stream_agrees(oracle, data: bytes, frames: Sequence[Sequence[np.ndarray]],
                  compare: Optional[Sequence[slice]] = None, reset_at: int = -1,
                  gated: bool = False) -> None:
    """Feed the same frames to both, state carried (reset both at frame `reset_at`);
    every output equal, or its `compare` slice. `gated`: output 1 says whether output 0 is
    valid; while it is not, TFLM leaves output 0 as it was, so it is compared only when valid."""
    ours = Interpreter.from_bytes(data, target="host64")
    arena = max(2 * ours.plan.required_bytes, 1 << 16)
    printed = oracle.allocations(data, arena)
    assert (ours.plan.head_bytes, ours.plan.tail_bytes) == (printed["head"], printed["tail"])
    theirs = oracle.interpreter(data, arena)
    for n, inputs in enumerate(frames):
        if n == reset_at:
            ours.reset()
            theirs.reset()
        for i, x in enumerate(inputs):
            ours.set_input(x, i)
        ours.invoke()
        oracle.invoke(theirs, inputs)
        valid = not gated or bool(np.array(theirs.get_output(1)))
        for k in range(ours.num_outputs):
            a, b = ours.get_output(k), np.array(theirs.get_output(k))
            if k == 0 and not valid:
                continue
            if compare:
                a, b = a[compare[k]], b[compare[k]]
            assert a.dtype == b.dtype and np.array_equal(a, b), \
                f"frame {n} output {k}: {np.count_nonzero(a != b)} of {a.size} differ"


@pytest.mark.parametrize("shape,width,shift", [((480,), 480, 12), ((3, 64), 64, 0), ((2, 32), 32, 15)])
def test_window_matches_oracle(oracle, shape, width, shift):
    rng = np.random.default_rng(width + shift)
    weights = rng.integers(-32768, 32767, width).astype(np.int16)
    data = single_op("SignalWindow", [(shape, "INT16"), ((width,), "INT16", weights)],
                     [(shape, "INT16")], {"shift": shift})
    stream_agrees(oracle, data, int16_frames(rng, shape, 12))


def test_fft_auto_scale_matches_oracle(oracle):
    rng = np.random.default_rng(1)
    data = single_op("SignalFftAutoScale", [((100,), "INT16")], [((100,), "INT16"), ((), "INT32")], {})
    frames = int16_frames(rng, (100,), 16) + [[np.zeros(100, np.int16)]]
    frames.append([np.full(100, -32768, np.int16)])
    mixed = np.zeros(100, np.int16)
    mixed[[3, 50]] = (-32768, 100)                   # MaxAbs16's int16 wrap, then a later value
    frames.append([mixed])
    stream_agrees(oracle, data, frames)


@pytest.mark.parametrize("fft_length,shape", [
    (512, (480,)), (64, (50,)), (16, (16,)), (128, (3, 100)),
    (60, (60,)), (250, (200,)), (2 * 3 * 3 * 5, (90,))])         # radix 4, 2, 3, 5
def test_rfft_matches_oracle(oracle, fft_length, shape):
    rng = np.random.default_rng(fft_length)
    frames = shape[:-1] + (fft_length + 2,)
    data = single_op("SignalRfft", [(shape, "INT16")], [(frames, "INT16")],
                     {"T": 7, "fft_length": fft_length})
    stream_agrees(oracle, data, int16_frames(rng, shape, 8))


def test_energy_matches_oracle_on_its_range(oracle):
    rng = np.random.default_rng(2)
    data = single_op("SignalEnergy", [((258,), "INT16")], [((129,), "UINT32")],
                     {"end_index": 120, "start_index": 4})
    # TFLM leaves the output outside [start, end) as it was: only the range is defined
    stream_agrees(oracle, data, int16_frames(rng, (258,), 8), compare=[slice(4, 120)])


def test_filter_bank_matches_oracle(oracle):
    rng = np.random.default_rng(3)
    channels, bins = 12, 80
    w, u, fs, ws, wd = filter_bank_config(rng, channels, bins)
    consts = [((len(a),), "INT16", a) for a in (w, u, fs, ws, wd)]
    data = single_op("SignalFilterBank", [((bins,), "UINT32")] + consts,
                     [((channels,), "UINT64")], {"num_channels": channels})
    frames = [[rng.integers(0, 1 << 32, bins, dtype=np.uint64).astype(np.uint32)] for _ in range(10)]
    stream_agrees(oracle, data, frames)


def test_filter_bank_square_root_matches_oracle(oracle):
    rng = np.random.default_rng(4)
    data = single_op("SignalFilterBankSquareRoot", [((64,), "UINT64"), ((), "INT32")],
                     [((64,), "UINT32")], {})
    frames = []
    for n in range(12):
        bits = rng.integers(0, 64, 64).astype(np.uint64)
        x = rng.integers(0, 1 << 63, 64, dtype=np.uint64) >> (np.uint64(63) - bits)
        x[:4] = (0, 1, (1 << 64) - 1, (1 << 32) - 1)
        frames.append([x, np.array(n % 8, np.int32)])
    stream_agrees(oracle, data, frames)


def test_sqrt64_is_the_rounded_integer_root():
    x = np.array([0, 1, 2, 3, 4, 15, 16, 17, (1 << 32) - 1, 1 << 32, (1 << 64) - 1], np.uint64)
    root = sqrt64(x).astype(object)
    for v, r in zip(x.tolist(), root.tolist()):
        floor = int(np.floor(np.sqrt(float(v))))
        while floor * floor > v:
            floor -= 1
        while (floor + 1) ** 2 <= v:
            floor += 1
        assert r in (floor, floor + 1) and r <= 0xFFFFFFFF


@pytest.mark.parametrize("clamping", [False, True])
def test_spectral_subtraction_carries_state_and_resets_like_oracle(oracle, clamping):
    rng = np.random.default_rng(5 + clamping)
    data = single_op("SignalFilterBankSpectralSubtraction", [((16,), "UINT32")],
                     [((16,), "UINT32"), ((16,), "UINT32")], dict(SPECTRAL, clamping=clamping))
    frames = [[rng.integers(0, [1 << 10, 1 << 20, 1 << 32][n % 3], 16, dtype=np.uint64)
               .astype(np.uint32)] for n in range(40)]
    stream_agrees(oracle, data, frames, reset_at=25)


def test_spectral_subtraction_state_survives_invokes_until_reset():
    data = single_op("SignalFilterBankSpectralSubtraction", [((16,), "UINT32")],
                     [((16,), "UINT32"), ((16,), "UINT32")], SPECTRAL)
    it = Interpreter.from_bytes(data)
    x = np.full(16, 1 << 20, np.uint32)
    seen = []
    for _ in range(3):
        it.set_input(x, 0)
        it.invoke()
        seen.append(it.get_output(1).copy())
    assert seen[0].any() and (seen[1] > seen[0]).all() and (seen[2] > seen[1]).all()
    it.reset()
    it.set_input(x, 0)
    it.invoke()
    assert np.array_equal(it.get_output(1), seen[0])


def test_pcan_matches_oracle(oracle):
    rng = np.random.default_rng(6)
    lut = rng.integers(-32768, 32767, 125).astype(np.int16)
    data = single_op("SignalPCAN", [((24,), "UINT32"), ((24,), "UINT32"), ((125,), "INT16", lut)],
                     [((24,), "UINT32")], {"snr_shift": 6})
    frames = []
    for n in range(12):
        top = [1 << 8, 1 << 16, 1 << 32][n % 3]
        x = rng.integers(0, top, 24, dtype=np.uint64).astype(np.uint32)
        noise = rng.integers(0, top, 24, dtype=np.uint64).astype(np.uint32)
        noise[:3] = (0, 1, 2)
        frames.append([x, noise])
    stream_agrees(oracle, data, frames)


@pytest.mark.parametrize("bits,scale", [(3, 64), (0, 1), (8, 1 << 20)])
def test_filter_bank_log_matches_oracle(oracle, bits, scale):
    rng = np.random.default_rng(bits)
    data = single_op("SignalFilterBankLog", [((64,), "UINT32")], [((64,), "INT16")],
                     {"input_correction_bits": bits, "output_scale": scale})
    frames = []
    for n in range(12):
        shift = rng.integers(0, 32, 64).astype(np.uint64)
        x = (rng.integers(0, 1 << 32, 64, dtype=np.uint64) >> shift).astype(np.uint32)
        x[:3] = (0, 1, 2)
        frames.append([x])
    stream_agrees(oracle, data, frames)


def test_kiss_fft_of_a_cosine_peaks_at_its_bin():
    n = 256
    x = (8000 * np.cos(2 * np.pi * 10 * np.arange(n) / n)).astype(np.int16)
    spectrum = KissFftr(n)(x[None, :])[0].astype(np.int64)
    power = (spectrum ** 2).sum(-1)
    assert int(np.argmax(power)) == 10


@pytest.mark.parametrize("fft_length,shape", [(512, (514,)), (64, (2, 66)), (60, (62,)), (250, (252,))])
def test_irfft_matches_oracle(oracle, fft_length, shape):
    rng = np.random.default_rng(fft_length + 1)
    out = shape[:-1] + (fft_length,)
    data = single_op("SignalIrfft", [(shape, "INT16")], [(out, "INT16")],
                     {"T": 7, "fft_length": fft_length})
    stream_agrees(oracle, data, int16_frames(rng, shape, 8))


@pytest.mark.parametrize("kind", ["INT32", "FLOAT32"])
@pytest.mark.parametrize("op,fft_length,shape", [
    ("SignalRfft", 512, (480,)), ("SignalRfft", 60, (2, 50)), ("SignalRfft", 250, (250,)),
    ("SignalIrfft", 512, (514,)), ("SignalIrfft", 96, (98,))])
def test_rfft_irfft_int32_and_float_match_oracle(oracle, kind, op, fft_length, shape):
    rng = np.random.default_rng(fft_length)
    out = shape[:-1] + ((fft_length + 2,) if op == "SignalRfft" else (fft_length,))
    data = single_op(op, [(shape, kind)], [(out, kind)],
                     {"T": 2 if kind == "INT32" else 0, "fft_length": fft_length})
    stream_agrees(oracle, data, wide_frames(rng, kind, shape, 6))


@pytest.mark.parametrize("shape,size,step,prefill", [
    ((160,), 400, 160, True), ((2, 64), 48, 16, False), ((32,), 32, 32, True), ((30,), 70, 10, True)])
def test_framer_carries_samples_like_oracle(oracle, shape, size, step, prefill):
    rng = np.random.default_rng(size + step)
    n_frames = shape[-1] // step
    out = shape[:-1] + (n_frames, size)
    data = single_op("SignalFramer", [(shape, "INT16")], [(out, "INT16"), ((), "BOOL")],
                     {"frame_size": size, "frame_step": step, "prefill": prefill})
    stream_agrees(oracle, data, int16_frames(rng, shape, 30), reset_at=20, gated=True)


@pytest.mark.parametrize("channels,left,right,step", [(40, 2, 1, 1), (8, 0, 0, 1), (5, 3, 2, 2), (4, 1, 3, 5)])
def test_stacker_carries_frames_like_oracle(oracle, channels, left, right, step):
    rng = np.random.default_rng(channels * 7 + step)
    size = channels * (left + right + 1)
    data = single_op("SignalStacker", [((channels,), "INT16")], [((size,), "INT16"), ((), "BOOL")],
                     {"num_channels": channels, "stacker_left_context": left,
                      "stacker_right_context": right, "stacker_step": step})
    stream_agrees(oracle, data, int16_frames(rng, (channels,), 30), reset_at=17, gated=True)


@pytest.mark.parametrize("shape,delay", [((160,), 100), ((3, 16), 40), ((8,), 0), ((2, 10), 7)])
def test_delay_matches_oracle(oracle, shape, delay):
    rng = np.random.default_rng(delay)
    data = single_op("SignalDelay", [(shape, "INT16")], [(shape, "INT16")], {"delay_length": delay})
    stream_agrees(oracle, data, int16_frames(rng, shape, 20), reset_at=13)


@pytest.mark.parametrize("kind,shape,step", [("INT16", (2, 64), 16), ("INT16", (3, 1, 32), 32),
                                             ("FLOAT32", (4, 48), 12), ("FLOAT32", (2, 3, 20), 5)])
def test_overlap_add_matches_oracle(oracle, kind, shape, step):
    rng = np.random.default_rng(step)
    out = shape[:-2] + (shape[-2] * step,)
    data = single_op("SignalOverlapAdd", [(shape, kind)], [(out, kind)],
                     {"T": 7 if kind == "INT16" else 0, "frame_step": step})
    if kind == "INT16":
        frames = int16_frames(rng, shape, 16)
    else:
        frames = [[rng.normal(0, 10.0 ** (n % 4), shape).astype(np.float32)] for n in range(16)]
    stream_agrees(oracle, data, frames, reset_at=9)


def one_op_specs() -> dict:
    """name -> (inputs, outputs, options) of one single-op model per Signal operator."""
    rng = np.random.default_rng(0)
    w, u, fs, ws, wd = filter_bank_config(rng, 12, 80)
    lut = rng.integers(-32768, 32767, 125).astype(np.int16)
    i16 = lambda *shape: (shape, "INT16")                      # noqa: E731
    u32 = lambda *shape: (shape, "UINT32")                     # noqa: E731
    return {
        "SignalWindow": ([i16(1, 480), ((480,), "INT16", w[:1].repeat(480))], [i16(1, 480)],
                         {"shift": 12}),
        "SignalFftAutoScale": ([i16(480)], [i16(480), ((), "INT32")], {}),
        "SignalRfft": ([i16(480)], [i16(514)], {"T": 7, "fft_length": 512}),
        "SignalIrfft": ([i16(514)], [i16(512)], {"T": 7, "fft_length": 512}),
        "SignalEnergy": ([i16(514)], [u32(257)], {"end_index": 241, "start_index": 5}),
        "SignalFilterBank": ([u32(80)] + [((len(a),), "INT16", a) for a in (w, u, fs, ws, wd)],
                             [((12,), "UINT64")], {"num_channels": 12}),
        "SignalFilterBankSquareRoot": ([((40,), "UINT64"), ((), "INT32")], [u32(40)], {}),
        "SignalFilterBankSpectralSubtraction": ([u32(16)], [u32(16), u32(16)], SPECTRAL),
        "SignalPCAN": ([u32(40), u32(40), ((125,), "INT16", lut)], [u32(40)],
            {"snr_shift": 6}),
        "SignalFilterBankLog": ([u32(40)], [i16(40)],
            {"input_correction_bits": 3, "output_scale": 64}),
        "SignalFramer": ([i16(2, 160)], [i16(2, 1, 400), ((), "BOOL")],
            {"frame_size": 400, "frame_step": 160, "prefill": True}),
        "SignalStacker": ([i16(40)], [i16(160), ((), "BOOL")],
            {"num_channels": 40, "stacker_left_context": 2,
             "stacker_right_context": 1, "stacker_step": 1}),
        "SignalDelay": ([i16(3, 160)], [i16(3, 160)], {"delay_length": 100}),
        "SignalOverlapAdd": ([i16(2, 1, 64)], [i16(2, 16)],
            {"T": 7, "frame_step": 16}),
    }


def one_model_per_op() -> dict:
    """One single-op model of each Signal operator (the preprocessors' configurations)."""
    return {name: single_op(name, *spec) for name, spec in one_op_specs().items()}


def test_odd_option_values_give_our_errors_or_run():
    """Every option of every Signal op set to extreme values: micro_rt refuses with its own
    error family (never another exception, a hang or a huge allocation) or runs."""
    from micro_rt.errors import MicroRtError
    from micro_rt.inputs import random_inputs
    for name, (inputs, outputs, options) in one_op_specs().items():
        for key in options:
            for value in (-1, 0, 1, 3, (1 << 31) - 1, -(1 << 31), 2.5, "x"):
                data = single_op(name, inputs, outputs, dict(options, **{key: value}))
                try:
                    it = Interpreter.from_bytes(data)
                    for i, x in enumerate(random_inputs(it, 0)):
                        it.set_input(x, i)
                    it.invoke()
                except MicroRtError:
                    pass


def test_every_signal_op_is_in_the_minimum_check():
    assert sorted(one_model_per_op()) == sorted(SIGNAL_OPS)


def test_reported_minimum_is_tflm_true_minimum_for_every_signal_op(oracle):
    from oracle_minimum import minimum_mismatches
    cases = [(name, data, Interpreter.from_bytes(data, target="host64", plan_only=True)
              .plan.required_bytes) for name, data in one_model_per_op().items()]
    assert minimum_mismatches(cases) == []


# ---- refusals -------------------------------------------------------------------------------
def test_signal_ops_are_registered_under_their_custom_names():
    resolver = builtin_op_resolver()
    assert all(resolver.supports(name, is_custom=True) for name in SIGNAL_OPS)


def test_bad_options_and_shapes_are_refused_with_the_op_named():
    with pytest.raises(ModelError, match="fft_length"):
        Interpreter.from_bytes(single_op("SignalRfft", [((10,), "INT16")], [((12,), "INT16")],
                                         {"T": 7, "fft_length": 9}))
    with pytest.raises(ModelError, match="radix-7"):      # TFLM segfaults on this one
        Interpreter.from_bytes(single_op("SignalRfft", [((98,), "INT16")], [((100,), "INT16")],
                                         {"T": 7, "fft_length": 98}))
    with pytest.raises(KernelError, match="T=9 is not int16"):
        Interpreter.from_bytes(single_op("SignalRfft", [((10,), "INT8")], [((12,), "INT8")],
                                         {"T": 9, "fft_length": 10}))
    with pytest.raises(KernelError, match="op 0 SignalRfft"):
        Interpreter.from_bytes(single_op("SignalRfft", [((20,), "INT16")], [((12,), "INT16")],
                                         {"T": 7, "fft_length": 10}))
    with pytest.raises(ModelError, match="lack 'shift'"):
        Interpreter.from_bytes(single_op("SignalWindow", [((8,), "INT16"),
                                                          ((8,), "INT16", np.ones(8))],
                                         [((8,), "INT16")], {"shft": 1}))
    with pytest.raises(KernelError, match="op 0 SignalEnergy.*end_index"):
        Interpreter.from_bytes(single_op("SignalEnergy", [((20,), "INT16")], [((10,), "UINT32")],
                                         {"end_index": 11, "start_index": 0}))
    with pytest.raises(KernelError, match="circular buffer would overflow"):
        Interpreter.from_bytes(single_op("SignalStacker", [((4,), "INT16")],
                                         [((8,), "INT16"), ((), "BOOL")],
                                         {"num_channels": 4, "stacker_left_context": 1,
                                          "stacker_right_context": 0, "stacker_step": 3}))
    with pytest.raises(KernelError, match="op 0 SignalFramer.*multiple of frame_step"):
        Interpreter.from_bytes(single_op("SignalFramer", [((30,), "INT16")],
                                         [((3, 40), "INT16"), ((), "BOOL")],
                                         {"frame_size": 40, "frame_step": 7, "prefill": False}))
    with pytest.raises(KernelError, match="must be uint32"):
        Interpreter.from_bytes(single_op("SignalFilterBankLog", [((8,), "INT32")], [((8,), "INT16")],
                                         {"input_correction_bits": 3, "output_scale": 64}))


# ---- the audio preprocessors in shared/ ----------------------------------------------------
PREPROCESSOR_LOG_OUTPUT = 13          # the SignalFilterBankLog op: end of the Signal chain


PREPROCESSORS = ["audio_preprocessor_float.tflite", "audio_preprocessor_int8.tflite"]


@pytest.mark.parametrize("name", PREPROCESSORS)
def test_audio_preprocessor_stream_bit_exact_with_oracle(oracle, name):
    """50 frames with the noise estimate carried, then reset() on both and 10 more: the
    features and the Signal chain's own output equal TFLM's, frame after frame."""
    data = shared_model(name).read_bytes()
    ours = Interpreter.from_bytes(data, target="host64", preserve_all_tensors=True)
    theirs = oracle.interpreter(data, preserve_all_tensors=True)
    log_tensor = ours.nodes[PREPROCESSOR_LOG_OUTPUT].outputs[0]
    assert ours.nodes[PREPROCESSOR_LOG_OUTPUT].op_name == "SignalFilterBankLog"
    for n, x in enumerate(audio_frames(60)):
        if n == 50:
            ours.reset()
            theirs.reset()
        oracle.invoke(theirs, [x])
        ours.set_input(x, 0)
        ours.invoke()
        assert np.array_equal(ours.get_output(0), np.array(theirs.get_output(0))), f"frame {n}"
        expected = np.array(theirs.GetTensor(log_tensor, 0)["tensor_data"])
        assert np.array_equal(ours.get_tensor(log_tensor), expected), f"frame {n}"


@pytest.mark.parametrize("name", PREPROCESSORS)
def test_audio_preprocessor_arena_equals_oracle(oracle, name):
    """int8: head 3040, tail 7184 (total 10224) as print_allocations says; the reported
    minimum is TFLM's true minimum."""
    from oracle_minimum import fits_exactly
    path = shared_model(name)
    plan = Interpreter.from_file(path, target="host64", plan_only=True).plan
    theirs = oracle.allocations(path.read_bytes(), 1 << 16)
    assert (plan.head_bytes, plan.tail_bytes) == (theirs["head"], theirs["tail"])
    assert fits_exactly(path, plan.required_bytes) == (True, False)


def test_check_against_oracle_starts_a_used_interpreter_afresh(oracle):
    """`micro-rt run --check` invokes the model before comparing: the noise estimate it left
    must not make a stateful model differ from a fresh oracle."""
    from micro_rt.inputs import random_inputs
    data = shared_model("audio_preprocessor_float.tflite").read_bytes()
    ours = Interpreter.from_bytes(data)
    ours.set_input(audio_frames(1)[0], 0)
    ours.invoke()
    agreements = oracle.check_against_oracle(data, ours, [random_inputs(ours, s) for s in range(4)])
    assert all(a.bit_exact for a in agreements)
