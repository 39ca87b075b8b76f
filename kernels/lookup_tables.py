"""Lookup tables of the one-input element-wise kernels: an int8 (or int16) input takes only
256 (65536) values, so prepare evaluates TFLM's arithmetic on every one of them once and
invoke is one gather indexed by the input's raw bits."""
from __future__ import annotations

import numpy as np
from micro_rt.kernel_api import KernelContext, Node


def int8_domain() -> np.ndarray:
    """All int8 values in uint8 byte order (0..127, -128..-1): index a table with x.view(uint8)."""
    return np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)


def int16_domain() -> np.ndarray:
    """All int16 values in uint16 bit order (0..32767, -32768..-1): index a table with
    x.view(uint16)."""
    return np.arange(1 << 16, dtype=np.uint16).view(np.int16).astype(np.int64)


def apply_lut(lut: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """out[...] = lut[x] for int8 / int16 (or uint8) x, the table indexed by the raw bits."""
    if out.shape != x.shape:
        out = out.reshape(x.shape)
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    # Every bit pattern has its entry: mode "clip" only skips numpy's buffered bounds check.
    lut.take(x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16), out=out, mode="clip")


def unary_invoke(ctx: KernelContext, node: Node) -> None:
    """Invoke of a one-input element-wise op whose prepare left in `node.user_data` a lookup
    table (`kind` "lut8" / "lut16", `lut`) or a numpy function of the input (`fn`)."""
    data = node.user_data
    x, dst = ctx.required_input(node, 0).data, ctx.output(node, 0).data
    if data.kind in ("lut8", "lut16"):
        apply_lut(data.lut, x, dst)
    else:
        dst[...] = np.asarray(data.fn(x)).reshape(dst.shape)
