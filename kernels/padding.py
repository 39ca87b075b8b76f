"""Padding and window geometry shared by conv, depthwise conv and pooling (TFLM's padding.h),
and the window checks and views their vectorised kernels need."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fixedpoint import c_div
from .kernel_util import kernel_error, tensor_name


@dataclass(frozen=True)
class PaddingValues:
    """TfLitePaddingValues: top/left padding plus the odd extra on the bottom/right."""

    width: int
    height: int
    width_offset: int
    height_offset: int


def compute_out_size(padding: str, image_size: int, filter_size: int, stride: int,
                     dilation_rate: int = 1) -> int:
    """ComputeOutSize."""
    effective_filter_size = (filter_size - 1) * dilation_rate + 1
    if stride == 0:
        return 0
    if padding == "SAME":
        return c_div(image_size + stride - 1, stride)
    if padding == "VALID":
        return c_div(image_size + stride - effective_filter_size, stride)
    return 0


def compute_padding_with_offset(stride: int, dilation_rate: int, in_size: int,
                                filter_size: int, out_size: int) -> tuple[int, int]:
    """ComputePaddingWithOffset -> (padding, offset)."""
    effective_filter_size = (filter_size - 1) * dilation_rate + 1
    total_padding = (out_size - 1) * stride + effective_filter_size - in_size
    total_padding = total_padding if total_padding > 0 else 0
    return total_padding // 2, total_padding % 2


def compute_padding_height_width(stride_height: int, stride_width: int,
                                 dilation_rate_height: int, dilation_rate_width: int,
                                 in_height: int, in_width: int, filter_height: int,
                                 filter_width: int, padding: str
                                 ) -> tuple[PaddingValues, int, int]:
    """ComputePaddingHeightWidth -> (padding values, out_height, out_width)."""
    out_width = compute_out_size(padding, in_width, filter_width, stride_width, dilation_rate_width)
    out_height = compute_out_size(padding, in_height, filter_height, stride_height,
                                  dilation_rate_height)
    pad_h, off_h = compute_padding_with_offset(stride_height, dilation_rate_height, in_height,
                                               filter_height, out_height)
    pad_w, off_w = compute_padding_with_offset(stride_width, dilation_rate_width, in_width,
                                               filter_width, out_width)
    return PaddingValues(pad_w, pad_h, off_w, off_h), out_height, out_width


# ---------------------------------------------------------------------------
# Window geometry for the vectorised kernels.
# ---------------------------------------------------------------------------

@dataclass
class WindowGeometry:
    """Where every output pixel's window sits in a zero-padded copy of the input."""

    n: int
    in_h: int
    in_w: int
    channels: int
    out_h: int
    out_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_top: int
    pad_left: int
    pad_bottom: int
    pad_right: int

    @property
    def padded_shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.pad_top + self.in_h + self.pad_bottom,
                self.pad_left + self.in_w + self.pad_right, self.channels)

    @property
    def needs_padding(self) -> bool:
        return bool(self.pad_top or self.pad_left or self.pad_bottom or self.pad_right)

    def tap(self, buf: np.ndarray, ky: int, kx: int) -> np.ndarray:
        """The (n, out_h, out_w, c) view of the padded buffer seen by filter tap (ky, kx)."""
        y0 = ky * self.dil_h
        x0 = kx * self.dil_w
        return buf[:, y0:y0 + (self.out_h - 1) * self.stride_h + 1:self.stride_h,
                   x0:x0 + (self.out_w - 1) * self.stride_w + 1:self.stride_w, :]

    def windows(self, buf: np.ndarray) -> np.ndarray:
        """A (n, out_h, out_w, filter_h, filter_w, c) strided view (im2col without copying)."""
        sn, sh, sw, sc = buf.strides
        return np.lib.stride_tricks.as_strided(
            buf, shape=(self.n, self.out_h, self.out_w, self.filter_h, self.filter_w, self.channels),
            strides=(sn, sh * self.stride_h, sw * self.stride_w, sh * self.dil_h, sw * self.dil_w, sc),
            writeable=False)

    def fill(self, buf: np.ndarray, x: np.ndarray) -> None:
        """Copy the input into the interior of the padded buffer (the border keeps its fill)."""
        buf[:, self.pad_top:self.pad_top + self.in_h,
            self.pad_left:self.pad_left + self.in_w, :] = x

    def valid_counts(self) -> np.ndarray:
        """Per output pixel, how many filter taps fall inside the image: (out_h, out_w) int64."""
        def axis_counts(out, stride, pad, fsize, dil, size):
            origin = np.arange(out) * stride - pad
            taps = origin[:, None] + np.arange(fsize)[None, :] * dil
            return ((taps >= 0) & (taps < size)).sum(axis=1)
        ch = axis_counts(self.out_h, self.stride_h, self.pad_top, self.filter_h, self.dil_h, self.in_h)
        cw = axis_counts(self.out_w, self.stride_w, self.pad_left, self.filter_w, self.dil_w, self.in_w)
        return (ch[:, None] * cw[None, :]).astype(np.int64)


def narrow_int16(value: int) -> int:
    """The value an int16_t field keeps (two's complement truncation)."""
    return ((int(value) + 0x8000) & 0xFFFF) - 0x8000


@dataclass(frozen=True)
class Int16Window:
    """Stride, dilation and padding as TFLM's ConvParams / DepthwiseParams hold them: int16_t
    fields, so values beyond +-32767 wrap. The output shape and the padding are computed
    from the full option values first (CalculateOpDataConv), then narrowed."""

    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_h: int
    pad_w: int


