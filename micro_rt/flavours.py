"""Kernel flavours: TFLM's CMSIS-NN glue as registrations of their own.

TFLM builds either its reference kernels or, for Cortex-M, the CMSIS-NN ones: in a build with
OPTIMIZED_KERNEL_DIR=cmsis_nn, Register_CONV_2D() returns the glue of
tensorflow/lite/micro/kernels/cmsis_nn/conv.cc instead of the reference kernel. The glue
computes what the reference kernel computes (the host kernels are bit-exact with both builds'
C kernels) but allocates differently: it wraps the reference op data in a larger struct (adding
the scratch buffer index), asks for the scratch its kernel reports through
`arm_*_get_buffer_size`, and some of its Prepares read their tensors differently. Here each glue
is a Registration made from the reference kernel's (`cmsis_nn_registration`), and the
interpreter resolves a model's operators to its flavour's registrations (`FlavourRegistrations`),
so no host kernel knows about flavours.

Without a flavour given, every command and the Interpreter take the one TFLM is built with for
the target (`default_kernels`): CMSIS-NN on a Cortex-M core, reference on the host.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from .cmsis_nn_scratch import data_input_index, scratch_requests
from .kernel_api import KernelContext, Node, OpDataInit, Registration, TempRule
from .kernels.batch_matmul import prepare_batch_matmul
from .kernels.lstm import prepare_lstm
from .kernels.transpose_conv import prepare_transpose_conv
from .resolver import MutableOpResolver, builtin_op_resolver

KERNEL_FLAVOURS = ("reference", "cmsis-nn")


def default_kernels(target: Any) -> str:
    """The flavour a user deploys on `target` (a micro_rt.targets.Target or its name), used
    wherever no flavour is given: "cmsis-nn" on a Cortex-M core (TFLM's Cortex-M builds take
    the CMSIS-NN kernels), "reference" on host64 (the tflite-micro pip package's build)."""
    if isinstance(target, str):
        from .targets import get_target
        target = get_target(target)
    return "reference" if target.is_host else "cmsis-nn"


# ---------------------------------------------------------------------------- the glue's Prepares

def request_kernel_scratch(ctx: KernelContext, node: Node) -> None:
    """The glue's own scratch requests after the reference Prepare: the buffers its kernel's
    *_get_buffer_size functions ask for (cmsis_nn_scratch), each of several (an empty one too),
    one only when the kernel needs any."""
    index = data_input_index(node)
    if index < 0:
        return
    tensors = {i: ctx.tensor(i) for i in (*node.inputs, *node.outputs) if i >= 0}
    core = ctx.target.name if ctx.target.cpu is not None else "host"
    for nbytes in scratch_requests(core, node, tensors):
        ctx.request_scratch(nbytes)


def _with_kernel_scratch(prepare: Optional[Callable[[KernelContext, Node], None]]) -> Callable[[KernelContext, Node], None]:
    def glue_prepare(ctx: KernelContext, node: Node) -> None:
        if prepare is not None:
            prepare(ctx, node)
        request_kernel_scratch(ctx, node)
    return glue_prepare


def _transpose_conv_prepare(ctx: KernelContext, node: Node) -> None:
    """cmsis_nn/transpose_conv.cc: for int8, arm_transpose_conv_s8's buffers instead of the
    reference kernel's int32 accumulators; the 16x8 glue requests the reference kernel's."""
    index = data_input_index(node)
    first = ctx.tensor(index) if index >= 0 else None
    int8 = first is not None and np.dtype(first.dtype) == np.int8
    prepare_transpose_conv(ctx, node, accumulators=not int8)
    if int8:
        request_kernel_scratch(ctx, node)


def _lstm_prepare(ctx: KernelContext, node: Node) -> None:
    """cmsis_nn/unidirectional_sequence_lstm.cc: three gate buffers where arm_lstm_unidirectional_s8
    / _s16 run (four for float32), then CMSIS_NN_PortOpData's effective biases of the eight gate
    FCs (input and recurrent per gate), state-size int32 (8x8) or int64 (16x8) each, persistent."""
    prepare_lstm(ctx, node, lambda kind: 3 if kind in ("int8", "int16") else 4)
    data = node.user_data
    kind = getattr(data, "kind", "")
    if kind in ("int8", "int16"):
        for _ in range(8):
            ctx.allocate_persistent(data.n_state * (4 if kind == "int8" else 8))


def _batch_matmul_prepare(ctx: KernelContext, node: Node) -> None:
    """cmsis_nn/batch_matmul.cc: operands of 2 to 4 dimensions (arm_batch_matmul_s8's dims)."""
    prepare_batch_matmul(ctx, node, max_rank=4)


# ---------------------------------------------------------------------------- the glue per operator

@dataclass(frozen=True)
class CmsisNnGlue:
    """What TFLM's CMSIS-NN glue of one operator does differently from its reference kernel:
    the op data struct it allocates in place of `reference_struct` (TFLM names both), its
    Prepare where it is not the reference one (that Prepare then makes the kernel's scratch
    requests itself; otherwise they follow the reference Prepare), and its temporary tensors
    where its Prepare reads them differently."""

    reference_struct: str
    struct: str
    prepare: Optional[Callable[[KernelContext, Node], None]] = None
    temps: Optional[TempRule] = None


CMSIS_NN_GLUE: dict[str, CmsisNnGlue] = {
    # ConvPrepare asks for the bias as *output* 2, which does not exist: no tensor is made for it
    "CONV_2D": CmsisNnGlue("OpDataConv", "OpDataConvCmsis", temps="i0 i1 o0 | i0 i1 i2 o0"),
    "DEPTHWISE_CONV_2D": CmsisNnGlue("OpDataConv", "OpDataDepthwiseCmsis", temps="i0 i1 o0 | i0 i1 i2 o0"),
    "FULLY_CONNECTED": CmsisNnGlue("OpDataFullyConnected", "OpDataFullyConnectedCmsis"),
    # PoolingPrepare, then its own
    "AVERAGE_POOL_2D": CmsisNnGlue("OpDataPooling", "OpDataPoolingCmsis", temps="i0 o0 | i0 o0"),
    "MAX_POOL_2D": CmsisNnGlue("OpDataPooling", "OpDataPoolingCmsis"),
    "SOFTMAX": CmsisNnGlue("SoftmaxParams", "OpDataSoftmaxCmsis"),
    "ADD": CmsisNnGlue("OpDataAdd", "OpDataAddCmsis"),
    "MUL": CmsisNnGlue("OpDataMul", "OpDataMulCmsis"),
    "SVDF": CmsisNnGlue("OpDataSvdf", "CmsisNnOpDataSvdf"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": CmsisNnGlue("OpDataLSTM", "OpDataLSTMCmsis", prepare=_lstm_prepare),
    "TRANSPOSE_CONV": CmsisNnGlue("OpDataTransposeConv", "OpDataTransposeConvCmsis",
                                  prepare=_transpose_conv_prepare),
    "BATCH_MATMUL": CmsisNnGlue("OpDataBatchMatmul", "OpDataBatchMatmulCmsis", prepare=_batch_matmul_prepare),
}


def cmsis_nn_registration(op: str, reference: Registration) -> Registration:
    """The CMSIS-NN glue of `op` made from its reference kernel's registration: the same invoke
    (and reset and free), the glue's op data, Prepare and temporary tensors."""
    glue = CMSIS_NN_GLUE[op]
    init = reference.init
    if not isinstance(init, OpDataInit) or init.struct != glue.reference_struct:
        raise TypeError(f"{op}'s reference kernel does not allocate {glue.reference_struct} through "
                        "op_data_init: its CMSIS-NN glue cannot wrap it")
    prepare = glue.prepare if glue.prepare is not None else _with_kernel_scratch(reference.prepare)
    return replace(reference, init=OpDataInit(glue.struct, init.make), prepare=prepare,
                   temps=glue.temps if glue.temps is not None else reference.temps)


class FlavourRegistrations:
    """The registrations of a flavour: for "cmsis-nn", each shipped reference kernel that has a
    CMSIS-NN glue is replaced by the glue (a kernel a user registers is theirs, as in TFLM);
    for "reference", every registration as it is."""

    def __init__(self, kernels: str, shipped: Optional[MutableOpResolver] = None):
        self._glue: dict[int, Registration] = {}
        self._kept: list[Registration] = []          # holds the references the ids stand for
        if kernels != "cmsis-nn":
            return
        shipped = shipped if shipped is not None else builtin_op_resolver()
        for op in CMSIS_NN_GLUE:
            reference = shipped.find(op, False, 1)
            self._kept.append(reference)
            self._glue[id(reference)] = cmsis_nn_registration(op, reference)

    def of(self, registration: Registration, is_custom: bool) -> Registration:
        """The flavour's registration standing for `registration`, which the resolver found."""
        if is_custom:
            return registration
        return self._glue.get(id(registration), registration)
