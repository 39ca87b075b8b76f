"""TFLM's own custom operators on the virtual MCU against their numpy twins: CIRCULAR_BUFFER
(cortexm/src/mrt_circular_buffer.c) over streams of invokes, its period counter carried across
invokes and restarted by reset(), the run ending at it (kTfLiteAbort) on the same invokes as on
the host; TFLite_Detection_PostProcess (mrt_detection_postprocess.c) bit-equal on both NMS paths
with ties, scores at the threshold and several max_detections / detections_per_class."""
from __future__ import annotations

import numpy as np
import pytest

from devtools.op_models.circular_buffer import streaming_model
from devtools.op_models.detection import ssd_head
from micro_rt import Interpreter
from micro_rt.errors import MicroRtError
from test_circular_buffer import CASES, batched_model
from test_detection_postprocess import seeded_inputs

CORES = ["cortex-m0plus", "cortex-m4"]


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_circular_buffer_stream_matches_twin(core, case):
    slots, depth, cycles_max, width = case
    data = streaming_model(slots, depth, cycles_max, width)
    host = Interpreter.from_bytes(data, target=core)
    mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
    rng = np.random.default_rng(slots * 10 + depth)
    ended_early = 0
    for n in range(25):
        if n == 14:
            host.reset()
            mcu.reset()
        x = rng.integers(-128, 128, (1, 1, width, depth), dtype=np.int8)
        for it in (host, mcu):
            it.set_input(x, 0)
            it.invoke()
        assert [r.index for r in mcu.last_run] == [r.index for r in host.last_run], n
        for k in range(2):
            assert np.array_equal(host.get_output(k), mcu.get_output(k)), (n, k)
        buffer_record = mcu.last_run[0]
        assert buffer_record.on_mcu and buffer_record.cycles > 0
        assert buffer_record.ended_run == (len(host.last_run) == 1) == host.last_run[-1].ended_run
        ended_early += buffer_record.ended_run
    if cycles_max is not None and cycles_max > 1:
        assert ended_early, "the period never ended a run early"


def test_circular_buffer_batch_two_matches_twin():
    host, mcu = (Interpreter.from_bytes(batched_model(), target="cortex-m0plus", **kw)
                 for kw in ({}, {"kernels": "cmsis-nn", "emulate": True}))
    rng = np.random.default_rng(9)
    for n in range(6):
        x = rng.integers(-128, 128, (2, 1, 2, 3), dtype=np.int8)
        for it in (host, mcu):
            it.set_input(x, 0)
            it.invoke()
        assert np.array_equal(host.get_output(0), mcu.get_output(0)) and mcu.last_run[0].on_mcu, n


def test_fit_measures_the_kernels_after_a_circular_buffer():
    """fit invokes again while the buffer's period ends the inference early, so the later
    kernels' stack and code are measured; when the period outlasts its invokes it cannot tell."""
    from micro_rt.fit import CANNOT_TELL, FITS, assess
    from micro_rt.fit_measure import MAX_MEASURED_INVOKES, kernel_measurement, measure_kernels
    data = streaming_model(4, 8, 2)                   # period 2: the first inference ends at op 0
    with Interpreter.from_bytes(data, target="cortex-m0plus", kernels="cmsis-nn", emulate=True) as it:
        it.set_input(np.ones((1, 1, 1, 8), np.int8), 0)
        it.invoke()
        first = kernel_measurement(it)
    assert first.ended_at == "0 CIRCULAR_BUFFER"
    measured = measure_kernels(data, "cortex-m0plus")
    assert measured.ended_at == "" and measured.code_bytes > first.code_bytes
    plan = Interpreter.from_bytes(data, target="cortex-m0plus", kernels="cmsis-nn", plan_only=True)
    assert assess("cb", data, plan, 1 << 20, 1 << 20).verdict == FITS
    slow = streaming_model(4, 8, MAX_MEASURED_INVOKES + 1)
    plan = Interpreter.from_bytes(slow, target="cortex-m0plus", kernels="cmsis-nn", plan_only=True)
    report = assess("cb", slow, plan, 1 << 20, 1 << 20)
    assert report.verdict == CANNOT_TELL and "after op 0 CIRCULAR_BUFFER" in " ".join(report.not_accounted)


def test_profile_runs_until_an_inference_runs_every_operator():
    """profile reports the first inference that runs every operator (a CIRCULAR_BUFFER's period
    ends the ones before); when none does within its invokes, it marks where the last ended."""
    from micro_rt.fit_measure import MAX_MEASURED_INVOKES
    from micro_rt.profile import emulated_profile, profile_table
    report, it = emulated_profile(streaming_model(4, 8, 2), "cortex-m4", 100_000_000)
    it.close()
    assert report["complete"] and [op["op"] for op in report["ops"]] == ["CIRCULAR_BUFFER", "RESHAPE"]
    assert report["invokes_ended_early"] == 1 and "1 inference before this one ended early" in profile_table(report)
    report, it = emulated_profile(streaming_model(4, 8, MAX_MEASURED_INVOKES + 1), "cortex-m4", 100_000_000)
    it.close()
    assert [op["op"] for op in report["ops"]] == ["CIRCULAR_BUFFER"] and report["ops"][0]["ended_run"]
    assert "it ended the invoke, kTfLiteAbort" in profile_table(report)


# ---- TFLite_Detection_PostProcess (cortexm/src/mrt_detection_postprocess.c) ---------------------
DETECTION_CASES = [  # n_boxes, num_classes, background, regular, max_detections, classes/detection, per class
    (20, 3, True, False, 5, 1, None), (40, 4, False, True, 10, 1, None), (64, 6, True, True, 20, 1, 3),
    (64, 6, True, False, 30, 1, None), (8, 2, True, False, 4, 2, None), (120, 5, True, True, 7, 1, 100),
    (24, 5, False, False, 30, 3, None), (33, 1, True, True, 1, 1, 2), (50, 3, True, True, 3, 1, 1)]


