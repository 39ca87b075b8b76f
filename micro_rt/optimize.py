"""Beyond TFLM: reorder operators and place buffers to shrink the arena's head (issue 6).

TFLM runs operators in file order and places the buffers with its greedy planner. This module
searches both choices and writes the result back into a .tflite that stock TFLM honours:

1. **Operator order.** A tensor's lifetime follows TFLM's rules (`allocator.tensor_lifetimes`):
   graph inputs are live from step 0, operator k of the file runs at step k+1, a tensor lives
   from its producer's step to its last reader's, graph outputs to the end; scratch buffers
   live at their node's step only. The bytes live at a step depend only on *which* operators
   have run, so the order with the smallest peak of live bytes is found by dynamic
   programming over sets of executed operators (Liberis & Lane, "Neural networks on
   microcontrollers: saving memory at inference via operator reordering"), layer by layer
   (all sets of k executed operators). That is exact; when a layer holds more sets than the
   width limit, or the time limit is reached, only the best sets by (peak, live bytes) are
   kept: a beam search, reported as heuristic.
2. **Placement.** For the chosen order (and for the file order) buffers are placed by several
   first-fit orders (TFLM's size order, longest lifetime, area, first use, TFLite's
   'greedy by breadth'), with lowest-gap and best-gap rules, random restarts while time is
   left, and an exact branch and bound on small problems. TFLM's greedy on the same order is
   always a candidate.
3. **Handing it to TFLM.** Operators are rewritten in the new order and the tensor offsets go
   into `OfflineMemoryAllocation` metadata ([1, 1, tensors, offset per tensor or -1]). TFLM
   places scratch buffers online around the fixed offsets, so every candidate is scored by
   simulating exactly that (`GreedyPlanner` with the offsets fixed), and the written model is
   re-planned by micro_rt's allocator to confirm the promised head.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Optional, Sequence

import numpy as np

from .allocator import ArenaPlan, tensor_lifetimes
from .arena import align_up
from .errors import MicroRtError, UnsupportedOpError
from .inputs import random_inputs
from .interpreter import Interpreter
from .model import Model, read_model
from .planner import (BufferRequest, GreedyPlanner, exact_placement, first_fit,
                      heuristic_orders, lower_bound, _overlapping)
from .rewrite import ModelEdit, rewrite_model

OFFLINE_METADATA = "OfflineMemoryAllocation"
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


def dataflow(model: Model, scratch: list[list[int]]) -> Dataflow:
    sg = model.main
    n = len(sg.operators)
    sizes = planned_tensors(model)
    inputs, outputs = set(sg.inputs), set(sg.outputs)
    producer: dict[int, int] = {}
    writers: dict[int, list[int]] = {}
    readers: dict[int, set[int]] = {}
    touching: dict[int, list[int]] = {}
    for op in sg.operators:
        for t in op.outputs:
            if t >= 0:
                producer.setdefault(t, op.index)
                writers.setdefault(t, []).append(op.index)
                touching.setdefault(t, []).append(op.index)
        for t in op.inputs:
            if t >= 0:
                readers.setdefault(t, set()).add(op.index)
                touching.setdefault(t, []).append(op.index)
    preds = [0] * n
    for op in sg.operators:
        for t in op.inputs:
            p = producer.get(t)
            if t >= 0 and p is not None and p != op.index:
                preds[op.index] |= 1 << p
    # Keep relative order where state is shared beyond plain single-writer tensors.
    chains = [[op.index for op in sg.operators if op.is_custom or op.op_name in STATEFUL_OPS]]
    for t, ops in touching.items():
        if sg.tensors[t].is_variable or len(writers.get(t, ())) > 1:
            chains.append(sorted(set(ops)))
    for chain in chains:
        for a, b in zip(chain, chain[1:]):
            preds[b] |= 1 << a
    for o in range(n):      # transitive closure is not needed, but cycles would be fatal
        if preds[o] >> o & 1:
            raise MicroRtError(f"operator {o} depends on itself: cannot reorder this graph")

    readers_mask = {}
    for t in sizes:
        mask = 0
        for r in readers.get(t, ()):
            mask |= 1 << r
        if t in inputs and t in producer:       # an input also written: live to its writer
            mask |= 1 << producer[t]
        readers_mask[t] = mask
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


# ---- placement for one order -----------------------------------------------------------
def _reordered_view(model: Model, order: Sequence[int]) -> SimpleNamespace:
    sg = model.main
    return SimpleNamespace(tensors=sg.tensors, inputs=sg.inputs, outputs=sg.outputs,
                           operators=[sg.operators[i] for i in order])


def order_buffers(model: Model, sizes: dict[int, int], scratch: list[list[int]],
                  order: Sequence[int]) -> tuple[list[BufferRequest], list[int]]:
    """The buffers TFLM plans when the operators run in `order`, in TFLM's AddBuffer order:
    planned tensors by index, then scratch buffers by node. Returns (buffers, tensor of each
    tensor buffer)."""
    first, last, _ = tensor_lifetimes(_reordered_view(model, order))
    tensors = sorted(sizes)
    buffers = [BufferRequest(sizes[t], first[t], last[t]) for t in tensors]
    for position, o in enumerate(order):
        for s in scratch[o]:
            buffers.append(BufferRequest(s, position + 1, position + 1))
    return buffers, tensors


def simulate_tflm(buffers: list[BufferRequest], ntensors: int,
                  tensor_offsets: Optional[Sequence[int]]) -> tuple[list[int], int]:
    """What TFLM's greedy planner does with these tensor offsets fixed (None: no offline plan)
    and every scratch buffer placed online around them."""
    g = GreedyPlanner()
    for k, b in enumerate(buffers):
        fixed = None
        if tensor_offsets is not None and k < ntensors and tensor_offsets[k] >= 0:
            fixed = int(tensor_offsets[k])
        g.add_buffer(b.size, b.first_use, b.last_use, fixed)
    return g.offsets(), g.total()


@dataclass
class Placement:
    head: int                              # TFLM's head with this plan (simulated)
    method: str
    tensor_offsets: Optional[list[int]]    # per tensor buffer; None: leave it all to TFLM
    bound: int                             # lower bound for this order


def best_placement(buffers: list[BufferRequest], ntensors: int, deadline: float,
                   seed: int = 0, exact_limit: int = 14) -> Placement:
    bound = lower_bound(buffers)
    _, greedy_head = simulate_tflm(buffers, ntensors, None)
    best = Placement(greedy_head, "tflm-greedy", None, bound)
    overlapping = _overlapping(buffers)
    tensor_only = buffers[:ntensors]
    overlapping_t = [[j for j in js if j < ntensors] for js in overlapping[:ntensors]]

    def consider(offsets: list[int], method: str) -> None:
        nonlocal best
        fixed = list(offsets[:ntensors])
        _, head = simulate_tflm(buffers, ntensors, fixed)
        if head < best.head or (head == best.head and best.tensor_offsets is None):
            best = Placement(head, method, fixed, bound)

    greedy_offsets, _ = simulate_tflm(buffers, ntensors, None)
    consider(greedy_offsets, "tflm-greedy, fixed")
    for name, order in heuristic_orders(buffers).items():
        for best_fit in (False, True):
            if best.head <= bound:
                return best
            rule = "best-fit" if best_fit else "first-fit"
            consider(first_fit(buffers, order, best_fit, overlapping), f"{rule} by {name}")
            torder = [i for i in order if i < ntensors]
            consider(first_fit(tensor_only, torder, best_fit, overlapping_t),
                     f"{rule} by {name}, tensors only")
    if best.head > bound and len(buffers) <= exact_limit and time.monotonic() < deadline:
        offsets, _ = exact_placement(buffers, best.head)
        if offsets is not None:
            consider(offsets, "exact branch and bound")
    rng = random.Random(seed)
    tries = 0
    while best.head > bound and time.monotonic() < deadline and tries < 2000:
        tries += 1
        keys = {i: b.size * rng.uniform(0.5, 1.5) for i, b in enumerate(buffers)}
        order = sorted(range(len(buffers)), key=lambda i: -keys[i])
        consider(first_fit(buffers, order, tries % 2 == 1, overlapping), "first-fit, random restarts")
    return best


# ---- the whole optimisation -----------------------------------------------------------
@dataclass
class OptimizeResult:
    order: list[int]                       # position -> original operator index
    tensor_offsets: list[int]              # per tensor of the model: offset or -1
    predicted_head: int                    # micro_rt's allocator on the written model
    original_head: int                     # micro_rt's allocator on the input model
    original_bound: int                    # lower bound for the file order
    chosen_bound: int                      # lower bound for the chosen order
    order_bound: int                       # no order can go below this
    order_peak_exact: bool                 # the DP finished without pruning
    placement: str
    data: bytes
    original_plan: ArenaPlan
    optimized_plan: ArenaPlan
    unresolved_ops: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def reordered(self) -> bool:
        return self.order != sorted(self.order)

    @property
    def saved_bytes(self) -> int:
        return self.original_head - self.predicted_head

    @property
    def summary(self) -> str:
        """What was done, in one line: reordered or placement only, and the bytes saved."""
        if self.placement == "unchanged":
            return "model left unchanged (no offline plan): saves 0 B"
        done = ("operators reordered, offline plan" if self.reordered
                else "file order kept, placement only (offline plan)")
        share = self.saved_bytes / self.original_head if self.original_head else 0.0
        return f"{done}: saves {self.saved_bytes} B of head ({share:.1%})"

    @property
    def optimal(self) -> bool:
        """The head equals the lower bound of the best order: nothing can do better under
        TFLM's lifetime rules."""
        return self.predicted_head <= self.order_bound or (
            self.order_peak_exact and self.predicted_head <= self.chosen_bound)

    def as_dict(self) -> dict:
        return {"order": self.order, "reordered": self.reordered, "summary": self.summary,
                "original_head": self.original_head, "predicted_head": self.predicted_head,
                "saved_bytes": self.saved_bytes,
                "original_lower_bound": self.original_bound,
                "chosen_lower_bound": self.chosen_bound, "order_lower_bound": self.order_bound,
                "order_search_exact": self.order_peak_exact, "optimal": self.optimal,
                "placement": self.placement, "tensor_offsets": self.tensor_offsets,
                "original_tail": self.original_plan.tail_bytes,
                "optimized_tail": self.optimized_plan.tail_bytes,
                "unresolved_ops": self.unresolved_ops, "notes": self.notes,
                "seconds": round(self.seconds, 3)}


