"""Glue: run one micro_rt operator on the virtual MCU with the firmware's C kernels.

For a node and its tensors this module computes the kernel parameters exactly as TFLM's
CMSIS-NN glue (tensorflow/lite/micro/kernels/cmsis_nn/*.cc) fills them from the model
(multipliers and shifts from the same micro_rt.kernels helpers the numpy twins use), packs
the CMSIS-NN argument structs little-endian into the ARGS area (every field is a 32-bit
word, so the AAPCS layout is consecutive words), places constant tensors in flash once, and
calls the function.

    supported(op_name, dtype) -> bool
    scratch_bytes(mcu, core, node, tensors) -> int        # the kernel's *_get_buffer_size
    run_op(mcu, node, tensors, arena_offsets, scratch_offset) -> CallResult

Types (cortexm/src/README.md says which C file holds which kernel): int8 (CMSIS-NN style kernels
+ micro_rt's own), float32 (soft-float calling convention, the numpy twins' float32 operation
order, bit-exact except LOGISTIC / TANH / SOFTMAX, which call newlib's expf / tanhf as TFLM does
on a device), int16 (mrt_conv_s16, mrt_binary_s16, mrt_unary_int: 16x8 conv / depthwise / FC with
TFLM's int64 output stage, ADD / SUB / MUL / MAXIMUM / MINIMUM, RELU / RELU6 / LEAKY_RELU,
QUANTIZE between int8 / int16 / int32), and type-agnostic data movement.

`tensors` maps a tensor index to a TensorView-like object (dtype, shape, scales,
zero_points, quantized_dimension, is_constant, data for constants); `arena_offsets` maps
(or indexes) a tensor index to its arena offset; `scratch_offset` is the arena offset of the
node's scratch buffer (None when the kernel needs none).

The runners live by family: ops_nn (conv, depthwise, fully connected, pooling, softmax),
ops_elementwise (binary, unary, (de)quantize, mean), ops_data (data movement); ops_context
holds the per-call context and the argument packing they share.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .ops_context import DSP_CORES, UnsupportedOnMcu, _core_of, _Ctx, _is_f32, _is_i16
from .ops_data import (_run_concat_like, _run_pad, _run_reshape, _run_shape, _run_strided_slice,
                       _run_transpose)
from .ops_elementwise import (_UNARY_F32, _run_binary, _run_binary_f32, _run_binary_s16, _run_dequantize,
                              _run_mean, _run_mean_f32, _run_quantize, _run_unary, _run_unary_f32,
                              _run_unary_int)
from .ops_nn import (_avgpool_buffer_size, _conv_buffer_size, _conv_geom, _dw_buffer_size, _run_conv_f32,
                     _run_conv_s8, _run_conv_s16, _run_fc, _run_fc_f32, _run_pool, _run_pool_f32, _run_softmax,
                     _run_softmax_f32)

__all__ = ["DSP_CORES", "TRANSCENDENTAL_F32_OPS", "UnsupportedOnMcu", "run_op", "scratch_bytes", "supported"]

_INT8_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
    "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SHAPE",
    "PACK", "CONCATENATION", "TRANSPOSE", "PAD", "PADV2", "STRIDED_SLICE", "QUANTIZE",
    "DEQUANTIZE", "RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH", "MEAN",
}
# Data movement is type-agnostic (any element size).
_ANY_TYPE_OPS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS", "SHAPE", "PACK", "CONCATENATION",
                 "TRANSPOSE", "PAD", "PADV2", "STRIDED_SLICE"}


# float32 compute ops (soft-float C kernels, the numpy twins' operation order).
_F32_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
    "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX", "RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH",
    "HARD_SWISH", "MEAN",
}
# Ops whose float32 results come from newlib's expf / tanhf: within a few ulp of the host's
# glibc, not bit-equal (every other float32 kernel is bit-exact with its twin).
TRANSCENDENTAL_F32_OPS = {"LOGISTIC", "TANH", "SOFTMAX"}


# int16 activations (16x8 conv / depthwise / FC, binary ops, requantization, int16 ReLUs).
_I16_OPS = {
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM",
    "RELU", "RELU6", "LEAKY_RELU", "QUANTIZE",
}


def supported(op_name: str, dtype) -> bool:
    """True when `op_name` with input element type `dtype` runs on the virtual MCU."""
    dt = np.dtype(dtype)
    if op_name in _ANY_TYPE_OPS:
        return dt.itemsize in (1, 2, 4, 8)
    if op_name == "QUANTIZE":
        return dt in (np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.int16))
    if op_name == "DEQUANTIZE":
        return dt in (np.dtype(np.int8), np.dtype(np.int16))
    if dt == np.dtype(np.float32):
        return op_name in _F32_OPS
    if dt == np.dtype(np.int16):
        return op_name in _I16_OPS
    return op_name in _INT8_OPS and dt == np.dtype(np.int8)


# --------------------------------------------------------------------------- scratch sizes

def scratch_bytes(mcu, core: Optional[str], node, tensors) -> int:
    """Bytes the kernel asks for (its *_get_buffer_size), as TFLM's CMSIS-NN glue requests."""
    core = _core_of(mcu, core)
    op = node.op_name
    get = lambda i: tensors[node.inputs[i]]  # noqa: E731
    out = tensors[node.outputs[0]]
    if np.dtype(get(0).dtype) != np.int8:
        return 0
    if op == "CONV_2D":
        return _conv_buffer_size(_conv_geom(node, get(0), get(1), out, False), core)
    if op == "DEPTHWISE_CONV_2D":
        return _dw_buffer_size(_conv_geom(node, get(0), get(1), out, True), core)
    if op == "AVERAGE_POOL_2D":
        return _avgpool_buffer_size(int(out.shape[3]), core)
    return 0


