"""The whole optimisation: order, placement, the written model, and the check that only
memory changed.

For the file order and the best order found (`ordering.best_order`), the buffers are placed
(`placement.best_placement`); the candidate with the smallest simulated head is written
(`writing.write_model`) and re-planned by micro_rt's allocator to confirm the promised head.
With `oracle_verify` every candidate is also measured by the tflite-micro oracle.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..allocator import ArenaPlan
from ..errors import MicroRtError, UnsupportedOpError
from ..inputs import random_inputs
from ..interpreter import Interpreter
from ..model import Model, read_model
from ..planner import lower_bound
from .. import oracle
from .ordering import Dataflow, OrderResult, best_order, dataflow
from .placement import Placement, best_placement, order_buffers
from .writing import write_model


# ---- the result -----------------------------------------------------------------------
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


# ---- the search ---------------------------------------------------------------------------
@dataclass
class _Candidate:
    """One operator order with its best placement."""
    head: int                              # simulated TFLM head (or the oracle's)
    changed: bool                          # the order differs from the file's
    order: list[int]
    placement: Placement
    tensors: list[int]                     # tensor of each tensor buffer


def optimize(data: bytes, *, target: str = "host64", kernels: Optional[str] = None,
             time_limit: float = 10.0, seed: int = 0, oracle_verify: bool = False) -> OptimizeResult:
    """Find an operator order and an offline plan with the smallest head; return the model.
    The head is planned for `target` with `kernels` (None: the target's own flavour,
    flavours.default_kernels: reference on host64, cmsis-nn on a Cortex-M core).

    `oracle_verify`: also measure candidates with the tflite-micro oracle and keep the best it
    reports (for models whose kernels micro_rt lacks: their scratch requests are unknown)."""
    start = time.monotonic()
    deadline = start + time_limit
    model = read_model(data)
    if len(model.subgraphs) != 1:
        raise MicroRtError(f"optimize handles single-subgraph models; this one has "
                           f"{len(model.subgraphs)} subgraphs")
    original = Interpreter(model, None, target=target, kernels=kernels, plan_only=True)
    scratch = _scratch_by_op(original.plan, len(model.main.operators))
    flow = dataflow(model, scratch)
    found = best_order(flow, time_limit=time_limit * 0.4)
    candidates = _candidates(model, flow, found, deadline, seed)
    original_bound = candidates[0].placement.bound
    # Fewest bytes first; on a tie keep the file order (the smaller change).
    candidates.sort(key=lambda c: (c.head, c.changed))
    notes: list[str] = []
    if oracle_verify:
        chosen, out, offsets = _choose_by_oracle(data, model, candidates, original.plan, notes)
    else:
        chosen = candidates[0]
        out, offsets = _materialise(data, model, chosen)
    optimized = Interpreter(read_model(out), None, target=target, kernels=kernels, plan_only=True)
    if optimized.plan.head_bytes != chosen.head and chosen.placement.method != "unchanged":
        notes.append(f"micro_rt's allocator plans {optimized.plan.head_bytes} B for the written "
                     f"model, the search predicted {chosen.head} B")
    if original.unresolved:
        notes.append("micro_rt has no kernel for some operators: their scratch buffers are "
                     "unknown, so the predicted head may differ from TFLM's")
    chosen_bound = lower_bound(order_buffers(model, flow.sizes, scratch, chosen.order)[0])
    return OptimizeResult(
        order=list(chosen.order), tensor_offsets=offsets, predicted_head=optimized.plan.head_bytes,
        original_head=original.plan.head_bytes, original_bound=original_bound,
        chosen_bound=chosen_bound, order_bound=flow.order_lower_bound() if not found.exact
        else found.peak, order_peak_exact=found.exact, placement=chosen.placement.method,
        data=out, original_plan=original.plan, optimized_plan=optimized.plan,
        unresolved_ops=list(original.unresolved), notes=notes,
        seconds=time.monotonic() - start)


def _candidates(model: Model, flow: Dataflow, found: OrderResult, deadline: float,
                seed: int) -> list[_Candidate]:
    """The file order and (when it differs) the best order found, each with its best
    placement; the time left is shared between them."""
    identity = list(range(flow.n_ops))
    orders = [identity] + ([found.order] if found.order != identity else [])
    candidates = []
    for k, order in enumerate(orders):
        buffers, tensors = order_buffers(model, flow.sizes, flow.scratch, order)
        share = (deadline - time.monotonic()) / (len(orders) - k)
        placement = best_placement(buffers, len(tensors), time.monotonic() + max(share, 0.05), seed)
        candidates.append(_Candidate(placement.head, order != identity, order, placement, tensors))
    return candidates


def _materialise(data: bytes, model: Model, candidate: _Candidate) -> tuple[bytes, list[int]]:
    """The written model for a candidate, and its offline offset per tensor (-1: none)."""
    offsets = [-1] * len(model.main.tensors)
    if candidate.placement.tensor_offsets is not None:
        for t, off in zip(candidate.tensors, candidate.placement.tensor_offsets):
            offsets[t] = off
    return write_model(data, candidate.order, offsets), offsets


def _choose_by_oracle(data: bytes, model: Model, candidates: list[_Candidate], plan: ArenaPlan,
                      notes: list[str]) -> tuple[_Candidate, bytes, list[int]]:
    """The candidate the tflite-micro oracle gives the smallest head, written; the model
    unchanged (file order, no offline plan) when even that is above the original's."""
    arena = max(plan.required_bytes * 2, 1 << 16) + (1 << 16)
    base = oracle.allocations(data, arena)["head"]
    measured = []
    for cand in candidates:
        cand_out, cand_offsets = _materialise(data, model, cand)
        measured.append((oracle.allocations(cand_out, arena)["head"], cand.changed, cand_out,
                         cand_offsets, cand))
    measured.sort(key=lambda m: (m[0], m[1]))
    if measured[0][0] > base:
        notes.append(f"the oracle reports {measured[0][0]} B for the best candidate, above the "
                     f"original {base} B: keeping the file order without an offline plan")
        identity = list(range(len(model.main.operators)))
        chosen = _Candidate(candidates[0].head, False, identity, Placement(0, "unchanged", None, 0),
                            candidates[0].tensors)
        out, offsets = write_model(data, identity, None), [-1] * len(model.main.tensors)
    else:
        _, _, out, offsets, chosen = measured[0]
    notes.append(f"oracle head: original {base} B, optimized {min(measured[0][0], base)} B")
    return chosen, out, offsets


# ---- checking that nothing but memory changed ------------------------------------------
def check_outputs(original: bytes, optimized: bytes, seeds: Sequence[int] = range(3),
                  use_oracle: bool = True, use_micro_rt: bool = True) -> dict:
    """Run both models on the same seeded inputs; every output must be equal bit for bit.
    Checked with micro_rt (when it has all kernels) and with the tflite-micro oracle (when
    installed). Returns {"micro_rt": bool|None, "oracle": bool|None, "seeds": n}."""
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
