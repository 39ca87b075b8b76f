"""The firmware plan's IR (cortexm/firmware_plan.py says how it is built and emitted): the plan's
entries and regions, relocations, constants, and the program's nodes (kernel calls, host
entries, labels, jumps, marks, stores, state flags). A module of its own, so that what builds
nodes (firmware_plan_control.py) and what emits them (firmware_plan_c.py) import the records and
not the builder.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from micro_rt.errors import EmulationError

REGIONS = ("arena", "constants", "plan", "state")
MAX_ARGS = 16              # argument words per call the runtime passes (mrt_runtime.h MRT_PLAN_MAX_ARGS)
ENTRY_WORDS = 2 + MAX_ARGS  # mrt_entry_t: the kernel's address, the control word, the argument words

class PlanError(EmulationError):
    """A node's kernel calls cannot be planned ahead (it becomes a host entry, HostNode), or the
    plan cannot be written into the machine; says why."""


@dataclass(frozen=True)
class Reloc:
    """A pointer word: `offset` bytes into `region` (one of REGIONS)."""
    region: str
    offset: int


Word = Union[int, Reloc]


@dataclass(frozen=True)
class ConstantItem:
    """One constant in the constants region: its bytes at `offset` (aligned to `align`)."""
    offset: int
    data: bytes
    align: int


CALL, JUMP_IF_FALSE, JUMP, ENTER, LEAVE = "call", "jump_if_false", "jump", "enter", "leave"
STORE, NOTE = "store", "note"
OPCODES = {CALL: 0, JUMP_IF_FALSE: 1, JUMP: 2, ENTER: 3, LEAVE: 4, STORE: 5, NOTE: 6}   # mrt_runtime.h MRT_PLAN_*


@dataclass
class PlanEntry:
    """One step of the plan: a kernel call (an operator may need several, in order), or, for
    control flow (IF, WHILE), a jump (`target`: an entry index; JUMP_IF_FALSE jumps when the
    byte at args[0] is zero) or the start / end of a control-flow operator (ENTER / LEAVE: the
    runtime reports them to the profiler, nothing else)."""
    subgraph: int
    node_index: int
    op_name: str
    symbol: str
    args: tuple[Word, ...]
    blocks: tuple[tuple[str, int, int], ...]   # (region, offset, length) of its argument structs
    refusal: str = ""       # why a nonzero return refuses the invoke (KernelCall); "": the return means nothing
    after: Optional[Callable[[Any], None]] = None   # run after the invoke with an AddressReader
    opcode: str = CALL
    target: int = 0
    ends_run: bool = False  # a nonzero return ends the invoke here, not an error (KernelCall)
    host_reason: str = ""   # a HOST_SYMBOL call: why the operator runs on the host (not counted)

    @property
    def on_host(self) -> bool:
        """The entry traps into the emulator, which runs the operator's host kernel."""
        return bool(self.host_reason)

    @property
    def control(self) -> int:
        """mrt_entry_t.control: opcode << 8 | MRT_PLAN_CHECKED (1) | MRT_PLAN_ENDS_RUN (2)."""
        return OPCODES[self.opcode] << 8 | int(bool(self.refusal)) | 2 * int(self.ends_run)


@dataclass
class FirmwarePlan:
    core: str
    entries: list[PlanEntry]
    plan_blob: bytes
    plan_relocs: tuple[tuple[int, Reloc], ...]
    state_blob: bytes
    state_relocs: tuple[tuple[int, Reloc], ...]
    constants: tuple[ConstantItem, ...]
    constants_bytes: int
    arena_bytes: int
    arena_misalign: int = 0
    nodes: list = field(default_factory=list, repr=False)     # the program it was built from
    flags: tuple = ()       # ((state offset, StateFlag), ...)

    def region_size(self, region: str) -> int:
        return {"arena": self.arena_bytes, "constants": self.constants_bytes,
                "plan": len(self.plan_blob), "state": len(self.state_blob)}[region]


@dataclass
class PlanNode:
    """What a runner describes one node's calls from (as McuExecutor.run passes it)."""
    node: Any
    tensors: dict          # tensor index -> tensor
    offsets: dict          # tensor index -> arena offset (non-constant tensors)
    scratch: Any = None    # the node's scratch offset(s), in request order
    persistent: tuple = ()  # arena offsets of its persistent buffers (ops.persistent_requests order)
    kernels: str = "cmsis-nn"   # the C kernels' flavour (ops.REFERENCE_KERNELS)


@dataclass
class HostNode:
    """A node the plan runs on the host (`reason`: why it has no C kernel call planned): the
    runtime calls HOST_SYMBOL, whose breakpoint the emulator answers with the host kernel."""
    node: Any
    reason: str


@dataclass
class Label:
    """A place in a program (`build_plan`): the index of the entry that follows it."""
    name: str


@dataclass(eq=False)
class StateFlag:
    """A byte the runtime keeps between invokes in the state region (one per flag object):
    `get()` is its value as the host kernel's data has it (written before each invoke, and the
    state blob's initial value), `put(value)` gives the host the value the invoke left."""
    name: str
    get: Callable[[], int]
    put: Callable[[int], None]


@dataclass
class Jump:
    """Jump to `label`; with `condition` (a BOOL tensor's arena offset, or a StateFlag), only
    when it is false (zero)."""
    node: Any
    label: str
    condition: Union[None, int, StateFlag] = None


@dataclass
class Mark:
    """A control-flow operator starts (ENTER) or ends (LEAVE); an operator with no work of its
    own runs (NOTE)."""
    node: Any
    opcode: str


@dataclass
class Store:
    """Write `value` (a byte) to `flag`."""
    node: Any
    flag: StateFlag
    value: int


def require_placed(t, node) -> None:
    """A non-constant tensor must have its place in the arena before a call can point at it."""
    if not t.is_constant and t.offset is None:
        raise PlanError(f"op {node.index} {node.op_name}: tensor '{t.name}' has no place in the arena")
