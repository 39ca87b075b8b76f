"""QUANTIZE and DEQUANTIZE: TFLM's reference kernels (quantize_common.cc, dequantize_common.cc)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .fixedpoint import f32_to_int32_cast, multiply_by_quantized_multiplier, round_half_away_array, wrap_int32
from .kernel_util import (check_quantized, is_quantized, kernel_error, scale_of, tensor_desc, type_name,
                          zero_point_of)
from .lookup_tables import int8_domain, int16_domain, unary_invoke
from .quant import check_left_shift, quantize_multiplier

_REQUANT_PAIRS = {
    (np.int16, np.int8), (np.int8, np.int8), (np.int8, np.uint8), (np.uint8, np.int8),
    (np.int8, np.int16), (np.int8, np.int32), (np.int16, np.int16), (np.int16, np.int32),
    (np.int32, np.int8), (np.int32, np.int16),
}


@dataclass
class QuantData:
    kind: str = ""              # "affine", "requant", "dequant" (fn), "lut8", "lut16" (lut)
    lut: Optional[np.ndarray] = None
    fn: Any = None


# --------------------------------------------------------------------------- pure math

def affine_quantize(x: np.ndarray, scale: float, zero_point: int, out_dtype) -> np.ndarray:
    """reference_ops::AffineQuantize: roundf(val / (float)scale) + zero_point, clamped."""
    q = np.asarray(x, np.float32) / np.float32(scale)          # float32 division
    unclamped = wrap_int32(f32_to_int32_cast(round_half_away_array(q)) + zero_point)
    info = np.iinfo(out_dtype)
    return np.clip(unclamped, int(info.min), int(info.max))


def requantize(x: np.ndarray, multiplier: int, shift: int, in_zp: int, out_zp: int,
               in_dtype, out_dtype) -> np.ndarray:
    """reference_ops::Requantize (with its int8<->uint8 XOR-0x80 fast path)."""
    x64 = np.asarray(x, np.int64)
    if multiplier == (1 << 30) and shift == 1:
        diff = in_zp - out_zp
        if (np.dtype(in_dtype) == np.int8 and np.dtype(out_dtype) == np.uint8 and diff == -128) or \
           (np.dtype(in_dtype) == np.uint8 and np.dtype(out_dtype) == np.int8 and diff == 128):
            return (x64 ^ 0x80) & 0xFF if np.dtype(out_dtype) == np.uint8 else \
                ((x64 ^ 0x80) + 128) % 256 - 128
    out = multiply_by_quantized_multiplier(wrap_int32(x64 - in_zp), multiplier, shift) + out_zp
    info = np.iinfo(out_dtype)
    return np.clip(out, int(info.min), int(info.max))


def dequantize(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """reference_ops::Dequantize: static_cast<float>(double(scale) * (val - zero_point))."""
    return (float(scale) * (np.asarray(x, np.int64) - zero_point).astype(np.float64)).astype(np.float32)


# --------------------------------------------------------------------------- kernels

def _quantize_prepare(ctx: KernelContext, node: Node):
    data: QuantData = node.user_data
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    _same_count(node, i, o)
    if not is_quantized(o):
        raise kernel_error(node, f"output {tensor_desc(o)} is not quantized")
    if len(o.scales) != 1:
        raise kernel_error(node, f"output {tensor_desc(o)} has {len(o.scales)} scales, only per-tensor "
                         "quantization is supported")
    idt, odt = np.dtype(i.dtype), np.dtype(o.dtype)
    check_quantized(node, o, "output")
    if idt not in (np.float32, np.int32, np.int16, np.int8, np.uint8):
        raise kernel_error(node, f"input {tensor_desc(i)}: type {idt.name} not supported")
    if odt not in (np.int8, np.int16, np.int32, np.uint8):
        raise kernel_error(node, f"output {tensor_desc(o)}: type {odt.name} not supported")
    out_scale, out_zp = scale_of(o), zero_point_of(o)
    if idt == np.float32:
        if odt not in (np.int8, np.int16):
            raise kernel_error(node, f"Input FLOAT32, output {type_name(odt)} not supported.")
        data.kind = "affine"
        data.fn = lambda x: affine_quantize(x, out_scale, out_zp, odt)
        return
    if (idt.type, odt.type) not in _REQUANT_PAIRS:
        raise kernel_error(node, f"input {tensor_desc(i)}, output {tensor_desc(o)}: Input {type_name(idt)}, "
                         f"output {type_name(odt)} not supported.")
    mult, shift = quantize_multiplier(float(scale_of(i)) / float(out_scale))
    check_left_shift(node, shift, f"input {tensor_desc(i)} / output {tensor_desc(o)} scale")
    in_zp = zero_point_of(i)
    fn = lambda x: requantize(x, mult, shift, in_zp, out_zp, idt, odt)  # noqa: E731
    if idt == np.int8:
        data.kind = "lut8"
        data.lut = np.asarray(fn(int8_domain())).astype(odt)
    elif idt == np.int16:
        # Every int16 input, evaluated once: invoke looks the result up by the raw 16 bits.
        data.kind = "lut16"
        data.lut = np.ascontiguousarray(np.asarray(fn(int16_domain())).astype(odt))
    else:
        data.kind = "requant"
        data.fn = fn


def _same_count(node, i, o) -> None:
    if int(np.prod(i.shape)) != int(np.prod(o.shape)):
        raise kernel_error(node, f"input {tensor_desc(i)} and output {tensor_desc(o)} differ in size")


def _dequantize_prepare(ctx: KernelContext, node: Node):
    data: QuantData = node.user_data
    i, o = ctx.required_input(node, 0), ctx.output(node, 0)
    idt = np.dtype(i.dtype)
    _same_count(node, i, o)
    if idt not in (np.int8, np.int16, np.uint8):
        raise kernel_error(node, f"input {tensor_desc(i)}: type {type_name(idt)} not supported (TFLM's "
                         "DequantizePrepare: input->type == kTfLiteInt8 || kTfLiteInt16 || kTfLiteUInt8 "
                         "was not true)")
    if np.dtype(o.dtype) != np.float32:
        raise kernel_error(node, f"output {tensor_desc(o)} must be float32 (TFLM's DequantizePrepare: "
                         "output->type == kTfLiteFloat32 was not true)")
    scale, zp = scale_of(i), zero_point_of(i)
    if idt == np.int8:
        data.kind = "lut8"
        data.lut = dequantize(int8_domain(), scale, zp)
    elif idt == np.uint8:
        data.kind = "lut8"      # indexed by the byte value, which is the uint8 value itself
        data.lut = dequantize(np.arange(256, dtype=np.int64), scale, zp)
    else:
        data.kind = "dequant"
        data.fn = lambda x: dequantize(x, scale, zp)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("QUANTIZE", Registration(invoke=unary_invoke, prepare=_quantize_prepare,
                              init=op_data_init("OpDataQuantizeReference", QuantData), name="QUANTIZE", temps="i0 o0"), 3),
    ("DEQUANTIZE", Registration(invoke=unary_invoke, prepare=_dequantize_prepare,
                                init=op_data_init("DequantizeOpData", QuantData), name="DEQUANTIZE", temps="i0 o0"), 6),
]
