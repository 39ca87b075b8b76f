"""IF, WHILE and CALL_ONCE: TFLM's kernels (if.cc, while.cc, call_once.cc) running subgraphs.

Each keeps TFLM's OpData (the subgraph indices; CALL_ONCE also whether it ran) and, like TFLM,
moves data between the operator's tensors and the subgraphs' by copying whole tensors
(kernel_util's CopyOpInputsToSubgraphInputs and friends: `ctx.copy_tensors`, which skips a
tensor sharing memory with its destination and runs on the virtual MCU when the model does):

- IF: input 0 is the condition (BOOL, one element); the other inputs are copied to the
  chosen branch's inputs, the branch runs, its outputs are copied to the operator's outputs.
- WHILE: the inputs are copied to the cond subgraph's inputs and to the operator's outputs;
  while cond's output 0 is true, the outputs are copied to the body's inputs, the body runs,
  its outputs are copied back to the operator's outputs, and those to cond's inputs again.
- CALL_ONCE: runs its init subgraph at the first invoke only; reset() does not re-arm it
  (TFLM's kernel has no reset), so a reset model keeps the variables' defaults.

The graph checks (indices in range, no calls of the own subgraph or in a cycle, list lengths)
are made when the model is read (micro_rt.subgraphs); prepare repeats TFLM's own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .kernel_util import kernel_error

# TFLM loops as long as the condition holds; a loop that never ends would hang micro_rt too.
MAX_WHILE_ITERATIONS = 1_000_000


@dataclass
class OpDataIf:
    then_subgraph_index: int = 0
    else_subgraph_index: int = 0


@dataclass
class OpDataWhile:
    cond_subgraph_index: int = 0
    body_subgraph_index: int = 0


@dataclass
class OpDataCallOnce:
    init_subgraph_index: int = 0
    has_run: bool = False


def _check_subgraph(ctx: KernelContext, node: Node, index: int) -> None:
    if not 0 <= index < ctx.num_subgraphs:
        raise kernel_error(node, f"subgraph index {index} is out of range (the model has "
                                 f"{ctx.num_subgraphs} subgraphs)")


def _count(node, what: str, have: int, expected: int) -> None:
    if have != expected:
        raise kernel_error(node, f"{what}: {have} != {expected}")


def _is_true(tensor) -> bool:
    """data.b[0] of a BOOL tensor, as TFLM reads a condition."""
    return bool(np.asarray(tensor.data).reshape(-1)[0])


# ---- IF ------------------------------------------------------------------------------------
def if_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataIf = node.user_data
    data.then_subgraph_index = int(node.options["then_subgraph_index"])
    data.else_subgraph_index = int(node.options["else_subgraph_index"])
    if not node.inputs:
        raise kernel_error(node, "node->inputs->size > 0 was not true (input 0 is the condition)")
    cond = ctx.input(node, 0)
    if cond is None or cond.type_name != "BOOL":
        raise kernel_error(node, f"cond->type != kTfLiteBool: the condition is "
                                 f"{cond.type_name if cond is not None else 'absent'}")
    if math.prod(cond.shape) != 1:
        raise kernel_error(node, f"NumElements(cond) != 1: the condition has shape {list(cond.shape)}")
    _check_subgraph(ctx, node, data.then_subgraph_index)
    _check_subgraph(ctx, node, data.else_subgraph_index)
    _count(node, "inputs after the condition vs the then branch's inputs", len(node.inputs) - 1,
           len(ctx.subgraph_inputs(data.then_subgraph_index)))
    _count(node, "outputs vs the then branch's outputs", len(node.outputs),
           len(ctx.subgraph_outputs(data.then_subgraph_index)))


def if_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataIf = node.user_data
    branch = data.then_subgraph_index if _is_true(ctx.input(node, 0)) else data.else_subgraph_index
    inputs = [ctx.input(node, i) for i in range(1, len(node.inputs))]
    ctx.copy_tensors(list(zip(inputs, ctx.subgraph_inputs(branch))))
    ctx.invoke_subgraph(branch)
    results = ctx.subgraph_outputs(branch)
    if results:        # TFLM copies nothing back from a branch without outputs
        ctx.copy_tensors(list(zip(results, _outputs(ctx, node))))


def _outputs(ctx: KernelContext, node: Node) -> list:
    return [ctx.output(node, i) for i in range(len(node.outputs))]


# ---- WHILE ---------------------------------------------------------------------------------
def while_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataWhile = node.user_data
    data.cond_subgraph_index = int(node.options["cond_subgraph_index"])
    data.body_subgraph_index = int(node.options["body_subgraph_index"])
    _check_subgraph(ctx, node, data.cond_subgraph_index)
    _check_subgraph(ctx, node, data.body_subgraph_index)
    n = len(node.inputs)
    _count(node, "inputs vs the cond subgraph's inputs", n, len(ctx.subgraph_inputs(data.cond_subgraph_index)))
    _count(node, "inputs vs the body subgraph's inputs", n, len(ctx.subgraph_inputs(data.body_subgraph_index)))
    _count(node, "inputs vs outputs", n, len(node.outputs))
    _count(node, "outputs vs the body subgraph's outputs", len(node.outputs),
           len(ctx.subgraph_outputs(data.body_subgraph_index)))


def while_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataWhile = node.user_data
    cond, body = data.cond_subgraph_index, data.body_subgraph_index
    inputs = [ctx.input(node, i) for i in range(len(node.inputs))]
    outputs = _outputs(ctx, node)
    ctx.copy_tensors(list(zip(inputs, ctx.subgraph_inputs(cond))))
    ctx.copy_tensors(list(zip(inputs, outputs)))   # keeps the inputs safe from the subgraphs
    ctx.invoke_subgraph(cond)
    iterations = 0
    while _is_true(ctx.subgraph_outputs(cond)[0]):
        iterations += 1
        if iterations > MAX_WHILE_ITERATIONS:
            raise kernel_error(node, f"the loop ran {MAX_WHILE_ITERATIONS} iterations and its "
                                     f"condition (subgraph {cond}) still holds: stopped, as it "
                                     "looks like it never ends")
        ctx.copy_tensors(list(zip(outputs, ctx.subgraph_inputs(body))))
        ctx.invoke_subgraph(body)
        ctx.copy_tensors(list(zip(ctx.subgraph_outputs(body), outputs)))
        ctx.copy_tensors(list(zip(outputs, ctx.subgraph_inputs(cond))))
        ctx.invoke_subgraph(cond)


# ---- CALL_ONCE -----------------------------------------------------------------------------
def call_once_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataCallOnce = node.user_data
    data.init_subgraph_index = int(node.options["init_subgraph_index"])
    data.has_run = False
    _count(node, "NumInputs(node)", len(node.inputs), 0)
    _count(node, "NumOutputs(node)", len(node.outputs), 0)
    _check_subgraph(ctx, node, data.init_subgraph_index)


def call_once_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataCallOnce = node.user_data
    if data.has_run:
        return
    ctx.invoke_subgraph(data.init_subgraph_index)
    data.has_run = True


BUILTINS: list[tuple[str, Registration, int]] = [
    ("IF", Registration(invoke=if_invoke, prepare=if_prepare,
                        init=op_data_init("OpDataIf", OpDataIf), name="IF", temps="i0"), 1),
    ("WHILE", Registration(invoke=while_invoke, prepare=while_prepare,
                           init=op_data_init("OpDataWhile", OpDataWhile), name="WHILE", temps=""), 1),
    ("CALL_ONCE", Registration(invoke=call_once_invoke, prepare=call_once_prepare,
                               init=op_data_init("OpDataCallOnce", OpDataCallOnce),
                               name="CALL_ONCE", temps=""), 1),
]
