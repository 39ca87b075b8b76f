"""Runners of the reference flavour (`--kernels reference` on the virtual MCU).

TFLM builds either its reference kernels or, for Cortex-M, the CMSIS-NN ones. micro_rt's
firmware holds both flavours under distinct symbols: the CMSIS-NN-style kernels (arm_*, with
their SIMD paths and scratch buffers) and the reference kernels of cortexm/src/mrt_ref_*.c
(mrt_ref_*: TFLM's reference loops in plain C, no scratch). These runners describe the
reference kernels' calls with the same parameters the CMSIS-NN runners compute (ops.nn,
ops.elementwise), so both flavours give the same bits and differ only in cost. `ops.REFERENCE_KERNELS`
says which operator runs which; operators whose one C kernel is already a plain loop like
TFLM's reference are shared by both flavours (cortexm/src/README.md has the table).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from micro_rt.kernels.kernel_util import activation_of, activation_range_quantized, scale_of, zero_point_of
from micro_rt.kernels.transpose_conv import BIAS, FILTER, INPUT

from .context import CallContext, KernelCall, UnsupportedOnMcu, i32_bytes, is_i16, node_params, uwords, words
from .elementwise import (BINARY_QUANT_FIELDS, INT_RANGE, binary_params, run_binary_s8, run_binary_s16,
                              same_type_operands)
from .lstm import lstm_block
from .nn import conv_geometry, fc_params, per_channel_multipliers, runnable_shape
from .pooling import pool_geometry
from .transpose_conv import transpose_conv_quantization, transpose_conv_s8_reference_scratch, transpose_conv_shape
from .batch_matmul import batch_matmul_persistent, run_batch_matmul
from .nn import run_conv_s16
from .registry import INT8, INT16, KernelKey, OpKernel

_OPCODE = {"ADD": 0, "MUL": 2}                      # MRT_OP_ADD, MRT_OP_MUL


def run_ref_conv_s8(c: CallContext, depthwise: bool) -> list[KernelCall]:
    """mrt_ref_conv_s8 / mrt_ref_depthwise_conv_s8 (mrt_ref_conv_s8_params)."""
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    g = node_params(node, "geom", lambda: runnable_shape(conv_geometry(node, inp, flt, out), node))
    mult_b, shift_b = node_params(node, "pc", lambda: per_channel_multipliers(inp, flt, out, g.oc))
    blob = uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), c.out_addr(), c.const("mult", lambda: mult_b),
                  c.const("shift", lambda: shift_b))
    blob += words(*g.geometry(g.oc // g.ic if depthwise else None), g.in_off, g.out_off, g.act_min, g.act_max)
    return [c.call("mrt_ref_depthwise_conv_s8" if depthwise else "mrt_ref_conv_s8", c.args(blob))]


def run_ref_fully_connected_s8(c: CallContext) -> list[KernelCall]:
    """mrt_ref_fully_connected_s8 (per tensor or per channel)."""
    node = c.node
    inp, flt, out = c.t(0), c.t(1), c.out()
    p = node_params(node, "fc", lambda: fc_params(node, inp, flt, out))
    blob = uwords(c.in_addr(0), c.in_addr(1), c.in_addr(2), c.out_addr(),
                  c.const("fc_mult", lambda: i32_bytes(p["mult"])), c.const("fc_shift", lambda: i32_bytes(p["shift"])))
    blob += words(p["batches"], p["accum"], p["out_depth"], int(p["per_channel"]), p["in_off"], p["filter_offset"],
                  p["out_off"], p["amin"], p["amax"])
    return [c.call("mrt_ref_fully_connected_s8", c.args(blob))]


def run_ref_pool_int(c: CallContext) -> list[KernelCall]:
    """mrt_ref_avgpool_s8 / _s16, mrt_ref_maxpool_s8 / _s16 (mrt_ref_pool_params)."""
    node = c.node
    inp, out = c.t(0), c.out()
    n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad = pool_geometry(node, inp, out)
    dt = np.dtype(inp.dtype)
    amin, amax = activation_range_quantized(activation_of(node), scale_of(out), zero_point_of(out), dt)
    kind = "avgpool" if node.op_name == "AVERAGE_POOL_2D" else "maxpool"
    blob = uwords(c.in_addr(0), c.out_addr()) + words(n, ih, iw, ch, oh, ow, fh, fw, sh, sw, pad.height,
                                                      pad.width, amin, amax)
    symbol = f"mrt_ref_{kind}_{'s16' if dt == np.int16 else 's8'}"
    return [c.call(symbol, c.args(blob), refusal=f"op {node.index} {node.op_name}: a window holds no input element")]


def run_ref_binary_int(c: CallContext) -> list[KernelCall]:
    """ADD / MUL, int8 or int16, inputs of the same shape: mrt_ref_binary_s8 / _s16 (TFLM's flat
    reference loop); broadcasting shapes: mrt_binary_s8 / _s16, shared with the cmsis-nn flavour."""
    node = c.node
    wide = is_i16(c.t(0))
    if wide:
        same_type_operands(c, is_i16, f"{node.op_name} int16 with mixed types")
    in1, in2, out = c.t(0), c.t(1), c.out()
    shape, q, same = node_params(node, "bin16" if wide else "bin",
                                 lambda: binary_params(node, in1, in2, out, INT_RANGE[2 if wide else 1]))
    if not same:
        return (run_binary_s16 if wide else run_binary_s8)(c)
    size = int(np.prod(shape)) if len(shape) else 1
    blob = uwords(c.in_addr(0), c.in_addr(1), c.out_addr()) + words(_OPCODE[node.op_name], size,
                                                                    *(q[k] for k in BINARY_QUANT_FIELDS))
    return [c.call("mrt_ref_binary_s16" if wide else "mrt_ref_binary_s8", c.args(blob))]



def run_ref_transpose_conv_s8(c: CallContext) -> list[KernelCall]:
    """mrt_ref_transpose_conv_s8, its int32 accumulators in the scratch buffer TFLM's reference
    kernel requests."""
    node = c.node
    s = node_params(node, "tconv_shape", lambda: transpose_conv_shape(node, c.tensors))
    mult_b, shift_b, lo, hi = node_params(node, "tconv_q8",
                                          lambda: transpose_conv_quantization(node, c.tensors, s, np.int8))
    blob = (uwords(c.in_addr(INPUT), c.in_addr(FILTER), c.in_addr(BIAS), c.out_addr(),
                   c.const("mult", lambda: mult_b), c.const("shift", lambda: shift_b), c.scratch_addr(0))
            + words(*s.geometry()) + words(-zero_point_of(c.t(INPUT)), zero_point_of(c.out()), lo, hi))
    return [c.call("mrt_ref_transpose_conv_s8", c.args(blob))]


def svdf_s8_reference_scratch(node, tensors, core: str) -> tuple[int, int]:
    """The requests of TFLM's reference integer SVDF: the filters' time sums and the units' sums
    (int32, per batch)."""
    inp, wf, wt = (tensors[i] for i in node.inputs[:3])
    batch, filters = int(inp.shape[0]), int(wf.shape[0])
    rank = int(node.options.get("rank", 1))
    return batch * filters * 4, batch * (filters // rank) * 4


def run_ref_svdf_s8(c: CallContext) -> list[KernelCall]:
    """mrt_ref_svdf_s8 (int8 state) or mrt_ref_svdf_state_s16_s8 (int16 state), with the two
    scratch buffers TFLM's reference kernel requests."""
    node = c.node
    data = getattr(node, "user_data", None)
    state = c.t(4)
    if data is None or getattr(data, "kind", "") != "int" or state is None:
        raise UnsupportedOnMcu(f"op {node.index} SVDF: not prepared for the integer path")
    offsets = c.scratch_offset
    if not isinstance(offsets, (tuple, list)) or len(offsets) != 2:
        raise UnsupportedOnMcu(f"op {node.index} SVDF: not the reference kernel's two scratch buffers")
    blob = uwords(c.in_addr(0), c.in_addr(4), c.in_addr(1), c.in_addr(2), c.in_addr(3), c.scratch_addr(0),
                  c.scratch_addr(1), c.out_addr()) + words(
        data.batch, data.input_size, data.num_filters, data.memory_size, data.rank, -data.input_zero_point,
        data.effective_scale_1_a, data.effective_scale_1_b, data.effective_scale_2_a, data.effective_scale_2_b,
        data.activation_state_zero_point, data.state_min, data.state_max, data.output_zero_point)
    symbol = "mrt_ref_svdf_s8" if np.dtype(state.dtype) == np.int8 else "mrt_ref_svdf_state_s16_s8"
    return [c.call(symbol, c.args(blob))]