def _detection_inputs(n: int, columns: int, seed: int, threshold: float) -> list[np.ndarray]:
    """Seeded encodings and scores; odd seeds round the scores to eighths (many ties), and a
    few scores sit exactly at the score threshold."""
    inputs = seeded_inputs(n, columns, seed)
    rng = np.random.default_rng(seed)
    at = rng.integers(0, n, 4)
    inputs[1][0, at, rng.integers(0, columns, 4)] = np.float32(threshold)
    return inputs


def _host_and_mcu(data: bytes, core: str):
    return (Interpreter.from_bytes(data, target=core),
            Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True))


def _run_both(host, mcu, inputs) -> tuple[list, list]:
    """Outputs of both after one invoke, or the refusal each raised."""
    got = []
    for it in (host, mcu):
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        try:
            it.invoke()
            got.append([it.get_output(i).copy() for i in range(4)])
        except MicroRtError as e:
            got.append(e)
    return got[0], got[1]


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4", "cortex-m7"])
@pytest.mark.parametrize("case", DETECTION_CASES, ids=lambda c: "-".join(map(str, c)))
def test_detection_postprocess_matches_twin(core, case):
    """Outputs bit-equal (boxes, classes, scores, count) on 10 seeds per case, refusals on the
    same inputs; the C kernel runs on TFLM's scratch buffers in the planned arena."""
    n, k, background, regular, md, cpd, per_class = case
    threshold = 0.3 if cpd == 1 else 0.9
    data = ssd_head(n, k, background, regular, md, cpd, score_threshold=threshold,
                    detections_per_class=per_class, seed=n + k)
    ran = _assert_detection_stream(data, core, n, k + background, threshold)
    assert ran >= (8 if cpd == 1 else 2)      # cpd > 1: TFLM writes past its outputs on some seeds


def test_detection_anchors_with_six_columns_match_twin():
    data = ssd_head(24, 3, True, True, 6, anchor_columns=6, score_threshold=0.2)
    assert _assert_detection_stream(data, "cortex-m4", 24, 4, 0.2) == 10


def _assert_detection_stream(data: bytes, core: str, n: int, columns: int, threshold: float) -> int:
    """Host and MCU on 10 seeded inputs: outputs bit-equal, or both refuse; how many ran."""
    host, mcu = _host_and_mcu(data, core)
    ran = 0
    for seed in range(10):
        ours, theirs = _run_both(host, mcu, _detection_inputs(n, columns, seed, threshold))
        if isinstance(ours, Exception):
            assert isinstance(theirs, Exception), f"seed {seed}: host refused ({ours}), the MCU did not"
            continue
        assert not isinstance(theirs, Exception), f"seed {seed}: the MCU refused: {theirs}"
        for o in range(4):
            assert ours[o].tobytes() == theirs[o].tobytes(), f"seed {seed} output {o}"
        record = mcu.last_run[0]
        assert record.on_mcu and record.cycles > 0
        ran += 1
    return ran


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"])
def test_detection_decoding_bit_equal_over_many_boxes(core):
    """Every decoded box out (fast path, score threshold 0, IoU threshold 1: nothing suppressed),
    encodings over a wide range: newlib's exp (the device, in double) and glibc's (the host) could
    differ in the last bit of a double, which would move a float corner by at most one ulp in the
    rare case the double lies next to a float rounding boundary; measured here: bit-equal."""
    n = 200
    data = ssd_head(n, 2, True, False, n, 1, score_threshold=0.0, iou=1.0, seed=3)
    host, mcu = _host_and_mcu(data, core)
    rng = np.random.default_rng(11)
    for seed in range(6):
        encodings = rng.normal(0, 4.0, (1, n, 4)).astype(np.float32)
        scores = rng.uniform(0, 1, (1, n, 3)).astype(np.float32)
        ours, theirs = _run_both(host, mcu, [encodings, scores])
        assert not isinstance(ours, Exception) and not isinstance(theirs, Exception), (ours, theirs)
        assert int(ours[3][0]) == n
        for o in range(4):
            assert ours[o].tobytes() == theirs[o].tobytes(), f"seed {seed} output {o}"


def test_detection_refusals_match_the_host():
    """A degenerate decoded box (exp underflows: zero height) and the fast path writing past its
    outputs are refused on the MCU as on the host; options TFLM refuses are refused before."""
    data = ssd_head(30, 4, True, False, 3, classes_per_detection=3, score_threshold=0.0, iou=1.0)
    host, mcu = _host_and_mcu(data, "cortex-m4")
    ours, theirs = _run_both(host, mcu, seeded_inputs(30, 5, 0))
    assert "past the end" in str(ours) and "past its outputs" in str(theirs)
    data = ssd_head(10, 2, True, True, 3)
    host, mcu = _host_and_mcu(data, "cortex-m4")
    encodings, scores = seeded_inputs(10, 3, 0)
    encodings[0, 4, 2] = -1e4                    # exp(-2000) = 0: ymin == ymax
    ours, theirs = _run_both(host, mcu, [encodings, scores])
    assert "ymin >= ymax" in str(ours) and "ymin >= ymax" in str(theirs)
    data = ssd_head(10, 2, True, False, 3, iou=0.0)
    host, mcu = _host_and_mcu(data, "cortex-m4")
    ours, theirs = _run_both(host, mcu, seeded_inputs(10, 3, 0))
    assert "nms_iou_threshold" in str(ours) and "nms_iou_threshold" in str(theirs)
