"""TFLM's TFLite_Detection_PostProcess custom operator: SSD box decoding and non-max
suppression, the regular (per class) and the fast (per anchor, top classes) path.

Read from tensorflow/tflite-micro kernels/detection_postprocess.cc, in our words:
- init reads the flexbuffer options into an OpData (`max_detections`,
  `max_classes_per_detection`, `detections_per_class` (100 when absent), `use_regular_nms`
  (false when absent), `nms_score_threshold`, `nms_iou_threshold`, `num_classes` and the four
  `*_scale`s); prepare reads its three inputs as temporary tensors and requests eleven scratch
  buffers (sizes in `_prepare`), float32 throughout (TFLM's Eval refuses other types).
- decoding works in double and rounds each centre / half size to float once; the corners are
  float sums. IoU and areas are float. Kept scores are ordered by a stable descending sort
  (TFLM's merge/insertion sort); "partial" sorts order by (score descending, index ascending).
- the fast path writes box k's class c at row `n_cat * k + c` where k counts every written
  row: with more than one class per detection TFLM skips rows (and can write past the
  outputs, which micro_rt refuses instead); rows it does not write keep what they held.

Everything is computed with float32 / float64 scalars in TFLM's order, so outputs are bit-equal
to TFLM built without fused multiply-add (x86-64's default; the oracle). The C kernel on the
virtual MCU (cortexm/src/mrt_detection_postprocess.c, this module its twin) repeats the same
operations; `check_eval` holds the checks both make before computing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..flexbuffer import read_options
from ..kernel_api import KernelContext, Node, Registration
from .kernel_util import kernel_error
from .signal_common import allocate_op_data, check_io, check_tensor, option_int

F32 = np.float32
_DEFAULT_DETECTIONS_PER_CLASS = 100


@dataclass
class DetectionParams:
    """TFLM's OpData (the scratch indices live in `scratch`)."""
    max_detections: int
    max_classes_per_detection: int
    detections_per_class: int
    score_threshold: np.float32
    iou_threshold: np.float32
    num_classes: int
    use_regular_nms: bool
    scales: tuple[float, float, float, float]     # y, x, h, w as float32 values
    scratch: dict


def _option_float(options: dict, key: str, what: str) -> np.float32:
    if key not in options:
        raise ModelError(f"{what}: custom options lack '{key}' (have {sorted(options)})")
    value = options[key]
    if not isinstance(value, (bool, int, float)):
        raise ModelError(f"{what}: custom option '{key}' is {value!r}, not a number")
    return F32(value)


def _init(ctx, custom_options) -> DetectionParams:
    what = "TFLite_Detection_PostProcess"
    o = read_options(custom_options, what)
    allocate_op_data(ctx, "OpDataDetectionPostProcess")
    return DetectionParams(
        max_detections=option_int(o, "max_detections", what),
        max_classes_per_detection=option_int(o, "max_classes_per_detection", what),
        detections_per_class=(option_int(o, "detections_per_class", what)
                              if o.get("detections_per_class") is not None
                              else _DEFAULT_DETECTIONS_PER_CLASS),
        score_threshold=_option_float(o, "nms_score_threshold", what),
        iou_threshold=_option_float(o, "nms_iou_threshold", what),
        num_classes=option_int(o, "num_classes", what),
        use_regular_nms=bool(o.get("use_regular_nms") or False),
        scales=(float(_option_float(o, "y_scale", what)), float(_option_float(o, "x_scale", what)),
                float(_option_float(o, "h_scale", what)), float(_option_float(o, "w_scale", what))),
        scratch={})


def _prepare(ctx: KernelContext, node: Node) -> None:
    p: DetectionParams = node.user_data
    (boxes, scores, anchors), outs = check_io(ctx, node, 3, 4)
    for t, role, rank in ((boxes, "box encodings", 3), (scores, "class predictions", 3),
                          (anchors, "anchors", 2)):
        if len(t.shape) != rank:
            raise kernel_error(node, f"{role} '{t.name}' must have rank {rank}, has shape {t.shape}")
    n, md = boxes.shape[1], p.max_detections
    sizes = {   # TFLM's request order; int and float are 4 bytes
        "active_candidate": n, "decoded_boxes": n * 16, "scores": scores.shape[1] * scores.shape[2] * 4,
        "score_buffer": n * 4, "keep_scores": n * 4, "scores_after_nms": md * n * 4,
        "sorted_values": md * n * 4, "keep_indices": n * 4, "sorted_indices": md * n * 4,
        "buffer": max(p.num_classes, md) * n * 4, "selected": min(n, md) * n * 4}
    if any(size < 0 for size in sizes.values()):
        raise kernel_error(node, f"max_detections {md} / num_classes {p.num_classes} give a negative "
                                 "scratch size")
    p.scratch = {name: ctx.request_scratch(size) for name, size in sizes.items()}


