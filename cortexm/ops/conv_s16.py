"""16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED runners for micro_rt.cortexm.ops: the
CMSIS-NN kernels TFLM's CMSIS-NN glue calls (cortexm/src/mrt_conv_s16_dsp.c):
arm_convolve_wrapper_s16, arm_depthwise_conv_s16 and arm_fully_connected_s16.

Those kernels read no zero points and no groups, and sum the first 512 taps of a dot product
in int32 and requantize through int32; the numpy twins follow TFLM's reference kernel (int64
sums, int64 requantization). A layer runs on the CMSIS-NN kernel when both give the same bits
for every input (`_cmsis_exact`: zero points 0, no groups, per-tensor FC weights with zero
point 0, sums that cannot leave those ranges, shifts inside TFLM's range), otherwise on
mrt_conv_s16, the reference loop (ops.nn.run_conv_s16). Real models take the CMSIS-NN path.

Where TFLM's CMSIS-NN build itself gives other results than its reference kernels (micro_rt
follows the reference, as the oracle does): a CONV_2D without bias (the glue then selects the
int32 output stage), a FULLY_CONNECTED with an int32 bias (read as int64), and sums past the
int32 window. Its scratch request: arm_convolve_wrapper_s16_get_buffer_size for every 16x8
CONV_2D (its Prepare never sees the bias), none for DEPTHWISE_CONV_2D and FULLY_CONNECTED.
"""
from __future__ import annotations

from functools import partial

from typing import Optional

import numpy as np

from micro_rt.cmsis_nn_scratch import convolve_s16_buffer_size
from micro_rt.kernels.conv_shapes import ConvShape

from .context import CallContext, KernelCall, dims, node_params, uwords, words
from .nn import conv_s16_params, run_conv_s16
from .registry import INT16, KernelKey, OpKernel

INT16_SPAN = 1 << 15          # |int16| <= 2^15
MAX_COL_COUNT = 512           # taps CMSIS-NN sums in int32 before its int64 accumulator
_INT32_MAX = (1 << 31) - 1
_MAX_SHIFT = 7                # TFLM's int64 MultiplyByQuantizedMultiplier: shift in [-31, 7]