def int16_window(stride_h: int, stride_w: int, dil_h: int, dil_w: int,
                 pad: PaddingValues) -> Int16Window | None:
    """TFLM's narrowed window when narrowing changes any value, else None (the usual case)."""
    full = (stride_h, stride_w, dil_h, dil_w, pad.height, pad.width)
    narrowed = tuple(narrow_int16(v) for v in full)
    return None if narrowed == full else Int16Window(*narrowed)


def gather_windows(x: np.ndarray, out_h: int, out_w: int, filter_h: int, filter_w: int,
                   win: Int16Window) -> np.ndarray:
    """(n, out_h, out_w, filter_h, filter_w, c): the input value each filter tap reads, as
    TFLM's reference loops read it (in_y = out_y * stride - pad + dilation * filter_y, any
    signs), 0 where the tap falls outside the image (TFLM skips it; x is zero-point-shifted
    by the caller)."""
    n, in_h, in_w, c = x.shape
    ys = (np.arange(out_h)[:, None] * win.stride_h - win.pad_h + np.arange(filter_h)[None, :] * win.dil_h)
    xs = (np.arange(out_w)[:, None] * win.stride_w - win.pad_w + np.arange(filter_w)[None, :] * win.dil_w)
    inside = (((ys >= 0) & (ys < in_h))[:, None, :, None] & ((xs >= 0) & (xs < in_w))[None, :, None, :])
    taps = x[:, np.clip(ys, 0, in_h - 1)[:, None, :, None], np.clip(xs, 0, in_w - 1)[None, :, None, :], :]
    return np.where(inside[None, ..., None], taps, np.zeros((), x.dtype))


def check_geometry(node, inp, out, filter_h: int, filter_w: int, stride_h: int, stride_w: int,
                   dil_h: int, dil_w: int, padding: str, channels: int | None = None,
                   int16_fields: bool = True) -> None:
    """Refuse window parameters the strided views cannot honour: non-positive strides,
    dilations or filter sizes, an unknown padding, or an output whose batch, height, width
    (or channels) differ from what the input and the window give (a forged shape would
    otherwise make the kernel read outside its buffers or allocate without bound)."""
    for name, value in (("stride_h", stride_h), ("stride_w", stride_w),
                        ("dilation_h_factor", dil_h), ("dilation_w_factor", dil_w),
                        ("filter height", filter_h), ("filter width", filter_w)):
        if value <= 0:
            raise kernel_error(node, f"{name} is {value}, must be positive")
    if padding not in ("SAME", "VALID"):
        raise kernel_error(node, f"padding {padding!r} is not SAME or VALID")
    n, in_h, in_w, c = (int(d) for d in inp.shape)
    out_h = compute_out_size(padding, in_h, filter_h, stride_h, dil_h)
    out_w = compute_out_size(padding, in_w, filter_w, stride_w, dil_w)
    expected = [n, out_h, out_w, int(out.shape[3]) if channels is None else channels]
    if out_h <= 0 or out_w <= 0:
        raise kernel_error(node, f"a {filter_h}x{filter_w} window (dilation {dil_h}x{dil_w}) "
                                 f"does not fit input {tensor_name(inp)} with {padding} padding")
    need = [(out_h - 1) * stride_h + (filter_h - 1) * dil_h + 1,
            (out_w - 1) * stride_w + (filter_w - 1) * dil_w + 1]
    # TFLM computes the window's extent and padding in int: past int32 that is undefined.
    overflow = max(abs((filter_h - 1) * dil_h) + 1, abs((filter_w - 1) * dil_w) + 1,
                   abs(need[0]), abs(need[1])) > (1 << 31) - 1
    # Conv / depthwise beyond int16 run on gathered taps (no padded copy), so no span limit.
    narrowed = int16_fields and any(narrow_int16(v) != v for v in (stride_h, stride_w, dil_h, dil_w))
    if overflow or (not narrowed and n * max(need[0], in_h) * max(need[1], in_w) * c > (1 << 28)):
        raise kernel_error(node, f"a {filter_h}x{filter_w} window with stride {stride_h}x{stride_w} "
                                 f"and dilation {dil_h}x{dil_w} spans {need[0]}x{need[1]} pixels "
                                 f"of input {tensor_name(inp)}: stride or dilation is corrupt"
                                 + (" (TFLM's padding arithmetic would overflow int)" if overflow else ""))
    if [int(d) for d in out.shape] != expected:
        raise kernel_error(node, f"output {tensor_name(out)} does not match the computed shape "
                                 f"{expected} (input {tensor_name(inp)}, {filter_h}x{filter_w} window, "
                                 f"stride {stride_h}x{stride_w}, {padding} padding)")


def make_geometry(in_shape, out_shape, filter_h: int, filter_w: int, stride_h: int, stride_w: int,
                  dil_h: int, dil_w: int, pad: PaddingValues, channels: int | None = None
                  ) -> WindowGeometry:
    """Geometry for NHWC input/output shapes; padding on the far sides covers every window."""
    n, in_h, in_w, c = (int(d) for d in in_shape)
    out_h, out_w = int(out_shape[1]), int(out_shape[2])
    need_h = (out_h - 1) * stride_h + (filter_h - 1) * dil_h + 1
    need_w = (out_w - 1) * stride_w + (filter_w - 1) * dil_w + 1
    pad_top, pad_left = max(pad.height, 0), max(pad.width, 0)
    pad_bottom = max(0, need_h - pad_top - in_h)
    pad_right = max(0, need_w - pad_left - in_w)
    return WindowGeometry(n, in_h, in_w, c if channels is None else channels, out_h, out_w,
                          filter_h, filter_w, stride_h, stride_w, dil_h, dil_w,
                          pad_top, pad_left, pad_bottom, pad_right)
