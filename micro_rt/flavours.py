"""Kernel flavours: what an optimised kernel library adds to the reference kernels' arena use.

TFLM builds either its reference kernels or, for Cortex-M, the CMSIS-NN ones. The CMSIS-NN
glue (tensorflow/lite/micro/kernels/cmsis_nn/*.cc) wraps the reference op data in a larger
struct (adding the scratch buffer index) and asks for the scratch its kernel reports through
`arm_*_get_buffer_size`. The host kernels mirror the reference allocations; this module adds
the difference, so `--kernels cmsis-nn` accounts what a CMSIS-NN build allocates.
"""
from __future__ import annotations

from typing import Any

import numpy as np

KERNEL_FLAVOURS = ("reference", "cmsis-nn")

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
}
# Ops whose CMSIS-NN glue requests a scratch buffer in prepare.
CMSIS_NN_SCRATCH_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
                        "MAX_POOL_2D", "SOFTMAX")


class FlavouredTarget:
    """The target as a kernel sees it: `sizeof` answers for the flavour's struct, by op."""

    def __init__(self, target: Any, kernels: str, context: Any):
        self._target, self._kernels, self._context = target, kernels, context

    def sizeof(self, struct: str) -> int:
        if self._kernels == "cmsis-nn" and self._context.node is not None:
            struct = CMSIS_NN_STRUCTS.get((self._context.node.op_name, struct), struct)
        return self._target.sizeof(struct)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def prepare_extras(ctx: Any, node: Any, kernels: str) -> None:
    """After a node's reference prepare: the flavour's own scratch request."""
    if kernels != "cmsis-nn" or node.op_name not in CMSIS_NN_SCRATCH_OPS:
        return
    first = ctx.input(node, 0)
    if first is None or np.dtype(first.dtype) not in (np.int8, np.int16):     # int16: arm_avgpool_s16's
        return
    from micro_rt.cortexm.ops import scratch_bytes
    tensors = {i: ctx.tensor(i) for i in (*node.inputs, *node.outputs) if i >= 0}
    core = ctx.target.name if ctx.target.cpu is not None else "host"
    nbytes = scratch_bytes(None, core, node, tensors)
    if nbytes > 0:
        ctx.request_scratch(nbytes)
