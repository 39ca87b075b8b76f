"""TRANSPOSE_CONV runners for micro_rt.cortexm.ops: int8 through arm_transpose_conv_wrapper_s8
(TFLM's CMSIS-NN glue: two scratch buffers, the kernel's and the reversed filter's), 16x8 and
float32 through TFLM's reference kernel in C (mrt_transpose_conv_s16 / _f32: the int64
accumulators and the widened int16 bias in the scratch buffers TFLM's reference requests).

Every parameter comes from the numpy twin's helpers (micro_rt.kernels.transpose_conv), so the
C kernels and the twin agree on padding, multipliers and activation ranges. TFLM's CMSIS-NN
glue computes the int8 clamp without the fused activation (kTfLiteActNone); the runner passes
the reference kernel's range, as the twin applies it, so the MCU's output is the reference's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from micro_rt.kernels.conv_common import populate_per_channel_multipliers
from micro_rt.kernels.kernel_util import activation_of, activation_range_quantized, scale_of, zero_point_of
from micro_rt.kernels.padding import PaddingValues
from micro_rt.kernels.transpose_conv import BIAS, FILTER, INPUT, scatter_padding

from .ops_context import CallContext, KernelCall, dims, f32_activation, i32_bytes, node_params, uwords, words
from .ops_nn import ConvShape

REVERSE_TCOL_EFFICIENT_THRESHOLD = 16       # CMSIS-NN: more input channels take the reverse conv


@dataclass
class TransposeConvShape(ConvShape):
    """A transpose convolution as a ConvShape (fc = ic, no dilation, ph / pw the scatter
    padding) and the scatter padding's offsets."""
    pad: PaddingValues

    def geometry_words(self) -> bytes:
        """An mrt_conv_geometry."""
        return words(*self.geometry())


def transpose_conv_shape(node, tensors) -> TransposeConvShape:
    flt, inp = tensors[node.inputs[FILTER]], tensors[node.inputs[INPUT]]
    out = tensors[node.outputs[0]]
    n, ih, iw, ic = (int(d) for d in inp.shape)
    _, oh, ow, oc = (int(d) for d in out.shape)
    _, fh, fw, _ = (int(d) for d in flt.shape)
    sh, sw = int(node.options.get("stride_h", 1)), int(node.options.get("stride_w", 1))
    pad = scatter_padding(sh, sw, oh, ow, fh, fw, node.options.get("padding", "SAME"))
    return TransposeConvShape(n, ih, iw, ic, oh, ow, oc, fh, fw, ic, sh, sw, 1, 1, pad.height, pad.width, pad)


def reverse_conv_used(s: TransposeConvShape) -> bool:
    return s.sw <= 2 and s.sh <= 2 and s.ic > REVERSE_TCOL_EFFICIENT_THRESHOLD


def transpose_conv_s8_buffer_sizes(s: TransposeConvShape) -> tuple[int, int]:
    """arm_transpose_conv_s8_get_buffer_size and _get_reverse_conv_buffer_size."""
    if reverse_conv_used(s):
        k = s.fh * s.fw * s.ic
        return 2 * ((k + 3) & ~3) * 2, s.ic * s.fh * s.fw * s.oc
    buf_x = ((s.iw - 1) * s.sw + max(s.fw, s.sh)) * s.oc        # CMSIS-NN: stride_h in the width term
    return buf_x * max(s.fh, s.sh) * 4, 0


def transpose_conv_s8_scratch(node, tensors, core: str) -> tuple[int, int]:
    """The two buffers TFLM's CMSIS-NN glue requests for int8, in its order."""
    return transpose_conv_s8_buffer_sizes(transpose_conv_shape(node, tensors))


def transpose_conv_s16_scratch(node, tensors, core: str) -> tuple[int, ...]:
    """The reference kernel's requests (which a CMSIS-NN build makes for 16x8 too): the int64
    accumulators, and the widened copy of an int16 bias."""
    s = transpose_conv_shape(node, tensors)
    sizes: tuple[int, ...] = (s.n * s.oh * s.ow * s.oc * 8,)
    bias = node.inputs[BIAS] if len(node.inputs) > BIAS else -1
    if bias >= 0 and np.dtype(tensors[bias].dtype) == np.int16:
        sizes += (s.oc * 8,)
    return sizes


