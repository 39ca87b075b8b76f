"""TFLite_Detection_PostProcess against the tflite-micro oracle: builder-made SSD heads with
seeded box encodings and scores (ties included), the regular and the fast NMS path, with and
without a background column; outputs bit-equal, arena (head, tail) equal."""
from __future__ import annotations

import numpy as np
import pytest

from devtools.op_models.detection import ssd_head
from micro_rt import Interpreter
from micro_rt.errors import MicroRtError


def seeded_inputs(n_boxes: int, columns: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1000 + seed)
    encodings = rng.normal(0, 2, (1, n_boxes, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, (1, n_boxes, columns)).astype(np.float32)
    if seed % 2:                 # coarse scores: many ties, which TFLM's sorts order
        scores = (np.round(scores * 8) / 8).astype(np.float32)
    return [encodings, scores]


CASES = [  # n_boxes, num_classes, background, regular, max_detections, classes_per_detection
    (20, 3, True, False, 5, 1), (20, 3, False, False, 5, 1), (40, 4, True, True, 10, 1),
    (40, 4, False, True, 6, 1), (8, 2, True, False, 4, 2), (64, 6, True, True, 20, 1),
    (64, 6, True, False, 30, 1)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_outputs_bit_equal_to_oracle(oracle, case):
    n, k, background, regular, md, cpd = case
    data = ssd_head(n, k, background, regular, md, cpd, score_threshold=0.3 if cpd == 1 else 0.9)
    ours = Interpreter.from_bytes(data, target="host64")
    theirs = oracle.interpreter(data, 1 << 20)
    refused = 0
    for seed in range(8):
        inputs = seeded_inputs(n, k + background, seed)
        for i, x in enumerate(inputs):
            ours.set_input(x, i)
        oracle.invoke(theirs, inputs)
        tflm = [np.array(theirs.get_output(i)) for i in range(4)]
        try:
            ours.invoke()
        except MicroRtError as e:   # TFLM's fast path wrote rows past its outputs' end
            last = int(tflm[3][0]) - 1
            assert "past the end" in str(e) and cpd * last + last % cpd >= md * cpd
            refused += 1
            continue
        mine = [ours.get_output(i) for i in range(4)]
        assert mine[3].tobytes() == tflm[3].tobytes(), f"seed {seed}"
        written = int(mine[3][0])
        # the fast path's row for its w-th write is cpd * w + (w mod cpd)
        rows = list(range(md)) if regular else [cpd * w + w % cpd for w in range(written)]
        for o in range(3):
            assert mine[o][0][rows].tobytes() == tflm[o][0][rows].tobytes(), f"seed {seed} output {o}"
    assert refused < 8


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: "-".join(map(str, c)))
def test_arena_equals_oracle(oracle, case):
    data = ssd_head(*case)
    plan = Interpreter.from_bytes(data, target="host64", plan_only=True).plan
    theirs = oracle.allocations(data, 1 << 20)
    assert (plan.head_bytes, plan.tail_bytes) == (theirs["head"], theirs["tail"])


def assert_regular_path_equals_oracle(oracle, data: bytes, n_boxes: int, columns: int) -> None:
    """All four outputs bit-equal to the oracle's on 4 seeds (regular path: every row defined)."""
    ours = Interpreter.from_bytes(data, target="host64")
    for seed in range(4):
        inputs = seeded_inputs(n_boxes, columns, seed)
        for i, x in enumerate(inputs):
            ours.set_input(x, i)
        ours.invoke()
        theirs = oracle.run(data, inputs, 4, 1 << 20)
        for o in range(4):
            assert ours.get_output(o).tobytes() == theirs[o].tobytes(), f"seed {seed} output {o}"


def test_detections_per_class_default_and_option(oracle):
    for per_class in (None, 2):
        assert_regular_path_equals_oracle(oracle, ssd_head(30, 3, True, True, 8, detections_per_class=per_class),
                                          30, 4)


def test_fast_path_writing_past_its_outputs_is_refused():
    # 3 classes per detection: TFLM's row index k * 3 + c grows past max_detections * 3 rows
    data = ssd_head(30, 4, True, False, 3, classes_per_detection=3, score_threshold=0.0, iou=1.0)
    ours = Interpreter.from_bytes(data, target="host64")
    for i, x in enumerate(seeded_inputs(30, 5, 0)):
        ours.set_input(x, i)
    with pytest.raises(MicroRtError, match="past the end"):
        ours.invoke()


def test_bad_options_are_refused_with_their_name(oracle):
    with pytest.raises(MicroRtError, match="lack 'num_classes'"):
        Interpreter.from_bytes(ssd_head(10, 2, True, False, 3, drop=("num_classes",)))
    data = ssd_head(10, 2, True, False, 3, iou=0.0)     # TFLM's Eval refuses it too
    ours = Interpreter.from_bytes(data, target="host64")
    inputs = seeded_inputs(10, 3, 0)
    for i, x in enumerate(inputs):
        ours.set_input(x, i)
    with pytest.raises(MicroRtError, match="nms_iou_threshold"):
        ours.invoke()
    with pytest.raises(MicroRtError):
        oracle.run(data, inputs, 4, 1 << 20)


def test_anchors_are_read_as_four_value_records_as_tflm(oracle):
    """Anchors [n, 6]: TFLM reads them as n consecutive (y, x, h, w) records (stride 4), not
    row by row."""
    assert_regular_path_equals_oracle(oracle, ssd_head(24, 3, True, True, 6, anchor_columns=6, score_threshold=0.2),
                                      24, 4)
