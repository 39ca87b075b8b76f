"""BATCH_MATMUL: TFLM's reference kernel (batch_matmul.cc, batch_matmul_common.cc,
reference_ops::BatchMatMul) and, for the arena, its CMSIS-NN glue (cmsis_nn/batch_matmul.cc).

out[..., a, c] = sum_k lhs'[..., a, k] * rhs'[..., k, c], where lhs' is lhs with its last two
axes swapped when adj_x and rhs' likewise when adj_y; the batch axes (all but the last two, up
to 3 of them, ranks 2..5; the CMSIS-NN glue takes ranks up to 4) broadcast where one side has 1.
int8: (lhs - lhs zero point) * (rhs - rhs zero point) summed in int32, then the double-rounding
MultiplyByQuantizedMultiplier with GetQuantizedConvolutionMultipler's multiplier, the output
zero point and the int8 range. int16 (16x8 naming aside, both operands int16): zero points must
be 0, int64 sums and the int64 MultiplyByQuantizedMultiplier. The integer sums are exact here
(float64 products of at most 16 bits each, far below 2^53).
float32: bit-identical: each output starts at 0.0f and adds lhs * rhs in k order, in float32.

Memory, as TFLM's Prepare allocates it: the OpData (init), for int8 / int16 the quantization
struct, for adj_x a transposed copy of lhs and unless adj_y one of rhs (each a TfLiteEvalTensor,
its dims array and its data, persistent), and a writable copy of the output's dims; no scratch
(the CMSIS-NN glue asks arm_fully_connected_s8_get_buffer_size, 0 bytes, for int8).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .fully_connected import fc_output_multipliers
from .kernel_util import (check_quantized, element_count, kernel_error, require_inputs, scale_of, tensor_desc,
                          type_name, zero_point_of)
from .requant import Requantizer

_TYPES = (np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.int16))


@dataclass
class OpDataBatchMatmul:
    """Host mirror of TFLM's OpDataBatchMatmul plus what invoke needs."""
    kind: str = ""
    adj_x: bool = False
    adj_y: bool = False
    lhs_zero_point: int = 0
    rhs_zero_point: int = 0
    out_shape: tuple = ()
    requant: Any = None


batch_matmul_init = op_data_init("OpDataBatchMatmul", OpDataBatchMatmul)


def int_array_bytes(rank: int) -> int:
    """TfLiteIntArrayGetSizeInBytes: the size field and `rank` ints."""
    return 4 + 4 * rank


def matmul_output_shape(node, lhs_shape, rhs_shape, adj_x: bool, adj_y: bool, max_rank: int) -> tuple:
    """The output shape TFLM's ReshapeOutputTensor writes, after Prepare's checks."""
    lr, rr = len(lhs_shape), len(rhs_shape)
    for role, rank in (("lhs", lr), ("rhs", rr)):
        if not 2 <= rank <= max_rank:
            raise kernel_error(node, f"{role} is {rank}-D; BATCH_MATMUL takes 2 to {max_rank} dimensions "
                                     f"(TFLM: {role}_rank >= 2 && {role}_rank <= {max_rank})")
    rank = max(lr, rr)
    lhs = (1,) * (rank - lr) + tuple(int(d) for d in lhs_shape)
    rhs = (1,) * (rank - rr) + tuple(int(d) for d in rhs_shape)
    batch = []
    for k in range(rank - 2):
        if lhs[k] != rhs[k] and lhs[k] != 1 and rhs[k] != 1:
            raise kernel_error(node, f"batch dimension {k}: lhs {lhs[k]} and rhs {rhs[k]} do not broadcast")
        batch.append(rhs[k] if lhs[k] == 1 else lhs[k])
    accum_lhs = lhs[-2] if adj_x else lhs[-1]
    accum_rhs = rhs[-1] if adj_y else rhs[-2]
    if accum_lhs != accum_rhs:
        raise kernel_error(node, f"lhs {list(lhs_shape)} (adj_x={adj_x}) and rhs {list(rhs_shape)} "
                                 f"(adj_y={adj_y}) disagree on the summed dimension: {accum_lhs} != {accum_rhs}")
    return (*batch, lhs[-1] if adj_x else lhs[-2], rhs[-2] if adj_y else rhs[-1])


def _allocate_transposed_copy(ctx, t) -> None:
    """AllocInitTransposeTensorFromTfLiteTensor: a TfLiteEvalTensor, its dims, its data."""
    ctx.allocate_persistent(ctx.target.sizeof("TfLiteEvalTensor"))
    ctx.allocate_persistent(int_array_bytes(len(t.shape)))
    ctx.allocate_persistent(element_count(t) * np.dtype(t.dtype).itemsize)


def batch_matmul_prepare(ctx: KernelContext, node: Node) -> None:
    """TFLM's reference Prepare: operands of 2 to 5 dimensions."""
    prepare_batch_matmul(ctx, node, max_rank=5)


