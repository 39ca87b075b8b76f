"""Runners of TFLM's own custom operators that are not Signal ops: CIRCULAR_BUFFER
(cortexm/src/mrt_circular_buffer.c) and TFLite_Detection_PostProcess
(mrt_detection_postprocess.c). Parameters come from the host kernel's op data (node.user_data,
filled by init and prepare as TFLM's are).

CIRCULAR_BUFFER's period counter (TFLM's OpDataCircularBuffer) is kept by the host kernel
between invokes, so reset() and a fall-back to the host see the same count: it travels through
the ARGS area for the call (written before, read back after), and the kernel's return value ends
the invoke (KernelCall.ends_run) as the host kernel's ABORT does.
"""
from __future__ import annotations

import numpy as np

from micro_rt.kernels.detection_postprocess import check_eval

from .context import CallContext, KernelCall, UnsupportedOnMcu, f32_bits, uwords, words
from .registry import FLOAT32, INT8, KernelKey, OpKernel


def run_circular_buffer(c: CallContext) -> list[KernelCall]:
    state = c.node.user_data
    out = c.out(0)
    slots, depth = int(out.shape[1]), int(out.shape[2]) * int(out.shape[3])     # TFLM's depth: h * w
    state_addr = c.args(words(state.cycles_until_run, state.cycles_max))
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), state_addr) + words(slots, depth))

    def read_back(mcu) -> None:
        state.cycles_until_run = int(np.frombuffer(mcu.read(state_addr, 4), "<i4")[0])

    return [c.call("mrt_circular_buffer_s8", block, after=read_back, ends_run=True)]


# TFLM's scratch buffers the C kernel uses, by the host kernel's names (its request order);
# "scores" (a dequantized copy of the class predictions) is not used for float32.
_DETECTION_BUFFERS = ("active_candidate", "decoded_boxes", "score_buffer", "keep_scores", "scores_after_nms",
                      "sorted_values", "keep_indices", "sorted_indices", "buffer", "selected")


def run_detection_postprocess(c: CallContext) -> list[KernelCall]:
    """TFLM's Eval as one call: its checks of options and shapes first (the host kernel's
    check_eval, the same errors), then the kernel; a degenerate decoded box or a fast-path row
    past the outputs comes back as a refusal."""
    p = c.node.user_data
    box_t, score_t, anchor_t = c.t(0), c.t(1), c.t(2)
    outs = [c.out(i) for i in range(4)]
    check_eval(c.node, p, box_t, score_t, anchor_t, outs)
    n, md, nc = int(box_t.shape[1]), p.max_detections, p.num_classes
    what = f"op {c.node.index} TFLite_Detection_PostProcess"
    # TFLM's buffers are sized for max_detections >= 1 and, on the regular path, for at most
    # max_detections * boxes candidates: outside that TFLM writes past them (micro_rt's twin runs).
    candidates = md + min(n, p.detections_per_class) if p.use_regular_nms else n
    if n < 1 or md < 1 or nc < 1 or candidates > md * n:
        raise UnsupportedOnMcu(f"{what}: {n} boxes, max_detections {md}, num_classes {nc}: TFLM's "
                               "scratch buffers are too small for this case")
    names = list(p.scratch)
    if not isinstance(c.scratch_offset, (tuple, list)) or len(c.scratch_offset) != len(names):
        raise UnsupportedOnMcu(f"{what}: its {len(names)} scratch buffers are not all planned")
    scratch = [c.scratch_addr(names.index(name)) for name in _DETECTION_BUFFERS]
    rows = min(int(np.prod(t.shape)) // w for t, w in zip(outs[:3], (4, 1, 1)))
    block = c.args(uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), *(c.out_addr(i) for i in range(4)), *scratch) +
                   # anchors: TFLM reads (y, x, h, w) records, 4 apart whatever their shape
                   words(n, int(box_t.shape[2]), 4, nc, int(score_t.shape[2]), md,
                         p.max_classes_per_detection, p.detections_per_class, int(p.use_regular_nms), rows) +
                   uwords(*(f32_bits(v) for v in (p.score_threshold, p.iou_threshold, *p.scales))))
    return [c.call("mrt_detection_postprocess_f32", block,
                   refusal=f"{what}: a decoded box has ymin >= ymax or xmin >= xmax, or the fast path "
                           "would write a detection row past its outputs (TFLM writes past their end)")]


KERNELS: dict[KernelKey, OpKernel] = {
    ("CIRCULAR_BUFFER", INT8): OpKernel(run_circular_buffer),
    ("TFLite_Detection_PostProcess", FLOAT32): OpKernel(run_detection_postprocess, libm=True),
}
