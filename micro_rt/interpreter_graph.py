"""TFLM's MicroInterpreterGraph: every subgraph's nodes and the kernels that run them.

The interpreter (interpreter.py) owns the model, the arena and the public API; this graph holds
what runs: one `SubgraphRuntime` per subgraph (its tensors, nodes and registrations) and the
one `MicroContext` kernels see. It resolves the operators, calls the kernels' init, prepare
(with the allocator), invoke, reset and free in TFLM's order, and runs a subgraph when a
control-flow kernel asks (`invoke_subgraph`, through the context). A kernel's error that is
not micro_rt's own becomes a KernelError naming the op (`guarded`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, cast

from .allocator import TflmAllocator
from .context import MicroContext, Tensor
from .errors import KernelError, MicroRtError, UnsupportedOpError
from .flavours import FlavourRegistrations
from .kernel_api import ABORT, KernelContext, Node, Registration, absent_input
from .model import Model, Subgraph
from .op_records import OpRecord, RunRecords
from .resolver import MutableOpResolver
from .targets import Target

# Inputs a builtin cannot do without (TFLM's kernels dereference them unconditionally);
# every builtin needs its input 0. Others (biases, LSTM gates) are optional or checked by kernels.
_REQUIRED_INPUTS = {"CONV_2D": (0, 1), "DEPTHWISE_CONV_2D": (0, 1), "FULLY_CONNECTED": (0, 1),
                    "TRANSPOSE_CONV": (0, 1, 2), "SVDF": (0, 1, 2, 4)}


# Builtins that may have no inputs at all (they run a subgraph or name a resource).
_NO_INPUTS = ("CALL_ONCE", "VAR_HANDLE")


def _check_required_inputs(node: Node, is_custom: bool) -> None:
    if is_custom:
        return
    for slot in _REQUIRED_INPUTS.get(node.op_name, () if node.op_name in _NO_INPUTS else (0,)):
        if slot >= len(node.inputs) or node.inputs[slot] < 0:
            raise KernelError(f"op {node.index} {node.op_name}: {absent_input(node, slot)}")


def _kernel_failure(node: Node, stage: str, e: Exception) -> KernelError:
    """The KernelError naming the op for an exception that is not one of ours."""
    hint = ""
    if "NoneType" in str(e):
        hint = (f" (the kernel needs an input the model leaves out: inputs are "
                f"{list(node.inputs)}, -1 = absent)")
    where = f"subgraph {node.subgraph} " if node.subgraph else ""
    return KernelError(f"{where}op {node.index} {node.op_name} failed in {stage}: "
                       f"{type(e).__name__}: {e}{hint}")


@dataclass
class SubgraphRuntime:
    """One subgraph as the interpreter runs it: its tensors, nodes and their kernels."""
    info: Subgraph
    tensors: list[Tensor]
    nodes: list[Node]
    registrations: list[Registration]

    @classmethod
    def of(cls, sg: Subgraph) -> "SubgraphRuntime":
        nodes = [Node(index=op.index, op_name=op.op_name, version=op.version, inputs=op.inputs,
                      outputs=op.outputs, intermediates=op.intermediates, options=dict(op.options),
                      custom_options=op.custom_options, subgraph=sg.index)
                 for op in sg.operators]
        return cls(sg, [Tensor(info) for info in sg.tensors], nodes, [])


def _host_record(node: Node, status: object = None) -> OpRecord:
    return OpRecord(node.index, node.op_name, on_mcu=False, subgraph=node.subgraph, ended_run=status is ABORT)


def _unresolved_registration(error: UnsupportedOpError) -> Registration:
    def invoke(ctx, node):
        raise UnsupportedOpError(str(error))
    return Registration(invoke=invoke, name="unresolved")


class InterpreterGraph:
    """Every subgraph of `model` with its kernels, and the context they run in (for `target`
    and the flavour `kernels`)."""

    def __init__(self, model: Model, kernels: str, target: Target):
        self.subgraphs = [SubgraphRuntime.of(sg) for sg in model.subgraphs]
        self.context = MicroContext(self.subgraphs[0].tensors, kernels, target)
        self.context.graph = self
        self._kernels = kernels
        self._records: Optional[RunRecords] = None     # while an invoke runs every subgraph
        self._progress: Optional[Callable[[int, int], None]] = None

    @property
    def main(self) -> SubgraphRuntime:
        return self.subgraphs[0]

    def resolve(self, resolver: MutableOpResolver) -> list[UnsupportedOpError]:
        """Each node's registration (the flavour's, flavours.py); every operator without a kernel
        gets one that refuses to run, and is returned."""
        missing = []
        flavour = FlavourRegistrations(self._kernels)
        for sub in self.subgraphs:
            for op in sub.info.operators:
                try:
                    found = resolver.find(op.op_name, op.is_custom, op.version, op.index)
                    sub.registrations.append(flavour.of(found, op.is_custom))
                except UnsupportedOpError as e:
                    if sub.info.index:
                        e = UnsupportedOpError(f"subgraph {sub.info.index}: {e}")
                    missing.append(e)
                    sub.registrations.append(_unresolved_registration(e))
        return missing

    def guarded(self, node: Node, stage: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a kernel callback; anything but our own errors becomes a KernelError naming the op."""
        try:
            return fn(*args)
        except MicroRtError:
            raise
        except Exception as e:  # a kernel bug or bad model data must not escape as a raw error
            raise _kernel_failure(node, stage, e) from e

    def _each(self, stage: str, pick: Callable[[Registration], Optional[Callable[..., Any]]]) -> None:
        """`stage` of every kernel that has one, in every subgraph, with its user data."""
        ctx = self.context
        for sub in self.subgraphs:
            for node, reg in zip(sub.nodes, sub.registrations):
                fn = pick(reg)
                if fn is not None:
                    ctx.node = node
                    self.guarded(node, stage, fn, ctx, node.user_data)
        ctx.node = None

    # ---- TFLM's InitSubgraphs / PrepareSubgraphs / ResetSubgraphs / FreeSubgraphs ----------
    def init_subgraphs(self) -> None:
        ctx = self.context
        for sub in self.subgraphs:
            for node, reg in zip(sub.nodes, sub.registrations):
                if reg.init is not None:
                    ctx.node = node
                    node.user_data = self.guarded(node, "init", reg.init, ctx, node.custom_options)

    def prepare_subgraphs(self, allocator: TflmAllocator) -> None:
        """Every node's prepare in subgraph order, the allocator told where each begins and ends
        (its temporary tensors are the registration's)."""
        ctx = self.context
        for sub in self.subgraphs:
            ctx.tensors, ctx.subgraph = sub.tensors, sub.info.index
            for node, reg in zip(sub.nodes, sub.registrations):
                ctx.node = node
                _check_required_inputs(node, sub.info.operators[node.index].is_custom)
                allocator.begin_node_prepare()
                if reg.prepare is not None:
                    self.guarded(node, "prepare", reg.prepare, ctx, node)
                allocator.end_node_prepare(reg)
        ctx.node, ctx.tensors, ctx.subgraph = None, self.main.tensors, 0

    def reset_subgraphs(self) -> None:
        self._each("reset", lambda reg: reg.reset)

    def free_subgraphs(self) -> None:
        self._each("free", lambda reg: reg.free)

    # ---- invoking ----------------------------------------------------------------------
    def invoke_main(self) -> list[OpRecord]:
        """The main subgraph on the host kernels, with one try around the loop instead of one
        call of `guarded` per operator (the same errors: the failing node is the one being run);
        one record per operator that ran."""
        ctx, main = self.context, self.main
        # the implementation of KernelContext (its Tensor's dtype is None for the types numpy
        # lacks, INT4 and BFLOAT16, which TensorView's protocol leaves out)
        kernel_ctx = cast(KernelContext, ctx)
        node, status = None, None
        try:
            for node, reg in zip(main.nodes, main.registrations):
                ctx.node = node
                status = reg.invoke(kernel_ctx, node)
                if status is ABORT:     # TFLM ends the run at this node
                    break
        except MicroRtError:
            raise
        except Exception as e:  # a kernel bug or bad model data must not escape as a raw error
            assert node is not None             # only a kernel's call raises here: it names the node
            raise _kernel_failure(node, "invoke", e) from e
        ctx.node = None
        ran = main.nodes[:node.index + 1] if node is not None else []
        records = [OpRecord(n.index, n.op_name, False) for n in ran]
        if records:
            records[-1].ended_run = status is ABORT
        return records

    def invoke_each(self, progress: Optional[Callable[[int, int], None]]) -> list[Optional[OpRecord]]:
        """Subgraph 0 on the host, operator by operator (control-flow kernels run other subgraphs
        through invoke_subgraph); one record per operator that ran."""
        self._records, self._progress = RunRecords(), progress
        try:
            self.invoke_subgraph(0)
            return self._records.records
        finally:
            self._records = self._progress = None

    def run_on_host(self, node: Node) -> int:
        """One operator's host kernel, run during an invoke on the virtual MCU (the plan's host
        trap: the arena is the MCU's, so it reads what the C kernels before it wrote); 1 when it
        returned kTfLiteAbort, else 0. A control-flow kernel runs its subgraphs here too."""
        sub, ctx = self.subgraphs[node.subgraph], self.context
        saved = ctx.tensors, ctx.subgraph, ctx.node, self._records
        ctx.tensors, ctx.subgraph, ctx.node = sub.tensors, node.subgraph, node
        if self._records is None:
            self._records = RunRecords()      # what its subgraphs' operators leave is not reported
        try:
            status = self.guarded(node, "invoke", sub.registrations[node.index].invoke, ctx, node)
        finally:
            ctx.tensors, ctx.subgraph, ctx.node, self._records = saved
        return 1 if status is ABORT else 0

    # ---- TFLM's MicroGraph, for control-flow kernels ------------------------------------
    @property
    def num_subgraphs(self) -> int:
        return len(self.subgraphs)

    def subgraph_tensors(self, index: int, outputs: bool) -> list[Tensor]:
        """The tensors of subgraph `index`'s inputs (or outputs), in order."""
        sub = self.subgraphs[index]
        return [sub.tensors[i] for i in (sub.info.outputs if outputs else sub.info.inputs)]

    def invoke_subgraph(self, index: int) -> Any:
        """Run every operator of subgraph `index` during an invoke (TFLM's InvokeSubgraph); the
        kernel context's subgraph and node are restored afterwards. ABORT when an operator
        ended the run."""
        if self._records is None:
            raise KernelError(f"subgraph {index} can only be run while the model is invoked")
        sub, ctx = self.subgraphs[index], self.context
        saved = ctx.tensors, ctx.subgraph, ctx.node
        ctx.tensors, ctx.subgraph = sub.tensors, index
        try:
            for node, reg in zip(sub.nodes, sub.registrations):
                if self._progress is not None and index == 0:
                    self._progress(node.index, len(self.main.nodes))
                ctx.node = node
                self._records.start(index, node.index)
                status = self.guarded(node, "invoke", reg.invoke, ctx, node)
                self._records.finish(index, _host_record(node, status))
                if status is ABORT:     # TFLM ends the run at this node
                    return ABORT
        finally:
            ctx.tensors, ctx.subgraph, ctx.node = saved
        return None
