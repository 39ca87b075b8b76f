"""An SSD head's TFLite_Detection_PostProcess as a one-operator model (`ssd_head`): seeded
anchors, the regular or the fast NMS path, with or without a background column. The detection
tests (tests/test_detection_postprocess.py, test_vmcu_custom.py, ...) and
benchmarks/bench_op_cycles.py share it."""
from __future__ import annotations

import numpy as np
from flatbuffers import flexbuffers

from micro_rt.builder import ModelBuilder


def ssd_head(n_boxes: int, num_classes: int, background: bool, regular: bool, max_detections: int,
             classes_per_detection: int = 1, seed: int = 0, iou: float = 0.5,
             score_threshold: float = 0.3, detections_per_class: int | None = None,
             drop: tuple = (), anchor_columns: int = 4) -> bytes:
    rng = np.random.default_rng(seed)
    anchors = np.stack([rng.uniform(0, 1, n_boxes), rng.uniform(0, 1, n_boxes),
                        rng.uniform(0.05, 0.5, n_boxes), rng.uniform(0.05, 0.5, n_boxes)], 1)
    # TFLM reads the anchors as consecutive (y, x, h, w) records whatever their second dimension
    anchors = np.concatenate([anchors, rng.uniform(0.05, 0.5, (n_boxes, anchor_columns - 4))], 1)
    options = {"max_detections": max_detections, "max_classes_per_detection": classes_per_detection,
               "use_regular_nms": regular, "nms_score_threshold": score_threshold,
               "nms_iou_threshold": iou, "num_classes": num_classes,
               "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}
    if detections_per_class is not None:
        options["detections_per_class"] = detections_per_class
    options = {k: v for k, v in options.items() if k not in drop}
    b = ModelBuilder()
    boxes = b.add_tensor("box_encodings", [1, n_boxes, 4], "FLOAT32")
    scores = b.add_tensor("class_predictions", [1, n_boxes, num_classes + background], "FLOAT32")
    anchor = b.add_tensor("anchors", [n_boxes, anchor_columns], "FLOAT32", data=anchors.astype(np.float32))
    rows = max_detections * classes_per_detection
    outs = [b.add_tensor("detection_boxes", [1, rows, 4], "FLOAT32"),
            b.add_tensor("detection_classes", [1, rows], "FLOAT32"),
            b.add_tensor("detection_scores", [1, rows], "FLOAT32"),
            b.add_tensor("num_detections", [1], "FLOAT32")]
    b.add_operator("TFLite_Detection_PostProcess", [boxes, scores, anchor], outs,
                   custom_options=flexbuffers.Dumps(options))
    b.inputs, b.outputs = [boxes, scores], outs
    return b.build()

