"""The contract between the interpreter and a kernel, shaped like TFLM's TfLiteRegistration.

A kernel is a `Registration` of four callables. The interpreter calls them in TFLM's order:
`init` once per node while the model is loaded (its return value becomes `node.user_data`),
`prepare` once per node while the arena is planned (check shapes and types, precompute
constants, request scratch, account persistent bytes), `invoke` on every inference, `free`
when the interpreter is dropped.

Kernels never allocate arena memory themselves: they ask the `KernelContext`, exactly as a
TFLM kernel asks `TfLiteContext`, so the arena accounting sees every byte.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol, Sequence, Union

import numpy as np


class TensorView(Protocol):
    """What a kernel sees of one tensor (see `micro_rt.context.Tensor`)."""

    index: int
    name: str
    dtype: np.dtype            # numpy dtype (np.int8, np.float32, ...)
    shape: tuple[int, ...]
    scales: np.ndarray         # float32, empty when not quantized
    zero_points: np.ndarray    # int64, empty when not quantized
    quantized_dimension: int
    is_constant: bool          # data lives in the model (weights)
    is_variable: bool

    @property
    def data(self) -> np.ndarray:
        """Constant: a read-only array over the model buffer. Otherwise: a view of the arena at
        the planned offset, valid during invoke only (prepare sees no activation data)."""
        ...

    @property
    def nbytes(self) -> int: ...

    @property
    def is_bound(self) -> bool:
        """Whether the tensor has data yet (a constant, or one bound in prepare or invoke)."""
        ...

    @property
    def type_name(self) -> str:
        """The dtype as TFLM names it in messages ("int8", "float32", "bool")."""
        ...


class KernelContext(Protocol):
    """The services TFLM's TfLiteContext offers, as the interpreter implements them."""

    target: Any                # micro_rt.targets.Target (pointer size, struct sizes)

    def tensor(self, index: int) -> Optional[TensorView]:
        """The tensor at a model index; None for -1 (an omitted optional input)."""

    def input(self, node: "Node", i: int) -> Optional[TensorView]:
        """Input `i`, or None when the operator omits it (-1, or fewer inputs): an optional one."""

    def required_input(self, node: "Node", i: int) -> TensorView:
        """Input `i` of an operator that cannot go without it (TFLM's GetInput): KernelError
        naming the operator and the input when the model omits it."""

    def output(self, node: "Node", i: int) -> TensorView: ...

    def allocate_persistent(self, nbytes: int) -> int:
        """Account `nbytes` of persistent (tail) arena memory; returns its arena offset."""

    def request_scratch(self, nbytes: int) -> int:
        """Prepare only: ask for a scratch buffer planned with the tensors; returns its index."""

    def scratch(self, index: int) -> np.ndarray:
        """Invoke only: the uint8 arena view of a scratch buffer requested in prepare."""

    # TFLM's MicroGraph, for control-flow and resource-variable kernels
    @property
    def num_subgraphs(self) -> int: ...

    resource_variables: Any    # micro_rt.resource_variables.ResourceVariables, or None

    def subgraph_inputs(self, index: int) -> list[TensorView]: ...

    def subgraph_outputs(self, index: int) -> list[TensorView]: ...

    def invoke_subgraph(self, index: int) -> None:
        """Run every operator of subgraph `index` (TFLM's MicroGraph::InvokeSubgraph)."""

    def copy_tensors(self, pairs: list) -> None:
        """Copy each (source, destination)'s bytes, as TFLM's control-flow kernels memcpy."""

    def set_data_in_prepare(self, tensor: TensorView, data: np.ndarray) -> None:
        """Prepare only: point an output at the kernel's own data; it is then not planned."""


# What an invoke returns to end the run at its node, as TFLM's graph stops when a kernel
# returns kTfLiteAbort (CIRCULAR_BUFFER until its period comes round); any other return
# value means "go on".
ABORT = "kTfLiteAbort"


@dataclass
class Node:
    """One operator of a subgraph."""

    index: int
    op_name: str                       # builtin name ("CONV_2D") or the custom code
    version: int
    inputs: tuple[int, ...]            # -1 marks an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...] = ()
    options: dict = field(default_factory=dict)   # builtin options, schema field names
    custom_options: Optional[bytes] = None
    user_data: Any = None              # whatever init (or prepare) stores
    subgraph: int = 0                  # the subgraph the operator belongs to


def absent_input(node: Node, i: int) -> str:
    """What is wrong when an operator lacks an input it cannot go without (the one wording of
    the interpreter's load check, `kernel_util.require_inputs` and `required_input`)."""
    return f"input {i} is absent (inputs {list(node.inputs)}, -1 = absent); this operator needs it"


# What a kernel's Prepare reads through AllocateTempInputTensor / AllocateTempOutputTensor, in
# call order (micro_rt/kernel_temps.py reads it): a string such as "i0 i1 o0 | i0 i2" (`i2`
# input 2, `o0` output 0, `i*` every input, `|` where the kernel's own calls end and a helper's
# begin), or a function of the operator (model_records.OperatorInfo) and its subgraph's tensors
# (TensorInfo) giving one, for a Prepare whose calls depend on the types or the input count.
TempRule = Union[str, Callable[[Any, Sequence[Any]], str]]


@dataclass
class Registration:
    """A kernel: TFLM's init / free / prepare / invoke, and what its Prepare costs the arena
    beyond what it asks for: its temporary tensors."""

    invoke: Callable[[KernelContext, Node], Any]     # None, or ABORT (TFLM's kTfLiteAbort)
    prepare: Optional[Callable[[KernelContext, Node], None]] = None
    init: Optional[Callable[[KernelContext, Optional[bytes]], Any]] = None
    free: Optional[Callable[[KernelContext, Any], None]] = None
    name: str = ""
    # TFLM's TFLMRegistration::reset: clear state kept across invokes (interpreter.reset()).
    reset: Optional[Callable[[KernelContext, Any], None]] = None
    # Non-empty for a kernel whose computation micro_rt does not simulate (an NPU's operator):
    # why. Its init/prepare account the arena exactly; its invoke refuses to run.
    not_simulated: str = ""
    # The temporary TfLiteTensors TFLM's Prepare makes (read from its source); None when not
    # known (a user's kernel): then none are counted.
    temps: Optional[TempRule] = None
    # True when TFLM's Prepare allocates its persistent data only after its last temporary
    # tensor: TFLM checks that allocation against the head alone, so it may overlap them.
    persistent_after_temps: bool = False


@dataclass(frozen=True)
class OpDataInit:
    """TFLM's usual init: allocate the kernel's C OpData struct (by its TFLM name, so the
    target's layout decides the bytes; None: the kernel keeps none in the arena) and return
    the Python object that stands for it. A record, not a closure, so that a flavour's glue
    (micro_rt/flavours.py) can make the same object in its own, larger struct."""

    struct: Optional[str]
    make: Callable[[], Any]

    def __call__(self, ctx: KernelContext, custom_options: Optional[bytes]) -> Any:
        if self.struct is not None:
            ctx.allocate_persistent(ctx.target.sizeof(self.struct))
        return self.make()


def op_data_init(struct: Optional[str], make: Callable[[], Any]) -> OpDataInit:
    """TFLM's usual init for OpData `struct` made as `make()` (OpDataInit)."""
    return OpDataInit(struct, make)