def _decode(boxes: np.ndarray, anchors: np.ndarray, scales) -> np.ndarray:
    """(n, 4) float32 corners (ymin, xmin, ymax, xmax) from centre-size encodings."""
    sy, sx, sh, sw = scales
    out = np.empty((boxes.shape[0], 4), F32)
    with np.errstate(all="ignore"):
        for i, (by, bx, bh, bw) in enumerate(boxes[:, :4].astype(np.float64)):
            ay, ax, ah, aw = (float(v) for v in anchors[i, :4])
            yc = F32(np.float64(by) / sy * ah + ay)
            xc = F32(np.float64(bx) / sx * aw + ax)
            half_h = F32(0.5 * _exp(np.float64(bh) / sh) * ah)
            half_w = F32(0.5 * _exp(np.float64(bw) / sw) * aw)
            out[i] = (yc - half_h, xc - half_w, yc + half_h, xc + half_w)
    return out


def _exp(x: np.float64) -> float:
    """libm's exp (what std::exp calls), with C's overflow to inf."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _iou(boxes: np.ndarray, i: int, j: int) -> np.float32:
    a, b = boxes[i], boxes[j]
    area_i = (a[2] - a[0]) * (a[3] - a[1])
    area_j = (b[2] - b[0]) * (b[3] - b[1])
    if area_i <= 0 or area_j <= 0:
        return F32(0)
    inter = (max(F32(0), min(a[2], b[2]) - max(a[0], b[0]))
             * max(F32(0), min(a[3], b[3]) - max(a[1], b[1])))
    return inter / (area_i + area_j - inter)


def _partial_order(values, count: int) -> list[int]:
    """The first `count` indices by (value descending, index ascending)."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))[:count]


def _nms_single_class(node, p: DetectionParams, boxes: np.ndarray, scores: np.ndarray,
                      max_detections: int) -> list[int]:
    bad = np.nonzero((boxes[:, 0] >= boxes[:, 2]) | (boxes[:, 1] >= boxes[:, 3]))[0]
    if bad.size:
        raise kernel_error(node, f"decoded box {int(bad[0])} has ymin >= ymax or xmin >= xmax "
                                 f"({boxes[bad[0]].tolist()})")
    kept = [i for i in range(len(scores)) if scores[i] >= p.score_threshold]
    order = sorted(range(len(kept)), key=lambda k: -scores[kept[k]])     # stable
    candidates = [kept[k] for k in order]
    output_size = min(len(kept), max_detections)
    active = [True] * len(candidates)
    n_active, selected = len(candidates), list[int]()
    for i, box in enumerate(candidates):
        if n_active == 0 or len(selected) >= output_size:
            break
        if not active[i]:
            continue
        selected.append(box)
        active[i], n_active = False, n_active - 1
        for j in range(i + 1, len(candidates)):
            if active[j] and _iou(boxes, box, candidates[j]) > p.iou_threshold:
                active[j], n_active = False, n_active - 1
    return selected


def _regular(node, p, boxes, scores, label_offset, outs) -> None:
    ncwb = scores.shape[1]
    kept: list[tuple[int, np.float32]] = []            # (flat class-score index, score)
    for c in range(p.num_classes):
        class_scores = scores[:, c + label_offset]
        picked = _nms_single_class(node, p, boxes, class_scores, p.detections_per_class)
        candidates = kept + [(i * ncwb + c + label_offset, class_scores[i]) for i in picked]
        top = _partial_order([s for _, s in candidates], min(len(candidates), p.max_detections))
        kept = [candidates[k] for k in top]
    det_boxes, det_classes, det_scores, num = outs
    for row in range(p.max_detections):
        if row < len(kept):
            flat, score = kept[row]
            anchor = flat // ncwb
            det_boxes[row] = boxes[anchor]
            det_classes[row] = F32(flat - anchor * ncwb - label_offset)
            det_scores[row] = score
        else:
            det_boxes[row], det_classes[row], det_scores[row] = 0, 0, 0
    num[0] = F32(len(kept))


