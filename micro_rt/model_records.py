"""The records a .tflite file is read into (model.py reads and checks them): tensors with their
quantization, operators, subgraphs, operator codes, signatures, the model. Their own module, so
that what reads the records (subgraphs.py's call-graph checks) does not import the reader.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import schema
from .errors import ModelError


@dataclass
class Quantization:
    scales: np.ndarray                  # float32
    zero_points: np.ndarray             # int64
    quantized_dimension: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scales.size > 1


@dataclass
class TensorInfo:
    index: int
    name: str
    type_name: str                      # "INT8", "FLOAT32", ...
    shape: tuple[int, ...]
    buffer: int
    quantization: Optional[Quantization]
    is_variable: bool = False
    shape_signature: Optional[tuple[int, ...]] = None
    data: Optional[np.ndarray] = None   # constant data (read-only view of the file)
    # An INT4 constant stays packed (two values a byte, as in the file) until something reads
    # it: unpacking a large one nothing uses would cost twice its size in memory for nothing.
    packed_int4: Optional[memoryview] = None

    @property
    def dtype(self) -> Optional[np.dtype]:
        dt = schema.NUMPY_DTYPE.get(self.type_name)
        return np.dtype(dt) if dt is not None else None

    @property
    def element_count(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes the tensor takes in the arena (TFLM's TfLiteEvalTensorByteLength)."""
        return self.element_count * schema.ELEMENT_SIZE.get(self.type_name, 0)

    @property
    def is_constant(self) -> bool:
        return self.data is not None or self.packed_int4 is not None

    def int4_values(self) -> np.ndarray:
        """An INT4 constant's values, unpacked to int8 (low nibble first), shaped."""
        if self.packed_int4 is None:
            raise ModelError(f"tensor {self.index} ('{self.name}') is not a packed INT4 constant")
        return unpack_int4(self.packed_int4, self.element_count).reshape(self.shape)


@dataclass
class OperatorInfo:
    index: int
    opcode_index: int
    op_name: str
    version: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...] = ()
    options: dict = field(default_factory=dict)
    custom_options: Optional[bytes] = None
    is_custom: bool = False


@dataclass
class Subgraph:
    index: int
    name: str
    tensors: list[TensorInfo]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    operators: list[OperatorInfo]


@dataclass
class OperatorCode:
    builtin_code: int
    custom_code: Optional[str]
    version: int

    @property
    def name(self) -> str:
        if self.builtin_code == schema.CUSTOM_CODE:
            return self.custom_code or ""
        return schema.builtin_name(self.builtin_code)

    @property
    def is_custom(self) -> bool:
        return self.builtin_code == schema.CUSTOM_CODE


@dataclass
class SignatureDef:
    key: str
    subgraph_index: int
    inputs: dict[str, int]
    outputs: dict[str, int]


@dataclass
class Model:
    version: int
    description: str
    operator_codes: list[OperatorCode]
    subgraphs: list[Subgraph]
    buffers: list[Optional[memoryview]]
    metadata: dict[str, int]            # name -> buffer index
    signature_defs: list[SignatureDef]
    size_bytes: int

    @property
    def main(self) -> Subgraph:
        return self.subgraphs[0]

    def metadata_bytes(self, name: str) -> Optional[memoryview]:
        index = self.metadata.get(name)
        return None if index is None else self.buffers[index]


def unpack_int4(packed: memoryview, count: int) -> np.ndarray:
    """Two's-complement nibbles, low first, into int8 with no temporary beyond the result."""
    source = np.frombuffer(packed, np.uint8)
    values = np.empty(2 * source.size, np.uint8)
    np.bitwise_and(source, 0xF, out=values[0::2])
    np.right_shift(source, 4, out=values[1::2])
    signed = values.view(np.int8)
    np.bitwise_xor(values, 8, out=values)        # 0..15 -> sign-flipped, then -8 sign-extends
    np.subtract(signed, 8, out=signed)
    return signed[:count]
