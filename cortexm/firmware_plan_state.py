"""CALL_ONCE and the resource-variable operators in the firmware plan (firmware_plan.py), as the
host kernels run them (micro_rt.kernels.control_flow, resource_variables) and the call-by-call
mode prices them (their copies as mrt_copy calls, ops_control.CopyStep):

- CALL_ONCE: ENTER, a JUMP_IF_FALSE over its init subgraph on a byte the runtime keeps in the
  state region ("init still to run": 1 until it has run; a StateFlag mirroring the kernel's
  OpDataCallOnce.has_run, written before and read back after every invoke), the init
  subgraph's entries, a STORE of 0 to the byte, LEAVE. As the host kernel: the init subgraph
  runs at the first invoke only; reset() does not re-arm it (TFLM's kernel has no reset).
- VAR_HANDLE: nothing to do at invoke (its output points at the id prepare set): a NOTE, so
  the profile keeps its line, as call by call.
- READ_VARIABLE / ASSIGN_VARIABLE: the copy between the variable's buffer (MicroResourceVariables'
  buffer, in the arena after the planned head: the interpreter lays it out there) and the
  tensor, or a NOTE when the copy moves nothing (no bytes). Which variable is decided when
  the plan is built, so the handle must be known then: a VAR_HANDLE's output (its id is set in
  prepare) or a constant. A handle that arrives at run time (a subgraph input), a variable
  without a buffer, or sizes that differ (the host kernel refuses the invoke: call by call says
  so) raise PlanError: the model runs call by call.

reset() needs nothing here: the variables' buffers are the interpreter's arena bytes, which the
host resets (ResetAll) and the plan reads where they are.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from micro_rt.errors import MicroRtError

from .firmware_plan import ENTER, LEAVE, NOTE, Jump, Label, Mark, PlanError, StateFlag, Store, copies

__all__ = ["plan_stateful"]


def plan_stateful(it: Any, node: Any, context: Any, program: list, labels: list,
                  plan_subgraph: Callable[..., None]) -> None:
    """`node` (CALL_ONCE, VAR_HANDLE, READ_VARIABLE or ASSIGN_VARIABLE) appended to `program`."""
    if node.op_name == "CALL_ONCE":
        _call_once(it, node, context, program, labels, plan_subgraph)
    elif node.op_name == "VAR_HANDLE":
        program.append(Mark(node, NOTE))
    elif node.op_name in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
        _variable_copy(it, node, program)
    else:
        raise PlanError(f"op {node.index} {node.op_name} runs call by call (the device runtime "
                        "has no plan for it)")


def _call_once(it: Any, node: Any, context: Any, program: list, labels: list,
               plan_subgraph: Callable[..., None]) -> None:
    data = node.user_data          # kernels.control_flow.OpDataCallOnce
    key = (node.subgraph, node.index)
    flag = context.flags.get(key)
    if flag is None:               # one byte per operator, however often its subgraph is unrolled
        flag = context.flags[key] = StateFlag(
            f"subgraph {node.subgraph} op {node.index} CALL_ONCE: init still to run",
            get=lambda: 0 if data.has_run else 1,
            put=lambda value: setattr(data, "has_run", value == 0))
    labels[0] += 1
    end = f"end {node.subgraph}:{node.index}#{labels[0]}"
    program += [Mark(node, ENTER), Jump(node, end, flag)]
    plan_subgraph(it, int(data.init_subgraph_index), context, program, labels)
    program += [Store(node, flag, 0), Label(end), Mark(node, LEAVE)]


def _variable_copy(it: Any, node: Any, program: list) -> None:
    where = f"op {node.index} {node.op_name}"
    if node.subgraph:
        where = f"subgraph {node.subgraph} {where}"
    resources = it.resource_variables
    if resources is None:
        raise PlanError(f"{where}: the model has no resource variables (call by call says so)")
    tensors = it.subgraphs[node.subgraph].tensors
    reading = node.op_name == "READ_VARIABLE"
    k = node.outputs[0] if reading else node.inputs[1]
    tensor = tensors[k] if k >= 0 else None
    if tensor is None:
        raise PlanError(f"{where}: its {'output' if reading else 'value'} is absent")
    resource_id = _static_id(it, node, where)
    try:
        variable = resources.checked_buffer(resource_id, tensor, "read" if reading else "assign")
    except MicroRtError as e:
        raise PlanError(f"{where} runs call by call, where its invoke fails: {e}") from None
    before = len(program)
    copies(node, [(variable, tensor)] if reading else [(tensor, variable)], program)
    if len(program) == before:      # nothing copied: the operator still ran
        program.append(Mark(node, NOTE))


def _static_id(it: Any, node: Any, where: str) -> int:
    """The resource id the operator's handle (input 0) holds at every invoke: a constant's, or
    the id a VAR_HANDLE of the same subgraph set in prepare (what the host kernel reads)."""
    sub = it.subgraphs[node.subgraph]
    k = node.inputs[0] if node.inputs else -1
    handle = sub.tensors[k] if k >= 0 else None
    if handle is None:
        raise PlanError(f"{where}: its handle is absent")
    made = any(n.op_name == "VAR_HANDLE" and k in n.outputs for n in sub.nodes)
    if (made and handle.offset is None) or handle.is_constant:    # bytes that never change
        return int(np.asarray(handle.data).reshape(-1).view(np.uint8)[:4].view("<i4")[0])
    raise PlanError(f"{where} runs call by call: its handle (tensor '{handle.name}') is known only at run "
                    "time (not a VAR_HANDLE's output or a constant), so which variable it reaches cannot be "
                    "planned")