def _quantization(node, tensors, s: TransposeConvShape, dtype) -> tuple[bytes, bytes, int, int]:
    """Per-channel multipliers and shifts (int32 bytes) and the reference's activation range."""
    flt, inp = tensors[node.inputs[FILTER]], tensors[node.inputs[INPUT]]
    out = tensors[node.outputs[0]]
    mult, shift = populate_per_channel_multipliers(scale_of(inp), np.asarray(flt.scales, np.float32),
                                                   scale_of(out), s.oc)
    lo, hi = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), dtype)
    return i32_bytes(mult), i32_bytes(shift), int(lo), int(hi)


transpose_conv_quantization = _quantization       # public for ops_reference


def transpose_conv_s8_reference_scratch(node, tensors, core: str) -> tuple[int]:
    """The request of TFLM's reference int8 kernel: the int32 accumulators of the output."""
    s = transpose_conv_shape(node, tensors)
    return (s.n * s.oh * s.ow * s.oc * 4,)


def run_transpose_conv_s8(c: CallContext) -> list[KernelCall]:
    node = c.node
    s = node_params(node, "tconv_shape", lambda: transpose_conv_shape(node, c.tensors))
    mult_b, shift_b, lo, hi = node_params(node, "tconv_q8", lambda: _quantization(node, c.tensors, s, np.int8))
    buf_size, reverse_size = transpose_conv_s8_buffer_sizes(s)
    ctx = c.args(uwords(c.scratch_addr(0), buf_size))
    reverse_ctx = c.args(uwords(c.scratch_addr(1) if reverse_size else 0, reverse_size))
    in_off = -zero_point_of(c.t(INPUT))
    out_off = zero_point_of(c.out())
    params = c.args(words(in_off, out_off, s.sw, s.sh, s.pad.width, s.pad.height,
                          s.pad.width_offset + s.pad.width, s.pad.height_offset + s.pad.height, 1, 1, lo, hi))
    quant = c.args(uwords(c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b)))
    in_dims = c.args(dims(s.n, s.ih, s.iw, s.ic))
    f_dims = c.args(dims(s.oc, s.fh, s.fw, s.ic))
    b_dims = c.args(dims(1, 1, 1, s.oc))
    o_dims = c.args(dims(s.n, s.oh, s.ow, s.oc))
    return [c.call("arm_transpose_conv_wrapper_s8", ctx, reverse_ctx, params, quant, in_dims, c.in_addr(INPUT),
                   f_dims, c.in_addr(FILTER), b_dims, c.in_addr(BIAS), o_dims, c.out_addr())]


def run_transpose_conv_s16(c: CallContext) -> list[KernelCall]:
    node = c.node
    s = node_params(node, "tconv_shape", lambda: transpose_conv_shape(node, c.tensors))
    mult_b, shift_b, lo, hi = node_params(node, "tconv_q16", lambda: _quantization(node, c.tensors, s, np.int16))
    bias = c.t(BIAS)
    bias_size = 0 if bias is None else np.dtype(bias.dtype).itemsize
    block = (uwords(c.in_addr(INPUT), c.in_addr(FILTER), c.in_addr(BIAS), c.out_addr(),
                    c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b),
                    c.scratch_addr(0), c.scratch_addr(1) if bias_size == 2 else 0)
             + s.geometry_words() + words(lo, hi, bias_size))
    return [c.call("mrt_transpose_conv_s16", c.args(block))]


def run_transpose_conv_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    s = node_params(node, "tconv_shape", lambda: transpose_conv_shape(node, c.tensors))
    block = (uwords(c.in_addr(INPUT), c.in_addr(FILTER), c.in_addr(BIAS), c.out_addr())
             + s.geometry_words() + uwords(*f32_activation(node)))
    return [c.call("mrt_transpose_conv_f32", c.args(block))]
