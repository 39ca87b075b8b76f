"""Glue: run one micro_rt operator on the virtual MCU with the firmware's C kernels.

For a node and its tensors, a runner computes the kernel parameters exactly as TFLM's
CMSIS-NN glue (tensorflow/lite/micro/kernels/cmsis_nn/*.cc) fills them from the model
(multipliers and shifts from the same micro_rt.kernels helpers the numpy twins use), lays the
CMSIS-NN argument structs out little-endian in the ARGS area (every field is a 32-bit word, so
the AAPCS layout is consecutive words), places constant tensors in flash once, and describes
the kernel calls (`describe`); `perform` makes them and sums what they cost.

    supported(op_name, dtype) -> bool
    scratch_bytes(mcu, core, node, tensors) -> int        # the kernel's *_get_buffer_size
    run_op(mcu, node, tensors, arena_offsets, scratch_offset) -> CallResult
        = perform(mcu, describe(mcu, node, tensors, arena_offsets, scratch_offset))

Types (cortexm/src/README.md says which C file holds which kernel): int8 (CMSIS-NN style kernels
+ micro_rt's own), float32 (soft-float calling convention, the numpy twins' float32 operation
order, bit-exact except LOGISTIC / TANH / SOFTMAX, which call newlib's expf / tanhf as TFLM does
on a device), int16 (mrt_conv_s16, mrt_binary_s16, mrt_unary_int: 16x8 conv / depthwise / FC with
TFLM's int64 output stage, ADD / SUB / MUL / MAXIMUM / MINIMUM, RELU / RELU6 / LEAKY_RELU,
QUANTIZE between int8 / int16 / int32), and type-agnostic data movement.

`tensors` maps a tensor index to a TensorView-like object (dtype, shape, scales,
zero_points, quantized_dimension, is_constant, data for constants); `arena_offsets` maps
(or indexes) a tensor index to its arena offset; `scratch_offset` is the arena offset of the
node's scratch buffer (None when the kernel needs none), or the offsets of its buffers in request
order when TFLM gives it several.

The runners live in this package, one module per family as CMSIS-NN groups its functions:
nn (conv, depthwise, fully connected), conv_s16 and transpose_conv, pooling (AVERAGE / MAX_POOL_2D
of every type, L2_POOL_2D), softmax (SOFTMAX of every type, LOG_SOFTMAX), elementwise (binary,
unary, (de)quantize, mean), binary (DIV, FLOOR_DIV / MOD, SQUARED_DIFFERENCE, PRELU, ADD_N,
comparisons, logical, SELECT_V2), unary (the unary math family, CAST, int16 LOGISTIC / TANH,
QUANTIZE int8 <-> uint8), reduce (SUM, REDUCE_*, int16 MEAN, ARG_*, CUMSUM), normalization
(L2_NORMALIZATION), data_movement (reshape, concatenation, pad, transpose, strided and plain
slices, gather, split, ...), batch_matmul, resize, svdf, lstm, signal (TFLM's Signal library),
control (the copies of control flow and resource variables), custom (CIRCULAR_BUFFER,
TFLite_Detection_PostProcess) and reference (the reference flavour's runners); context holds
the per-call context, the kernel call record and the argument packing they share.
KERNELS below is the one table of what runs: adding an operator's C kernel means writing its
runner and adding its line there. REFERENCE_KERNELS beside it replaces the CMSIS-NN-style
entries for the reference flavour (`kernels="reference"`, ops.reference); every function here
takes the flavour as `kernels` (default "cmsis-nn").
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from micro_rt.errors import KernelError

from micro_rt.cmsis_nn_scratch import CMSIS_NN_SCRATCH, DATA_INPUT, ScratchSize, data_input_index, size_tuple

from .context import CallContext, KernelCall, UnsupportedOnMcu, core_of
from .conv_s16 import run_conv_s16_cmsis
from .binary import (run_add_n, run_binary_ops_f32, run_binary_ops_q, run_binary_ops_s32, run_compare,
                         run_logical, run_select)
from .control import run_copies
from .custom import run_circular_buffer, run_detection_postprocess
from .data_movement import run_concatenation, run_pad, run_reshape, run_shape, run_strided_slice, run_transpose
from .data_movement import (run_batch_to_space, run_broadcast_args, run_broadcast_to, run_depth_to_space,
                            run_dynamic_update_slice, run_embedding_lookup, run_fill, run_gather, run_gather_nd,
                            run_mirror_pad, run_reverse, run_slice, run_space_to_batch, run_space_to_depth,
                            run_split)
from .elementwise import (run_binary_f32, run_binary_s8, run_binary_s16, run_dequantize, run_quantize,
                              run_binary_wide, run_unary_f32, run_unary_int, run_unary_s8)
from .signal import (run_delay, run_energy, run_fft_auto_scale, run_filter_bank, run_filter_bank_log,
                         run_filter_bank_sqrt, run_framer, run_irfft, run_overlap_add, run_pcan, run_rfft,
                         run_spectral_subtraction, run_stacker, run_window)
from .svdf import run_svdf_f32, run_svdf_s8
from .lstm import run_lstm, run_lstm_f32
from .unary import (LIBM_F32_OPS, MATH_F32_OPS, run_abs_rsqrt_int, run_cast, run_elu_s8, run_logical_not,
                        run_sigmoid_s16, run_unary_math_f32, run_zeros_like)
from .batch_matmul import batch_matmul_persistent, run_batch_matmul
from .resize import run_resize
from .transpose_conv import (run_transpose_conv_f32, run_transpose_conv_s8, run_transpose_conv_s16,
                                 transpose_conv_s8_reference_scratch)
from .nn import (run_conv_f32, run_conv_s8, run_conv_s16,
                     run_fully_connected_f32, run_fully_connected_s8)
from .normalization import run_l2norm
from .pooling import run_l2_pool_f32, run_pool_f32, run_pool_int
from .softmax import run_log_softmax, run_softmax_f32, run_softmax_s8, run_softmax_s16
from .reference import (run_ref_binary_int, run_ref_conv_s8, run_ref_fully_connected_s8, run_ref_pool_int,
                            run_ref_lstm, run_ref_svdf_s8, run_ref_transpose_conv_s8, svdf_s8_reference_scratch)
from .reduce import run_arg_min_max, run_cumsum, run_mean, run_reduce_f32, run_reduce_int

if TYPE_CHECKING:        # the planner imports this module for scratch sizes: Unicorn loads only to emulate
    from ..machine import CallResult

__all__ = ["CONTROL", "DATA_INPUT", "KERNELS", "REFERENCE_KERNELS", "TRANSCENDENTAL_F32_OPS", "WITHOUT_REFERENCE_KERNEL",
           "KernelCall", "OpKernel",
           "UnsupportedOnMcu", "copies_only", "data_input_index", "describe", "kernel_for", "perform",
           "persistent_requests", "run_op", "scratch_bytes", "scratch_requests",
           "supported"]

Runner = Callable[[CallContext], list[KernelCall]]
ScratchOffsets = Union[int, Sequence[int], None]       # one buffer's offset, or several in request order


@dataclass(frozen=True)
class OpKernel:
    """How an operator runs on the virtual MCU for one input type: the runner that describes
    its kernel calls and, for a reference-flavour kernel that needs scratch memory, the
    requests of TFLM's reference kernel (a CMSIS-NN-style kernel's are its *_get_buffer_size,
    the firmware's C called on the host by micro_rt/cmsis_nn_scratch.py, which the host's arena
    accounting reads too; a tuple
    when TFLM requests several buffers). `libm`: its float32 results
    come from newlib's expf / tanhf / logf (cosf / sinf / expm1f for the unary math family),
    within a few ulp of the host's glibc, not bit-equal (every other float32 kernel is
    bit-exact with its twin). `persistent`: (node, tensors) -> the bytes of each of TFLM's
    persistent buffers the kernel writes at invoke (already in the plan's tail; on the MCU the
    executor gives them memory after the variable tensors), () when none."""
    runner: Runner
    scratch: Optional[ScratchSize] = None
    libm: bool = False
    persistent: Optional[Callable[..., tuple[int, ...]]] = None


# Input element types a kernel is registered for; ANY: data movement, any element size;
# CONTROL: control flow and resource variables, whatever their tensors hold: the host kernel
# decides what to copy and the runner makes the copies (McuExecutor runs them so).
INT8, INT16, FLOAT32, ANY, CONTROL = "int8", "int16", "float32", "any", "control"
_INPUT_TYPES = {np.dtype(np.int8): INT8, np.dtype(np.int16): INT16, np.dtype(np.float32): FLOAT32}
_ANY_ITEMSIZES = (1, 2, 4, 8)

_BINARY = ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")
_UNARY = ("RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH")
_UNARY_I16 = ("RELU", "RELU6", "LEAKY_RELU")

# (op, input type) -> OpKernel: everything that runs on the virtual MCU.
KERNELS: dict[tuple[str, str], OpKernel] = {
    ("CONV_2D", INT8): OpKernel(partial(run_conv_s8, depthwise=False)),
    ("CONV_2D", FLOAT32): OpKernel(partial(run_conv_f32, depthwise=False)),
    ("CONV_2D", INT16): OpKernel(partial(run_conv_s16_cmsis, kind="conv")),
    ("DEPTHWISE_CONV_2D", INT8): OpKernel(partial(run_conv_s8, depthwise=True)),
    ("DEPTHWISE_CONV_2D", FLOAT32): OpKernel(partial(run_conv_f32, depthwise=True)),
    ("DEPTHWISE_CONV_2D", INT16): OpKernel(partial(run_conv_s16_cmsis, kind="dw")),
    ("FULLY_CONNECTED", INT8): OpKernel(run_fully_connected_s8),
    ("FULLY_CONNECTED", FLOAT32): OpKernel(run_fully_connected_f32),
    ("FULLY_CONNECTED", INT16): OpKernel(partial(run_conv_s16_cmsis, kind="fc")),
    ("AVERAGE_POOL_2D", INT8): OpKernel(run_pool_int),
    ("AVERAGE_POOL_2D", FLOAT32): OpKernel(run_pool_f32),
    ("MAX_POOL_2D", INT8): OpKernel(run_pool_int),
    ("MAX_POOL_2D", FLOAT32): OpKernel(run_pool_f32),
    ("SOFTMAX", INT8): OpKernel(run_softmax_s8),
    ("SOFTMAX", FLOAT32): OpKernel(run_softmax_f32, libm=True),
    **{(op, INT8): OpKernel(run_binary_s8) for op in _BINARY},
    **{(op, FLOAT32): OpKernel(run_binary_f32) for op in _BINARY},
    **{(op, INT16): OpKernel(run_binary_s16) for op in _BINARY},
    **{(op, INT8): OpKernel(run_unary_s8) for op in _UNARY},
    **{(op, FLOAT32): OpKernel(run_unary_f32, libm=op in ("LOGISTIC", "TANH")) for op in _UNARY},
    **{(op, INT16): OpKernel(run_unary_int) for op in _UNARY_I16},
    **{("QUANTIZE", t): OpKernel(run_quantize) for t in (INT8, INT16, FLOAT32)},
    **{("DEQUANTIZE", t): OpKernel(run_dequantize) for t in (INT8, INT16)},
    ("MEAN", INT8): OpKernel(run_mean),
    ("MEAN", FLOAT32): OpKernel(run_mean),
    **{(op, ANY): OpKernel(run_reshape) for op in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS")},
    ("SHAPE", ANY): OpKernel(run_shape),
    ("PACK", ANY): OpKernel(run_concatenation),
    ("CONCATENATION", ANY): OpKernel(run_concatenation),
    ("TRANSPOSE", ANY): OpKernel(run_transpose),
    ("PAD", ANY): OpKernel(run_pad),
    ("PADV2", ANY): OpKernel(run_pad),
    ("STRIDED_SLICE", ANY): OpKernel(run_strided_slice),
    ("SVDF", INT8): OpKernel(run_svdf_s8),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", INT8): OpKernel(run_lstm),
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", INT16): OpKernel(run_lstm),
    ("DEPTH_TO_SPACE", ANY): OpKernel(run_depth_to_space),
    ("SPACE_TO_DEPTH", ANY): OpKernel(run_space_to_depth),
    ("SPACE_TO_BATCH_ND", ANY): OpKernel(run_space_to_batch),
    ("BATCH_TO_SPACE_ND", ANY): OpKernel(run_batch_to_space),
    **{(op, ANY): OpKernel(run_split) for op in ("SPLIT", "SPLIT_V", "UNPACK")},
    ("SLICE", ANY): OpKernel(run_slice),
    ("REVERSE_V2", ANY): OpKernel(run_reverse),
    ("DYNAMIC_UPDATE_SLICE", ANY): OpKernel(run_dynamic_update_slice),
    ("GATHER", ANY): OpKernel(run_gather),
    ("GATHER_ND", ANY): OpKernel(run_gather_nd),
    ("EMBEDDING_LOOKUP", ANY): OpKernel(run_embedding_lookup),
    ("FILL", ANY): OpKernel(run_fill),
    ("BROADCAST_TO", ANY): OpKernel(run_broadcast_to),
    ("BROADCAST_ARGS", ANY): OpKernel(run_broadcast_args),
    ("MIRROR_PAD", ANY): OpKernel(run_mirror_pad),
    **{(op, FLOAT32): OpKernel(run_binary_ops_f32) for op in ("DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE",
                                                              "PRELU")},
    **{(op, ANY): OpKernel(run_binary_ops_s32) for op in ("DIV", "SQUARED_DIFFERENCE")},     # int32
    **{(op, INT8): OpKernel(run_binary_ops_q) for op in ("DIV", "SQUARED_DIFFERENCE", "PRELU")},
    **{(op, INT16): OpKernel(run_binary_ops_q) for op in ("SQUARED_DIFFERENCE", "PRELU")},
    **{("ADD_N", t): OpKernel(run_add_n) for t in (FLOAT32, INT8)},
    **{(op, t): OpKernel(run_compare) for op in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
                                                 "LESS_EQUAL") for t in (FLOAT32, INT8, ANY)},
    **{(op, t): OpKernel(run_logical) for op in ("LOGICAL_AND", "LOGICAL_OR") for t in (INT8, ANY)},
    ("SELECT_V2", ANY): OpKernel(run_select),                                   # keyed by the bool condition
    **{(op, FLOAT32): OpKernel(run_unary_math_f32, libm=op in LIBM_F32_OPS) for op in MATH_F32_OPS},
    **{(op, t): OpKernel(run_abs_rsqrt_int) for op in ("ABS", "RSQRT") for t in (INT8, INT16)},
    ("ELU", INT8): OpKernel(run_elu_s8),
    ("LOGICAL_NOT", ANY): OpKernel(run_logical_not),
    ("ZEROS_LIKE", ANY): OpKernel(run_zeros_like),
    **{("CAST", t): OpKernel(run_cast) for t in (INT8, INT16, FLOAT32, ANY)},
    ("LOGISTIC", INT16): OpKernel(run_sigmoid_s16),
    ("TANH", INT16): OpKernel(run_sigmoid_s16),
    ("QUANTIZE", ANY): OpKernel(run_quantize),           # uint8 / int32 in (other 1-byte types: int8's entry)
    ("MEAN", INT16): OpKernel(run_reduce_int),
    ("SUM", INT8): OpKernel(run_reduce_int),
    ("SUM", INT16): OpKernel(run_reduce_int),
    ("REDUCE_MAX", INT8): OpKernel(run_reduce_int),
    ("REDUCE_MIN", INT8): OpKernel(run_reduce_int),
    **{(op, FLOAT32): OpKernel(run_reduce_f32) for op in ("SUM", "REDUCE_MAX", "REDUCE_MIN")},
    ("REDUCE_ALL", ANY): OpKernel(run_reduce_int),
    **{(op, t): OpKernel(run_arg_min_max) for op in ("ARG_MAX", "ARG_MIN") for t in (INT8, FLOAT32)},
    **{("CUMSUM", t): OpKernel(run_cumsum) for t in (INT8, FLOAT32)},
    ("LOG_SOFTMAX", INT8): OpKernel(run_log_softmax),
    ("LOG_SOFTMAX", FLOAT32): OpKernel(run_log_softmax, libm=True),
    **{("L2_NORMALIZATION", t): OpKernel(run_l2norm) for t in (INT8, FLOAT32)},
    ("SOFTMAX", INT16): OpKernel(run_softmax_s16),
    ("AVERAGE_POOL_2D", INT16): OpKernel(run_pool_int),
    ("MAX_POOL_2D", INT16): OpKernel(run_pool_int),
    ("L2_POOL_2D", FLOAT32): OpKernel(run_l2_pool_f32),
    # TFLM's Signal custom operators (uint32 / uint64 inputs register as ANY)
    ("SignalWindow", INT16): OpKernel(run_window),
    ("SignalFftAutoScale", INT16): OpKernel(run_fft_auto_scale),
    ("SignalRfft", INT16): OpKernel(run_rfft),
    ("SignalIrfft", INT16): OpKernel(run_irfft),
    ("SignalEnergy", INT16): OpKernel(run_energy),
    ("SignalFilterBank", ANY): OpKernel(run_filter_bank),
    ("SignalFilterBankSquareRoot", ANY): OpKernel(run_filter_bank_sqrt),
    ("SignalFilterBankSpectralSubtraction", ANY): OpKernel(run_spectral_subtraction),
    ("SignalPCAN", ANY): OpKernel(run_pcan),
    ("SignalFilterBankLog", ANY): OpKernel(run_filter_bank_log),
    ("SignalDelay", INT16): OpKernel(run_delay),
    ("SignalFramer", INT16): OpKernel(run_framer),
    ("SignalStacker", INT16): OpKernel(run_stacker),
    ("SignalOverlapAdd", INT16): OpKernel(run_overlap_add),
    ("SignalOverlapAdd", FLOAT32): OpKernel(run_overlap_add),
    ("TRANSPOSE_CONV", INT8): OpKernel(run_transpose_conv_s8),
    ("TRANSPOSE_CONV", INT16): OpKernel(run_transpose_conv_s16),
    ("TRANSPOSE_CONV", FLOAT32): OpKernel(run_transpose_conv_f32),
    **{("RESIZE_NEAREST_NEIGHBOR", t): OpKernel(run_resize) for t in (INT8, INT16, FLOAT32)},
    **{("RESIZE_BILINEAR", t): OpKernel(run_resize) for t in (INT8, FLOAT32)},
    **{("BATCH_MATMUL", t): OpKernel(run_batch_matmul, persistent=batch_matmul_persistent)
       for t in (INT8, INT16, FLOAT32)},
    **{(op, CONTROL): OpKernel(run_copies) for op in ("IF", "WHILE", "CALL_ONCE", "VAR_HANDLE",
                                                      "READ_VARIABLE", "ASSIGN_VARIABLE")},
    ("DEQUANTIZE", ANY): OpKernel(run_dequantize),                              # uint8 in
    **{(op, ANY): OpKernel(run_binary_wide) for op in _BINARY},                 # int32; int64 MAXIMUM / MINIMUM
    ("SVDF", FLOAT32): OpKernel(run_svdf_f32, libm=True),                       # tanhf for a TANH activation
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", FLOAT32): OpKernel(run_lstm_f32, libm=True),  # expf, tanhf
    **{(op, t): OpKernel(run) for op, run in (("SignalRfft", run_rfft), ("SignalIrfft", run_irfft))
       for t in (FLOAT32, ANY)},                                                # ANY: int32
    ("CIRCULAR_BUFFER", INT8): OpKernel(run_circular_buffer),
    ("TFLite_Detection_PostProcess", FLOAT32): OpKernel(run_detection_postprocess, libm=True),
}

# The reference flavour (`kernels="reference"`): where KERNELS runs a CMSIS-NN-style kernel
# (SIMD paths, im2col, scratch buffers), TFLM's reference loop in plain C instead (ops.reference,
# cortexm/src/mrt_ref_*.c; the 16x8 layers' mrt_conv_s16 and BATCH_MATMUL's mrt_batch_matmul_*
# are such loops already). Every other KERNELS entry is one plain C kernel both flavours share
# (cortexm/src/README.md tabulates them).
REFERENCE_KERNELS: dict[tuple[str, str], OpKernel] = {
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
# CMSIS-NN-style kernels with no reference C kernel (none today; a new CMSIS-NN-style kernel
# goes here until it has one): with the reference flavour these operators run on their host
# kernel and are reported as not counted, never as the CMSIS ones.
WITHOUT_REFERENCE_KERNEL: set[tuple[str, str]] = set()

# Ops whose float32 results come from newlib's libm (see OpKernel.libm).
TRANSCENDENTAL_F32_OPS = {op for (op, dtype), kernel in KERNELS.items() if dtype == FLOAT32 and kernel.libm}


def _kernel_key(op_name: str, dtype) -> Optional[tuple[str, str]]:
    """The KERNELS key of `op_name` for input element type `dtype`, None when there is none."""
    if (op_name, CONTROL) in KERNELS:
        return op_name, CONTROL
    if dtype is None:
        return None
    dt = np.dtype(dtype)
    for key in ((op_name, _INPUT_TYPES.get(dt, "")), (op_name, ANY) if dt.itemsize in _ANY_ITEMSIZES else None):
        if key in KERNELS:
            return key
    return None


def kernel_for(op_name: str, dtype, kernels: str = "cmsis-nn") -> Optional[OpKernel]:
    """The kernel of `op_name` for input element type `dtype` in the flavour `kernels`
    ("cmsis-nn" or "reference"), None when there is none."""
    key = _kernel_key(op_name, dtype)
    if key is None:
        return None
    if kernels == "reference":
        if key in WITHOUT_REFERENCE_KERNEL:
            return None
        return REFERENCE_KERNELS.get(key, KERNELS[key])
    return KERNELS[key]


def copies_only(op_name: str) -> bool:
    """True for control-flow and resource-variable operators: on the MCU they are the copies
    their host kernel asks for (see ops.control)."""
    return (op_name, CONTROL) in KERNELS


def supported(op_name: str, dtype, kernels: str = "cmsis-nn") -> bool:
    """True when `op_name` with input element type `dtype` runs on the virtual MCU."""
    return kernel_for(op_name, dtype, kernels) is not None


def scratch_requests(mcu, core: Optional[str], node, tensors, kernels: str = "cmsis-nn") -> tuple[int, ...]:
    """The scratch buffers the kernel asks for (its *_get_buffer_size functions), in the order
    TFLM's CMSIS-NN glue requests them; () when it needs none."""
    index = data_input_index(node)
    key = _kernel_key(node.op_name, tensors[index].dtype) if index >= 0 else None
    if key is None or kernel_for(node.op_name, tensors[index].dtype, kernels) is None:
        return ()
    if kernels == "reference" and key in REFERENCE_KERNELS:
        size = REFERENCE_KERNELS[key].scratch
    else:                                   # CMSIS-NN-style, or a kernel both flavours share
        size = CMSIS_NN_SCRATCH.get(key)
    return size_tuple(size(node, tensors, core_of(mcu, core))) if size is not None else ()


