"""The allocator: TFLM's MicroAllocator as a byte-exact model over `Arena`.

It owns the arena and makes TFLM's allocations in TFLM's order, so the head, tail and
temp figures (and the smallest working arena) come out as TFLM's do:
1. start-up: the allocator objects, subgraph records, eval tensors, node records;
2. per node: builtin option structs (builtin_params.py), then each kernel's init, then
   each kernel's prepare (kernels allocate through `KernelContext`, which lands here; the
   temporary TfLiteTensors TFLM's kernel makes meanwhile are kernel_temps.py's);
3. commit: scratch handles, variable tensors, the planning scratch in temp, the plan
   itself (head), then the interpreter's input/output tensor records.
Lifetimes follow TFLM's AllocationInfoBuilder (see `tensor_lifetimes`). A given arena size
is compared with the peak once everything is allocated, so a too-small arena's error names
the size that works.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .arena import ARENA_ALIGNMENT, MAX_ARENA_BYTES, Arena, align_up, usable_arena_bytes
from .builtin_params import builtin_params_struct
from .errors import AllocationError, ModelError
from .kernel_temps import persistent_after_temps, prepare_accesses
from .model import Model, Subgraph, TensorInfo
from .planner import LiveIndex, lower_bound, make_planner
from .targets import Target

# TFLM keeps room for this many scratch requests per node in temp during prepare.
MAX_SCRATCH_PER_NODE = 12
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

    def as_dict(self) -> dict:
        return {"tensor": self.tensor, "name": self.name, "kind": self.kind,
                "offset": self.offset, "size": self.size,
                "first_use": self.first_use, "last_use": self.last_use}


@dataclass
class ArenaPlan:
    """What `plan` reports: where every buffer sits and what the arena costs."""
    target: str
    planner: str
    buffers: list[PlannedBuffer]
    head_bytes: int
    tail_bytes: int
    required_bytes: int            # the smallest arena that works (>= head + tail)
    lower_bound: int               # no placement of these buffers can beat this head
    tail_breakdown: dict = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return self.head_bytes + self.tail_bytes

    @property
    def efficiency(self) -> float:
        """lower bound / head: 1.0 means no placement of these buffers can do better. Above
        1.0 only when an offline plan shares memory between buffers live at the same step."""
        return self.lower_bound / self.head_bytes if self.head_bytes else 1.0

    def as_dict(self) -> dict:
        return {"target": self.target, "planner": self.planner, "head_bytes": self.head_bytes,
                "tail_bytes": self.tail_bytes, "total_bytes": self.total_bytes,
                "required_bytes": self.required_bytes, "lower_bound": self.lower_bound,
                "efficiency": self.efficiency,
                "tail_breakdown": self.tail_breakdown,
                "buffers": [b.as_dict() for b in self.buffers]}


def tensor_lifetimes(sg: Subgraph) -> tuple[list[int], list[int], int]:
    """TFLM's lifetimes: step 0 is before the first operator, operator i runs at step i+1.

    Inputs are created at step 0; each output is created by its operator and lives at least
    through it; each input lives to its last reader; subgraph outputs live to the end.
    Returns (first_use, last_use, number of steps) with -1 for tensors never touched.
    """
    n = len(sg.tensors)
    first, last = [-1] * n, [-1] * n

    def touch(tensor: int, step: int, create: bool) -> None:
        if create and (first[tensor] == -1 or step < first[tensor]):
            first[tensor] = step
        if last[tensor] == -1 or step > last[tensor]:
            last[tensor] = step

    for t in sg.inputs:
        touch(t, 0, create=True)
    step = 0
    for op in sg.operators:
        step += 1
        for t in op.outputs:
            touch(t, step, create=True)
        for t in op.inputs:
            if t >= 0:
                touch(t, step, create=False)
    for t in sg.outputs:
        touch(t, step, create=True)
    return first, last, step + 1


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


def refuse_overlapping_offline_buffers(buffers: list[PlannedBuffer], sg: Subgraph) -> None:
    """An offline plan may put buffers on the same bytes only when they are never live at
    the same step; TFLM trusts the plan and its kernels then overwrite each other's data, so
    micro_rt refuses it and names both tensors and the step.

    Tensors that only custom operators read or write are exempt: such a kernel owns its
    layout (Vela places an Ethos-U operator's input and output inside the scratch area its
    command stream addresses), and micro_rt cannot judge a custom kernel's aliasing."""
    custom_only = _custom_only_tensors(sg)
    fixed = [b for b in buffers
             if b.offline_offset is not None and b.size and b.tensor not in custom_only]
    if not fixed:
        return
    index = LiveIndex(min(b.first_use for b in fixed), max(b.last_use for b in fixed))
    for k, b in enumerate(fixed):
        for j in index.overlapping(b.first_use, b.last_use):
            other = fixed[j]
            step = max(b.first_use, other.first_use)
            if step < 0:              # neither is ever read or written
                continue
            if (b.offline_offset < other.offline_offset + other.size
                    and other.offline_offset < b.offline_offset + b.size):
                when = (f"step {step} (operator {step - 1} {sg.operators[step - 1].op_name})"
                        if step > 0 else "step 0 (the subgraph's inputs, before the first operator)")
                raise AllocationError(
                    f"the OfflineMemoryAllocation plan overlaps live buffers: tensor "
                    f"{other.tensor} ('{other.name}', {other.size} bytes at offset "
                    f"{other.offline_offset}) and tensor {b.tensor} ('{b.name}', {b.size} bytes at "
                    f"offset {b.offline_offset}) are both live at {when}; they would overwrite "
                    "each other's data")
        index.add(k, b.first_use, b.last_use)


