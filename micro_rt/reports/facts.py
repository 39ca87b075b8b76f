"""What a report says about each planned buffer and each operator, in a person's terms.

Steps and operators: TFLM's lifetimes count step 0 as "before the first operator" (the
model's inputs arrive) and operator i runs at step i + 1. People read operator indices (as
`info` and `profile` print them), so everything here is keyed by operator index, and a
buffer's lifetime is given as the operators it is live across (`first_op`/`last_op`, -1 for
"before operator 0"; None for a tensor no operator touches, which TFLM still plans).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Optional, Sequence

from ..allocation_info import PlannedBuffer
from ..allocator import ArenaPlan
from ..analysis import op_macs
from ..model import Subgraph, TensorInfo
from ..planner import live_bytes
from ..subgraphs import walk_lifetimes
from .formats import summarise_items

# A buffer's role decides its colour in the lane chart; the legend lists them in this order.
ROLES = ("input", "output", "activation", "scratch", "untouched")
BEFORE_FIRST_OP = -1          # the column of step 0: the model's inputs, before operator 0


def op_of_step(step: int) -> Optional[int]:
    """TFLM step -> operator index (-1: before operator 0; None: never used)."""
    return None if step < 0 else step - 1


def main_view(plan: ArenaPlan, subgraphs: Sequence[Subgraph] = ()) -> ArenaPlan:
    """The plan as subgraph 0's operators see it. With several subgraphs, TFLM's steps run on
    through the subgraphs a control-flow operator calls (micro_rt.subgraphs); here every such
    step is that operator's, so a report's operator columns hold whatever lives while it runs
    (an IF's branch, a WHILE's cond and body). One subgraph: the plan itself."""
    if len(subgraphs) < 2:
        return plan
    main_step = _main_steps(subgraphs)
    return replace(plan, buffers=[replace(b, first_use=main_step(b.first_use),
                                          last_use=main_step(b.last_use)) for b in plan.buffers])


def _main_steps(subgraphs: Sequence[Subgraph]):
    """TFLM step of the whole walk -> the step of the subgraph 0 operator it belongs to."""
    step_of = {0: 0}
    for position, (start, end) in enumerate(walk_lifetimes(subgraphs).node_scopes[0]):
        step_of.update({s: position + 1 for s in range(start, end + 1)})
    return lambda step: step_of.get(step, -1) if step >= 0 else step


def live_in_main_steps(buffers: Sequence[PlannedBuffer], subgraphs: Sequence[Subgraph] = ()
                       ) -> tuple[int, list[int]]:
    """live_bytes (first step, bytes live per step); with several subgraphs per subgraph 0
    step, a control-flow operator's being the peak over the steps of the subgraphs it ran
    (buffers live at different steps inside it may share bytes, so no sum)."""
    base, per_step = live_bytes(list(buffers))
    if len(subgraphs) < 2 or not per_step:
        return base, per_step
    main_step = _main_steps(subgraphs)
    peaks: dict[int, int] = {}
    for k, value in enumerate(per_step):
        step = main_step(base + k)
        peaks[step] = max(peaks.get(step, 0), value)
    return min(peaks), [peaks.get(s, 0) for s in range(min(peaks), max(peaks) + 1)]


def tensor_label(t: TensorInfo) -> str:
    """'int8[1,96,96,1]'."""
    return f"{t.type_name.lower()}[{','.join(str(d) for d in t.shape)}]"


@dataclass
class BufferFact:
    """One planned buffer: where it sits, when it lives, what it is."""
    index: int                 # position in the plan's buffer list
    kind: str                  # "tensor" or "scratch", as in `plan`
    role: str                  # one of ROLES
    offline: bool              # placed by the model's OfflineMemoryAllocation plan
    tensor: int                # tensor index, or the operator index for scratch
    name: str
    shape: Optional[list[int]]
    dtype: Optional[str]
    size: int
    offset: int
    first_op: Optional[int]
    last_op: Optional[int]
    producer: str
    consumers: list[str]
    subgraph: int = 0          # the tensor's (or scratch's operator's) subgraph

    @property
    def number(self) -> str:
        """'7', or '2:7' for tensor (or operator) 7 of subgraph 2."""
        return f"{self.subgraph}:{self.tensor}" if self.subgraph else f"{self.tensor}"

    def as_dict(self) -> dict:
        fields = asdict(self)
        if not self.subgraph:
            del fields["subgraph"]
        return fields


@dataclass
class OperatorFact:
    """One operator: its work, its memory and, when measured, its cycles."""
    index: int
    op: str
    inputs: list[str]          # non-constant inputs, 'int8[1,96,96,1]'
    outputs: list[str]
    dtype: str                 # of its first output
    macs: int
    weight_bytes: int          # constant inputs (flash)
    activation_bytes: int      # non-constant inputs and outputs (arena bytes it reads and writes)
    scratch_bytes: int
    live_bytes: int            # planned bytes live while it runs (all buffers, not only its own)
    supported: bool = True     # micro_rt has a kernel for it
    cycles: Optional[int] = None           # None: not measured, or ran on a host kernel
    instructions: Optional[int] = None
    stack_bytes: Optional[int] = None
    on_mcu: Optional[bool] = None          # None: no emulated run
    ms: Optional[float] = None
    macs_per_cycle: Optional[float] = None
    share: Optional[float] = None          # of the counted cycles
    alignment: list[str] = field(default_factory=list)

    @property
    def shapes(self) -> str:
        return f"{' '.join(self.inputs)} -> {' '.join(self.outputs)}"

    @property
    def shapes_summary(self) -> str:
        """`shapes` with a long list as its count and first few ('49 outputs: ...')."""
        return (f"{summarise_items(self.inputs, 'inputs')} -> "
                f"{summarise_items(self.outputs, 'outputs')}")

    def as_dict(self) -> dict:
        return dict(asdict(self), shapes=self.shapes)


def _op_label(sg: Subgraph, index: int) -> str:
    number = f"{sg.index}:{index}" if sg.index else f"{index}"
    return f"op {number} {sg.operators[index].op_name}"


def buffer_facts(sg: Subgraph, plan: ArenaPlan, subgraphs: Sequence[Subgraph] = ()) -> list[BufferFact]:
    """One fact per planned buffer; with a model's `subgraphs` (several), buffers of other
    subgraphs are named by their own tensors and operators ('op 2:1 MUL') and live across
    the subgraph 0 operator that runs them (main_view)."""
    graphs = list(subgraphs) or [sg]
    producers: dict[tuple[int, int], int] = {}
    consumers: dict[tuple[int, int], list[int]] = {}
    for g in graphs:
        for op in g.operators:
            for t in op.outputs:
                producers.setdefault((g.index, t), op.index)
            for t in dict.fromkeys(op.inputs):
                if t >= 0:
                    consumers.setdefault((g.index, t), []).append(op.index)
    view = main_view(plan, graphs)
    return [_buffer_fact(graphs[b.subgraph] if b.subgraph < len(graphs) else sg, i, b,
                         producers, consumers) for i, b in enumerate(view.buffers)]


def _buffer_fact(sg: Subgraph, i: int, b: PlannedBuffer, producers: dict, consumers: dict
                 ) -> BufferFact:
    first, last = op_of_step(b.first_use), op_of_step(b.last_use)
    if b.kind == "scratch":
        return BufferFact(i, b.kind, "scratch", b.offline_offset is not None, b.tensor, b.name,
                          None, None, b.size, b.offset, first, last,
                          f"requested by {_op_label(sg, b.tensor)}", [_op_label(sg, b.tensor)],
                          sg.index)
    t = sg.tensors[b.tensor]
    key, main = (sg.index, b.tensor), sg.index == 0
    side = "model" if main else f"subgraph {sg.index}"
    made = ([f"{side} input {sg.inputs.index(b.tensor)}"] if b.tensor in sg.inputs else []) + (
        [_op_label(sg, producers[key])] if key in producers else [])
    used = [_op_label(sg, k) for k in consumers.get(key, [])]
    if b.tensor in sg.outputs:
        used.append(f"{side} output {sg.outputs.index(b.tensor)}")
    role = ("untouched" if b.first_use < 0 else "input" if main and b.tensor in sg.inputs
            else "output" if main and b.tensor in sg.outputs else "activation")
    return BufferFact(i, b.kind, role, b.offline_offset is not None, b.tensor, b.name,
                      list(t.shape), t.type_name.lower(), b.size, b.offset, first, last,
                      ", ".join(made) or "nothing (no operator writes it)", used, sg.index)


def _with_subgraphs(op: dict) -> dict:
    """A profile record with what the subgraphs it ran cost counted in (control flow)."""
    if "cycles_with_subgraphs" not in op:
        return op
    return dict(op, cycles=op["cycles_with_subgraphs"], instructions=op["instructions_with_subgraphs"])


def live_per_op(plan: ArenaPlan, subgraphs: Sequence[Subgraph] = ()) -> dict[int, int]:
    """Operator index (-1 before the first) -> planned bytes live at its step (a control-flow
    operator: the peak while its subgraphs run); tensors no operator touches are left out
    (they are live at no step)."""
    used = [b for b in plan.buffers if b.first_use >= 0]
    base, per_step = live_in_main_steps(used, subgraphs)
    ops = ((op_of_step(base + k), v) for k, v in enumerate(per_step))
    return {op: v for op, v in ops if op is not None}       # every step here is >= 0


def operator_facts(sg: Subgraph, plan: ArenaPlan, profile: Optional[dict] = None,
                   supported: Optional[set[int]] = None,
                   subgraphs: Sequence[Subgraph] = ()) -> list[OperatorFact]:
    """One fact per operator of `sg`; `profile` (micro-rt profile's report) adds cycles.
    `supported`: the operator indices micro_rt has a kernel for (None: all). With a model's
    `subgraphs`, a control-flow operator's live bytes and cycles include the subgraphs it
    ran (main_view, the profile's cycles_with_subgraphs)."""
    live = live_per_op(plan, subgraphs)
    scratch: dict[int, int] = {}
    for b in plan.buffers:
        if b.kind == "scratch" and b.subgraph == 0:
            scratch[b.tensor] = scratch.get(b.tensor, 0) + b.size
    measured = {o["index"]: _with_subgraphs(o) for o in (profile or {}).get("ops", [])
                if not o.get("subgraph")}
    counted = (profile or {}).get("total_cycles") or 0
    clock = (profile or {}).get("clock_hz")
    facts = []
    for op in sg.operators:
        ins = [sg.tensors[t] for t in dict.fromkeys(op.inputs) if t >= 0]
        outs = [sg.tensors[t] for t in dict.fromkeys(op.outputs) if t >= 0]
        moving = [sg.tensors[t] for t in dict.fromkeys((*op.inputs, *op.outputs))
                  if t >= 0 and not sg.tensors[t].is_constant and not sg.tensors[t].is_variable]
        fact = OperatorFact(
            index=op.index, op=op.op_name,
            inputs=[tensor_label(t) for t in ins if not t.is_constant],
            outputs=[tensor_label(t) for t in outs],
            dtype=outs[0].type_name.lower() if outs else "",
            macs=op_macs(sg, op),
            weight_bytes=sum(t.nbytes for t in ins if t.is_constant),
            activation_bytes=sum(t.nbytes for t in moving),
            scratch_bytes=scratch.get(op.index, 0),
            live_bytes=live.get(op.index, 0),
            supported=supported is None or op.index in supported)
        m = measured.get(op.index)
        if m is not None:
            fact.on_mcu = m["on_mcu"]
            fact.alignment = list(m["alignment"])
            if m["on_mcu"]:
                fact.cycles, fact.instructions = m["cycles"], m["instructions"]
                fact.stack_bytes = m["stack_bytes"]
                fact.macs_per_cycle = m["macs_per_cycle"]
                fact.ms = m["cycles"] / clock * 1e3 if clock else None
                fact.share = m["cycles"] / counted if counted else None
        facts.append(fact)
    return facts
