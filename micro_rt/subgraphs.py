"""A model's subgraphs as TFLM's MicroInterpreterGraph sees them.

Control-flow operators run other subgraphs: IF its then/else branch, WHILE its cond and body
subgraphs, CALL_ONCE its initializer. This module says which operator calls which subgraph
(`called_subgraphs`), refuses the graphs TFLM would recurse on forever or copy tensors between
mismatched lists for (`check_subgraph_calls`, run when a model is read), and computes the
lifetimes TFLM's AllocationInfoBuilder gives every subgraph's tensors and scratch buffers
when it plans them all in one arena (`model_lifetimes`).

TFLM's rule, in our words: one allocation-scope counter runs over the whole model, starting at
0 for subgraph 0's inputs. Each operator opens a new scope; its outputs are created there; a
control-flow operator then walks each subgraph it calls (a new scope for each, where that
subgraph's inputs are created, then one scope per operator of it, recursively); only after
that are the operator's inputs and outputs marked used, at the scope the walk reached, so
they stay live across everything the called subgraphs hold. A subgraph's outputs are used at
its last scope. A subgraph called twice keeps its first creation scopes and its last uses;
one never called keeps -1..-1. A node's scratch buffers live from the scope its operator
opened to the scope after its called subgraphs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .errors import ModelError
from .model_records import Model, OperatorInfo, Subgraph

# The options naming the subgraphs each control-flow operator runs, in TFLM's planning order.
CONTROL_FLOW_OPTIONS = {"IF": ("then_subgraph_index", "else_subgraph_index"),
                        "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
                        "CALL_ONCE": ("init_subgraph_index",)}
# TFLM's planner walks a subgraph once per call site: a forged model nesting calls could make
# that walk exponential. Real models visit a few hundred operators.
MAX_OPERATOR_VISITS = 1 << 20


def called_subgraphs(op: OperatorInfo) -> tuple[int, ...]:
    """The subgraphs `op` runs (IF: then, else; WHILE: cond, body; CALL_ONCE: init); ()."""
    if op.is_custom:
        return ()
    return tuple(int(op.options.get(name, 0)) for name in CONTROL_FLOW_OPTIONS.get(op.op_name, ()))


def _where(sg: Subgraph, op: OperatorInfo) -> str:
    return f"subgraph {sg.index} operator {op.index} ({op.op_name})"


def _check_counts(model: Model, sg: Subgraph, op: OperatorInfo) -> None:
    """The tensor lists a control-flow operator copies between must have the same length."""
    subgraphs = model.subgraphs
    where = _where(sg, op)

    def need(what: str, have: int, callee: int, side: str, count: int) -> None:
        if have != count:
            raise ModelError(f"{where}: {what} is {have}, but subgraph {callee} "
                             f"('{subgraphs[callee].name}') has {count} {side}")

    if op.op_name == "IF":
        if not op.inputs:
            raise ModelError(f"{where} has no inputs: its input 0 is the condition")
        for callee in called_subgraphs(op):
            need("its input count minus the condition", len(op.inputs) - 1, callee, "inputs",
                 len(subgraphs[callee].inputs))
            if subgraphs[callee].outputs:   # TFLM copies nothing back from a branch without outputs
                need("its output count", len(op.outputs), callee, "outputs",
                     len(subgraphs[callee].outputs))
    elif op.op_name == "WHILE":
        cond, body = called_subgraphs(op)
        need("its input count", len(op.inputs), cond, "inputs", len(subgraphs[cond].inputs))
        need("its input count", len(op.inputs), body, "inputs", len(subgraphs[body].inputs))
        need("its output count", len(op.outputs), body, "outputs", len(subgraphs[body].outputs))
        if len(op.inputs) != len(op.outputs):
            raise ModelError(f"{where} has {len(op.inputs)} inputs and {len(op.outputs)} outputs: "
                             "a loop's inputs and outputs must pair up")
        outputs = subgraphs[cond].outputs
        if not outputs or subgraphs[cond].tensors[outputs[0]].type_name != "BOOL":
            raise ModelError(f"{where}: cond subgraph {cond} ('{subgraphs[cond].name}') must have a "
                             "BOOL output 0 (the loop condition)")
    elif op.op_name == "CALL_ONCE":
        if op.inputs or op.outputs:
            raise ModelError(f"{where} has {len(op.inputs)} inputs and {len(op.outputs)} outputs; "
                             "CALL_ONCE takes none")


def check_subgraph_calls(model: Model) -> None:
    """Refuse control-flow operators that name a missing subgraph or their own, cycles of calls
    (TFLM's planner and invoke would recurse forever), tensor lists whose lengths differ from
    the subgraph they are copied to or from, and call graphs too large to walk."""
    count = len(model.subgraphs)
    calls: dict[int, list[tuple[int, OperatorInfo]]] = {sg.index: [] for sg in model.subgraphs}
    for sg in model.subgraphs:
        for op in sg.operators:
            for name, callee in zip(CONTROL_FLOW_OPTIONS.get(op.op_name, ()), called_subgraphs(op)):
                if not 0 <= callee < count:
                    raise ModelError(f"{_where(sg, op)}: {name} {callee} is out of range (the model "
                                     f"has {count} subgraphs)")
                if callee == sg.index:
                    raise ModelError(f"{_where(sg, op)}: {name} {callee} is its own subgraph: it "
                                     "would run itself forever")
                calls[sg.index].append((callee, op))
            if op.op_name in CONTROL_FLOW_OPTIONS and not op.is_custom:
                _check_counts(model, sg, op)
    _refuse_cycles(model, calls)
    _refuse_exponential_walks(model, calls)


def _refuse_cycles(model: Model, calls: dict) -> None:
    state = [0] * len(model.subgraphs)      # 0 unvisited, 1 on the current path, 2 done
    for root in range(len(model.subgraphs)):
        if state[root]:
            continue
        path: list[tuple[int, OperatorInfo, int]] = []     # (caller, operator, callee)
        stack = [(root, iter(calls[root]))]
        state[root] = 1
        while stack:
            sg, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                state[sg] = 2
                stack.pop()
                if path:
                    path.pop()
                continue
            callee, op = step
            if state[callee] == 1:
                loop = [f"subgraph {caller} operator {o.index} ({o.op_name}) runs subgraph {c}"
                        for caller, o, c in _cycle(path + [(sg, op, callee)], callee)]
                raise ModelError("the control-flow operators call each other in a cycle (TFLM "
                                 "would recurse forever): " + "; ".join(loop))
            if state[callee] == 0:
                state[callee] = 1
                path.append((sg, op, callee))
                stack.append((callee, iter(calls[callee])))


def _cycle(path: list, start: int) -> list:
    for k, (caller, _, _) in enumerate(path):
        if caller == start:
            return path[k:]
    return path


def _refuse_exponential_walks(model: Model, calls: dict) -> None:
    """How many operators TFLM's planner visits walking from subgraph 0 (each call site walks
    its subgraph again), computed without walking (the call graph has no cycle here)."""
    visits = [0] * len(model.subgraphs)
    visits[0] = 1
    for sg in _topological(model, calls):
        for callee, _ in calls[sg]:
            visits[callee] = min(visits[callee] + visits[sg], MAX_OPERATOR_VISITS + 1)
    total = sum(v * len(model.subgraphs[i].operators) for i, v in enumerate(visits))
    if total > MAX_OPERATOR_VISITS:
        raise ModelError(f"the control-flow operators nest subgraph calls so that planning the "
                         f"model visits over {MAX_OPERATOR_VISITS} operators: a forged model?")


def _topological(model: Model, calls: dict) -> list[int]:
    """Subgraphs with every caller before its callees (the call graph is acyclic)."""
    order, seen = [], [False] * len(model.subgraphs)
    for root in range(len(model.subgraphs)):
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, iter(calls[root]))]
        while stack:
            sg, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                order.append(sg)
                stack.pop()
            elif not seen[step[0]]:
                seen[step[0]] = True
                stack.append((step[0], iter(calls[step[0]])))
    return order[::-1]


@dataclass
class Lifetimes:
    """TFLM's lifetimes for one plan: per subgraph, each tensor's first and last scope (-1 for
    never), each operator's scopes (from the one it opened to the one after its called
    subgraphs; -1..-1 for an operator never walked), and the number of scopes used."""
    first: list[list[int]]
    last: list[list[int]]
    node_scopes: list[list[tuple[int, int]]]
    steps: int


def model_lifetimes(model: Model) -> Lifetimes:
    """The lifetimes TFLM's AllocationInfoBuilder marks walking the model from subgraph 0."""
    return walk_lifetimes(model.subgraphs)