def prepare_batch_matmul(ctx: KernelContext, node: Node, max_rank: int) -> None:
    """The Prepare every build's BATCH_MATMUL shares; `max_rank`: the most dimensions the
    build's kernel takes (CMSIS-NN's glue: 4)."""
    data: OpDataBatchMatmul = node.user_data
    if len(node.inputs) != 2 or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 2 inputs and 1 output, got {len(node.inputs)}/{len(node.outputs)}")
    lhs, rhs = require_inputs(ctx, node, 2)
    out = ctx.output(node, 0)
    lt, rt, ot = np.dtype(lhs.dtype), np.dtype(rhs.dtype), np.dtype(out.dtype)
    for role, t, dt in (("lhs", lhs, lt), ("rhs", rhs, rt)):
        if dt not in _TYPES:
            raise kernel_error(node, f"{role} {tensor_desc(t)}: type {type_name(dt)} is not FLOAT32, INT8 or INT16 "
                                     f"(TFLM: {role}_data->type == kTfLiteFloat32 || ... was not true)")
    if lt != rt:
        raise kernel_error(node, f"lhs {tensor_desc(lhs)} and rhs {tensor_desc(rhs)} differ in type "
                                 "(TFLM: lhs_data->type == rhs_data->type; hybrid models are not supported)")
    if ot != lt:
        raise kernel_error(node, f"output {tensor_desc(out)} must have the inputs' type {type_name(lt)} "
                                 "(TFLM: lhs_data->type == output->type)")
    data.adj_x = adj_x = bool(node.options.get("adj_x", False))
    data.adj_y = adj_y = bool(node.options.get("adj_y", False))
    quantized = lt != np.float32
    if quantized:
        ctx.allocate_persistent(ctx.target.sizeof("QuantizationOpDataBatchMatmul"))
    if adj_x:
        _allocate_transposed_copy(ctx, lhs)
    if not adj_y:
        _allocate_transposed_copy(ctx, rhs)
    data.kind = lt.name
    if quantized:
        _prepare_quantized(node, data, lhs, rhs, out)
    shape = matmul_output_shape(node, lhs.shape, rhs.shape, adj_x, adj_y, max_rank)
    if len(shape) > len(out.shape):
        raise kernel_error(node, f"output {tensor_desc(out)} has fewer dimensions than the product's {len(shape)} "
                                 "(TFLM: output_rank <= NumDimensions(output))")
    ctx.allocate_persistent(int_array_bytes(len(out.shape)))      # CreateWritableTensorDimsWithCopy
    if int(np.prod(shape)) != element_count(out):
        raise kernel_error(node, f"output {tensor_desc(out)} must hold the product's {list(shape)} elements "
                                 "(TFLM does not resize tensors)")
    data.out_shape = shape
    if quantized:
        rows = int(np.prod(shape[:-1]))
        depth = int(lhs.shape[-2] if adj_x else lhs.shape[-1])
        span = 65536 if lt == np.int16 else 256
        multiplier, shift, (act_min, act_max) = data.requant
        data.requant = Requantizer((rows, shape[-1]), multiplier, shift, None, zero_point_of(out),
                                   act_min, act_max, wide=lt == np.int16, acc_bound=span * span * depth)


def _prepare_quantized(node, data: OpDataBatchMatmul, lhs, rhs, out) -> None:
    """GetQuantizedConvolutionMultipler (lhs scale * rhs scale / output scale), the type's full
    range (no fused activation), and the 16-bit rule that every zero point be 0."""
    for role, t in (("lhs", lhs), ("rhs", rhs), ("output", out)):
        check_quantized(node, t, role)
    dt = np.dtype(lhs.dtype)
    if dt == np.int16:
        for role, t in (("lhs", lhs), ("rhs", rhs), ("output", out)):
            if zero_point_of(t) != 0:
                raise kernel_error(node, f"{role} {tensor_desc(t)} has zero point {zero_point_of(t)}: int16 "
                                         f"BATCH_MATMUL needs 0 (TFLM: {role}->params.zero_point == 0)")
    mult, shift = fc_output_multipliers(scale_of(lhs), np.asarray([scale_of(rhs)], np.float32), scale_of(out))
    info = np.iinfo(dt)
    data.lhs_zero_point, data.rhs_zero_point = zero_point_of(lhs), zero_point_of(rhs)
    data.requant = (int(mult), int(shift), (int(info.min), int(info.max)))


def operands(data: OpDataBatchMatmul, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """lhs' [..., A, K] and rhs' [..., K, C] (adj_x / adj_y applied)."""
    a = np.swapaxes(lhs, -1, -2) if data.adj_x else lhs
    b = np.swapaxes(rhs, -1, -2) if data.adj_y else rhs
    return a, b


def float_batch_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """reference_ops::BatchMatMul<float>: per output, 0.0f then + a * b in k order (float32)."""
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    total = np.zeros(shape, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(a.shape[-1]):
            total += a[..., :, k:k + 1] * b[..., k:k + 1, :]
    return total


def integer_batch_matmul(data: OpDataBatchMatmul, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact sums of (a - lhs zero point) * (b - rhs zero point), in float64."""
    return np.matmul(np.asarray(a, np.float64) - data.lhs_zero_point, np.asarray(b, np.float64) - data.rhs_zero_point)


def batch_matmul_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataBatchMatmul = node.user_data
    a, b = operands(data, ctx.required_input(node, 0).data, ctx.required_input(node, 1).data)
    out = ctx.output(node, 0).data
    if data.kind == "float32":
        out.reshape(-1)[...] = float_batch_matmul(a, b).reshape(-1)
        return
    acc = integer_batch_matmul(data, a, b).reshape(-1, data.out_shape[-1])
    data.requant.run(acc, out.reshape(-1))


BATCH_MATMUL = Registration(invoke=batch_matmul_invoke, prepare=batch_matmul_prepare, init=batch_matmul_init,
                            name="BATCH_MATMUL",
                            temps="i0 i1 o0")

BUILTINS = [("BATCH_MATMUL", BATCH_MATMUL, 4)]
