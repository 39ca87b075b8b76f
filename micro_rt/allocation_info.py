"""Which buffers the planner places, and for how long: TFLM's AllocationInfoBuilder
(allocation_info.cc). Every subgraph's planned tensors with the lifetimes micro_rt.subgraphs
gives them, an offline plan's fixed offsets (the `OfflineMemoryAllocation` metadata, checked),
then the kernels' scratch buffers over their nodes' steps."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Optional, Sequence

import numpy as np

from .arena import ARENA_ALIGNMENT, align_up
from .errors import AllocationError, ModelError
from .model import Model, Subgraph
from .planner import LiveIndex
from .subgraphs import model_lifetimes

__all__ = ["OFFLINE_METADATA", "PlannedBuffer", "ScratchRequest", "offline_offsets", "planned_buffers",
           "refuse_overlapping_offline_buffers"]


# The metadata entry carrying an offline memory plan (written by micro_rt.optimize.writing).
OFFLINE_METADATA = "OfflineMemoryAllocation"


@dataclass
class PlannedBuffer:
    """One row of the lifetime table."""
    kind: str                      # "tensor" or "scratch"
    tensor: int                    # tensor index, or the node index for scratch
    name: str
    size: int                      # bytes, rounded up to the arena alignment
    first_use: int
    last_use: int
    offline_offset: Optional[int] = None
    offset: int = -1
    subgraph: int = 0              # the subgraph of the tensor, or of the node for scratch

    def as_dict(self, with_subgraph: bool = False) -> dict:
        where = {"subgraph": self.subgraph} if with_subgraph else {}
        return {**where, "tensor": self.tensor, "name": self.name, "kind": self.kind,
                "offset": self.offset, "size": self.size,
                "first_use": self.first_use, "last_use": self.last_use}


@dataclass(frozen=True)
class ScratchRequest:
    """A kernel's scratch buffer request: the node (by subgraph and index) and its bytes."""
    subgraph: int
    node: int
    nbytes: int


def offline_offsets(model: Model) -> Optional[list[int]]:
    """The `OfflineMemoryAllocation` metadata: [version, subgraphs, count, offset per tensor]."""
    raw = model.metadata_bytes(OFFLINE_METADATA)
    if raw is None:
        if "OfflineMemoryAllocation" in model.metadata:
            raise ModelError(f"OfflineMemoryAllocation metadata points to buffer "
                             f"{model.metadata['OfflineMemoryAllocation']}, which holds no data: "
                             "tflite-micro reads it anyway and crashes (a null pointer)")
        return None
    if len(raw) < 12 or len(raw) % 4:
        raise ModelError(f"OfflineMemoryAllocation metadata is {len(raw)} bytes, not an int32 array "
                         "of at least 3 entries")
    values = np.frombuffer(raw, "<i4")
    count = int(values[2])
    total_tensors = sum(len(sg.tensors) for sg in model.subgraphs)
    if count != total_tensors or len(values) < 3 + count:
        raise ModelError(f"OfflineMemoryAllocation lists {count} offsets ({len(values) - 3} stored), "
                         f"model has {total_tensors} tensors")
    offsets = [int(v) for v in values[3:3 + count]]
    for i, v in enumerate(offsets):
        if v < -1 or v % ARENA_ALIGNMENT and v != -1:
            raise ModelError(f"OfflineMemoryAllocation offset for tensor {i} is {v}: must be -1 or a "
                             f"non-negative multiple of {ARENA_ALIGNMENT}")
    return offsets