def _scratch_by_op(plan: ArenaPlan, n_ops: int) -> list[list[int]]:
    scratch: list[list[int]] = [[] for _ in range(n_ops)]
    for b in plan.buffers:
        if b.kind == "scratch":
            scratch[b.tensor].append(b.size)
    return scratch


def write_model(data: bytes, order: Sequence[int], tensor_offsets: Optional[Sequence[int]]) -> bytes:
    """The model with its operators in `order` and (unless None) an offline plan; any existing
    OfflineMemoryAllocation metadata is replaced (or dropped when tensor_offsets is None).
    Every other field is kept as it is in `data` (micro_rt.rewrite)."""
    plan = None
    if tensor_offsets is not None:
        values = [1, 1, len(tensor_offsets)] + [int(v) for v in tensor_offsets]
        plan = np.asarray(values, "<i4").tobytes()
    return rewrite_model(data, ModelEdit(operator_order=order, metadata={OFFLINE_METADATA: plan}))


def optimize(data: bytes, *, target: str = "host64", kernels: str = "reference",
             time_limit: float = 10.0, seed: int = 0, oracle_verify: bool = False) -> OptimizeResult:
    """Find an operator order and an offline plan with the smallest head; return the model.

    `oracle_verify`: also measure candidates with the tflite-micro oracle and keep the best it
    reports (for models whose kernels micro_rt lacks: their scratch requests are unknown)."""
    start = time.monotonic()
    deadline = start + time_limit
    model = read_model(data)
    if len(model.subgraphs) != 1:
        raise MicroRtError(f"optimize handles single-subgraph models; this one has "
                           f"{len(model.subgraphs)} subgraphs")
    original = Interpreter(model, None, target=target, kernels=kernels, plan_only=True)
    n = len(model.main.operators)
    scratch = _scratch_by_op(original.plan, n)
    flow = dataflow(model, scratch)
    found = best_order(flow, time_limit=time_limit * 0.4)
    identity = list(range(n))
    orders = [identity] + ([found.order] if found.order != identity else [])

    candidates = []     # (head, changed, order, placement, buffers, tensors)
    for k, order in enumerate(orders):
        buffers, tensors = order_buffers(model, flow.sizes, scratch, order)
        share = (deadline - time.monotonic()) / (len(orders) - k)
        placement = best_placement(buffers, len(tensors), time.monotonic() + max(share, 0.05), seed)
        candidates.append((placement.head, order != identity, order, placement, tensors))
    original_bound = candidates[0][3].bound
    # Fewest bytes first; on a tie keep the file order (the smaller change).
    candidates.sort(key=lambda c: (c[0], c[1]))

    def materialise(cand) -> tuple[bytes, list[int]]:
        _, _, order, placement, tensors = cand
        offsets = [-1] * len(model.main.tensors)
        if placement.tensor_offsets is not None:
            for t, off in zip(tensors, placement.tensor_offsets):
                offsets[t] = off
        return write_model(data, order, offsets), offsets

    notes = []
    chosen = candidates[0]
    out, offsets = materialise(chosen)
    if oracle_verify:
        from .tools import oracle
        arena = max(original.plan.required_bytes * 2, 1 << 16) + (1 << 16)
        base = oracle.allocations(data, arena)["head"]
        measured = []
        for cand in candidates:
            cand_out, cand_offsets = materialise(cand)
            measured.append((oracle.allocations(cand_out, arena)["head"], cand[1], cand_out,
                             cand_offsets, cand))
        measured.sort(key=lambda m: (m[0], m[1]))
        if measured[0][0] > base:
            notes.append(f"the oracle reports {measured[0][0]} B for the best candidate, above the "
                         f"original {base} B: keeping the file order without an offline plan")
            chosen = (candidates[0][0], False, identity, Placement(0, "unchanged", None, 0),
                      candidates[0][4])
            out, offsets = write_model(data, identity, None), [-1] * len(model.main.tensors)
        else:
            _, _, out, offsets, chosen = measured[0]
        notes.append(f"oracle head: original {base} B, optimized {min(measured[0][0], base)} B")
    optimized = Interpreter(read_model(out), None, target=target, kernels=kernels, plan_only=True)
    if optimized.plan.head_bytes != chosen[0] and chosen[3].method != "unchanged":
        notes.append(f"micro_rt's allocator plans {optimized.plan.head_bytes} B for the written "
                     f"model, the search predicted {chosen[0]} B")
    if original.unresolved:
        notes.append("micro_rt has no kernel for some operators: their scratch buffers are "
                     "unknown, so the predicted head may differ from TFLM's")
    order = chosen[2]
    chosen_bound = lower_bound(order_buffers(model, flow.sizes, scratch, order)[0])
    return OptimizeResult(
        order=list(order), tensor_offsets=offsets, predicted_head=optimized.plan.head_bytes,
        original_head=original.plan.head_bytes, original_bound=original_bound,
        chosen_bound=chosen_bound, order_bound=flow.order_lower_bound() if not found.exact
        else found.peak, order_peak_exact=found.exact, placement=chosen[3].method, data=out,
        original_plan=original.plan, optimized_plan=optimized.plan,
        unresolved_ops=list(original.unresolved), notes=notes,
        seconds=time.monotonic() - start)


