"""TFLM's MicroResourceVariables: the buffers behind VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE.

The application makes one before the interpreter (tflite-micro's Python runtime does, with one
slot per distinct VAR_HANDLE shared_name in the model), so its object and its slot array are
the first persistent allocations after the allocator's own objects. VAR_HANDLE's prepare gives
each (container, shared_name) an id; the first ASSIGN_VARIABLE prepared for an id allocates the
variable's buffer in the tail (the size of the value assigned) and fills it with that value's
zero point cast to int8 (0 without quantization); READ_VARIABLE and ASSIGN_VARIABLE copy whole
buffers; `reset_all` (the interpreter's reset()) refills every buffer with that default.

micro_rt keeps the buffers in the interpreter's memory just after the planned head (the
interpreter lays them out with `layout`), so the virtual MCU's copies reach them too; each
stands for its tail allocation and is 16-byte aligned like it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .arena import ARENA_ALIGNMENT, align_up
from .errors import KernelError
from .model import Model


def resource_variable_count(model: Model) -> int:
    """The slots tflite-micro's runtime gives MicroResourceVariables: distinct shared names
    of the model's VAR_HANDLE operators, over every subgraph."""
    names = {op.options.get("shared_name") for sg in model.subgraphs for op in sg.operators
             if op.op_name == "VAR_HANDLE" and not op.is_custom}
    return len(names)


class ResourceVariable:
    """One variable, shaped like a tensor for the copies that read and write it (raw bytes)."""

    dtype = None
    is_constant = False
    is_variable = True
    shape: tuple[int, ...] = ()

    def __init__(self, resource_id: int, container: Optional[str], shared_name: str):
        self.index = resource_id
        self.container, self.shared_name = container, shared_name
        self.name = f"resource variable {resource_id} ('{shared_name}')"
        self.nbytes = 0
        self.default_value = 0
        self.allocated = False
        self.region = 0                      # offset within the variables' memory
        self.offset: Optional[int] = None    # offset in the interpreter's memory once laid out
        self.data: Optional[np.ndarray] = None


class ResourceVariables:
    """TFLM's MicroResourceVariables for one interpreter."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.variables: list[ResourceVariable] = []
        self._end = 0                         # bytes the buffers take, each 16-aligned

    def create_id(self, container: Optional[str], shared_name: str) -> int:
        """CreateIdIfNoneFound: the id of an existing (container, shared_name) or a new one.
        A null container matches any, as in TFLM."""
        for v in self.variables:
            if (container is None or container == v.container) and shared_name == v.shared_name:
                return v.index
        if len(self.variables) >= self.capacity:
            raise KernelError(f"Failed to allocate resource variable. Maximum resource variable "
                              f"count ({self.capacity}) reached.")
        self.variables.append(ResourceVariable(len(self.variables), container, shared_name))
        return len(self.variables) - 1

    def variable(self, resource_id: int) -> ResourceVariable:
        """The variable of an id (TFLM's wording for a bad one, whatever the access)."""
        if not 0 <= resource_id < len(self.variables):
            raise KernelError(f"Attempting to read non-existent resource variable {resource_id}")
        return self.variables[resource_id]

    def allocate(self, resource_id: int, nbytes: int, zero_point: Optional[int],
                 allocate_persistent: Callable[[int], Any]) -> None:
        """TFLM's Allocate: the first call for an id takes `nbytes` of tail for its buffer; the
        default value is the value tensor's zero point, cast to int8 (TFLM's memset byte)."""
        v = self.variable(resource_id)
        if v.allocated:
            return
        allocate_persistent(nbytes)
        v.allocated, v.nbytes = True, int(nbytes)
        v.default_value = 0 if zero_point is None else int(np.array(zero_point).astype(np.int8))
        v.region = self._end
        self._end = align_up(self._end + v.nbytes, ARENA_ALIGNMENT)

    @property
    def nbytes(self) -> int:
        """Memory the buffers take when laid out one after another, each 16-aligned."""
        return self._end

    def layout(self, memory: np.ndarray, base: int) -> None:
        """Point every allocated buffer at memory[base + its place]: `base` is 16-aligned."""
        for v in self.variables:
            if v.allocated:
                v.offset = base + v.region
                v.data = memory[v.offset:v.offset + v.nbytes]

    def reset_all(self) -> None:
        """ResetAll: every buffer back to its default byte."""
        for v in self.variables:
            if v.data is not None:
                v.data[...] = v.default_value & 0xFF

    def checked_buffer(self, resource_id: int, tensor: Any, action: str) -> ResourceVariable:
        """The variable a READ_VARIABLE reads into `tensor` or an ASSIGN_VARIABLE writes from
        it: it must exist, have its buffer, and hold as many bytes as the tensor."""
        v = self.variable(resource_id)
        if not v.allocated:
            raise KernelError(
                "Attempting to assign from a TfLiteEvalTensor before the resource buffer has been "
                "allocated. Make sure to call AssignResourceVariable with a TfLiteTensor first."
                if action == "assign" else
                f"resource variable {resource_id} ('{v.shared_name}') is read before any "
                "ASSIGN_VARIABLE gave it a buffer (TFLM reads through a null pointer here)")
        if tensor.nbytes != v.nbytes:
            raise KernelError(f"resource variable {resource_id} ('{v.shared_name}') holds {v.nbytes} "
                              f"bytes, tensor {tensor.index} ('{tensor.name}') has {tensor.nbytes}: "
                              f"TFLM would {action} past the end of one of them")
        return v