# --------------------------------------------------------------------------- dispatch

def _by_input_type(int8_runner, float32_runner, int16_runner=None):
    """The runner for the op's input type: float32, int16 (when given), else int8."""
    def run(c: _Ctx, core: str):
        first = c.t(0)
        if _is_f32(first):
            return float32_runner(c, core)
        if int16_runner is not None and _is_i16(first):
            return int16_runner(c, core)
        return int8_runner(c, core)
    return run


def _layer(runner: Callable[..., Any], *variant) -> Callable[[_Ctx, str], Any]:
    """`runner` with its variant argument bound (depthwise flag, 16x8 kind)."""
    return lambda c, core: runner(c, core, *variant)


_RUNNERS: dict[str, Callable[[_Ctx, str], Any]] = {
    "CONV_2D": _by_input_type(_layer(_run_conv_s8, False), _layer(_run_conv_f32, False),
                              _layer(_run_conv_s16, "conv")),
    "DEPTHWISE_CONV_2D": _by_input_type(_layer(_run_conv_s8, True), _layer(_run_conv_f32, True),
                                        _layer(_run_conv_s16, "dw")),
    "FULLY_CONNECTED": _by_input_type(_run_fc, _run_fc_f32, _layer(_run_conv_s16, "fc")),
    **{op: _by_input_type(_run_binary, _run_binary_f32, _run_binary_s16)
       for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")},
    "AVERAGE_POOL_2D": _by_input_type(_run_pool, _run_pool_f32),
    "MAX_POOL_2D": _by_input_type(_run_pool, _run_pool_f32),
    "SOFTMAX": _by_input_type(_run_softmax, _run_softmax_f32),
    "RESHAPE": _run_reshape, "SQUEEZE": _run_reshape, "EXPAND_DIMS": _run_reshape, "SHAPE": _run_shape,
    "PACK": _run_concat_like, "CONCATENATION": _run_concat_like, "TRANSPOSE": _run_transpose,
    "PAD": _run_pad, "PADV2": _run_pad, "STRIDED_SLICE": _run_strided_slice,
    "QUANTIZE": _run_quantize, "DEQUANTIZE": _run_dequantize,
    **{op: _by_input_type(_run_unary, _run_unary_f32, _run_unary_int) for op in _UNARY_F32},
    "MEAN": _by_input_type(_run_mean, _run_mean_f32),
}


def run_op(mcu, node, tensors, arena_offsets, scratch_offset: Optional[int] = None,
           budget: Optional[int] = None):
    """Run `node` on `mcu` (its tensors already in the arena); returns the CallResult."""
    runner = _RUNNERS.get(node.op_name)
    first = tensors[node.inputs[0]] if node.inputs and node.inputs[0] >= 0 else None
    if runner is None or (first is not None and not supported(node.op_name, first.dtype)):
        raise UnsupportedOnMcu(f"op {node.index} {node.op_name}: no C kernel for "
                               f"{np.dtype(first.dtype).name if first is not None else '?'}")
    mcu.args_reset()
    if budget is not None:
        mcu.call_budget = budget
    return runner(_Ctx(mcu, node, tensors, arena_offsets, scratch_offset), _core_of(mcu))
