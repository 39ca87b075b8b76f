"""Writing .tflite files: for tests (any graph, custom ops, odd lifetimes, broken files) and
for `micro-rt optimize` (a model rewritten with its operators reordered and a memory plan).

The builder keeps plain Python records and serialises them with `flatbuffers.Builder`
only in `build()`, so a test can edit anything (even into an invalid model) before writing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import flatbuffers
import numpy as np

from . import schema
from .model import Model


def buffer_table(fb: flatbuffers.Builder, data: bytes,
                 location: Optional[tuple[int, int]] = None) -> int:
    """A Buffer table holding `data` (none when empty), 16-byte aligned like the converter's,
    so weights can be read in place; `location` (offset, size) writes the fields that place
    the data outside the flatbuffer instead."""
    vec = None
    if data:
        fb.StartVector(1, len(data), 16)
        fb.head -= len(data)
        fb.Bytes[fb.head:fb.head + len(data)] = data
        vec = fb.EndVector()
    fb.StartObject(3)
    if vec is not None:
        fb.PrependUOffsetTRelativeSlot(0, vec, 0)
    if location is not None:
        fb.PrependUint64Slot(1, location[0], 0)
        fb.PrependUint64Slot(2, location[1], 0)
    return fb.EndObject()


def offsets_vector(fb: flatbuffers.Builder, items: list[int]) -> int:
    """A vector of the tables at `items` (offsets), in order."""
    fb.StartVector(4, len(items), 4)
    for item in reversed(items):
        fb.PrependUOffsetTRelative(item)
    return fb.EndVector()

def int32_vector(fb: flatbuffers.Builder, values: Sequence[int]) -> int:
    """A vector of int32 (shapes, tensor index lists)."""
    return fb.CreateNumpyVector(np.asarray(list(values), dtype=np.int32))


def options_table(fb: flatbuffers.Builder, table: str, values: dict) -> int:
    """A builtin options table (schema.OPTION_TABLES) with every field written, defaults
    included; ValueError names a field the table has not or a value out of its range."""
    fields = schema.OPTION_TABLES[schema.OPTION_TABLE_INDEX[table]][1]
    unknown = set(values) - {f[0] for f in fields}
    if unknown:
        raise ValueError(f"{table} has no field(s) {sorted(unknown)}")
    vectors = {name: fb.CreateNumpyVector(np.asarray(values[name], np.int32))
               for name, kind, _ in fields if kind == "[int]" and values.get(name) is not None}
    vectors.update({name: fb.CreateString(values[name]) for name, kind, _ in fields
                    if kind == "string" and values.get(name) is not None})
    fb.StartObject(len(fields))
    for slot, (name, kind, default) in enumerate(fields):
        if name in vectors:
            fb.PrependUOffsetTRelativeSlot(slot, vectors[name], 0)
            continue
        value = values.get(name, default)
        if value is None or kind in ("[int]", "string"):
            continue
        if kind in schema.ENUM_KINDS:
            value = schema.ENUM_KINDS[kind].index(value)
        elif kind == "bool":
            value = bool(value)
        elif kind == "float":
            value = float(value)
        else:
            value = _in_range(f"{table}.{name}", kind, value)
        # Every field is written, defaults included, so a test sees exactly what it set.
        _put_scalar(fb, slot, getattr(fb, _PREPEND[kind]), value)
    return fb.EndObject()


@dataclass
class TensorSpec:
    name: str
    shape: tuple[int, ...]
    type_name: str
    buffer: int = 0
    scales: Optional[Sequence[float]] = None
    zero_points: Optional[Sequence[int]] = None
    quantized_dimension: int = 0
    is_variable: bool = False


@dataclass
class OperatorSpec:
    opcode_index: int
    inputs: list[int]
    outputs: list[int]
    options: Optional[dict] = None
    options_table: Optional[str] = None
    custom_options: Optional[bytes] = None
    intermediates: list[int] = field(default_factory=list)
    # Write builtin_options_type but no builtin_options table (a file TFLM still loads).
    omit_options_table: bool = False


@dataclass
class OpcodeSpec:
    builtin_code: int
    custom_code: Optional[str]
    version: int


@dataclass
class SubgraphSpec:
    """A subgraph after the first: its own tensors, operators, inputs and outputs."""
    name: str
    tensors: list[TensorSpec] = field(default_factory=list)
    operators: list[OperatorSpec] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)


class ModelBuilder:
    """Builds a model tensor by tensor, op by op: subgraph 0 through the builder's own methods,
    further subgraphs (run by IF, WHILE, CALL_ONCE) through `add_subgraph`."""

    def __init__(self, description: str = "micro_rt builder"):
        self.description = description
        self.buffers: list[bytes] = [b""]      # buffer 0 is the empty sentinel
        self.tensors: list[TensorSpec] = []
        self.operators: list[OperatorSpec] = []
        self.opcodes: list[OpcodeSpec] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.metadata: list[tuple[str, int]] = []
        # buffer index -> (offset, size): the large-model form, data outside the flatbuffer
        self.buffer_locations: dict[int, tuple[int, int]] = {}
        self.subgraph_name = "main"
        self.schema_version = schema.SCHEMA_VERSION
        self.subgraphs: list[SubgraphSpec] = []     # subgraphs 1, 2, ...

    # ---- records -------------------------------------------------------------------
    def add_buffer(self, data: bytes | np.ndarray) -> int:
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data).astype(data.dtype.newbyteorder("<")).tobytes()
        self.buffers.append(bytes(data))
        return len(self.buffers) - 1

    def add_tensor(self, name: str, shape: Sequence[int], type_name: str = "INT8", *,
                   data: Optional[np.ndarray | bytes] = None, scale: Optional[float | Sequence[float]] = None,
                   zero_point: Optional[int | Sequence[int]] = None, quantized_dimension: int = 0,
                   is_variable: bool = False, subgraph: int = 0) -> int:
        """Add a tensor (to subgraph 0, or another made by add_subgraph); `data` makes it a
        constant (numpy data is cast to the tensor type)."""
        buffer = 0
        if data is not None:
            if isinstance(data, np.ndarray) and type_name in schema.NUMPY_DTYPE:
                data = np.asarray(data).astype(schema.NUMPY_DTYPE[type_name])
            buffer = self.add_buffer(data)
        scales = None if scale is None else list(np.atleast_1d(np.asarray(scale, np.float32)))
        zps = None
        if scales is not None:
            zps = list(np.atleast_1d(zero_point if zero_point is not None else 0).astype(np.int64))
            if len(zps) == 1 and len(scales) > 1:
                zps = zps * len(scales)
        tensors = self._subgraph(subgraph).tensors
        tensors.append(TensorSpec(name, tuple(int(d) for d in shape), type_name, buffer,
                                  scales, zps, quantized_dimension, is_variable))
        return len(tensors) - 1

    def opcode(self, op: str, version: int = 1, custom: bool = False) -> int:
        code = schema.CUSTOM_CODE if custom else schema.BUILTIN_CODE[op]
        spec = OpcodeSpec(code, op if custom else None, version)
        if spec not in self.opcodes:
            self.opcodes.append(spec)
        return self.opcodes.index(spec)

    def add_operator(self, op: str, inputs: Sequence[int], outputs: Sequence[int], *,
                     options: Optional[dict] = None, version: int = 1,
                     custom_options: Optional[bytes] = None,
                     intermediates: Sequence[int] = (), omit_options_table: bool = False,
                     subgraph: int = 0) -> int:
        """Add a builtin (by schema name) or, with custom_options or an unknown name, a custom op.
        `omit_options_table` writes the options type of the op but leaves the table out."""
        custom = op not in schema.BUILTIN_CODE
        table = None if custom else schema.OP_OPTIONS.get(op)
        operators = self._subgraph(subgraph).operators
        operators.append(OperatorSpec(self.opcode(op, version, custom), list(inputs),
                                      list(outputs), options, table, custom_options,
                                      list(intermediates), omit_options_table))
        return len(operators) - 1

    def add_subgraph(self, name: str = "", inputs: Sequence[int] = (),
                     outputs: Sequence[int] = ()) -> int:
        """A new empty subgraph; returns its index (1, 2, ...) for add_tensor/add_operator's
        `subgraph` and the control-flow operators' options. Set its inputs and outputs here or
        later through `self.subgraphs[index - 1]`."""
        self.subgraphs.append(SubgraphSpec(name, inputs=list(inputs), outputs=list(outputs)))
        return len(self.subgraphs)

    def _subgraph(self, index: int):
        """Subgraph 0 is the builder itself (its tensors, operators, inputs, outputs)."""
        if index == 0:
            return self
        if not 1 <= index <= len(self.subgraphs):
            raise ValueError(f"no subgraph {index}: add it with add_subgraph first")
        return self.subgraphs[index - 1]

    def add_metadata(self, name: str, data: bytes) -> None:
        self.metadata.append((name, self.add_buffer(data)))

    # ---- from an existing model ----------------------------------------------------
    @classmethod
    def from_model(cls, model: Model) -> "ModelBuilder":
        """A builder holding the main subgraph of `model`: buffers byte for byte, tensors,
        operators with their options, metadata. Only what the builder models: quantization
        min/max, shape_signature, sparsity, signature defs and other subgraphs are not carried
        over (for tests and fuzzing). To edit a model keeping everything, use micro_rt.optimize.writing."""
        b = cls(model.description)
        b.buffers = [bytes(buf) if buf is not None else b"" for buf in model.buffers]
        b.opcodes = [OpcodeSpec(c.builtin_code, c.custom_code, c.version) for c in model.operator_codes]
        sg = model.main
        b.subgraph_name = sg.name
        for t in sg.tensors:
            q = t.quantization
            b.tensors.append(TensorSpec(
                t.name, t.shape, t.type_name, t.buffer,
                None if q is None else [float(s) for s in q.scales],
                None if q is None else [int(z) for z in q.zero_points],
                0 if q is None else q.quantized_dimension, t.is_variable))
        for op in sg.operators:
            table = None if op.is_custom else schema.OP_OPTIONS.get(op.op_name)
            b.operators.append(OperatorSpec(op.opcode_index, list(op.inputs), list(op.outputs),
                                            dict(op.options), table, op.custom_options,
                                            list(op.intermediates)))
        b.inputs, b.outputs = list(sg.inputs), list(sg.outputs)
        b.metadata = list(model.metadata.items())
        return b

    # ---- serialisation -------------------------------------------------------------
    def build(self) -> bytes:
        fb = flatbuffers.Builder(1024 + sum(len(x) for x in self.buffers))
        buffers = [buffer_table(fb, data, self.buffer_locations.get(i))
                   for i, data in enumerate(self.buffers)]
        subgraphs = [self._subgraph_table(fb, SubgraphSpec(self.subgraph_name, self.tensors,
                                                           self.operators, self.inputs, self.outputs))]
        subgraphs += [self._subgraph_table(fb, sg) for sg in self.subgraphs]

        opcodes = []
        for c in self.opcodes:
            custom = fb.CreateString(c.custom_code) if c.custom_code is not None else None
            fb.StartObject(4)
            fb.PrependInt8Slot(0, min(c.builtin_code, schema.PLACEHOLDER_FOR_GREATER_OP_CODES), 0)
            if custom is not None:
                fb.PrependUOffsetTRelativeSlot(1, custom, 0)
            fb.PrependInt32Slot(2, c.version, 1)
            fb.PrependInt32Slot(3, c.builtin_code, 0)
            opcodes.append(fb.EndObject())
        metadata = []
        for meta_name, buffer in self.metadata:
            s = fb.CreateString(meta_name)
            fb.StartObject(2)
            fb.PrependUOffsetTRelativeSlot(0, s, 0)
            fb.PrependUint32Slot(1, buffer, 0)
            metadata.append(fb.EndObject())
        description = fb.CreateString(self.description)
        opcode_vec = offsets_vector(fb, opcodes)
        subgraph_vec = offsets_vector(fb, subgraphs)
        buffer_vec = offsets_vector(fb, buffers)
        meta_vec = offsets_vector(fb, metadata) if metadata else None
        fb.StartObject(8)
        fb.PrependUint32Slot(0, self.schema_version, 0)
        fb.PrependUOffsetTRelativeSlot(1, opcode_vec, 0)
        fb.PrependUOffsetTRelativeSlot(2, subgraph_vec, 0)
        fb.PrependUOffsetTRelativeSlot(3, description, 0)
        fb.PrependUOffsetTRelativeSlot(4, buffer_vec, 0)
        if meta_vec is not None:
            fb.PrependUOffsetTRelativeSlot(6, meta_vec, 0)
        fb.Finish(fb.EndObject(), file_identifier=schema.FILE_IDENTIFIER)
        return bytes(fb.Output())

    def _subgraph_table(self, fb: flatbuffers.Builder, sg: SubgraphSpec) -> int:
        tensors = [self._tensor(fb, t) for t in sg.tensors]
        operators = [self._operator(fb, op) for op in sg.operators]
        name = fb.CreateString(sg.name)
        t_vec = offsets_vector(fb, tensors)
        o_vec = offsets_vector(fb, operators)
        in_vec = int32_vector(fb, sg.inputs)
        out_vec = int32_vector(fb, sg.outputs)
        fb.StartObject(5)
        fb.PrependUOffsetTRelativeSlot(0, t_vec, 0)
        fb.PrependUOffsetTRelativeSlot(1, in_vec, 0)
        fb.PrependUOffsetTRelativeSlot(2, out_vec, 0)
        fb.PrependUOffsetTRelativeSlot(3, o_vec, 0)
        fb.PrependUOffsetTRelativeSlot(4, name, 0)
        return fb.EndObject()

    def _tensor(self, fb: flatbuffers.Builder, t: TensorSpec) -> int:
        name = fb.CreateString(t.name)
        shape = int32_vector(fb, t.shape)
        quant = None
        if t.scales is not None:
            scales = fb.CreateNumpyVector(np.asarray(t.scales, np.float32))
            zps = fb.CreateNumpyVector(np.asarray(t.zero_points, np.int64))
            fb.StartObject(7)
            fb.PrependUOffsetTRelativeSlot(2, scales, 0)
            fb.PrependUOffsetTRelativeSlot(3, zps, 0)
            fb.PrependInt32Slot(6, t.quantized_dimension, 0)
            quant = fb.EndObject()
        fb.StartObject(8)
        fb.PrependUOffsetTRelativeSlot(0, shape, 0)
        fb.PrependInt8Slot(1, schema.TENSOR_TYPE_CODE[t.type_name], 0)
        fb.PrependUint32Slot(2, t.buffer, 0)
        fb.PrependUOffsetTRelativeSlot(3, name, 0)
        if quant is not None:
            fb.PrependUOffsetTRelativeSlot(4, quant, 0)
        fb.PrependBoolSlot(5, t.is_variable, False)
        return fb.EndObject()

    def _operator(self, fb: flatbuffers.Builder, op: OperatorSpec) -> int:
        options = None
        if op.options_table and not op.omit_options_table:
            options = options_table(fb, op.options_table, op.options or {})
        custom = fb.CreateByteVector(op.custom_options) if op.custom_options is not None else None
        inputs = int32_vector(fb, op.inputs)
        outputs = int32_vector(fb, op.outputs)
        inter = int32_vector(fb, op.intermediates) if op.intermediates else None
        fb.StartObject(9)
        fb.PrependUint32Slot(0, op.opcode_index, 0)
        fb.PrependUOffsetTRelativeSlot(1, inputs, 0)
        fb.PrependUOffsetTRelativeSlot(2, outputs, 0)
        if op.options_table:
            _put_scalar(fb, 3, fb.PrependUint8, schema.OPTION_TABLE_INDEX[op.options_table])
        if options is not None:
            fb.PrependUOffsetTRelativeSlot(4, options, 0)
        if custom is not None:
            fb.PrependUOffsetTRelativeSlot(5, custom, 0)
        if inter is not None:
            fb.PrependUOffsetTRelativeSlot(8, inter, 0)
        return fb.EndObject()


# The flatbuffers.Builder method that writes each scalar kind (enums are stored as bytes).
_PREPEND = {"bool": "PrependBool", "byte": "PrependInt8", "ubyte": "PrependUint8",
            "int": "PrependInt32", "uint": "PrependUint32", "float": "PrependFloat32",
            **{kind: "PrependInt8" for kind in schema.ENUM_KINDS}}
_RANGE = {"byte": (-2**7, 2**7 - 1), "ubyte": (0, 2**8 - 1), "int": (-2**31, 2**31 - 1),
          "uint": (0, 2**32 - 1)}


def _in_range(what: str, kind: str, value) -> int:
    lo, hi = _RANGE[kind]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{what}: {value!r} is not a {kind} ({lo}..{hi})")
    return int(value)


def _put_scalar(fb: flatbuffers.Builder, slot: int, prepend, value) -> None:
    """Write a table field whatever its value: the Prepend*Slot helpers skip a value equal
    to the default they are given (and check that default's range too)."""
    prepend(value)
    fb.Slot(slot)
