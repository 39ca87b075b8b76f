"""The shapes of a convolution as the C kernels take them: sizes, strides, dilations and padding
(TFLM's ComputePaddingHeightWidth for a conv or pool window; the scatter padding of a
TRANSPOSE_CONV). One home for the virtual MCU's argument packing (cortexm/ops/nn.py,
ops/transpose_conv.py) and the CMSIS-NN flavour's scratch sizes (micro_rt/cmsis_nn_scratch.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .padding import PaddingValues, compute_padding_height_width
from .transpose_conv import FILTER, INPUT, scatter_padding


def window(options, ih: int, iw: int, fh: int, fw: int, dh: int = 1, dw: int = 1):
    """(stride_h, stride_w, padding) of a conv / pool window (TFLM's ComputePaddingHeightWidth).
    The padding is never negative."""
    sh, sw = int(options.get("stride_h", 1)), int(options.get("stride_w", 1))
    pad, _, _ = compute_padding_height_width(sh, sw, dh, dw, ih, iw, fh, fw, options.get("padding", "SAME"))
    return sh, sw, pad


@dataclass
class ConvShape:
    """A convolution's sizes, strides, dilations and padding: what an mrt_conv_geometry
    (mrt_nn_types.h) holds, in its order."""
    n: int
    ih: int
    iw: int
    ic: int
    oh: int
    ow: int
    oc: int
    fh: int
    fw: int
    fc: int
    sh: int
    sw: int
    dh: int
    dw: int
    ph: int
    pw: int

    def geometry(self, fc: Optional[int] = None) -> tuple[int, ...]:
        """The mrt_conv_geometry fields; `fc` in place of the filter's channels (a depthwise
        kernel takes its channel multiplier there)."""
        return (self.n, self.ih, self.iw, self.ic, self.oh, self.ow, self.oc, self.fh, self.fw,
                self.fc if fc is None else fc, self.sh, self.sw, self.dh, self.dw, self.ph, self.pw)


def conv_shape(node, inp, flt, out) -> ConvShape:
    """Sizes, strides, dilations and padding of a CONV_2D or DEPTHWISE_CONV_2D (NHWC input and
    output; filter [oc, fh, fw, fc] or, depthwise, [1, fh, fw, oc]: read the same way)."""
    o = node.options
    n, ih, iw, ic = (int(d) for d in inp.shape)
    _, oh, ow, oc = (int(d) for d in out.shape)
    _, fh, fw, fc = (int(d) for d in flt.shape)
    dh, dw = int(o.get("dilation_h_factor", 1)), int(o.get("dilation_w_factor", 1))
    sh, sw, pad = window(o, ih, iw, fh, fw, dh, dw)
    return ConvShape(n, ih, iw, ic, oh, ow, oc, fh, fw, fc, sh, sw, dh, dw, int(pad.height), int(pad.width))


@dataclass
class TransposeConvShape(ConvShape):
    """A transpose convolution as a ConvShape (fc = ic, no dilation, ph / pw the scatter
    padding) and the scatter padding's offsets."""
    pad: PaddingValues


def transpose_conv_shape(node, tensors) -> TransposeConvShape:
    flt, inp = tensors[node.inputs[FILTER]], tensors[node.inputs[INPUT]]
    out = tensors[node.outputs[0]]
    n, ih, iw, ic = (int(d) for d in inp.shape)
    _, oh, ow, oc = (int(d) for d in out.shape)
    _, fh, fw, _ = (int(d) for d in flt.shape)
    sh, sw = int(node.options.get("stride_h", 1)), int(node.options.get("stride_w", 1))
    pad = scatter_padding(sh, sw, oh, ow, fh, fw, node.options.get("padding", "SAME"))
    return TransposeConvShape(n, ih, iw, ic, oh, ow, oc, fh, fw, ic, sh, sw, 1, 1, pad.height, pad.width, pad)