def reduce_multiplier(m: int) -> int:
    """CMSIS-NN's REDUCE_MULTIPLIER (TFLM's int64 MultiplyByQuantizedMultiplier does the same)."""
    return (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF


def _weights_by_channel(flt, kind: str) -> np.ndarray:
    """(channels, taps) int64: each output channel's weights in the kernel's tap order."""
    w = np.asarray(flt.data, np.int64)
    if kind == "dw":                                  # [1, fh, fw, oc]
        return w.reshape(-1, w.shape[-1]).T
    return w.reshape(w.shape[0], -1)                  # [oc, fh, fw, ic] / [out, accum]


def _cmsis_exact(p: dict, flt, bias, kind: str) -> bool:
    """Whether the CMSIS-NN kernel gives the twin's bits on every input (see the module doc)."""
    if p["in_off"] or p["out_off"] or p["filter_off"]:
        return False
    if kind == "conv" and p["fc"] != p["ic"]:         # grouped
        return False
    if kind != "conv" and p["bias_size"] == 4:        # no int32-bias variant in these kernels
        return False
    w = np.abs(_weights_by_channel(flt, kind))
    if kind != "dw" and int(w[:, :MAX_COL_COUNT].sum(axis=1).max(initial=0)) * INT16_SPAN > _INT32_MAX:
        return False                                  # the int32 window could wrap
    if p["bias_size"] == 4:                           # int32 throughout, wrapping as TFLM's
        return True
    mult = np.frombuffer(p["mult_b"], "<i4").tolist()
    shift = np.frombuffer(p["shift_b"], "<i4").tolist()
    b = [0] * w.shape[0] if bias is None else np.abs(np.asarray(bias.data, np.int64)).tolist()
    for ch, total in enumerate(w.sum(axis=1).tolist()):
        m, s = mult[ch % len(mult)], shift[ch % len(shift)]
        bound = (total * INT16_SPAN + b[ch]) * reduce_multiplier(m)
        if s > _MAX_SHIFT or bound >> (14 - s) >= _INT32_MAX - 1:
            return False                              # int32 truncation inside arm_nn_requantize_s64
    return True


def _plan(node, inp, flt, bias, out, kind: str) -> Optional[dict]:
    p = conv_s16_params(node, inp, flt, bias, out, kind)
    return p if _cmsis_exact(p, flt, bias, kind) else None


def _bias_data(c: CallContext, p: dict) -> int:
    """A cmsis_nn_bias_data {data, is_int32_bias}."""
    return c.args(uwords(c.in_addr(2), 1 if p["bias_size"] == 4 else 0))


def run_conv_s16_cmsis(c: CallContext, kind: str) -> list[KernelCall]:
    """arm_convolve_wrapper_s16 / arm_depthwise_conv_s16 / arm_fully_connected_s16 (`kind`
    "conv", "dw", "fc"), or mrt_conv_s16 where they would not give the twin's bits."""
    node = c.node
    p = node_params(node, "conv_s16_cmsis", lambda: _plan(node, c.t(0), c.t(1), c.t(2), c.out(), kind))
    if p is None or (kind == "conv" and c.scratch_offset is None):
        return run_conv_s16(c, kind)
    act = (p["act_min"], p["act_max"])
    if kind == "fc":
        ctx = c.nn_context(0)
        fc_params = c.args(words(0, 0, 0, *act))
        quant = c.args(words(*np.frombuffer(p["mult_b"], "<i4")[:1], *np.frombuffer(p["shift_b"], "<i4")[:1]))
        in_dims = c.args(dims(p["n"], 1, 1, p["ic"]))
        f_dims = c.args(dims(p["ic"], 1, 1, p["oc"]))
        b_dims = c.args(dims(1, 1, 1, p["oc"]))
        o_dims = c.args(dims(p["n"], 1, 1, p["oc"]))
        return [c.call("arm_fully_connected_s16", ctx, fc_params, quant, in_dims, c.in_addr(0), f_dims,
                       c.in_addr(1), b_dims, c.in_addr(2), o_dims, c.out_addr())]
    window = (p["sw"], p["sh"], p["pw"], p["ph"], p["dw"], p["dh"], *act)
    quant = c.args(uwords(c.const("mult16", lambda: p["mult_b"]), c.const("shift16", lambda: p["shift_b"])))
    in_dims = c.args(dims(p["n"], p["ih"], p["iw"], p["ic"]))
    b_dims = c.args(dims(1, 1, 1, p["oc"]))
    o_dims = c.args(dims(p["n"], p["oh"], p["ow"], p["oc"]))
    if kind == "dw":
        ctx = c.nn_context(0)
        layer = c.args(words(0, 0, p["depth_multiplier"], *window))
        f_dims = c.args(dims(1, p["fh"], p["fw"], p["oc"]))
        return [c.call("arm_depthwise_conv_s16", ctx, layer, quant, in_dims, c.in_addr(0), f_dims, c.in_addr(1),
                       b_dims, c.in_addr(2), o_dims, c.out_addr())]
    shape = ConvShape(*(p[k] for k in ("n", "ih", "iw", "ic", "oh", "ow", "oc", "fh", "fw", "fc", "sh", "sw",
                                        "dh", "dw", "ph", "pw")))
    ctx = c.nn_context(convolve_s16_buffer_size(shape, c.core))
    layer = c.args(words(0, 0, *window))
    f_dims = c.args(dims(p["oc"], p["fh"], p["fw"], p["fc"]))
    return [c.call("arm_convolve_wrapper_s16", ctx, layer, quant, in_dims, c.in_addr(0), f_dims, c.in_addr(1),
                   b_dims, _bias_data(c, p), o_dims, c.out_addr())]


__all__ = ["INT16_SPAN", "MAX_COL_COUNT", "reduce_multiplier", "run_conv_s16_cmsis"]


KERNELS: dict[KernelKey, OpKernel] = {
    ("CONV_2D", INT16): OpKernel(partial(run_conv_s16_cmsis, kind="conv")),
    ("DEPTHWISE_CONV_2D", INT16): OpKernel(partial(run_conv_s16_cmsis, kind="dw")),
    ("FULLY_CONNECTED", INT16): OpKernel(partial(run_conv_s16_cmsis, kind="fc")),
}
