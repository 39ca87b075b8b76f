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
Each family module ends with its `KERNELS` table (registry.py: (op, input type) -> OpKernel), and
KERNELS below puts them together as the one table of what runs: adding an operator's C kernel
means writing its runner and adding its line to its own module's table. REFERENCE_KERNELS
(ops.reference's) replaces the CMSIS-NN-style entries for the reference flavour
(`kernels="reference"`); every function here takes the flavour as `kernels` (default "cmsis-nn").
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from micro_rt.errors import KernelError

from micro_rt.cmsis_nn_scratch import CMSIS_NN_SCRATCH, DATA_INPUT, data_input_index, size_tuple

from . import (batch_matmul, binary, control, conv_s16, custom, data_movement, elementwise, lstm, normalization, nn,
               pooling, reduce, reference, resize, signal, softmax, svdf, transpose_conv, unary)
from .context import CallContext, KernelCall, UnsupportedOnMcu, core_of
from .registry import ANY, CONTROL, FLOAT32, INT8, INT16, OpKernel, Runner, merge

if TYPE_CHECKING:        # the planner imports this module for scratch sizes: Unicorn loads only to emulate
    from ..machine import CallResult

__all__ = ["CONTROL", "DATA_INPUT", "KERNELS", "REFERENCE_KERNELS", "TRANSCENDENTAL_F32_OPS", "WITHOUT_REFERENCE_KERNEL",
           "KernelCall", "OpKernel", "Runner",
           "UnsupportedOnMcu", "copies_only", "data_input_index", "describe", "kernel_for", "perform",
           "persistent_requests", "run_op", "scratch_bytes", "scratch_requests",
           "supported"]

ScratchOffsets = Union[int, Sequence[int], None]       # one buffer's offset, or several in request order

_INPUT_TYPES = {np.dtype(np.int8): INT8, np.dtype(np.int16): INT16, np.dtype(np.float32): FLOAT32}
_ANY_ITEMSIZES = (1, 2, 4, 8)

# (op, input type) -> OpKernel: everything that runs on the virtual MCU, each family's own table
# (registry.py), in the order of this package's docstring.
KERNELS: dict[tuple[str, str], OpKernel] = merge(
    nn.KERNELS, conv_s16.KERNELS, transpose_conv.KERNELS, pooling.KERNELS, softmax.KERNELS, elementwise.KERNELS,
    binary.KERNELS, unary.KERNELS, reduce.KERNELS, normalization.KERNELS, data_movement.KERNELS,
    batch_matmul.KERNELS, resize.KERNELS, svdf.KERNELS, lstm.KERNELS, signal.KERNELS, control.KERNELS,
    custom.KERNELS)

# The reference flavour's replacements of CMSIS-NN-style entries (ops.reference).
REFERENCE_KERNELS: dict[tuple[str, str], OpKernel] = reference.REFERENCE_KERNELS
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
