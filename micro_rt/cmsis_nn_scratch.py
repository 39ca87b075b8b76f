"""The scratch buffers TFLM's CMSIS-NN build requests in Prepare, by operator and input type:
the twins of CMSIS-NN's arm_*_get_buffer_size (CMSIS_NN_SCRATCH). One home for both readers:
the arena accounting of `--kernels cmsis-nn` (flavours.prepare_extras) and the virtual MCU,
whose kernels get these buffers (cortexm/ops/__init__.py scratch_requests). A kernel both builds share
(16x8 TRANSPOSE_CONV) requests what the reference kernel does.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import numpy as np

from .kernels.conv_shapes import ConvShape, TransposeConvShape, conv_shape, transpose_conv_shape
from .kernels.transpose_conv import BIAS
from .targets import TARGETS

ScratchSize = Callable[[Any, dict, str], Union[int, Sequence[int]]]

# The input whose element type selects an operator's kernel: input 0, except for these.
DATA_INPUT = {"TRANSPOSE_CONV": 2}          # its input 0 is the output shape (int32)
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16       # CMSIS-NN: more input channels take the reverse conv


def data_input_index(node) -> int:
    """The tensor index of the input whose element type selects `node`'s kernel (-1: absent)."""
    k = DATA_INPUT.get(node.op_name, 0)
    return node.inputs[k] if k < len(node.inputs) else -1


def has_dsp(core: str) -> bool:
    """Whether CMSIS-NN takes its DSP-extension paths on `core` (ARM_MATH_DSP; targets.py)."""
    target = TARGETS.get(core)
    return bool(target is not None and target.has_dsp)


def conv_buffer_size(g: ConvShape, core: str) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size."""
    if g.pw == 0 and g.ph == 0 and g.fh == 1 and g.fw == 1 and g.dh == 1 and g.dw == 1 and g.ic == g.fc:
        return 0                                   # 1x1 (fast or strided): no buffer
    # 1xN and general: two q15 columns of the 4-aligned kernel volume
    k = g.fh * g.fw * g.fc
    k = k + (4 - k % 4) % 4
    return 2 * k * 2


def depthwise_conv_buffer_size(g: ConvShape, core: str) -> int:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size."""
    if g.ic == g.oc and g.n == 1 and g.dh == 1 and g.dw == 1:
        if g.fh == 3 and g.fw == 3 and g.ph <= 1 and g.pw <= 1:
            return 0
        return g.ic * g.fh * g.fw * 2 if has_dsp(core) else 0
    return 0


def avgpool_buffer_size(channels: int, core: str) -> int:
    """arm_avgpool_s8_get_buffer_size."""
    return channels * 4 if has_dsp(core) else 0


def convolve_s16_buffer_size(ic: int, fh: int, fw: int) -> int:
    """arm_convolve_s16_get_buffer_size (= the wrapper's): two int16 im2col columns."""
    return 2 * ic * fh * fw * 2


def reverse_conv_used(s: TransposeConvShape) -> bool:
    return s.sw <= 2 and s.sh <= 2 and s.ic > REVERSE_TCOL_EFFICIENT_THRESHOLD


def transpose_conv_s8_buffer_sizes(s: TransposeConvShape) -> tuple[int, int]:
    """arm_transpose_conv_s8_get_buffer_size and _get_reverse_conv_buffer_size."""
    if reverse_conv_used(s):
        k = s.fh * s.fw * s.ic
        return 2 * ((k + 3) & ~3) * 2, s.ic * s.fh * s.fw * s.oc
    buf_x = ((s.iw - 1) * s.sw + max(s.fw, s.sh)) * s.oc        # CMSIS-NN: stride_h in the width term
    return buf_x * max(s.fh, s.sh) * 4, 0


def _inputs_and_output(node, tensors):
    return [tensors[i] for i in node.inputs[:2]], tensors[node.outputs[0]]


def conv_s8_scratch(node, tensors, core: str) -> int:
    (inp, flt), out = _inputs_and_output(node, tensors)
    return conv_buffer_size(conv_shape(node, inp, flt, out), core)


def depthwise_conv_s8_scratch(node, tensors, core: str) -> int:
    (inp, flt), out = _inputs_and_output(node, tensors)
    return depthwise_conv_buffer_size(conv_shape(node, inp, flt, out), core)


def avgpool_s8_scratch(node, tensors, core: str) -> int:
    return avgpool_buffer_size(int(tensors[node.outputs[0]].shape[3]), core)


def conv_s16_scratch(node, tensors, core: str) -> int:
    """The scratch TFLM's CMSIS-NN glue requests for a 16x8 CONV_2D (whatever the bias)."""
    inp, flt = tensors[node.inputs[0]], tensors[node.inputs[1]]
    return convolve_s16_buffer_size(int(inp.shape[3]), int(flt.shape[1]), int(flt.shape[2]))


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


INT8, INT16 = "int8", "int16"
CMSIS_NN_SCRATCH: dict[tuple[str, str], ScratchSize] = {
    ("CONV_2D", INT8): conv_s8_scratch,
    ("CONV_2D", INT16): conv_s16_scratch,
    ("DEPTHWISE_CONV_2D", INT8): depthwise_conv_s8_scratch,
    ("AVERAGE_POOL_2D", INT8): avgpool_s8_scratch,
    ("AVERAGE_POOL_2D", INT16): avgpool_s8_scratch,      # = arm_avgpool_s16's size
    ("TRANSPOSE_CONV", INT8): transpose_conv_s8_scratch,
    ("TRANSPOSE_CONV", INT16): transpose_conv_s16_scratch,
}


def scratch_requests(core: str, node, tensors: dict) -> tuple[int, ...]:
    """The buffers TFLM's CMSIS-NN glue requests for `node` on `core`, in its order; () when
    it requests none. tensors: {index: tensor} holding the node's."""
    index = data_input_index(node)
    dtype = np.dtype(tensors[index].dtype).name if index >= 0 else ""
    size = CMSIS_NN_SCRATCH.get((node.op_name, dtype))
    return size_tuple(size(node, tensors, core)) if size is not None else ()


def size_tuple(sizes: Union[int, Sequence[int]]) -> tuple[int, ...]:
    """A scratch function's answer as the buffers requested: a sequence as it is, one size as a
    buffer only when it is not 0."""
    if isinstance(sizes, Sequence):
        return tuple(int(n) for n in sizes)
    return (int(sizes),) if sizes else ()
