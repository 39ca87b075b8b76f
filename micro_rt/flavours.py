"""Kernel flavours: what an optimised kernel library adds to the reference kernels' arena use.

TFLM builds either its reference kernels or, for Cortex-M, the CMSIS-NN ones. The CMSIS-NN
glue (tensorflow/lite/micro/kernels/cmsis_nn/*.cc) wraps the reference op data in a larger
struct (adding the scratch buffer index) and asks for the scratch its kernel reports through
`arm_*_get_buffer_size`. The host kernels mirror the reference allocations; this module adds
the difference, so `--kernels cmsis-nn` accounts what a CMSIS-NN build allocates.

Without a flavour given, every command and the Interpreter take the one TFLM is built with for
the target (`default_kernels`): CMSIS-NN on a Cortex-M core, reference on the host.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cmsis_nn_scratch import CMSIS_NN_SCRATCH, data_input_index, scratch_requests

KERNEL_FLAVOURS = ("reference", "cmsis-nn")


def default_kernels(target: Any) -> str:
    """The flavour a user deploys on `target` (a micro_rt.targets.Target or its name), used
    wherever no flavour is given: "cmsis-nn" on a Cortex-M core (TFLM's Cortex-M builds take
    the CMSIS-NN kernels), "reference" on host64 (the tflite-micro pip package's build)."""
    if isinstance(target, str):
        from .targets import get_target
        target = get_target(target)
    return "reference" if target.is_host else "cmsis-nn"

# (op, reference struct) -> the CMSIS-NN glue's struct wrapping it.
CMSIS_NN_STRUCTS = {
    ("CONV_2D", "OpDataConv"): "OpDataConvCmsis",
    ("DEPTHWISE_CONV_2D", "OpDataConv"): "OpDataDepthwiseCmsis",
    ("FULLY_CONNECTED", "OpDataFullyConnected"): "OpDataFullyConnectedCmsis",
    ("AVERAGE_POOL_2D", "OpDataPooling"): "OpDataPoolingCmsis",
    ("MAX_POOL_2D", "OpDataPooling"): "OpDataPoolingCmsis",
    ("SOFTMAX", "SoftmaxParams"): "OpDataSoftmaxCmsis",
    ("ADD", "OpDataAdd"): "OpDataAddCmsis",
    ("MUL", "OpDataMul"): "OpDataMulCmsis",
    ("SVDF", "OpDataSvdf"): "CmsisNnOpDataSvdf",
    ("UNIDIRECTIONAL_SEQUENCE_LSTM", "OpDataLSTM"): "OpDataLSTMCmsis",
    ("TRANSPOSE_CONV", "OpDataTransposeConv"): "OpDataTransposeConvCmsis",
    ("BATCH_MATMUL", "OpDataBatchMatmul"): "OpDataBatchMatmulCmsis",
}
# (op, input type) whose CMSIS-NN glue requests its own scratch *instead of* the reference
# kernel's (the reference TRANSPOSE_CONV's int32 accumulators: arm_transpose_conv_s8 needs others).
CMSIS_NN_REPLACED_SCRATCH = {("TRANSPOSE_CONV", "int8")}


class FlavouredTarget:
    """The target as a kernel sees it (ctx.target): `sizeof` answers for the flavour's struct,
    by op, and the flavour says which buffers its glue requests instead of the reference
    kernel's, so that no host kernel imports this module."""

    def __init__(self, target: Any, kernels: str, context: Any):
        self._target, self._kernels, self._context = target, kernels, context

    @property
    def kernels(self) -> str:
        """The kernel flavour ("reference" or "cmsis-nn")."""
        return self._kernels

    def sizeof(self, struct: str) -> int:
        if self._kernels == "cmsis-nn" and self._context.node is not None:
            struct = CMSIS_NN_STRUCTS.get((self._context.node.op_name, struct), struct)
        return self._target.sizeof(struct)

    def replaces_reference_scratch(self, op_name: str, input_dtype: Any) -> bool:
        """Whether the flavour's glue requests other scratch buffers than the reference kernel
        for this op and input type (prepare_extras then makes its requests; the reference
        kernel makes none)."""
        return self._kernels == "cmsis-nn" and (op_name, np.dtype(input_dtype).name) in CMSIS_NN_REPLACED_SCRATCH

    def lstm_gate_buffers(self, integer: bool) -> int:
        """The scratch buffers of batch x state cells UNIDIRECTIONAL_SEQUENCE_LSTM requests: four
        (the reference kernel), three where CMSIS-NN's arm_lstm_unidirectional_s8 / _s16 run."""
        return 3 if self._kernels == "cmsis-nn" and integer else 4

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def _lstm_kernel_sums(ctx: Any, node: Any) -> None:
    """CMSIS-NN's LSTM glue (CMSIS_NN_PortOpData): the effective biases of the eight gate FCs
    (input and recurrent per gate), state-size int32 (8x8) or int64 (16x8) each, persistent."""
    data = node.user_data
    kind = getattr(data, "kind", "")
    if kind in ("int8", "int16"):
        for _ in range(8):
            ctx.allocate_persistent(data.n_state * (4 if kind == "int8" else 8))


def prepare_extras(ctx: Any, node: Any, kernels: str) -> None:
    """After a node's reference prepare: the flavour's own scratch requests (and persistent
    buffers)."""
    if kernels == "cmsis-nn" and node.op_name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
        _lstm_kernel_sums(ctx, node)
    if kernels != "cmsis-nn":
        return
    index = data_input_index(node)
    first = ctx.tensor(index) if index >= 0 else None
    key = (node.op_name, np.dtype(first.dtype).name) if first is not None else None
    if key not in CMSIS_NN_SCRATCH:
        return                            # the glue requests nothing for this (op, type)
    if node.op_name == "TRANSPOSE_CONV" and key not in CMSIS_NN_REPLACED_SCRATCH:
        # 16x8: the glue requests the reference kernel's buffers, which its prepare has made
        return
    tensors = {i: ctx.tensor(i) for i in (*node.inputs, *node.outputs) if i >= 0}
    core = ctx.target.name if ctx.target.cpu is not None else "host"
    # as cmsis_nn_scratch.size_tuple gives them: each of several buffers (an empty one too),
    # one buffer only when the kernel needs any
    for nbytes in scratch_requests(core, node, tensors):
        ctx.request_scratch(nbytes)
