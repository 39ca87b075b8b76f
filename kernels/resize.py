"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR: TFLM's reference kernels
(resize_nearest_neighbor.cc with micro's reference_ops::ResizeNearestNeighbor; resize_bilinear.cc
with reference_ops::ResizeBilinear for float32 and ResizeBilinearInteger for int8).

Both take a 4-D input [N, H, W, C] and a constant int32 size tensor [2] = (new height, new width);
neither has op data or scratch (init is nullptr). Which input pixel an output pixel reads is
computed as TFLM computes it: nearest in float32 ((y + offset) * scale, floored, or rounded
half away from zero with align_corners), bilinear int8 in TFLM's 10-bit fixed point (scale
rounded to 1/1024, the four products summed in int64, rounded half away from zero and divided
by 2^20), bilinear float32 in float32 in the reference expression's order (a*(1-dy)*(1-dx) +
b*dy*(1-dx) + c*(1-dy)*dx + d*dy*dx + 0.0f, no fused multiply-add): bit-identical.
Nearest copies the elements (float32 as int32 words, so every bit pattern survives).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration

from .kernel_util import kernel_error, require_inputs, tensor_desc, type_code, type_label, type_name

F32 = np.float32


@dataclass(frozen=True)
class ResizeGeometry:
    """What invoke reads: the input rows / columns of every output row / column (nearest:
    rows, cols; bilinear: lower and upper rows / columns and the interpolation positions)."""
    out_h: int
    out_w: int
    rows: Any
    cols: Any


def _options(node) -> tuple[bool, bool]:
    return bool(node.options.get("align_corners", False)), bool(node.options.get("half_pixel_centers", False))


def _check_common(ctx: KernelContext, node: Node, allowed: tuple, refusal) -> tuple:
    """(input, output, (new height, new width)) after TFLM's Prepare checks, plus the shape
    agreement TFLM only DCHECKs (its loops write size[0] * size[1] pixels into the output)."""
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 2 inputs and 1 output, got {len(node.inputs)}/{len(node.outputs)}")
    inp, size = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    if len(inp.shape) != 4:
        raise kernel_error(node, f"input {tensor_desc(inp)} is {len(inp.shape)}-D: TFLM requires "
                                 "NumDimensions(input) == 4")
    if len(size.shape) != 1 or np.dtype(size.dtype) != np.int32:
        raise kernel_error(node, f"size {tensor_desc(size)} must be a 1-D int32 tensor (TFLM: "
                                 "NumDimensions(size) == 1, size->type == kTfLiteInt32)")
    if int(size.shape[0]) != 2:
        raise kernel_error(node, f"size {tensor_desc(size)} must hold 2 values (new height, new width)")
    if not size.is_constant:
        raise kernel_error(node, f"size {tensor_desc(size)}: {refusal['dynamic']}")
    dt = np.dtype(inp.dtype)
    if dt not in allowed:
        raise kernel_error(node, f"input {tensor_desc(inp)}: {refusal['type'](dt)} (TFLM refuses it when invoked)")
    if np.dtype(out.dtype) != dt:
        raise kernel_error(node, f"output {tensor_desc(out)} differs in type from input {tensor_desc(inp)} "
                                 "(TFLM overwrites output->type with the input's)")
    new_h, new_w = (int(v) for v in np.asarray(size.data).reshape(-1))
    if new_h <= 0 or new_w <= 0:
        raise kernel_error(node, f"size {tensor_desc(size)} holds {[new_h, new_w]}: sizes must be positive")
    n, _, _, c = (int(d) for d in inp.shape)
    if tuple(int(d) for d in out.shape) != (n, new_h, new_w, c):
        raise kernel_error(node, f"output {tensor_desc(out)} must be {[n, new_h, new_w, c]} (the input's batch "
                                 "and channels, the size tensor's height and width)")
    return inp, out, (new_h, new_w)


# --------------------------------------------------------------------------- nearest neighbor

