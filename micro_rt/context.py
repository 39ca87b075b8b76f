"""What kernels see at run time: tensors and the context (TFLM's TfLiteTensor and MicroContext).

The interpreter makes one `Tensor` per tensor of every subgraph and one `MicroContext`, and
hands the context to every kernel callback, bound to the node being run and its subgraph.
Kernels reach the arena only through it: persistent bytes and scratch requests go to the
allocator, so its accounting sees every byte, and scratch buffers come back as views of the
planned arena. Control-flow and resource-variable kernels also get TFLM's MicroGraph services
from it (run a subgraph, its input and output tensors, the resource variables) and copy tensor
bytes through it, so those copies run on the virtual MCU when the model does.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .allocator import TflmAllocator
from .errors import KernelError
from .kernel_api import Node, absent_input
from .kernels.kernel_util import kernel_error
from .model import TensorInfo
from .resource_variables import ResourceVariable, ResourceVariables
from .targets import Target


class Tensor:
    """A tensor as kernels see it (`kernel_api.TensorView`)."""

    def __init__(self, info: TensorInfo):
        self.info = info
        self.index, self.name = info.index, info.name
        self.dtype = info.dtype
        self.shape = info.shape
        q = info.quantization
        self.scales = q.scales if q is not None else np.zeros(0, np.float32)
        self.zero_points = q.zero_points if q is not None else np.zeros(0, np.int64)
        self.quantized_dimension = q.quantized_dimension if q is not None else 0
        self.is_constant = info.is_constant
        self.is_variable = info.is_variable
        self.offset: Optional[int] = None          # arena offset once planned
        self._data: Optional[np.ndarray] = info.data

    @property
    def type_name(self) -> str:
        return self.info.type_name

    @property
    def nbytes(self) -> int:
        return self.info.nbytes

    @property
    def data(self) -> np.ndarray:
        if self._data is None and self.info.packed_int4 is not None:
            self._data = self.info.int4_values()     # unpacked when a kernel first reads it
        if self._data is None:
            raise KernelError(f"tensor {self.index} ('{self.name}') has no data yet: activation "
                              "data exists only during invoke")
        return self._data

    @property
    def is_bound(self) -> bool:
        """Has data: the model's (constants) or memory given with `bind`."""
        return self._data is not None

    def bind(self, data: np.ndarray) -> None:
        self._data = data

    def __repr__(self) -> str:
        return f"Tensor({self.index}, '{self.name}', {self.type_name}{list(self.shape)})"


def reset_variable(t: Tensor) -> None:
    """TFLM's ResetVariableTensors (also run at the end of AllocateTensors): int8 variables
    are filled with their zero point (memset of that byte), every other type with zeros."""
    value = 0
    if t.type_name == "INT8" and len(t.zero_points):
        value = int(t.zero_points[0])
    t.data.view(np.uint8)[...] = value & 0xFF


def raw_bytes(data: np.ndarray) -> np.ndarray:
    """A tensor's bytes as a flat uint8 view (the memory TFLM's memcpy sees)."""
    return np.asarray(data).reshape(-1).view(np.uint8)


def _label(t: Any) -> str:
    return t.name if isinstance(t, ResourceVariable) else f"tensor {t.index} ('{t.name}')"


def _address(data: np.ndarray) -> int:
    return np.asarray(data).__array_interface__["data"][0]


