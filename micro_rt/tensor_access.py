"""The tensor access of tflite_micro's interpreter API: inputs set and outputs read by index,
any tensor read by index and subgraph, and their details in tflite_micro's dicts (the same keys
and types), with micro_rt's errors for a bad index, type, shape or a tensor not kept.
`Interpreter` (interpreter.py) takes it as a base: it holds the model, its subgraphs and tensors.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .context import Tensor
from .model import Model
from .errors import InputError, InputIndexError, InputTypeError, TensorNotKeptError


def check_index(index: Any, count: int, kind: str) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise InputTypeError(f"{kind} index must be an integer, got {type(index).__name__} {index!r}")
    if not 0 <= index < count:
        raise InputIndexError(f"{kind} index {index} is out of range: model has {count} {kind}s")
    return int(index)


class TensorAccess:
    """set_input / get_output / get_tensor / GetTensor / get_*_details over `self.model`,
    `self.tensors` (the main subgraph's), `self.subgraphs` and `self.preserve_all_tensors`."""

    model: Model
    tensors: list[Tensor]
    subgraphs: list
    preserve_all_tensors: bool

    @property
    def num_inputs(self) -> int:
        return len(self.model.main.inputs)

    @property
    def num_outputs(self) -> int:
        return len(self.model.main.outputs)

    def _io_tensor(self, index: int, outputs: bool) -> Tensor:
        indices = self.model.main.outputs if outputs else self.model.main.inputs
        kind = "output" if outputs else "input"
        return self.tensors[indices[check_index(index, len(indices), kind)]]

    def set_input(self, value: np.ndarray, index: int = 0) -> None:
        t = self._io_tensor(index, outputs=False)
        if t.dtype is None:
            raise InputError(f"input {index} ('{t.name}') has type {t.type_name}, which micro_rt "
                             "cannot fill from a numpy array")
        if t.is_constant:
            raise InputError(f"input {index} ('{t.name}') is a constant of the model and cannot "
                             "be set")
        try:
            value = np.asarray(value)
        except Exception as e:  # whatever the object's __array__ raises
            raise InputError(f"input {index} ('{t.name}'): cannot convert the value to an "
                             f"array: {type(e).__name__}: {e}") from None
        if value.dtype != t.dtype:
            raise InputError(f"input {index} ('{t.name}') expects {t.dtype.name}, got {value.dtype.name}")
        if tuple(value.shape) != tuple(t.shape):
            raise InputError(f"input {index} ('{t.name}') expects shape {list(t.shape)}, got "
                             f"{list(value.shape)}")
        t.data[...] = value

    def get_output(self, index: int = 0) -> np.ndarray:
        return self._io_tensor(index, outputs=True).data.copy()

    def get_tensor(self, index: int, subgraph: int = 0) -> np.ndarray:
        """A tensor's current data; intermediate tensors only with preserve_all_tensors=True."""
        sub = self.subgraphs[check_index(subgraph, len(self.subgraphs), "subgraph")]
        t = sub.tensors[check_index(index, len(sub.tensors), "tensor")]
        io = set(self.model.main.inputs) | set(self.model.main.outputs) if subgraph == 0 else set()
        if not (self.preserve_all_tensors or t.is_constant or t.is_variable or t.index in io):
            raise TensorNotKeptError(f"tensor {index} ('{t.name}') shares memory with others; "
                                     "create the interpreter with preserve_all_tensors=True (or "
                                     "InterpreterConfig.kPreserveAllTensors) to read it")
        return t.data.copy()

    def GetTensor(self, tensor_index: int, subgraph_index: int = 0) -> dict:  # noqa: N802 (tflite_micro's name)
        """tflite_micro's GetTensor: {"dtype", "shape", "tensor_data"} of a tensor of any
        subgraph (intermediate ones need preserve_all_tensors, as in tflite_micro)."""
        data = self.get_tensor(tensor_index, subgraph_index)
        t = self.subgraphs[int(subgraph_index)].tensors[int(tensor_index)]
        return {"dtype": t.dtype.type if t.dtype is not None else None,
                "shape": np.array(t.shape, np.int32), "tensor_data": data}

    def _details(self, t: Tensor) -> dict:
        """The dict tflite_micro returns, with the same keys and types."""
        return {"dtype": t.dtype.type if t.dtype is not None else None,
                "shape": np.array(t.shape, np.int32),
                "quantization_parameters": {"scales": t.scales.astype(np.float32),
                                            "zero_points": t.zero_points.astype(np.int32),
                                            "quantized_dimension": int(t.quantized_dimension)}}

    def get_input_details(self, index: int = 0) -> dict:
        return self._details(self._io_tensor(index, outputs=False))

    def get_output_details(self, index: int = 0) -> dict:
        return self._details(self._io_tensor(index, outputs=True))
