"""SVDF runners for micro_rt.cortexm.ops: int8 input with an int8 or int16 state
(cortexm/src/mrt_svdf.c: mrt_svdf_s8, mrt_svdf_state_s16_s8), CMSIS-NN's arm_svdf_s8 /
arm_svdf_state_s16_s8 structure with TFLM's reference arithmetic (the numpy twin's,
kernels/svdf.py); float32 (cortexm/src/mrt_svdf.c: mrt_svdf_f32), TFLM's reference loops,
its time sums in the node's scratch buffer as TFLM's.

The multipliers, shifts and zero points are the host kernel's (its OpDataSvdf, filled by
prepare from TFLM's formulas), so both sides requantize with the same integers. The state zero
point's per-filter term of the time sums (-zero point times each time weight row's sum, which
CMSIS-NN leaves out) is a constant placed in flash.
The kernel's one int32 buffer is the node's last scratch buffer (TFLM's scratch_output,
batch * num_units int32; the per-filter sums go straight into the unit sums).
"""
from __future__ import annotations

import numpy as np

from .context import CallContext, KernelCall, UnsupportedOnMcu, i32_bytes, uwords, words
from .registry import FLOAT32, INT8, KernelKey, OpKernel


def _wrap_int32(values: np.ndarray) -> np.ndarray:
    """int64 values taken modulo 2^32 as int32 (the C sums wrap the same way)."""
    return np.asarray(values, np.int64).astype(np.uint32).astype(np.int32)


def run_svdf_s8(c: CallContext) -> list[KernelCall]:
    """mrt_svdf_s8 (int8 state) or mrt_svdf_state_s16_s8 (int16 state)."""
    node = c.node
    data = getattr(node, "user_data", None)
    state = c.t(4)
    if data is None or getattr(data, "kind", "") != "int" or state is None:
        raise UnsupportedOnMcu(f"op {node.index} SVDF: not prepared for the integer path")
    if c.scratch_offset is None:
        raise UnsupportedOnMcu(f"op {node.index} SVDF: no scratch buffer for the unit sums")
    wt = np.asarray(c.t(2).data, np.int64)
    time_sums = 0
    if data.activation_state_zero_point:
        time_sums = c.const("svdf_time_sums", lambda: i32_bytes(
            _wrap_int32(-data.activation_state_zero_point * wt.sum(axis=1))))
    blob = uwords(c.in_addr(0), c.in_addr(4), c.in_addr(1), c.in_addr(2), c.in_addr(3), time_sums,
                  c.scratch_addr(), c.out_addr()) + words(
        data.batch, data.input_size, data.num_filters, data.memory_size, data.rank, -data.input_zero_point,
        data.effective_scale_1_a, data.effective_scale_1_b, data.effective_scale_2_a, data.effective_scale_2_b,
        data.activation_state_zero_point, data.state_min, data.state_max, data.output_zero_point)
    symbol = "mrt_svdf_s8" if np.dtype(state.dtype) == np.int8 else "mrt_svdf_state_s16_s8"
    return [c.call(symbol, c.args(blob))]


# TFLite's fused activation codes, as mrt_svdf_f32 reads them (MRT_SVDF_ACT_*).
_F32_ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4, "SIGN_BIT": 5}


def run_svdf_f32(c: CallContext) -> list[KernelCall]:
    """mrt_svdf_f32, where the op was prepared for the float path."""
    node = c.node
    data = getattr(node, "user_data", None)
    if data is None or getattr(data, "kind", "") != "float" or c.t(4) is None:
        raise UnsupportedOnMcu(f"op {node.index} SVDF: not prepared for the float32 path")
    if c.scratch_offset is None:
        raise UnsupportedOnMcu(f"op {node.index} SVDF: no scratch buffer for the time sums")
    blob = uwords(c.in_addr(0), c.in_addr(4), c.in_addr(1), c.in_addr(2), c.in_addr(3), c.scratch_addr(),
                  c.out_addr()) + words(data.batch, data.input_size, data.num_filters, data.memory_size,
                                        data.rank, _F32_ACTIVATIONS[data.activation])
    return [c.call("mrt_svdf_f32", c.args(blob))]


__all__ = ["run_svdf_f32", "run_svdf_s8"]


KERNELS: dict[KernelKey, OpKernel] = {
    ("SVDF", INT8): OpKernel(run_svdf_s8),
    ("SVDF", FLOAT32): OpKernel(run_svdf_f32, libm=True),                       # tanhf for a TANH activation
}