def refuse_overlapping_offline_buffers(buffers: list[PlannedBuffer], model: Model) -> None:
    """An offline plan may put buffers on the same bytes only when they are never live at
    the same step; TFLM trusts the plan and its kernels then overwrite each other's data, so
    micro_rt refuses it and names both tensors and the step.

    Tensors that only custom operators read or write are exempt: such a kernel owns its
    layout (Vela places an Ethos-U operator's input and output inside the scratch area its
    command stream addresses), and micro_rt cannot judge a custom kernel's aliasing."""
    custom_only = {(sg.index, t) for sg in model.subgraphs for t in _custom_only_tensors(sg)}
    fixed = [(b, b.offline_offset) for b in buffers if b.offline_offset is not None and b.size
             and (b.subgraph, b.tensor) not in custom_only]
    if not fixed:
        return
    index = LiveIndex(min(b.first_use for b, _ in fixed), max(b.last_use for b, _ in fixed))
    for k, (b, at) in enumerate(fixed):
        for j in index.overlapping(b.first_use, b.last_use):
            other, other_at = fixed[j]
            step = max(b.first_use, other.first_use)
            if step < 0:              # neither is ever read or written
                continue
            if at < other_at + other.size and other_at < at + b.size:
                raise AllocationError(
                    f"the OfflineMemoryAllocation plan overlaps live buffers: {_named(other, model)} "
                    f"and {_named(b, model)} are both live at {_step_name(step, model)}; they would "
                    "overwrite each other's data")
        index.add(k, b.first_use, b.last_use)


def _custom_only_tensors(sg: Subgraph) -> set[int]:
    """Tensors some operator uses and every operator using them is a custom one."""
    custom: set[int] = set()
    builtin: set[int] = set()
    for op in sg.operators:
        (custom if op.is_custom else builtin).update(t for t in (*op.inputs, *op.outputs) if t >= 0)
    return custom - builtin


def _named(b: PlannedBuffer, model: Model) -> str:
    where = f"subgraph {b.subgraph} " if len(model.subgraphs) > 1 else ""
    return f"{where}tensor {b.tensor} ('{b.name}', {b.size} bytes at offset {b.offline_offset})"


def _step_name(step: int, model: Model) -> str:
    if len(model.subgraphs) > 1:
        return f"step {step} of the plan of all subgraphs"
    sg = model.main
    return (f"step {step} (operator {step - 1} {sg.operators[step - 1].op_name})" if step > 0
            else "step 0 (the subgraph's inputs, before the first operator)")


def planned_buffers(model: Model, planner_name: str, data_set_in_prepare: Collection[tuple[int, int]],
                scratch_requests: Sequence[ScratchRequest], preserve_all_tensors: bool = False) -> list[PlannedBuffer]:
    """Every buffer the planner places: the non-constant, non-variable, non-empty tensors
    of every subgraph (those a kernel gave data in prepare excepted), then the scratch
    buffers, in TFLM's AddBuffer order (`data_set_in_prepare`: (subgraph, tensor) pairs;
`preserve_all_tensors`: every tensor lives through the whole invoke, as TFLM's option)."""
    lifetimes = model_lifetimes(model)
    # TFLM reads (and checks) an offline plan whatever the planner; the greedy one honours it.
    offline = offline_offsets(model)
    if planner_name not in ("greedy", "offline"):
        offline = None
    if planner_name == "offline" and offline is None:
        raise AllocationError("--planner offline: the model carries no OfflineMemoryAllocation "
                              "metadata")
    buffers: list[PlannedBuffer] = []
    first_offline = 0
    for sg in model.subgraphs:
        first, last = lifetimes.first[sg.index], lifetimes.last[sg.index]
        for tensor in sg.tensors:
            i = tensor.index
            if (tensor.is_constant or tensor.is_variable or tensor.nbytes == 0
                    or (sg.index, i) in data_set_in_prepare):
                continue
            # A tensor no operator reads or writes keeps TFLM's uninitialised lifetime
            # -1..-1: it is planned, sharing memory with nothing but other such tensors.
            lo, hi = (0, lifetimes.steps - 1) if preserve_all_tensors else (first[i], last[i])
            at = first_offline + i
            fixed = offline[at] if offline is not None and offline[at] != -1 else None
            buffers.append(PlannedBuffer("tensor", i, tensor.name, align_up(tensor.nbytes),
                                         lo, hi, fixed, subgraph=sg.index))
        first_offline += len(sg.tensors)
    for request in scratch_requests:
        lo, hi = lifetimes.node_scopes[request.subgraph][request.node]
        where = f"subgraph {request.subgraph} " if request.subgraph else ""
        buffers.append(PlannedBuffer("scratch", request.node,
                                     f"scratch for {where}op {request.node}",
                                     align_up(request.nbytes), lo, hi, subgraph=request.subgraph))
    return buffers
