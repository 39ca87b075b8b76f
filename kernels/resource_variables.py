"""VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE: TFLM's kernels (var_handle.cc,
read_variable.cc, assign_variable.cc) over the interpreter's MicroResourceVariables
(micro_rt.resource_variables).

- VAR_HANDLE: prepare takes the id of its (container, shared_name) and points its output at
  the id kept in its OpData, so the output is not planned; invoke does nothing more.
- READ_VARIABLE: copies the variable's buffer into its output.
- ASSIGN_VARIABLE: prepare gives the variable its buffer (tail bytes) the first time, when the
  id is already known (the handle comes from a VAR_HANDLE prepared before it, or is a
  constant); invoke copies its value input into the buffer. Only a compression build (the
  tflite-micro pip package, host64) gives it an OpData.

Ids are stored as the 4 bytes of an int32 (a RESOURCE tensor's bytes in TFLM), so control-flow
operators can pass handles between subgraphs like any tensor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TensorView, op_data_init

from .kernel_util import kernel_error


@dataclass
class OpDataVarHandle:
    resource_id: int = -1
    id_bytes: Optional[np.ndarray] = None   # what the output points at


@dataclass
class OpDataAssignVariable:
    scratch_index: int = -1                 # compression scratch (unused: nothing compressed)


def _resources(ctx: KernelContext, node: Node):
    if ctx.resource_variables is None:
        raise kernel_error(node, f"{node.op_name} requires resource variables. Please create "
                                 "ResourceVariables and pass it to the interpreter.")
    return ctx.resource_variables


def _resource_id(t) -> int:
    return int(np.asarray(t.data).reshape(-1).view(np.uint8)[:4].view("<i4")[0])


def _check_handle(node: Node, t: Optional[TensorView], types: tuple[str, ...]) -> TensorView:
    """The resource handle input, checked: one element of one of `types`."""
    if t is None or t.type_name not in types:
        raise kernel_error(node, f"input 0 must be a {' or '.join(types)} handle, got "
                                 f"{t.type_name if t is not None else 'nothing'}")
    if math.prod(t.shape) != 1:
        raise kernel_error(node, f"NumElements(input 0) != 1: the handle has shape {list(t.shape)}")
    return t


# ---- VAR_HANDLE ----------------------------------------------------------------------------
def var_handle_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataVarHandle = node.user_data
    shared_name = node.options.get("shared_name")
    if shared_name is None:
        raise kernel_error(node, "VarHandleOptions has no shared_name (TFLM compares it with "
                                 "strcmp and would crash)")
    data.resource_id = _resources(ctx, node).create_id(node.options.get("container"), shared_name)
    if len(node.outputs) != 1:
        raise kernel_error(node, f"expects 1 output, has {len(node.outputs)}")
    data.id_bytes = np.array([data.resource_id], "<i4").view(np.uint8)
    ctx.set_data_in_prepare(ctx.output(node, 0), data.id_bytes)


def var_handle_invoke(ctx: KernelContext, node: Node) -> None:
    """The output already points at the id (set in prepare), as TFLM's Eval leaves it."""


# ---- READ_VARIABLE -------------------------------------------------------------------------
def read_variable_prepare(ctx: KernelContext, node: Node) -> None:
    if len(node.inputs) != 1 or len(node.outputs) != 1:
        raise kernel_error(node, f"expects 1 input and 1 output, has {len(node.inputs)} and "
                                 f"{len(node.outputs)}")
    _check_handle(node, ctx.input(node, 0), ("RESOURCE",))


def read_variable_invoke(ctx: KernelContext, node: Node) -> None:
    out = ctx.output(node, 0)
    variable = _resources(ctx, node).checked_buffer(_resource_id(ctx.input(node, 0)), out, "read")
    ctx.copy_tensors([(variable, out)])


# ---- ASSIGN_VARIABLE -----------------------------------------------------------------------
def assign_variable_init(ctx, custom_options) -> OpDataAssignVariable:
    if ctx.target.sizeof("OpDataAssignVariable"):     # compression builds only
        ctx.allocate_persistent(ctx.target.sizeof("OpDataAssignVariable"))
    return OpDataAssignVariable()


def assign_variable_prepare(ctx: KernelContext, node: Node) -> None:
    if len(node.inputs) != 2:
        raise kernel_error(node, f"NumInputs(node) != 2: has {len(node.inputs)}")
    if len(node.outputs) != 0:
        raise kernel_error(node, f"NumOutputs(node) != 0: has {len(node.outputs)}")
    handle = _check_handle(node, ctx.input(node, 0), ("RESOURCE", "INT32"))
    value = ctx.input(node, 1)
    if value is None:
        raise kernel_error(node, "input 1 (the value) is absent")
    resources = ctx.resource_variables
    # TFLM allocates only when the handle already has data: a VAR_HANDLE prepared before, or
    # a constant; a handle passed in from another subgraph is resolved at invoke.
    if resources is not None and handle.is_bound:
        zero_point = int(value.zero_points[0]) if len(value.zero_points) and len(value.scales) else None
        resources.allocate(_resource_id(handle), value.nbytes, zero_point, ctx.allocate_persistent)


def assign_variable_invoke(ctx: KernelContext, node: Node) -> None:
    value = ctx.input(node, 1)
    variable = _resources(ctx, node).checked_buffer(_resource_id(ctx.input(node, 0)), value, "assign")
    ctx.copy_tensors([(value, variable)])


BUILTINS: list[tuple[str, Registration, int]] = [
    ("VAR_HANDLE", Registration(invoke=var_handle_invoke, prepare=var_handle_prepare,
                                init=op_data_init("OpDataVarHandle", OpDataVarHandle),
                                name="VAR_HANDLE", temps=""), 1),
    ("READ_VARIABLE", Registration(invoke=read_variable_invoke, prepare=read_variable_prepare,
                                   name="READ_VARIABLE", temps="i0"), 1),
    ("ASSIGN_VARIABLE", Registration(invoke=assign_variable_invoke, prepare=assign_variable_prepare,
                                     init=assign_variable_init, name="ASSIGN_VARIABLE", temps="i1"), 1),
]
