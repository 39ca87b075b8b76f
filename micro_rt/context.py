"""What kernels see at run time: tensors and the context (TFLM's TfLiteTensor and MicroContext).

The interpreter makes one `Tensor` per tensor of the model and one `MicroContext`, and hands
the context to every kernel callback, bound to the node being run. Kernels reach the arena only
through it: persistent bytes and scratch requests go to the allocator, so its accounting sees
every byte, and scratch buffers come back as views of the planned arena.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .allocator import TflmAllocator
from .errors import KernelError
from .flavours import FlavouredTarget
from .kernel_api import Node
from .model import TensorInfo
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


class MicroContext:
    """The KernelContext the interpreter hands to kernels, bound to the node being run."""

    def __init__(self, tensors: list[Tensor], kernels: str, target: Target):
        self.tensors = tensors
        self.kernels: str = kernels
        self.node: Optional[Node] = None
        self.target = FlavouredTarget(target, self.kernels, self)
        self.allocator: Optional[TflmAllocator] = None     # set when planning starts
        self.scratch_views: list[np.ndarray] = []           # once the arena is laid out
        # What TFLM kernels keep in C statics across nodes (CIRCULAR_BUFFER's prepare count):
        # per interpreter here, by the kernel's name.
        self.kernel_statics: dict = {}

    def tensor(self, index: int) -> Optional[Tensor]:
        return None if index < 0 else self.tensors[index]

    def input(self, node: Node, i: int) -> Optional[Tensor]:
        if i >= len(node.inputs):
            return None
        return self.tensor(node.inputs[i])

    def output(self, node: Node, i: int) -> Tensor:
        if i >= len(node.outputs):
            raise KernelError(f"op {node.index} {node.op_name}: has {len(node.outputs)} outputs, "
                              f"kernel asked for output {i}")
        return self.tensors[node.outputs[i]]

    def allocate_persistent(self, nbytes: int) -> int:
        return self.allocator.allocate_persistent(int(nbytes))

    def request_scratch(self, nbytes: int) -> int:
        if self.node is None:
            raise KernelError("request_scratch is only allowed in prepare")
        return self.allocator.request_scratch(self.node.index, int(nbytes))

    def scratch(self, index: int) -> np.ndarray:
        return self.scratch_views[index]
