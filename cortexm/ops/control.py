"""Control flow and resource variables on the virtual MCU: the copies TFLM's kernels make.

TFLM's IF, WHILE, READ_VARIABLE and ASSIGN_VARIABLE move whole tensors with std::memcpy (IF:
the branch's inputs in, its outputs back; WHILE: the loop variables between the op and its
cond and body subgraphs on every iteration; the variables: the buffer to or from a tensor);
CALL_ONCE and VAR_HANDLE copy nothing. What to copy is decided by the host kernels
(micro_rt.kernels.control_flow, resource_variables) on the same arena bytes the MCU writes;
each batch of copies comes here as a `CopyStep` and runs as mrt_copy calls (the firmware's
memcpy), counted as the control-flow operator's cycles. The operators of the subgraphs run as
operators of their own.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .context import CallContext, KernelCall
from .registry import CONTROL, KernelKey, OpKernel


@dataclass
class CopyStep:
    """One batch of copies of a control-flow or resource-variable operator, shaped like a node:
    tensor keys 0..n-1 are the sources and n..2n-1 the destinations, pairwise."""
    index: int
    op_name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: dict = field(default_factory=dict)
    subgraph: int = 0                    # the operator's subgraph, as a node has it

    @classmethod
    def of(cls, node, pairs: int) -> "CopyStep":
        return cls(node.index, node.op_name, tuple(range(pairs)), tuple(range(pairs, 2 * pairs)))


def run_copies(c: CallContext) -> list[KernelCall]:
    """memcpy of each source over its destination (both hold the same bytes)."""
    return [c.call("mrt_copy", c.addr_of_index(src), c.addr_of_index(dst), c.tensors[dst].nbytes)
            for src, dst in zip(c.node.inputs, c.node.outputs)]


KERNELS: dict[KernelKey, OpKernel] = {
    **{(op, CONTROL): OpKernel(run_copies) for op in ("IF", "WHILE", "CALL_ONCE", "VAR_HANDLE",
                                                      "READ_VARIABLE", "ASSIGN_VARIABLE")},
}
