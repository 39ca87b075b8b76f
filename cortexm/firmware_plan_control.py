"""Control flow and resource variables in the firmware plan (firmware_plan.py), as the host
kernels run them (micro_rt.kernels.control_flow, resource_variables), their copies as mrt_copy
calls (ops.control.CopyStep):

- IF / WHILE: their copies (TFLM's CopyOpInputsToSubgraphInputs and friends) and jumps on the
  condition bytes, between ENTER and LEAVE (the profiler's record of the operator).
- CALL_ONCE: ENTER, a JUMP_IF_FALSE over its init subgraph on a byte the runtime keeps in the
  state region ("init still to run": 1 until it has run; a StateFlag mirroring the kernel's
  OpDataCallOnce.has_run, written before and read back after every invoke), the init
  subgraph's entries, a STORE of 0 to the byte, LEAVE. As the host kernel: the init subgraph
  runs at the first invoke only; reset() does not re-arm it (TFLM's kernel has no reset).
- VAR_HANDLE: nothing to do at invoke (its output points at the id prepare set): a NOTE, so
  the profile keeps its line.
- READ_VARIABLE / ASSIGN_VARIABLE: the copy between the variable's buffer (MicroResourceVariables'
  buffer, in the arena after the planned head: the interpreter lays it out there) and the
  tensor, or a NOTE when the copy moves nothing (no bytes). Which variable is decided when
  the plan is built, so the handle must be known then: a VAR_HANDLE's output (its id is set in
  prepare) or a constant. A handle that arrives at run time (computed, or a subgraph input), a
  variable without a buffer, or sizes that differ (the host kernel refuses the invoke) raise
  PlanError: the operator becomes a host entry (firmware_plan.HostNode), its host kernel says why.

reset() needs nothing here: the variables' buffers are the interpreter's arena bytes, which the
host resets (ResetAll) and the plan reads where they are.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from micro_rt.errors import MicroRtError

from .firmware_plan_ir import (ENTER, LEAVE, NOTE, Jump, Label, Mark, PlanError, PlanNode, StateFlag, Store,
                               require_placed)
from .ops.control import CopyStep

__all__ = ["copies", "plan_control"]


def plan_control(it: Any, node: Any, context: Any, program: list, labels: list,
                 plan_subgraph: Callable[..., None]) -> None:
    """`node` (IF, WHILE, CALL_ONCE, VAR_HANDLE, READ_VARIABLE or ASSIGN_VARIABLE) appended to
    `program`; `plan_subgraph(it, index, context, program, labels)` appends a subgraph's nodes."""
    if node.op_name in ("IF", "WHILE"):
        _if_while(it, node, context, program, labels, plan_subgraph)
    elif node.op_name == "CALL_ONCE":
        _call_once(it, node, context, program, labels, plan_subgraph)
    elif node.op_name == "VAR_HANDLE":
        program.append(Mark(node, NOTE))
    elif node.op_name in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
        _variable_copy(it, node, program)
    else:
        raise PlanError(f"op {node.index} {node.op_name} runs on the host (the device runtime "
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
        raise PlanError(f"{where}: the model has no resource variables (its host kernel says so)")
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
        raise PlanError(f"{where} runs on the host, where its invoke fails: {e}") from None
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
    raise PlanError(f"{where} runs on the host: its handle (tensor '{handle.name}') is known only at run "
                    "time (not a VAR_HANDLE's output or a constant), so which variable it reaches cannot be "
                    "planned")


def copies(node, pairs: list, program: list) -> None:
    """TFLM's whole-tensor copies (ctx.copy_tensors): equal sizes, none between tensors sharing
    memory or of no bytes; one CopyStep, as McuExecutor.copy runs them."""
    todo = []
    for src, dst in pairs:
        if src is None or dst is None or src.nbytes != dst.nbytes:
            raise PlanError(f"op {node.index} {node.op_name}: a copy between tensors of different "
                            "sizes (TFLM fails the invoke; its host kernel says so)")
        require_placed(src, node)
        require_placed(dst, node)
        same = not src.is_constant and not dst.is_constant and src.offset == dst.offset
        if src.nbytes and not same:
            todo.append((src, dst))
    if not todo:
        return
    step = CopyStep.of(node, len(todo))
    step.subgraph = node.subgraph
    objects = [s for s, _ in todo] + [d for _, d in todo]
    tensors = dict(enumerate(objects))
    program.append(PlanNode(step, tensors, {k: t.offset for k, t in tensors.items() if t.offset is not None}))


def _jump_unless(node, label: str, t) -> list:
    """A jump to `label` when the condition `t` is false, as TFLM reads it (its first byte as a
    bool): on its byte in the arena, or decided now for a constant (always, or never)."""
    if t is not None and t.is_constant and t.nbytes:
        first = np.ascontiguousarray(t.data).reshape(-1).view(np.uint8)[0]
        return [] if first else [Jump(node, label)]
    if t is None or t.offset is None:
        raise PlanError(f"op {node.index} {node.op_name}: its condition is not a tensor in the arena")
    return [Jump(node, label, t.offset)]


def _if_while(it: Any, node, context: Any, program: list, labels: list, plan_subgraph: Callable[..., None]) -> None:
    """IF and WHILE as kernels/control_flow.py runs them, the host's decisions made by jumps."""
    tensors = it.subgraphs[node.subgraph].tensors
    inputs = [tensors[i] if i >= 0 else None for i in node.inputs]
    outputs = [tensors[i] if i >= 0 else None for i in node.outputs]
    ins = lambda k: it.graph.subgraph_tensors(k, False)     # noqa: E731
    outs = lambda k: it.graph.subgraph_tensors(k, True)     # noqa: E731
    labels[0] += 1
    tag = f"{node.subgraph}:{node.index}#{labels[0]}"
    program.append(Mark(node, ENTER))
    if node.op_name == "IF":
        then, other = int(node.options["then_subgraph_index"]), int(node.options["else_subgraph_index"])
        program += _jump_unless(node, f"else {tag}", inputs[0])
        for branch, name in ((then, "then"), (other, "else")):
            if name == "else":
                program.append(Label(f"else {tag}"))
            copies(node, list(zip(inputs[1:], ins(branch))), program)
            plan_subgraph(it, branch, context, program, labels)
            if outs(branch):
                copies(node, list(zip(outs(branch), outputs)), program)
            if name == "then":
                program.append(Jump(node, f"end {tag}"))
    else:
        cond, body = int(node.options["cond_subgraph_index"]), int(node.options["body_subgraph_index"])
        copies(node, list(zip(inputs, ins(cond))), program)
        copies(node, list(zip(inputs, outputs)), program)
        program.append(Label(f"cond {tag}"))
        plan_subgraph(it, cond, context, program, labels)
        program += _jump_unless(node, f"end {tag}", outs(cond)[0])
        copies(node, list(zip(outputs, ins(body))), program)
        plan_subgraph(it, body, context, program, labels)
        copies(node, list(zip(outs(body), outputs)), program)
        copies(node, list(zip(outputs, ins(cond))), program)
        program.append(Jump(node, f"cond {tag}"))
    program.append(Label(f"end {tag}"))
    program.append(Mark(node, LEAVE))
