"""What `fit` (and `profile`, `export`) measure of a model on the virtual MCU: the operators
with no C kernel or not simulated, the bytes of its firmware plan, and one emulated inference's
stack, static data and code (`kernel_measurement`), invoked until every operator has run."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

import numpy as np

from .errors import UnsupportedOpError
from .inputs import random_inputs
from .interpreter import Interpreter
from .op_records import OpRecord

__all__ = ["MAX_MEASURED_INVOKES", "RUNTIME_ROOTS", "KernelMeasurement", "PlanBytes", "invoke_until_every_operator_runs",
           "kernel_measurement", "measure_kernels", "ops_not_simulated", "ops_without_kernels", "plan_bytes"]


def ops_without_kernels(it: Interpreter) -> list[str]:
    """'0 ethos-u (custom op)' for every operator the interpreter's resolver has no kernel for
    ('1:0 ...' for operator 0 of subgraph 1)."""
    found = []
    for sg in it.model.subgraphs:
        for op in sg.operators:
            try:
                it.resolver.find(op.op_name, op.is_custom, op.version, op.index)
            except UnsupportedOpError:
                number = f"{sg.index}:{op.index}" if sg.index else f"{op.index}"
                found.append(f"{number} {op.op_name} "
                             f"({'custom op' if op.is_custom else f'builtin version {op.version}'})")
    return found


def ops_not_simulated(it: Interpreter) -> list[tuple[int, str, str]]:
    """(index, op, why) for every operator whose kernel accounts its arena but whose
    computation micro_rt does not simulate (Vela's ethos-u: the NPU)."""
    found = []
    for op in it.model.main.operators:
        try:
            registration = it.resolver.find(op.op_name, op.is_custom, op.version, op.index)
        except UnsupportedOpError:
            continue
        if registration.not_simulated:
            found.append((op.index, op.op_name, registration.not_simulated))
    return found


@dataclass
class PlanBytes:
    """What micro_rt's runtime keeps for a model besides code (cortexm.firmware_plan): the
    constants region (the model's constant tensors, then each operator's own constants:
    multipliers, shifts, lookup tables) and the call table in flash; the argument structs of
    the calls (RAM, as TFLM's are) and those kernels write, with their initial values in flash."""
    model_constants: int          # constant tensors, as the plan lays them out (16-aligned)
    op_constants: int
    table: int                    # the entries and mrt_plan_t
    structs: int                  # the calls' argument structs
    state: int                    # the structs kernels write (and the runtime's CALL_ONCE flags)
    flags: int = 0                # of which the runtime's CALL_ONCE flags (a word each)

    @property
    def flash(self) -> int:
        return self.table + self.structs + self.state

    @property
    def ram(self) -> int:
        return self.structs + self.state


@dataclass
class KernelMeasurement:
    """What one emulated inference of micro_rt's C kernels measured, and what an image
    keeping only what that inference needs holds (cortexm.image: what `ld --gc-sections`
    keeps, from the linked firmware ELF)."""
    stack_bytes: int
    static_bytes: int             # .data + .bss the image keeps
    code_bytes: int               # functions the image keeps: start-up, runtime, kernels
    ops_on_host: list[str]        # ran on a host kernel (no C kernel call planned), nothing measured: "name (why)"
    rodata_bytes: int = 0         # read-only data: vector table, kernels' and libm's tables
    data_init_bytes: int = 0      # initial values of .data (in flash)
    padding_bytes: int = 0        # alignment between the kept sections (estimated)
    runtime_code_bytes: int = 0   # of code_bytes: start-up and runtime (the rest: kernels)
    plan: Optional[PlanBytes] = None
    plan_note: str = ""           # why there is no plan
    stack_scope: str = "the deepest operator"
    runtime_arena_bytes: int = 0  # the arena micro_rt's runtime allocates: the head, variables
    kernel_stack_bytes: int = 0   # the deepest operator's own stack (no runtime frame)
    functions: list[str] = field(default_factory=list)     # the functions the image keeps
    # The operator that ended the last inference early (kTfLiteAbort), "" when it ran to the
    # end: the operators after it were not run, so not measured.
    ended_at: str = ""

    @property
    def kernel_code_bytes(self) -> int:
        return self.code_bytes - self.runtime_code_bytes


# The firmware's start-up and runtime: what an image needs whatever the model.
RUNTIME_ROOTS = ("mrt_vectors", "mrt_invoke")


# A streaming model's CIRCULAR_BUFFER ends an inference early until its period comes round
# (cycles_max invokes: 1 or 2 from TFLM's shape rule, or its option): fit invokes up to this
# many times to run every operator once.
MAX_MEASURED_INVOKES = 16


def _record_name(r: OpRecord) -> str:
    return f"{r.subgraph}:{r.index} {r.op}" if r.subgraph else f"{r.index} {r.op}"


def measure_kernels(data: bytes, target: str,
                    progress: Optional[Callable[[int, int], None]] = None,
                    kernels: str = "cmsis-nn") -> KernelMeasurement:
    """Run inferences on the virtual MCU with micro_rt's C kernels of the flavour `kernels`
    (the CMSIS-NN-style ones, or the reference ones), as one call of the device runtime each
    (as `profile` does): one, or more while an operator ends them early
    (up to MAX_MEASURED_INVOKES); the stack is the deepest over them."""
    with Interpreter.from_bytes(data, target=target, kernels=kernels, emulate=True) as it:
        stack = 0
        for _ in invoke_until_every_operator_runs(it, 0, progress):
            stack = max([stack] + [r.stack_bytes for r in it.last_run])
        return kernel_measurement(it, stack)


def invoke_until_every_operator_runs(it: Interpreter, seed: int,
                                     progress: Optional[Callable[[int, int], None]] = None) -> Iterator[bool]:
    """Invoke `it` on the seeded inputs of `seed`, again while an operator ends the inference
    early (a CIRCULAR_BUFFER's period), at most MAX_MEASURED_INVOKES times; yields after each
    invoke whether it ended early (`fit` and `profile` measure the one that runs every operator)."""
    for _ in range(MAX_MEASURED_INVOKES):
        for i, x in enumerate(random_inputs(it, seed)):
            it.set_input(x, i)
        it.invoke(progress=progress)
        ended = any(r.ended_run for r in it.last_run)
        yield ended
        if not ended:
            return


def plan_bytes(it: Interpreter) -> PlanBytes:
    """The constants, plan and state of `it`'s firmware plan: the one its executor runs, else
    built here (PlanError when the model cannot run as one plan: a resource variable whose
    handle is computed at run time, an operator without a C kernel)."""
    from .cortexm.firmware_plan import build_plan, plan_nodes
    from .cortexm.firmware_plan_ir import ENTRY_WORDS
    plan = it.executor.firmware_plan if it.executor is not None else None
    if plan is None:
        plan = build_plan(plan_nodes(it), it.target.name)
    weights = {np.ascontiguousarray(t.data).tobytes() for sub in it.subgraphs for t in sub.tensors
               if t.is_constant and t.nbytes}
    ends = [item.offset for item in plan.constants[1:]] + [plan.constants_bytes]
    model = sum(end - item.offset for item, end in zip(plan.constants, ends) if item.data in weights)
    table = 4 * ENTRY_WORDS * len(plan.entries) + 8       # the entries, mrt_plan_t
    return PlanBytes(model, plan.constants_bytes - model, table, len(plan.plan_blob), len(plan.state_blob),
                     4 * len(plan.flags))


def kernel_measurement(it: Interpreter, stack_bytes: int = 0) -> KernelMeasurement:
    """What the last inference of `it` (emulated, with its flavour's C kernels) measured (its
    deepest operator, or `stack_bytes` if deeper: an earlier inference's), and the image that
    keeps the functions it ran with all they refer to."""
    from .cortexm.firmware_plan import PlanError
    from .cortexm.image import reference_graph
    from .cortexm.memory_map import FLASH_BASE
    executor = it.executor
    graph = reference_graph(executor.mcu.elf.path)
    runtime_roots = [name for name in RUNTIME_ROOTS if name in graph.by_name]
    image = graph.closure([*runtime_roots, *(n for n in executor.functions_used if n in graph.by_name)])
    runtime = graph.closure(runtime_roots)
    try:
        plan, note = plan_bytes(it), ""
    except PlanError as e:
        plan, note = None, " ".join(str(e).split())
    deepest = max([stack_bytes] + [r.stack_bytes for r in it.last_run])
    ended = next((r for r in it.last_run if r.ended_run), None)
    whole = getattr(executor, "last_runtime", None)
    if whole is not None:
        stack = whole.frame_bytes + deepest
        scope = (f"the whole inference (the runtime's frame {whole.frame_bytes} + the deepest "
                 f"operator {deepest})")
    else:
        stack, scope = deepest, "the deepest operator (no invoke measured: no runtime frame)"
    return KernelMeasurement(
        stack, image.static_ram_bytes, image.code_bytes,
        [f"{_record_name(r)} ({r.host_reason or 'no C kernel'})" for r in it.last_run if not r.on_mcu],
        rodata_bytes=image.rodata_bytes, data_init_bytes=image.data_bytes,
        padding_bytes=image.padding_bytes(FLASH_BASE), runtime_code_bytes=runtime.code_bytes,
        plan=plan, plan_note=note, stack_scope=scope, runtime_arena_bytes=executor.mcu.arena_bytes,
        kernel_stack_bytes=deepest,
        functions=sorted(p.name for p in image.pieces if p.kind == "code"),
        ended_at=_record_name(ended) if ended is not None else "")
