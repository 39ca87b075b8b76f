"""Operator reordering: the topological order with the smallest peak of live bytes.

A tensor's lifetime follows TFLM's rules (`allocator.tensor_lifetimes`): graph inputs are live
from step 0, operator k of the file runs at step k+1, a tensor lives from its producer's step
to its last reader's, graph outputs to the end; scratch buffers live at their node's step
only. The bytes live at a step depend only on *which* operators have run, so the order with
the smallest peak is found by dynamic programming over sets of executed operators (Liberis &
Lane, "Neural networks on microcontrollers: saving memory at inference via operator
reordering"), layer by layer (all sets of k executed operators). That is exact; when a layer
holds more sets than the width limit, or the time limit is reached, only the best sets by
(peak, live bytes) are kept: a beam search, reported as heuristic.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..allocator import tensor_lifetimes
from ..arena import align_up
from ..errors import MicroRtError
from ..model import Model, Subgraph

# Operators whose relative order is kept: they may share state outside their tensors.
STATEFUL_OPS = {"ASSIGN_VARIABLE", "READ_VARIABLE", "VAR_HANDLE", "CALL_ONCE", "IF", "WHILE",
                "CALL", "RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL", "MULTINOMIAL"}


# ---- the dataflow graph under TFLM's lifetime rules ----------------------------------------
@dataclass
class Dataflow:
    n_ops: int
    sizes: dict[int, int]                  # planned tensor -> bytes rounded to 16
    scratch: list[list[int]]               # per operator: its scratch sizes, in request order
    preds: list[int]                       # per operator: bitmask of operators that must precede
    step0: int                             # bytes live at step 0 (graph inputs)
    live0: int                             # bytes still live after step 0
    create: list[int]                      # per operator: bytes of the planned tensors it makes
    persist: list[int]                     # ... of those, the bytes that stay live after it
    frees: list[list[int]]                 # per operator: planned inputs it may be last to read
    readers_mask: dict[int, int]           # planned tensor -> bitmask of its readers
    final_extra: int                       # outputs nobody produces: live at the last step only
    op_io: list[int]                       # per operator: bytes live at its step in any order

    def order_lower_bound(self) -> int:
        """No order can have a smaller peak of live bytes."""
        return max([self.step0] + [v + sum(s) for v, s in zip(self.op_io, self.scratch)])


def planned_tensors(model: Model) -> dict[int, int]:
    """The tensors TFLM's planner places (order-independent): non-constant, non-variable,
    non-empty, touched by the graph. Value: size rounded to the arena alignment."""
    sg = model.main
    first, _, _ = tensor_lifetimes(sg)
    return {t.index: align_up(t.nbytes) for t in sg.tensors
            if not (t.is_constant or t.is_variable or t.nbytes == 0) and first[t.index] != -1}


@dataclass
class _TensorUsers:
    """Who touches each tensor: its first producer, every writer, the readers, and all
    operators touching it in file order."""
    producer: dict[int, int]
    writers: dict[int, list[int]]
    readers: dict[int, set[int]]
    touching: dict[int, list[int]]


def _tensor_users(sg: Subgraph) -> _TensorUsers:
    users = _TensorUsers({}, {}, {}, {})
    for op in sg.operators:
        for t in op.outputs:
            if t >= 0:
                users.producer.setdefault(t, op.index)
                users.writers.setdefault(t, []).append(op.index)
                users.touching.setdefault(t, []).append(op.index)
        for t in op.inputs:
            if t >= 0:
                users.readers.setdefault(t, set()).add(op.index)
                users.touching.setdefault(t, []).append(op.index)
    return users


def _predecessors(sg: Subgraph, users: _TensorUsers) -> list[int]:
    """Per operator, the bitmask of operators that must run before it: the producers of its
    inputs, and the previous operator of every chain that shares state beyond plain
    single-writer tensors (stateful and custom operators, variables, multi-writer tensors)."""
    preds = [0] * len(sg.operators)
    for op in sg.operators:
        for t in op.inputs:
            p = users.producer.get(t)
            if t >= 0 and p is not None and p != op.index:
                preds[op.index] |= 1 << p
    chains = [[op.index for op in sg.operators if op.is_custom or op.op_name in STATEFUL_OPS]]
    for t, ops in users.touching.items():
        if sg.tensors[t].is_variable or len(users.writers.get(t, ())) > 1:
            chains.append(sorted(set(ops)))
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            preds[b] |= 1 << a
    for o in range(len(preds)):      # transitive closure is not needed, but cycles would be fatal
        if preds[o] >> o & 1:
            raise MicroRtError(f"operator {o} depends on itself: cannot reorder this graph")
    return preds


def _readers_masks(sizes: dict[int, int], users: _TensorUsers, inputs: set[int]) -> dict[int, int]:
    """Per planned tensor, the bitmask of the operators that must have run before it dies."""
    readers_mask = {}
    for t in sizes:
        mask = 0
        for r in users.readers.get(t, ()):
            mask |= 1 << r
        if t in inputs and t in users.producer:     # an input also written: live to its writer
            mask |= 1 << users.producer[t]
        readers_mask[t] = mask
    return readers_mask


def dataflow(model: Model, scratch: list[list[int]]) -> Dataflow:
    sg = model.main
    n = len(sg.operators)
    sizes = planned_tensors(model)
    inputs, outputs = set(sg.inputs), set(sg.outputs)
    users = _tensor_users(sg)
    preds = _predecessors(sg, users)
    readers_mask = _readers_masks(sizes, users, inputs)
    producer = users.producer
    step0 = sum(s for t, s in sizes.items() if t in inputs)
    live0 = sum(s for t, s in sizes.items() if t in inputs and (readers_mask[t] or t in outputs))
    create, persist = [0] * n, [0] * n
    frees: list[list[int]] = [[] for _ in range(n)]
    op_io = [0] * n
    final_extra = sum(s for t, s in sizes.items()
                      if t in outputs and t not in inputs and t not in producer)
    for t, s in sizes.items():
        if t in inputs:
            continue
        p = producer.get(t)
        if p is None:
            continue
        create[p] += s
        if readers_mask[t] or t in outputs:
            persist[p] += s
    for op in sg.operators:
        seen = set()
        for t in list(op.inputs) + list(op.outputs):
            if t in sizes and t not in seen:
                seen.add(t)
                op_io[op.index] += sizes[t]
        for t in dict.fromkeys(op.inputs):
            if t in sizes and t not in outputs and (t in inputs or t in producer):
                frees[op.index].append(t)
    return Dataflow(n, sizes, scratch, preds, step0, live0, create, persist, frees,
                    readers_mask, final_extra, op_io)


# ---- the order search ---------------------------------------------------------------------
@dataclass
class OrderResult:
    order: list[int]
    peak: int
    exact: bool
    states: int
    seconds: float


def best_order(flow: Dataflow, time_limit: float = 10.0, width: int = 4000) -> OrderResult:
    """The topological order with the smallest peak of live bytes: dynamic programming over
    sets of executed operators, layer k holding every set of k operators that can run first.
    Exact unless a layer exceeds `width` sets or `time_limit` runs out; then the best sets by
    (peak, live bytes) are kept (beam search) and `exact` is False."""
    start = time.monotonic()
    n = flow.n_ops
    if n == 0:
        return OrderResult([], flow.step0, True, 1, 0.0)
    sizes, rmask = flow.sizes, flow.readers_mask
    scratch = [sum(s) for s in flow.scratch]
    layer: dict[int, tuple[int, int]] = {0: (flow.step0, flow.live0)}
    parent: dict[int, tuple[int, int]] = {}
    exact, states = True, 1
    for k in range(n):
        last_layer = k == n - 1
        nxt: dict[int, tuple[int, int]] = {}
        for mask, (peak, live) in layer.items():
            for o in range(n):
                if mask >> o & 1 or flow.preds[o] & ~mask:
                    continue
                new = mask | 1 << o
                m = live + flow.create[o] + scratch[o] + (flow.final_extra if last_layer else 0)
                p = peak if peak >= m else m
                cur = nxt.get(new)
                if cur is not None and cur[0] <= p:
                    continue
                freed = sum(sizes[t] for t in flow.frees[o] if not rmask[t] & ~new)
                nxt[new] = (p, live + flow.persist[o] - freed)
                parent[new] = (mask, o)
        if not nxt:
            raise MicroRtError("the operator graph has a cycle: cannot order it")
        states += len(nxt)
        limit = width if time.monotonic() - start < time_limit else 1
        if len(nxt) > limit:
            exact = False
            keep = sorted(nxt.items(), key=lambda kv: kv[1])[:limit]
            nxt = dict(keep)
        layer = nxt
    (mask, (peak, _)), = layer.items()
    order = []
    while mask:
        mask, o = parent[mask]
        order.append(o)
    order.reverse()
    return OrderResult(order, peak, exact, states, time.monotonic() - start)