# ---- checking that nothing but memory changed ------------------------------------------
def check_outputs(original: bytes, optimized: bytes, seeds: Sequence[int] = range(3),
                  use_oracle: bool = True, use_micro_rt: bool = True) -> dict:
    """Run both models on the same seeded inputs; every output must be equal bit for bit.
    Checked with micro_rt (when it has all kernels) and with the tflite-micro oracle (when
    installed). Returns {"micro_rt": bool|None, "oracle": bool|None, "seeds": n}."""
    from .tools import oracle
    result: dict = {"seeds": len(list(seeds)), "micro_rt": None, "oracle": None}
    probe = Interpreter.from_bytes(original, plan_only=True)
    input_sets = [random_inputs(probe, s) for s in seeds]
    runnable = use_micro_rt and not probe.unresolved
    if runnable:
        try:
            Interpreter.from_bytes(original)
        except UnsupportedOpError:      # planned with plan-only kernels, cannot be invoked
            runnable = False
    if runnable:
        runs = []
        for data in (original, optimized):
            it = Interpreter.from_bytes(data)
            outs = []
            for inputs in input_sets:
                for i, x in enumerate(inputs):
                    it.set_input(x, i)
                it.invoke()
                outs.append([it.get_output(k) for k in range(it.num_outputs)])
            runs.append(outs)
        result["micro_rt"] = _same(*runs)
    if use_oracle and oracle.available():
        arena = max(probe.plan.required_bytes * 4, 1 << 20)
        runs = [[oracle.run(data, inputs, probe.num_outputs, arena) for inputs in input_sets]
                for data in (original, optimized)]
        result["oracle"] = _same(*runs)
    return result


def _same(a: list, b: list) -> bool:
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
               for outs_a, outs_b in zip(a, b) for x, y in zip(outs_a, outs_b))