def persistent_requests(node, tensors, kernels: str = "cmsis-nn") -> tuple[int, ...]:
    """The bytes of each persistent buffer (TFLM's, in its tail) the kernel writes at invoke,
    which the caller gives MCU memory and passes to `run_op` as `persistent_offsets`."""
    index = data_input_index(node)
    kernel = kernel_for(node.op_name, tensors[index].dtype, kernels) if index >= 0 else None
    if kernel is None or kernel.persistent is None:
        return ()
    return tuple(kernel.persistent(node, tensors))


def scratch_bytes(mcu, core: Optional[str], node, tensors, kernels: str = "cmsis-nn") -> int:
    """Bytes the kernel asks for (its *_get_buffer_size), as TFLM's CMSIS-NN glue requests."""
    return sum(scratch_requests(mcu, core, node, tensors, kernels))


# --------------------------------------------------------------------------- describe, perform

def describe(mcu, node, tensors, arena_offsets, scratch_offset: ScratchOffsets = None,
             kernels: str = "cmsis-nn", persistent_offsets: Sequence[int] = ()) -> list[KernelCall]:
    """The kernel calls that run `node` on `mcu` (constants placed in flash, nothing called
    yet) with the flavour `kernels`' C kernels. `persistent_offsets`: arena offsets of the
    buffers `persistent_requests` asked for."""
    index = data_input_index(node)
    first = tensors[index] if index >= 0 else None
    kernel = kernel_for(node.op_name, first.dtype, kernels) if first is not None else None
    if kernel is None:
        raise UnsupportedOnMcu(f"op {node.index} {node.op_name}: no {kernels} C kernel for "
                               f"{np.dtype(first.dtype).name if first is not None else '?'}")
    return kernel.runner(CallContext(mcu, node, tensors, arena_offsets, scratch_offset, core_of(mcu),
                                     tuple(persistent_offsets)))


