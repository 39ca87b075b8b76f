"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR runners for micro_rt.cortexm.ops: one call of
mrt_resize_nearest_neighbor (float32 / int8 / int16, copied as 4-, 1- or 2-byte elements) or
mrt_resize_bilinear_f32 / _s8 (cortexm/src/mrt_resize.c), which read the new size from the size
tensor as TFLM's kernels do. No scratch."""
from __future__ import annotations

import numpy as np

from .context import CallContext, KernelCall, uwords, words
from .registry import FLOAT32, INT16, INT8, KernelKey, OpKernel

SYMBOLS = {("RESIZE_NEAREST_NEIGHBOR", "float32"): "mrt_resize_nearest_neighbor",
           ("RESIZE_NEAREST_NEIGHBOR", "int8"): "mrt_resize_nearest_neighbor",
           ("RESIZE_NEAREST_NEIGHBOR", "int16"): "mrt_resize_nearest_neighbor",
           ("RESIZE_BILINEAR", "float32"): "mrt_resize_bilinear_f32",
           ("RESIZE_BILINEAR", "int8"): "mrt_resize_bilinear_s8"}


def run_resize(c: CallContext) -> list[KernelCall]:
    inp = c.t(0)
    dtype = np.dtype(inp.dtype)
    n, h, w, depth = (int(d) for d in inp.shape)
    opts = c.node.options
    block = (uwords(c.in_addr(0), c.out_addr(), c.in_addr(1))
             + words(n, h, w, depth, dtype.itemsize, bool(opts.get("align_corners", False)),
                     bool(opts.get("half_pixel_centers", False))))
    return [c.call(SYMBOLS[(c.node.op_name, dtype.name)], c.args(block))]


KERNELS: dict[KernelKey, OpKernel] = {
    **{("RESIZE_NEAREST_NEIGHBOR", t): OpKernel(run_resize) for t in (INT8, INT16, FLOAT32)},
    **{("RESIZE_BILINEAR", t): OpKernel(run_resize) for t in (INT8, FLOAT32)},
}
