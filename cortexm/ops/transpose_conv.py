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


import numpy as np

from micro_rt.kernels.conv_common import populate_per_channel_multipliers
from micro_rt.cmsis_nn_scratch import transpose_conv_s8_buffer_sizes
from micro_rt.kernels.conv_shapes import TransposeConvShape, transpose_conv_shape
from micro_rt.kernels.kernel_util import activation_of, activation_range_quantized, scale_of, zero_point_of
from micro_rt.kernels.transpose_conv import BIAS, FILTER, INPUT

from .context import CallContext, KernelCall, dims, f32_activation, i32_bytes, node_params, uwords, words
from .registry import FLOAT32, INT16, INT8, KernelKey, OpKernel

def _quantization(node, tensors, s: TransposeConvShape, dtype) -> tuple[bytes, bytes, int, int]:
    """Per-channel multipliers and shifts (int32 bytes) and the reference's activation range."""
    flt, inp = tensors[node.inputs[FILTER]], tensors[node.inputs[INPUT]]
    out = tensors[node.outputs[0]]
    mult, shift = populate_per_channel_multipliers(scale_of(inp), np.asarray(flt.scales, np.float32),
                                                   scale_of(out), s.oc)
    lo, hi = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), dtype)
    return i32_bytes(mult), i32_bytes(shift), int(lo), int(hi)


transpose_conv_quantization = _quantization       # public for ops.reference


def transpose_conv_s8_reference_scratch(node, tensors, core: str) -> tuple[int]:
    """The request of TFLM's reference int8 kernel: the int32 accumulators of the output."""
    s = transpose_conv_shape(node, tensors)
    return (s.n * s.oh * s.ow * s.oc * 4,)


def run_transpose_conv_s8(c: CallContext) -> list[KernelCall]:
    node = c.node
    s = node_params(node, "tconv_shape", lambda: transpose_conv_shape(node, c.tensors))
    mult_b, shift_b, lo, hi = node_params(node, "tconv_q8", lambda: _quantization(node, c.tensors, s, np.int8))
    buf_size, reverse_size = transpose_conv_s8_buffer_sizes(s, c.core)
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
             + words(*s.geometry()) + words(lo, hi, bias_size))
    return [c.call("mrt_transpose_conv_s16", c.args(block))]


def run_transpose_conv_f32(c: CallContext) -> list[KernelCall]:
    node = c.node
    s = node_params(node, "tconv_shape", lambda: transpose_conv_shape(node, c.tensors))
    block = (uwords(c.in_addr(INPUT), c.in_addr(FILTER), c.in_addr(BIAS), c.out_addr())
             + words(*s.geometry()) + uwords(*f32_activation(node)))
    return [c.call("mrt_transpose_conv_f32", c.args(block))]


KERNELS: dict[KernelKey, OpKernel] = {
    ("TRANSPOSE_CONV", INT8): OpKernel(run_transpose_conv_s8),
    ("TRANSPOSE_CONV", INT16): OpKernel(run_transpose_conv_s16),
    ("TRANSPOSE_CONV", FLOAT32): OpKernel(run_transpose_conv_f32),
}