def _custom_only_tensors(sg: Subgraph) -> set[int]:
    """Tensors some operator uses and every operator using them is a custom one."""
    custom, builtin = set(), set()
    for op in sg.operators:
        (custom if op.is_custom else builtin).update(t for t in (*op.inputs, *op.outputs) if t >= 0)
    return custom - builtin


class TflmAllocator:
    """Makes TFLM's allocations for one model on one target, in TFLM's order."""

    def __init__(self, model: Model, target: Target, arena_size: Optional[int],
                 planner: str = "greedy", kernels: str = "reference"):
        self.model, self.target, self.planner_name = model, target, planner
        self.kernels = kernels
        self.arena_size = arena_size
        self.usable_bytes = None if arena_size is None else usable_arena_bytes(arena_size)
        self.arena = Arena()
        self.scratch_requests: list[tuple[int, int]] = []   # (node index, bytes)
        self._node_scratch = 0
        self._prepared_nodes = 0
        self._tail_before_prepare: Optional[int] = None

    # ---- 1. start-up -----------------------------------------------------------------
    def start_model(self) -> None:
        t, arena = self.target, self.arena
        arena.allocate_persistent(t.sizeof(t.allocator_objects), t.alignof(t.allocator_objects),
                                  "allocator objects")
        extra_subgraphs = len(self.model.subgraphs) - 1     # the first is in the fixed part
        if extra_subgraphs:
            arena.allocate_persistent(t.sizeof("SubgraphAllocations") * extra_subgraphs,
                                      t.alignof("SubgraphAllocations"), "allocator objects")
        self._temp_check(self._scratch_request_bytes())
        for sg in self.model.subgraphs:
            arena.allocate_persistent(t.sizeof("TfLiteEvalTensor") * len(sg.tensors),
                                      t.alignof("TfLiteEvalTensor"), "TfLiteEvalTensor data")
        for sg in self.model.subgraphs:
            arena.allocate_persistent(t.sizeof("NodeAndRegistration") * len(sg.operators),
                                      t.alignof("NodeAndRegistration"), "NodeAndRegistration struct")
        for sg in self.model.subgraphs:
            for op in sg.operators:
                struct = builtin_params_struct(op.op_name, op.is_custom)
                if struct is not None:
                    arena.allocate_persistent(t.sizeof(struct), t.alignof(struct), "builtin data")

    # ---- 2. kernels (through KernelContext) --------------------------------------------
    def allocate_persistent(self, nbytes: int) -> int:
        return self.arena.allocate_persistent(nbytes, ARENA_ALIGNMENT, "Persistent buffer data")

    def request_scratch(self, node_index: int, nbytes: int) -> int:
        if self._node_scratch >= MAX_SCRATCH_PER_NODE:
            raise AllocationError(f"node {node_index} requested more than {MAX_SCRATCH_PER_NODE} "
                                  "scratch buffers (TFLM's limit per node)")
        self._node_scratch += 1
        self.scratch_requests.append((node_index, nbytes))
        return len(self.scratch_requests) - 1

    def begin_node_prepare(self) -> None:
        """Before node k's prepare: the tail its temporary tensors may have to share."""
        self._tail_before_prepare = self.arena.tail

    def end_node_prepare(self) -> None:
        """After node k's prepare (nodes are prepared in order). While it prepared, the head
        held the scratch requests made before it plus room for its own, and its temporary
        TfLiteTensors sat above that (they are freed only now). A kernel that allocates its
        persistent data only after its last temporary tensor (kernel_temps) has its temps
        checked against the tail as it was before: TFLM checks a persistent allocation
        against the head only, so it may overwrite the top of the temps, as far as the bytes
        the kernel reads again (`_unread_temp_bytes`)."""
        sg = self.model.main
        op = sg.operators[self._prepared_nodes]
        self._prepared_nodes += 1
        tail = self.arena.tail
        late = persistent_after_temps(op) and self._tail_before_prepare is not None
        if late:
            self.arena.tail = self._tail_before_prepare
        before = len(self.scratch_requests) - self._node_scratch
        self.arena.allocate_temp(self._scratch_request_bytes(before), ARENA_ALIGNMENT,
                                 "scratch buffer requests")
        accesses = prepare_accesses(op, sg.tensors, self.kernels) or []
        for index in accesses:
            what = f"op {op.index} {op.op_name}'s temporary TfLiteTensor for tensor {index}"
            self._tensor_record(sg.tensors[index], self.arena.allocate_temp, what, what)
        if late:
            self.arena.tail = tail
            unread = self._unread_temp_bytes(sg.tensors[accesses[-1]]) if accesses else 0
            self.arena.check_temp_top(self.arena.temp - unread, f"op {op.index} {op.op_name}'s persistent data "
                                      "allocated over its temporary tensors")
        self.arena.reset_temp()
        self.arena.tail = tail
        self._node_scratch = 0
        self._temp_check(self._scratch_request_bytes())

    def _tensor_record(self, tensor: TensorInfo, allocate, what: str, quantization_what: str) -> None:
        """A TfLiteTensor for `tensor` as TFLM builds one from the flatbuffer (persistent for
        the interpreter's inputs and outputs, temporary for a kernel's prepare): the struct,
        and for an affine-quantized tensor its quantization struct and zero-point array."""
        t = self.target
        allocate(t.sizeof("TfLiteTensor"), t.alignof("TfLiteTensor"), what)
        q = tensor.quantization
        if q is not None:
            allocate(t.sizeof("TfLiteAffineQuantization"), t.alignof("TfLiteAffineQuantization"),
                     quantization_what)
            allocate(4 + 4 * q.scales.size, 4, quantization_what)       # zero points: TfLiteIntArray

    def _unread_temp_bytes(self, tensor: TensorInfo) -> int:
        """The top bytes of a temporary TfLiteTensor record that DeallocateTempTfLiteTensor
        does not read (a persistent allocation may overwrite them): of a quantized tensor the
        zero-point array and the TfLiteAffineQuantization after its two pointers, else the
        TfLiteTensor after its quantization type."""
        t = self.target
        q = tensor.quantization
        if q is not None:
            return 4 + 4 * q.scales.size + t.sizeof("TfLiteAffineQuantization") - 2 * t.pointer_size
        return t.sizeof("TfLiteTensor") - t.sizeof("TfLiteQuantizationType")

    # ---- 3. commit -------------------------------------------------------------------
    def commit(self, preserve_all_tensors: bool = False) -> ArenaPlan:
        t, arena = self.target, self.arena
        if self.scratch_requests:
            arena.allocate_persistent(t.sizeof("ScratchBufferHandle") * len(self.scratch_requests),
                                      t.alignof("ScratchBufferHandle"), "scratch buffer handles")
        sg = self.model.main
        for tensor in sg.tensors:
            if tensor.is_variable and tensor.nbytes:
                if tensor.nbytes > MAX_ARENA_BYTES:
                    raise AllocationError(f"variable tensor {tensor.index} ('{tensor.name}') "
                                          f"{tensor.type_name}{list(tensor.shape)} needs "
                                          f"{tensor.nbytes} bytes, over micro_rt's "
                                          f"{MAX_ARENA_BYTES}-byte arena limit")
                arena.allocate_persistent(tensor.nbytes, ARENA_ALIGNMENT, "variable tensors")
        buffers = self.lifetime_table(preserve_all_tensors)
        if not preserve_all_tensors:
            refuse_overlapping_offline_buffers(buffers, sg)
        try:
            # TFLM preserves all tensors by planning with its linear planner: nothing shares.
            planner = make_planner("linear" if preserve_all_tensors else self.planner_name)
            for b in buffers:
                planner.add_buffer(b.size, b.first_use, b.last_use, b.offline_offset)
        except ValueError as e:
            raise AllocationError(str(e)) from None
        self._planning_temp(len(buffers))
        for b, offset in zip(buffers, planner.offsets()):
            b.offset = offset
        head = planner.total()
        if head > MAX_ARENA_BYTES:
            top = max(buffers, key=lambda b: b.offset + b.size)
            raise AllocationError(
                f"the planned activations need {head} bytes, over micro_rt's {MAX_ARENA_BYTES}-"
                f"byte (1 GiB) arena limit; the highest buffer is {top.kind} {top.tensor} "
                f"('{top.name}', {top.size} bytes at offset {top.offset}): its shape or offline "
                "offset is likely corrupt")
        arena.set_head(head)
        for tensors in (sg.inputs, sg.outputs):
            arena.allocate_persistent(t.pointer_size * len(tensors), ARENA_ALIGNMENT,
                                      "Persistent buffer data")
            for index in tensors:
                self._tensor_record(sg.tensors[index], arena.allocate_persistent,
                                    "Persistent TfLiteTensor data",
                                    "Persistent TfLiteTensor quantization data")
        plan = ArenaPlan(target=t.name, planner=self.planner_name, buffers=buffers,
                         head_bytes=arena.head, tail_bytes=arena.tail,
                         required_bytes=max(arena.required_bytes, align_up(arena.head + arena.tail)),
                         lower_bound=lower_bound(planner.buffers),
                         tail_breakdown={k: v.used for k, v in arena.categories.items()})
        self._check_arena_size(plan)
        return plan

    def _check_arena_size(self, plan: ArenaPlan) -> None:
        """TFLM fails somewhere in the allocation when the arena is below the peak; the error
        names the peak (the size that works) rather than where the first allocation failed."""
        if self.usable_bytes is None or self.usable_bytes >= plan.required_bytes:
            return
        peak = self.arena.peak
        during = (f", and {peak.total} at the peak while allocating {peak.what} (head "
                  f"{peak.head} + temp {peak.temp} + tail {peak.tail})"
                  if peak.total > plan.total_bytes else "")
        raise AllocationError(
            f"arena too small: the model needs {plan.required_bytes} bytes, the arena has "
            f"{self.usable_bytes} (arena_size {self.arena_size}): head {plan.head_bytes} (planned "
            f"activations and scratch) + tail {plan.tail_bytes} (persistent) = "
            f"{plan.total_bytes}{during}, rounded up to {ARENA_ALIGNMENT} bytes. Give at least "
            f"{plan.required_bytes} bytes (arena_size=None finds the minimum)")

    def lifetime_table(self, preserve_all_tensors: bool = False) -> list[PlannedBuffer]:
        """Every buffer the planner places: non-constant, non-variable, non-empty tensors,
        then the scratch buffers, in TFLM's AddBuffer order."""
        sg = self.model.main
        first, last, steps = tensor_lifetimes(sg)
        # TFLM reads (and checks) an offline plan whatever the planner; the greedy one honours it.
        offline = offline_offsets(self.model)
        if self.planner_name not in ("greedy", "offline"):
            offline = None
        if self.planner_name == "offline" and offline is None:
            raise AllocationError("--planner offline: the model carries no OfflineMemoryAllocation "
                                  "metadata")
        buffers = []
        for tensor in sg.tensors:
            if tensor.is_constant or tensor.is_variable or tensor.nbytes == 0:
                continue
            i = tensor.index
            # A tensor no operator reads or writes keeps TFLM's uninitialised lifetime -1..-1:
            # it is planned, sharing memory with nothing but other such tensors.
            lo, hi = (0, steps - 1) if preserve_all_tensors else (first[i], last[i])
            fixed = offline[i] if offline is not None and offline[i] != -1 else None
            buffers.append(PlannedBuffer("tensor", i, tensor.name, align_up(tensor.nbytes),
                                         lo, hi, fixed))
        for node, nbytes in self.scratch_requests:
            step = node + 1
            buffers.append(PlannedBuffer("scratch", node, f"scratch for op {node}",
                                         align_up(nbytes), step, step))
        return buffers

    # ---- temp accounting ---------------------------------------------------------------
    def _scratch_request_bytes(self, requests: Optional[int] = None) -> int:
        """The head while models prepare: the requests so far plus room for one node's."""
        count = len(self.scratch_requests) if requests is None else requests
        return (count + MAX_SCRATCH_PER_NODE) * self.target.sizeof("ScratchBufferRequest")

    def _temp_check(self, nbytes: int) -> None:
        self.arena.allocate_temp(nbytes, ARENA_ALIGNMENT, "scratch buffer requests")
        self.arena.reset_temp()

    def _planning_temp(self, nplanned: int) -> None:
        """The planner works in temp memory above the scratch requests: a size_t per subgraph,
        an AllocationInfo per tensor and scratch buffer, then its own per-buffer records."""
        t, arena = self.target, self.arena
        ntensors = sum(len(sg.tensors) for sg in self.model.subgraphs)
        arena.allocate_temp(self._scratch_request_bytes(), ARENA_ALIGNMENT, "scratch buffer requests")
        arena.allocate_temp(t.pointer_size * len(self.model.subgraphs), t.pointer_size,
                            "subgraph offsets")
        arena.allocate_temp(t.sizeof("AllocationInfo") * (ntensors + len(self.scratch_requests)),
                            t.pointer_size, "allocation info")
        # The planner takes all memory between temp and the 16-aligned tail.
        tail_padding = -arena.tail % ARENA_ALIGNMENT
        arena.allocate_temp(t.sizeof("GreedyPlannerPerBuffer") * nplanned + tail_padding,
                            ARENA_ALIGNMENT, "memory planner")
        arena.reset_temp()