class MicroContext:
    """The KernelContext the interpreter hands to kernels, bound to the node being run and
    to its subgraph (`tensors` are that subgraph's)."""

    def __init__(self, tensors: list[Tensor], kernels: str, target: Target):
        self.tensors = tensors
        self.subgraph = 0
        self.kernels: str = kernels
        self.node: Optional[Node] = None
        self.target = target
        self.allocator: Optional[TflmAllocator] = None     # set when planning starts
        self.scratch_views: list[np.ndarray] = []           # once the arena is laid out
        self.graph: Any = None          # interpreter_graph.InterpreterGraph: runs subgraphs, holds their tensors
        self.resource_variables: Optional[ResourceVariables] = None
        # What TFLM kernels keep in C statics across nodes (CIRCULAR_BUFFER's prepare count):
        # per interpreter here, by the kernel's name.
        self.kernel_statics: dict = {}

    def tensor(self, index: int) -> Optional[Tensor]:
        return None if index < 0 else self.tensors[index]

    def input(self, node: Node, i: int) -> Optional[Tensor]:
        if i >= len(node.inputs):
            return None
        return self.tensor(node.inputs[i])

    def required_input(self, node: Node, i: int) -> Tensor:
        tensor = self.input(node, i)
        if tensor is None:
            raise kernel_error(node, absent_input(node, i))
        return tensor

    def output(self, node: Node, i: int) -> Tensor:
        if i >= len(node.outputs):
            raise KernelError(f"op {node.index} {node.op_name}: has {len(node.outputs)} outputs, "
                              f"kernel asked for output {i}")
        return self.tensors[node.outputs[i]]

    def _planning(self, what: str) -> TflmAllocator:
        """The allocator while the model is planned (init and prepare); KernelError otherwise."""
        if self.allocator is None:
            raise KernelError(f"{what} is only allowed while the model is planned (init, prepare)")
        return self.allocator

    def allocate_persistent(self, nbytes: int) -> int:
        return self._planning("allocate_persistent").allocate_persistent(int(nbytes))

    def request_scratch(self, nbytes: int) -> int:
        if self.node is None:
            raise KernelError("request_scratch is only allowed in prepare")
        return self._planning("request_scratch").request_scratch(self.node.index, int(nbytes), self.subgraph)

    def set_data_in_prepare(self, tensor: Tensor, data: np.ndarray) -> None:
        """Prepare only: point `tensor` at the kernel's own persistent data (TFLM's VAR_HANDLE
        points its output at its op data); such a tensor is not planned in the head."""
        tensor.bind(data)
        self._planning("set_data_in_prepare").set_data_in_prepare(self.subgraph, tensor.index)

    # ---- TFLM's MicroGraph, for control-flow kernels -----------------------------------
    @property
    def num_subgraphs(self) -> int:
        return self.graph.num_subgraphs

    def subgraph_inputs(self, index: int) -> list[Tensor]:
        return self.graph.subgraph_tensors(index, outputs=False)

    def subgraph_outputs(self, index: int) -> list[Tensor]:
        return self.graph.subgraph_tensors(index, outputs=True)

    def invoke_subgraph(self, index: int) -> None:
        """Run every operator of subgraph `index` (TFLM's MicroGraph::InvokeSubgraph); the
        node and subgraph this context is bound to are restored afterwards."""
        self.graph.invoke_subgraph(index)

    def copy_tensors(self, pairs: Sequence[tuple[Any, Any]]) -> None:
        """Copy each source's bytes over its destination's, as TFLM's control-flow kernels do
        (CopyOpInputsToSubgraphInputs and friends): both must hold the same number of bytes,
        and tensors sharing memory are not copied. Sources and destinations are tensors or
        resource variables. On the virtual MCU the firmware plan makes these copies as kernel
        calls (firmware_plan_control.py); a control-flow kernel runs here only on the host."""
        node = self.node
        if node is None:
            raise KernelError("copy_tensors is only allowed inside a kernel's invoke")
        todo = []
        for src, dst in pairs:
            if src.nbytes != dst.nbytes:
                raise KernelError(f"op {node.index} {node.op_name}: cannot copy {_label(src)} "
                                  f"({src.nbytes} bytes) to {_label(dst)} ({dst.nbytes} bytes): TFLM "
                                  "requires equal sizes and fails the invoke")
            if src.nbytes and _address(src.data) != _address(dst.data):
                todo.append((src, dst))
        if not todo:
            return
        for src, dst in todo:
            raw_bytes(dst.data)[...] = raw_bytes(src.data)

    def scratch(self, index: int) -> np.ndarray:
        return self.scratch_views[index]