def _fast(node, p, boxes, scores, label_offset, outs) -> None:
    n_cat = min(p.max_classes_per_detection, p.num_classes)
    class_scores = scores[:, label_offset:label_offset + p.num_classes]
    top_classes = [_partial_order(row, n_cat) for row in class_scores]
    max_scores = np.array([row[top[0]] for row, top in zip(class_scores, top_classes)], F32)
    selected = _nms_single_class(node, p, boxes, max_scores, p.max_detections)
    det_boxes, det_classes, det_scores, num = outs
    rows = min(det_boxes.shape[0], det_classes.shape[0], det_scores.shape[0])
    written = 0
    for anchor in selected:
        for col in range(n_cat):
            at = n_cat * written + col
            if at >= rows:
                raise kernel_error(node, f"would write detection row {at} of outputs with {rows} "
                                         f"rows (max_classes_per_detection {n_cat}: TFLM writes "
                                         "past the end of its outputs here)")
            det_boxes[at] = boxes[anchor]
            det_classes[at] = F32(top_classes[anchor][col])
            det_scores[at] = class_scores[anchor][top_classes[anchor][col]]
            written += 1
    num[0] = F32(written)


def check_eval(node, p: DetectionParams, box_t, score_t, anchor_t, outputs) -> None:
    """Eval's checks of types, shapes and options, in TFLM's order: all it refuses but a
    degenerate decoded box and the fast path's rows past its outputs (both depend on the data).
    TFLM makes the option checks inside its NMS, before it reads any box, so making them first
    refuses the same models (the C kernel's glue makes them too)."""
    for t, role in ((box_t, "box encodings"), (score_t, "class predictions"), (anchor_t, "anchors")):
        check_tensor(node, t, role, np.float32)
    for i, t in enumerate(outputs):
        check_tensor(node, t, f"output {i}", np.float32)
    n = box_t.shape[1]
    if box_t.shape[0] != 1 or box_t.shape[2] < 4:
        raise kernel_error(node, f"box encodings shape {box_t.shape} must be [1, boxes, >=4]")
    if anchor_t.shape[0] < n or anchor_t.shape[1] < 4:
        raise kernel_error(node, f"anchors shape {anchor_t.shape} must be [{n}, >=4]")
    if score_t.shape[0] != 1 or score_t.shape[1] != n:
        raise kernel_error(node, f"class predictions shape {score_t.shape} must be [1, {n}, classes]")
    ncwb = score_t.shape[2]
    if not 0 <= ncwb - p.num_classes <= 1:
        raise kernel_error(node, f"class predictions have {ncwb} columns for num_classes "
                                 f"{p.num_classes} (needs num_classes or num_classes + 1)")
    if p.use_regular_nms:
        rows = [int(np.prod(t.shape)) // w for t, w in zip(outputs[:3], (4, 1, 1))]
        if min(rows) < p.max_detections:
            raise kernel_error(node, f"outputs have fewer than max_detections {p.max_detections} rows")
        if p.num_classes <= 0:
            return                                   # no class: no NMS, nothing more checked
        if p.detections_per_class <= 0:
            raise kernel_error(node, f"detections_per_class {p.detections_per_class} must be positive")
    else:
        if p.max_classes_per_detection <= 0:
            raise kernel_error(node, f"max_classes_per_detection {p.max_classes_per_detection} must be positive")
        if p.max_detections < 0:
            raise kernel_error(node, f"max detections {p.max_detections} is negative")
    if not (p.iou_threshold > 0 and p.iou_threshold <= 1):
        raise kernel_error(node, f"nms_iou_threshold {p.iou_threshold} is not in (0, 1]")


def _invoke(ctx: KernelContext, node: Node) -> None:
    p: DetectionParams = node.user_data
    box_t, score_t, anchor_t = (ctx.input(node, i) for i in range(3))
    check_eval(node, p, box_t, score_t, anchor_t, [ctx.output(node, i) for i in range(4)])
    n, ncwb = box_t.shape[1], score_t.shape[2]
    # TFLM reads the anchors as consecutive (y, x, h, w) records, whatever their second dimension
    boxes = _decode(box_t.data.reshape(n, -1), anchor_t.data.reshape(-1)[:4 * n].reshape(n, 4), p.scales)
    ctx.scratch(p.scratch["decoded_boxes"])[:boxes.nbytes] = boxes.view(np.uint8).ravel()
    scores = score_t.data.reshape(n, ncwb)
    det_boxes = ctx.output(node, 0).data.reshape(-1, 4)
    outs = (det_boxes, ctx.output(node, 1).data.reshape(-1), ctx.output(node, 2).data.reshape(-1),
            ctx.output(node, 3).data.reshape(-1))
    if p.use_regular_nms:
        _regular(node, p, boxes, scores, ncwb - p.num_classes, outs)
    else:
        _fast(node, p, boxes, scores, ncwb - p.num_classes, outs)


CUSTOMS = [
    ("TFLite_Detection_PostProcess",
     Registration(init=_init, prepare=_prepare, invoke=_invoke, name="TFLite_Detection_PostProcess", temps="i0 i1 i2"), 1),
]
