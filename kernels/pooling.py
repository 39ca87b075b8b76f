"""AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D: TFLM's reference kernels (pooling.cc /
pooling_common.cc, l2_pool_2d.cc; reference_ops / reference_integer_ops AveragePool, MaxPool,
L2Pool), vectorised per filter tap.

Windows are clamped to the image (taps outside are skipped, not counted). int8 average:
int32 sum, then (sum ± count/2) / count with C truncation, then the activation clamp.
float average: float32 sum in (filter_y, filter_x) order divided by the float count.
Max: start from the type's lowest value (float: NaN inputs are skipped, as std::max keeps its
first operand), then clamp to the activation range.
L2 (float32 only): sqrtf(float32 sum of squares in (filter_y, filter_x) order / the float
count), clamped; its prepare copies the output's dims into the tail (TFLM rewrites them there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .kernel_util import (activation_of, activation_range_float, activation_range_quantized, check_activation,
                          check_quantized, dtype_name, kernel_error, scale_of, tensor_name, type_label,
                          type_name, zero_point_of)
from .padding import PaddingValues, check_geometry, compute_padding_height_width, int16_window, make_geometry
from .requant import clip


_FLT_MAX = float(np.finfo(np.float32).max)


@dataclass
class OpDataPooling:
    kind: str = ""
    padding: Any = None
    geometry: Any = None
    act_min: Any = 0
    act_max: Any = 0
    counts: Any = None
    pad_buffer: Any = None
    fill: Any = 0              # max pooling: the padding's value, the type's lowest
    acc: Any = None
    int_avg: Any = None        # integer average: (half, count, int64 buffer, sign buffer, lo, hi)


pool_init = op_data_init("OpDataPooling", OpDataPooling)


def _reached_taps(pad: int, stride: int, out_size: int, filter_size: int, in_size: int) -> tuple[int, int]:
    """(first, count) of the filter taps along one axis that fall inside the image for at
    least one output position; the others only ever read padding."""
    first = max(0, pad - (out_size - 1) * stride)
    end = min(filter_size, pad + in_size)
    return first, max(end - first, 1)


def _prepare(ctx: KernelContext, node: Node, is_max: bool, is_l2: bool = False) -> None:
    data: OpDataPooling = node.user_data
    opts = node.options
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise kernel_error(node, "expects 1 input and 1 output")
    inp = ctx.required_input(node, 0)
    out = ctx.output(node, 0)
    it = np.dtype(inp.dtype)
    if inp.dtype != out.dtype:
        raise kernel_error(node, f"input {tensor_name(inp)} is {it.name} but output {tensor_name(out)} is {dtype_name(out)}")
    if len(inp.shape) != 4 or len(out.shape) != 4:
        raise kernel_error(node, f"input {tensor_name(inp)} and output must be 4-D")
    if is_l2 and it != np.float32:
        raise kernel_error(node, f"input {tensor_name(inp)}: L2_POOL_2D only supports float32 (input->type != "
                                 f"kTfLiteFloat32 ({type_name(it)} != FLOAT32))")
    if it not in (np.float32, np.int8, np.int16):
        raise kernel_error(node, f"input {tensor_name(inp)}: Type {type_label(it)} not supported.")
    act = activation_of(node)
    check_activation(node, act)
    n, ih, iw, c = (int(d) for d in inp.shape)
    fh, fw = int(opts.get("filter_height", 1)), int(opts.get("filter_width", 1))
    sh, sw = int(opts.get("stride_h", 1)), int(opts.get("stride_w", 1))
    check_geometry(node, inp, out, fh, fw, sh, sw, 1, 1, opts.get("padding", "SAME"), channels=c,
                   int16_fields=False)
    data.padding, _, _ = compute_padding_height_width(sh, sw, 1, 1, ih, iw, fh, fw,
                                                      opts.get("padding", "SAME"))
    if int16_window(1, 1, 1, 1, data.padding) is not None:
        raise kernel_error(node, f"a {fh}x{fw} window pads input {tensor_name(inp)} by "
                                 f"{data.padding.height}x{data.padding.width}: TFLM's PoolParams keep the "
                                 "padding as int16_t, which wraps (micro_rt does not reproduce that)")
    # Only the taps that reach the image for some output (TFLM clips each window to the image,
    # so its cost follows the image, not filter_height x filter_width).
    top, fh_reached = _reached_taps(data.padding.height, sh, int(out.shape[1]), fh, ih)
    left, fw_reached = _reached_taps(data.padding.width, sw, int(out.shape[2]), fw, iw)
    reached = PaddingValues(data.padding.width - left, data.padding.height - top, 0, 0)
    g = make_geometry(inp.shape, out.shape, fh_reached, fw_reached, sh, sw, 1, 1, reached)
    data.geometry = g
    data.kind = it.name
    if it == np.float32:
        lo, hi = activation_range_float(act)
        if is_l2:       # CalculateActivationRange<float>: finite bounds (no activation: +-FLT_MAX)
            lo, hi = max(lo, -_FLT_MAX), min(hi, _FLT_MAX)
        data.act_min, data.act_max = np.float32(lo), np.float32(hi)
    else:
        if act != "NONE":       # the fused activation's bounds divide by the output scale
            check_quantized(node, out, "output")
        data.act_min, data.act_max = activation_range_quantized(act, scale_of(out), zero_point_of(out), it)
    data.counts = g.valid_counts()[None, :, :, None]
    if is_l2:       # CreateWritableTensorDimsWithCopy: a TfLiteIntArray of the output's dims
        ctx.allocate_persistent(4 + 4 * len(out.shape))
    if is_max:
        data.fill = np.finfo(np.float32).min if it == np.float32 else np.iinfo(it).min
        data.pad_buffer = np.full(g.padded_shape, data.fill, dtype=it)
    else:
        data.pad_buffer = np.zeros(g.padded_shape, dtype=np.float32 if it == np.float32 else np.int32)
        if np.any(data.counts == 0):
            raise kernel_error(node, f"output {tensor_name(out)} has windows with no input element")
    data.acc = np.empty((n, g.out_h, g.out_w, c), dtype=data.pad_buffer.dtype)
    if not is_max and it != np.float32:
        # Integer average: operands of the full output shape, made once.
        shape = data.acc.shape
        counts = np.broadcast_to(np.asarray(data.counts, np.int64), shape)
        data.int_avg = (np.ascontiguousarray(counts // 2), np.ascontiguousarray(counts),
                        np.empty(shape, np.int64), np.empty(shape, data.acc.dtype),
                        np.asarray(data.act_min, np.int64), np.asarray(data.act_max, np.int64))


def avg_prepare(ctx: KernelContext, node: Node) -> None:
    _prepare(ctx, node, is_max=False)


def max_prepare(ctx: KernelContext, node: Node) -> None:
    _prepare(ctx, node, is_max=True)


def l2_prepare(ctx: KernelContext, node: Node) -> None:
    _prepare(ctx, node, is_max=False, is_l2=True)


def _accumulate(data: OpDataPooling, x: np.ndarray, reduce, start) -> np.ndarray:
    """`reduce` over every tap in TFLM's (filter_y, filter_x) order from `start`. Padded taps
    hold `start` (0 for sums, the lowest value for maxima), so each is a no-op as TFLM's
    skipped taps are: float 0 + 0.0 stays +0 and a float max never becomes NaN (np.fmax, like
    std::max(max, x), keeps the non-NaN operand)."""
    g = data.geometry
    buf = data.pad_buffer
    g.fill(buf, x)
    acc = data.acc
    acc[...] = start
    for ky in range(g.filter_h):
        for kx in range(g.filter_w):
            reduce(acc, g.tap(buf, ky, kx), out=acc)
    return acc


def avg_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataPooling = node.user_data
    out = ctx.output(node, 0)
    acc = _accumulate(data, ctx.required_input(node, 0).data, np.add, 0)
    if data.kind == "float32":
        res = acc / data.counts.astype(np.float32)
        np.maximum(res, data.act_min, out=res)
        np.minimum(res, data.act_max, out=res)
    else:
        # (a + half) / count rounded half away from zero, C division: sign(a) * ((|a| + half)
        # // count) (a = 0 gives 0 either way; half < count).
        half, counts, a, sgn, lo, hi = data.int_avg
        np.abs(acc, out=a)
        a += half
        a //= counts
        np.sign(acc, out=sgn)
        a *= sgn
        res = clip(a, lo, hi, out=a)
    out.data[...] = res


def max_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataPooling = node.user_data
    out = ctx.output(node, 0)
    acc = _accumulate(data, ctx.required_input(node, 0).data, np.fmax if data.kind == "float32" else np.maximum,
                      data.pad_buffer.dtype.type(data.fill))
    if data.kind == "float32":
        res = np.minimum(np.maximum(acc, data.act_min), data.act_max)
    else:
        res = np.clip(acc, data.act_min, data.act_max)
    out.data[...] = res


def l2_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataPooling = node.user_data
    x = ctx.required_input(node, 0).data
    acc = _accumulate(data, x * x, np.add, 0)
    res = np.sqrt(acc / data.counts.astype(np.float32))
    ctx.output(node, 0).data[...] = np.minimum(np.maximum(res, data.act_min), data.act_max)


AVERAGE_POOL_2D = Registration(invoke=avg_invoke, prepare=avg_prepare, init=pool_init,
                               name="AVERAGE_POOL_2D",
                               temps="i0 o0")
MAX_POOL_2D = Registration(invoke=max_invoke, prepare=max_prepare, init=pool_init,
                           name="MAX_POOL_2D",
                           temps="i0 o0")

L2_POOL_2D = Registration(invoke=l2_invoke, prepare=l2_prepare, init=op_data_init(None, OpDataPooling),
                          name="L2_POOL_2D",
                          temps="o0 i0", persistent_after_temps=True)

BUILTINS = [("AVERAGE_POOL_2D", AVERAGE_POOL_2D, 3), ("MAX_POOL_2D", MAX_POOL_2D, 3), ("L2_POOL_2D", L2_POOL_2D, 1)]
