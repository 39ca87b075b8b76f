"""The allocator: TFLM's MicroAllocator as a byte-exact model over `Arena`.

It owns the arena and makes TFLM's allocations in TFLM's order, so the head, tail and
temp figures (and the smallest working arena) come out as TFLM's do:
1. start-up: the allocator objects (with the resource variables' records, when the model
   has VAR_HANDLE operators), subgraph records, eval tensors, node records;
2. per node of every subgraph: builtin option structs (builtin_params.py), then each kernel's
   init, then each kernel's prepare (kernels allocate through `KernelContext`, which lands
   here; the temporary TfLiteTensors TFLM's kernel makes meanwhile are its registration's
   `temps`, which kernel_temps.py reads);
3. commit: scratch handles, variable tensors, the planning scratch in temp, the plan
   itself (head), then the interpreter's input/output tensor records.
Every subgraph's tensors and scratch buffers go into one plan, with the lifetimes TFLM's
AllocationInfoBuilder gives them (micro_rt.subgraphs). A given arena size is compared with the
peak once everything is allocated, so a too-small arena's error names the size that works.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


from .allocation_info import PlannedBuffer, ScratchRequest, planned_buffers, refuse_overlapping_offline_buffers
from .arena import ARENA_ALIGNMENT, MAX_ARENA_BYTES, Arena, align_up, usable_arena_bytes
from .builtin_params import builtin_params_struct
from .errors import AllocationError
from .kernel_api import Registration
from .kernel_temps import prepare_accesses
from .model import Model, Subgraph, TensorInfo
from .planner import lower_bound, make_planner
from .resource_variables import resource_variable_count
from .subgraphs import walk_lifetimes
from .targets import Target

# TFLM keeps room for this many scratch requests per node in temp during prepare.
MAX_SCRATCH_PER_NODE = 12
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
    subgraph_names: list[str] = field(default_factory=lambda: ["main"])   # by subgraph index

    @property
    def subgraph_count(self) -> int:
        """Buffers name their subgraph when the model has several."""
        return len(self.subgraph_names)

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
                **({"subgraphs": self.subgraph_names} if self.subgraph_count > 1 else {}),
                "buffers": [b.as_dict(self.subgraph_count > 1) for b in self.buffers]}


def tensor_lifetimes(sg: Subgraph) -> tuple[list[int], list[int], int]:
    """TFLM's lifetimes of one subgraph on its own: step 0 is before the first operator,
    operator i runs at step i+1.

    Inputs are created at step 0; each output is created by its operator and lives at least
    through it; each input lives to its last reader; subgraph outputs live to the end.
    Returns (first_use, last_use, number of steps) with -1 for tensors never touched.
    (A whole model, control flow included: micro_rt.subgraphs.model_lifetimes.)
    """
    lifetimes = walk_lifetimes([sg], follow_calls=False)
    return lifetimes.first[0], lifetimes.last[0], lifetimes.steps


class TflmAllocator:
    """Makes TFLM's allocations for one model on one target, in TFLM's order."""

    def __init__(self, model: Model, target: Target, arena_size: Optional[int],
                 planner: str = "greedy"):
        self.model, self.target, self.planner_name = model, target, planner
        self.arena_size = arena_size
        self.usable_bytes = None if arena_size is None else usable_arena_bytes(arena_size)
        self.arena = Arena()
        self.scratch_requests: list[ScratchRequest] = []
        self._node_scratch = 0
        # Nodes are prepared subgraph by subgraph, in order, as TFLM's PrepareSubgraphs does.
        self._prepare_order = [(sg, op) for sg in model.subgraphs for op in sg.operators]
        self._prepared_nodes = 0
        # (subgraph, tensor) whose data a kernel set in prepare (VAR_HANDLE's output points at
        # its op data): TFLM does not plan a tensor that already has data.
        self.data_set_in_prepare: set[tuple[int, int]] = set()
        self._tail_before_prepare: Optional[int] = None

    # ---- 1. start-up -----------------------------------------------------------------
    def start_model(self) -> None:
        t, arena = self.target, self.arena
        variables = resource_variable_count(self.model)
        if variables:
            self._allocator_objects_around_resource_variables(variables)
        else:
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

    def _allocator_objects_around_resource_variables(self, variables: int) -> None:
        """The application makes MicroResourceVariables after the allocator and before the
        interpreter: its object and slot array sit between the allocator's own objects and
        the builtin-data allocator and subgraph records the interpreter's start-up adds."""
        t, arena = self.target, self.arena
        later = ("MicroBuiltinDataAllocator", "SubgraphAllocations")
        arena.allocate_persistent(t.sizeof(t.allocator_objects) - sum(t.sizeof(s) for s in later),
                                  t.alignof(t.allocator_objects), "allocator objects")
        arena.allocate_persistent(t.sizeof("MicroResourceVariables"), ARENA_ALIGNMENT,
                                  "Persistent buffer data")
        arena.allocate_persistent(t.sizeof("MicroResourceVariable") * variables, ARENA_ALIGNMENT,
                                  "Persistent buffer data")
        for struct in later:
            arena.allocate_persistent(t.sizeof(struct), t.alignof(struct), "allocator objects")

    # ---- 2. kernels (through KernelContext) --------------------------------------------
    def allocate_persistent(self, nbytes: int) -> int:
        return self.arena.allocate_persistent(nbytes, ARENA_ALIGNMENT, "Persistent buffer data")

    def request_scratch(self, node_index: int, nbytes: int, subgraph: int = 0) -> int:
        if self._node_scratch >= MAX_SCRATCH_PER_NODE:
            where = f"subgraph {subgraph} " if subgraph else ""
            raise AllocationError(f"{where}node {node_index} requested more than "
                                  f"{MAX_SCRATCH_PER_NODE} scratch buffers (TFLM's limit per node)")
        self._node_scratch += 1
        self.scratch_requests.append(ScratchRequest(subgraph, node_index, nbytes))
        return len(self.scratch_requests) - 1

    def set_data_in_prepare(self, subgraph: int, tensor: int) -> None:
        """A kernel pointed this tensor at data of its own in prepare: it is not planned."""
        self.data_set_in_prepare.add((subgraph, tensor))

    def begin_node_prepare(self) -> None:
        """Before node k's prepare: the tail its temporary tensors may have to share."""
        self._tail_before_prepare = self.arena.tail

    def end_node_prepare(self, registration: Registration) -> None:
        """After node k's prepare (nodes are prepared in order, subgraph by subgraph). While it
        prepared, the head held the scratch requests made before it plus room for its own, and
        its temporary TfLiteTensors sat above that (they are freed only now). A kernel that
        allocates its persistent data only after its last temporary tensor (its registration's
        `persistent_after_temps`; the temps are its `temps`, read by kernel_temps) has
        its temps checked against the tail as it was before: TFLM checks a persistent
        allocation against the head only, so it may overwrite the top of the temps, as far as
        the bytes the kernel reads again (`_unread_temp_bytes`)."""
        sg, op = self._prepare_order[self._prepared_nodes]
        self._prepared_nodes += 1
        tail = self.arena.tail
        late_tail = self._tail_before_prepare if registration.persistent_after_temps else None
        if late_tail is not None:
            self.arena.tail = late_tail
        before = len(self.scratch_requests) - self._node_scratch
        self.arena.allocate_temp(self._scratch_request_bytes(before), ARENA_ALIGNMENT,
                                 "scratch buffer requests")
        accesses = prepare_accesses(op, sg.tensors, registration.temps) or []
        for index in accesses:
            what = f"op {op.index} {op.op_name}'s temporary TfLiteTensor for tensor {index}"
            self._tensor_record(sg.tensors[index], self.arena.allocate_temp, what, what)
        if late_tail is not None:
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
        for sg in self.model.subgraphs:
            for tensor in sg.tensors:
                if tensor.is_variable and tensor.nbytes:
                    if tensor.nbytes > MAX_ARENA_BYTES:
                        where = f"subgraph {sg.index} " if sg.index else ""
                        raise AllocationError(f"{where}variable tensor {tensor.index} ('{tensor.name}') "
                                              f"{tensor.type_name}{list(tensor.shape)} needs "
                                              f"{tensor.nbytes} bytes, over micro_rt's "
                                              f"{MAX_ARENA_BYTES}-byte arena limit")
                    arena.allocate_persistent(tensor.nbytes, ARENA_ALIGNMENT, "variable tensors")
        sg = self.model.main
        buffers = self.lifetime_table(preserve_all_tensors)
        if not preserve_all_tensors:
            refuse_overlapping_offline_buffers(buffers, self.model)
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
                         tail_breakdown={k: v.used for k, v in arena.categories.items()},
                         subgraph_names=[sg.name for sg in self.model.subgraphs])
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
        """Every buffer the planner places, in TFLM's AddBuffer order (allocation_info.py)."""
        return planned_buffers(self.model, self.planner_name, self.data_set_in_prepare, self.scratch_requests,
                               preserve_all_tensors)

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