def run_ref_lstm(c: CallContext) -> list[KernelCall]:
    """mrt_ref_lstm_s8 / _s16 with TFLM's four gate buffers (the reference kernel's scratch)."""
    node = c.node
    blob = lstm_block(c)
    offsets = c.scratch_offset
    if not isinstance(offsets, (tuple, list)) or len(offsets) != 4:
        raise UnsupportedOnMcu(f"op {node.index} UNIDIRECTIONAL_SEQUENCE_LSTM: not the reference kernel's four "
                               "gate buffers")
    blob += uwords(*(c.scratch_addr(k) for k in range(4)))
    return [c.call("mrt_ref_lstm_s8" if node.user_data.kind == "int8" else "mrt_ref_lstm_s16", c.args(blob))]


# The reference flavour (`kernels="reference"`): where ops.KERNELS runs a CMSIS-NN-style kernel
# (SIMD paths, im2col, scratch buffers), TFLM's reference loop in plain C instead
# (cortexm/src/mrt_ref_*.c; the 16x8 layers' mrt_conv_s16 and BATCH_MATMUL's mrt_batch_matmul_*
# are such loops already). Every other KERNELS entry is one plain C kernel both flavours share
# (cortexm/src/README.md tabulates them).
REFERENCE_KERNELS: dict[KernelKey, OpKernel] = {
    ("CONV_2D", INT8): OpKernel(partial(run_ref_conv_s8, depthwise=False)),
    ("CONV_2D", INT16): OpKernel(partial(run_conv_s16, kind="conv")),
    ("DEPTHWISE_CONV_2D", INT8): OpKernel(partial(run_ref_conv_s8, depthwise=True)),
    ("DEPTHWISE_CONV_2D", INT16): OpKernel(partial(run_conv_s16, kind="dw")),
    ("FULLY_CONNECTED", INT8): OpKernel(run_ref_fully_connected_s8),
    ("FULLY_CONNECTED", INT16): OpKernel(partial(run_conv_s16, kind="fc")),
    **{(op, t): OpKernel(run_ref_pool_int) for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D") for t in (INT8, INT16)},
    **{(op, t): OpKernel(run_ref_binary_int) for op in ("ADD", "MUL") for t in (INT8, INT16)},
    ("BATCH_MATMUL", INT8): OpKernel(partial(run_batch_matmul, cmsis=False), persistent=batch_matmul_persistent),
    ("TRANSPOSE_CONV", INT8): OpKernel(run_ref_transpose_conv_s8, transpose_conv_s8_reference_scratch),
    ("SVDF", INT8): OpKernel(run_ref_svdf_s8, svdf_s8_reference_scratch),
    **{("UNIDIRECTIONAL_SEQUENCE_LSTM", t): OpKernel(run_ref_lstm) for t in (INT8, INT16)},
}