def nearest_indices(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """GetNearestNeighbor for every output position 0 .. out_size-1 (float32 arithmetic)."""
    if align_corners and out_size > 1:
        scale = F32(in_size - 1) / F32(out_size - 1)
    else:
        scale = F32(in_size) / F32(out_size)
    offset = F32(0.5) if half_pixel_centers else F32(0.0)
    pos = (np.arange(out_size, dtype=F32) + offset) * scale          # float32 throughout
    if align_corners:
        index = np.floor(pos.astype(np.float64) + 0.5)              # roundf: half away from zero (pos >= 0)
    else:
        index = np.floor(pos)
    index = np.minimum(index.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        index = np.maximum(index, 0)
    return index


_NEAREST_TYPES = (np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.int16))
_NEAREST_REFUSAL = {
    "dynamic": "Non-constant >size< tensor is not supported",
    "type": lambda dt: f"Output tensor type {type_name(dt)} ({type_code(dt)}) not supported.",
}


def nearest_prepare(ctx: KernelContext, node: Node) -> None:
    inp, _, (new_h, new_w) = _check_common(ctx, node, _NEAREST_TYPES, _NEAREST_REFUSAL)
    align, half = _options(node)
    _, in_h, in_w, _ = (int(d) for d in inp.shape)
    node.user_data = ResizeGeometry(new_h, new_w, nearest_indices(in_h, new_h, align, half),
                                    nearest_indices(in_w, new_w, align, half))


def nearest_invoke(ctx: KernelContext, node: Node) -> None:
    g: ResizeGeometry = node.user_data
    x = ctx.required_input(node, 0).data
    out = ctx.output(node, 0).data
    out[...] = x[:, g.rows][:, :, g.cols]


# --------------------------------------------------------------------------- bilinear

@dataclass(frozen=True)
class Interpolation:
    """One axis: lower / upper input index and the position (float32, or int32 in 1/1024)."""
    lower: np.ndarray
    upper: np.ndarray
    position: np.ndarray


def bilinear_axis_float(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> Interpolation:
    """ComputeInterpolationValues for every output position, in float32."""
    scale = F32(in_size) / F32(out_size)
    if align_corners and out_size > 1:
        scale = F32(in_size - 1) / F32(out_size - 1)
    value = np.arange(out_size, dtype=F32)
    pos = (value + F32(0.5)) * scale - F32(0.5) if half_pixel_centers else value * scale
    lower = np.maximum(np.floor(pos).astype(np.int64), 0)
    upper = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
    return Interpolation(lower, upper, pos.astype(F32))


def _c_div(a, b: int):
    """C's integer division (truncation toward zero) for int64 arrays and a positive divisor."""
    a = np.asarray(a, np.int64)
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def bilinear_axis_integer(in_size: int, out_size: int, align_corners: bool,
                          half_pixel_centers: bool) -> Interpolation:
    """ComputeInterpolationValuesInteger for every output position (1/1024 fixed point)."""
    scale_10 = ((1 << 10) * in_size + out_size // 2) // out_size
    if align_corners and out_size > 1:
        scale_10 = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    value = np.arange(out_size, dtype=np.int64)
    pos = value * scale_10 + (int(_c_div(scale_10, 2)) - (1 << 9) if half_pixel_centers else 0)
    lower = np.maximum(_c_div(pos, 1 << 10), 0)
    upper = np.minimum(_c_div(pos + (1 << 10) - 1, 1 << 10), in_size - 1)
    return Interpolation(lower, upper, pos)


@dataclass(frozen=True)
class BilinearData:
    kind: str
    ys: Interpolation
    xs: Interpolation


_BILINEAR_TYPES = (np.dtype(np.float32), np.dtype(np.int8))
_BILINEAR_REFUSAL = {
    "dynamic": "Non constant size tensor not supported",
    "type": lambda dt: f"Output type is {type_code(dt)}, requires float or int8. ({type_label(dt)})",
}


def bilinear_prepare(ctx: KernelContext, node: Node) -> None:
    align, half = _options(node)
    if align and half:
        raise kernel_error(node, "If half_pixel_centers is True, align_corners must be False.")
    inp, _, (new_h, new_w) = _check_common(ctx, node, _BILINEAR_TYPES, _BILINEAR_REFUSAL)
    _, in_h, in_w, _ = (int(d) for d in inp.shape)
    axis = bilinear_axis_float if np.dtype(inp.dtype) == np.float32 else bilinear_axis_integer
    node.user_data = BilinearData(np.dtype(inp.dtype).name, axis(in_h, new_h, align, half),
                                  axis(in_w, new_w, align, half))


def bilinear_float(x: np.ndarray, ys: Interpolation, xs: Interpolation) -> np.ndarray:
    """reference_ops::ResizeBilinear<float>, term by term in float32."""
    dy = (ys.position - ys.lower.astype(F32))[None, :, None, None]
    dx = (xs.position - xs.lower.astype(F32))[None, None, :, None]
    wy, wx = F32(1) - dy, F32(1) - dx
    rows0, rows1 = x[:, ys.lower], x[:, ys.upper]
    a, b = rows0[:, :, xs.lower], rows1[:, :, xs.lower]
    c, d = rows0[:, :, xs.upper], rows1[:, :, xs.upper]
    with np.errstate(over="ignore", invalid="ignore"):      # inf / nan inputs propagate as in C
        return a * wy * wx + b * dy * wx + c * wy * dx + d * dy * dx + F32(0)


def bilinear_integer(x: np.ndarray, ys: Interpolation, xs: Interpolation) -> np.ndarray:
    """reference_ops::ResizeBilinearInteger (without TFLITE_SINGLE_ROUNDING), in int64."""
    one = 1 << 10
    dy = (ys.position - one * ys.lower)[None, :, None, None]
    dx = (xs.position - one * xs.lower)[None, None, :, None]
    x64 = x.astype(np.int64)
    rows0, rows1 = x64[:, ys.lower], x64[:, ys.upper]
    total = (rows0[:, :, xs.lower] * (one - dy) * (one - dx) + rows1[:, :, xs.lower] * dy * (one - dx)
             + rows0[:, :, xs.upper] * (one - dy) * dx + rows1[:, :, xs.upper] * dy * dx)
    rounded = total + np.where(total > 0, 1 << 19, -(1 << 19))
    return _c_div(rounded, 1 << 20)


def bilinear_invoke(ctx: KernelContext, node: Node) -> None:
    g: BilinearData = node.user_data
    x = ctx.required_input(node, 0).data
    out = ctx.output(node, 0).data
    if g.kind == "float32":
        out[...] = bilinear_float(np.asarray(x, F32), g.ys, g.xs)
    else:
        out[...] = bilinear_integer(x, g.ys, g.xs).astype(np.int8)      # static_cast<int8_t>: wraps


RESIZE_NEAREST_NEIGHBOR = Registration(invoke=nearest_invoke, prepare=nearest_prepare,
                                       name="RESIZE_NEAREST_NEIGHBOR",
                                       temps="i0 i1 o0")
RESIZE_BILINEAR = Registration(invoke=bilinear_invoke, prepare=bilinear_prepare, name="RESIZE_BILINEAR",
                               temps="i0 i1 o0")

BUILTINS = [("RESIZE_NEAREST_NEIGHBOR", RESIZE_NEAREST_NEIGHBOR, 4), ("RESIZE_BILINEAR", RESIZE_BILINEAR, 4)]