def walk_lifetimes(subgraphs: Sequence, follow_calls: bool = True) -> Lifetimes:
    """TFLM's walk from subgraphs[0] (anything with tensors, inputs, outputs and operators in
    run order); `follow_calls=False` walks subgraphs[0] alone."""
    first = [[-1] * len(sg.tensors) for sg in subgraphs]
    last = [[-1] * len(sg.tensors) for sg in subgraphs]
    scopes = [[(-1, -1)] * len(sg.operators) for sg in subgraphs]
    scope = 0

    def walk(index: int) -> None:
        nonlocal scope
        sg, created, used = subgraphs[index], first[index], last[index]
        for t in sg.inputs:
            if created[t] == -1:
                created[t] = scope
            used[t] = scope
        for position, op in enumerate(sg.operators):
            scope += 1
            for t in op.outputs:
                if created[t] == -1:
                    created[t] = scope
            start = scope
            if follow_calls:
                for callee in called_subgraphs(op):
                    scope += 1
                    walk(callee)
            for t in op.inputs:
                if t >= 0:
                    used[t] = scope
            for t in op.outputs:
                used[t] = scope
            opened = scopes[index][position][0]
            scopes[index][position] = (start if opened == -1 else opened, scope)
        for t in sg.outputs:
            if created[t] == -1:
                created[t] = scope
            used[t] = scope

    walk(0)
    return Lifetimes(first, last, scopes, scope + 1)