def _combine(results: Sequence[CallResult]) -> CallResult:
    """One CallResult for several kernel calls: summed counts, the deepest stack; the rest is
    the first call's."""
    first = results[0]
    if len(results) == 1:
        return first
    return replace(first, instructions=sum(r.instructions for r in results), cycles=sum(r.cycles for r in results),
                   stack_bytes=max(r.stack_bytes for r in results),
                   alignment_events=[e for r in results for e in r.alignment_events])


def perform(mcu, calls: Sequence[KernelCall], budget: Optional[int] = None) -> CallResult:
    """Make the calls in order (each one's argument structs written first), each within
    `budget` instructions; one CallResult for all."""
    results = []
    for call in calls:
        for addr, data in call.blocks:
            mcu.write(addr, data)
        results.append(mcu.call(call.symbol, *call.args, budget=budget))
        if call.refusal and results[-1].return_value != 0:
            raise KernelError(f"{call.refusal} ({call.symbol} returned {results[-1].return_value})")
        if call.after is not None:
            call.after(mcu)
        if call.ends_run and results[-1].return_value == 1:
            return replace(_combine(results), ended_run=True)
    return _combine(results)


def run_op(mcu, node, tensors, arena_offsets, scratch_offset: ScratchOffsets = None,
           budget: Optional[int] = None, kernels: str = "cmsis-nn",
           persistent_offsets: Sequence[int] = ()) -> CallResult:
    """Run `node` on `mcu` (its tensors already in the arena) with the flavour `kernels`' C
    kernels; returns the CallResult."""
    return perform(mcu, describe(mcu, node, tensors, arena_offsets, scratch_offset, kernels,
                                 persistent_offsets), budget)
