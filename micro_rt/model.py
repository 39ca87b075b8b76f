"""Reading a .tflite file into plain records, checking every index, size and offset.

`read_model(data)` returns a `Model`; anything inconsistent raises `ModelError` naming the
field ("subgraph 0 operator 3 input 1 refers to tensor 91, subgraph has 40 tensors").
Weights are numpy views of the file: nothing is copied and nothing lands in the arena.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from . import schema
from .errors import ModelError
from .flatbuf import Buffer, Table
from .model_records import (Model, OperatorCode, OperatorInfo, Quantization, SignatureDef,  # noqa: F401
                            Subgraph, TensorInfo, unpack_int4)
from .subgraphs import check_subgraph_calls

# Bounds that keep a forged file from asking for absurd work or memory. Real
# microcontroller models sit orders of magnitude below every one of them.
MAX_MODEL_BYTES = 512 * 1024 * 1024
MAX_TENSOR_BYTES = 1 << 30
MAX_RANK = 8
MAX_SUBGRAPHS = 256
MAX_TENSORS = 1 << 16          # per subgraph
MAX_OPERATORS = 1 << 15        # per subgraph
MAX_BUFFERS = 1 << 17
MAX_OPERATOR_CODES = 1 << 12


def read_model(data: bytes | bytearray | memoryview) -> Model:
    """Parse and check a .tflite flatbuffer."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModelError(f"model must be bytes, got {type(data).__name__}")
    if len(data) > MAX_MODEL_BYTES:
        raise ModelError(f"model is {len(data)} bytes, over micro_rt's {MAX_MODEL_BYTES}-byte limit")
    data = bytes(data)
    buf = Buffer(data)
    if buf.size < 8:
        raise ModelError(f"file is {buf.size} bytes, too short to be a .tflite model")
    if data[4:8] != schema.FILE_IDENTIFIER:
        raise ModelError(f"file identifier is {data[4:8]!r}, expected {schema.FILE_IDENTIFIER!r} "
                         "(not a TFLite flatbuffer)")
    root = Table(buf, buf.follow(0, "root table offset"), "model")
    version = root.scalar(0, "uint", 0, "version")
    if version != schema.SCHEMA_VERSION:
        raise ModelError(f"model schema version is {version}, micro_rt reads version "
                         f"{schema.SCHEMA_VERSION}")
    buffers = [_read_buffer(buf, t, i) for i, t in enumerate(root.tables(4, "buffers", MAX_BUFFERS))]
    codes = [_read_opcode(t, i) for i, t in enumerate(root.tables(1, "operator_codes",
                                                                       MAX_OPERATOR_CODES))]
    subgraph_tables = root.tables(2, "subgraphs", MAX_SUBGRAPHS)
    if not subgraph_tables:
        raise ModelError("model has no subgraphs")
    subgraphs = [_read_subgraph(t, i, codes, buffers) for i, t in enumerate(subgraph_tables)]
    metadata = {}
    for i, t in enumerate(root.tables(6, "metadata")):
        name = t.string(0, "name") or ""
        index = t.scalar(1, "uint", 0, "buffer")
        _check_index(index, len(buffers), f"metadata {i} ('{name}') buffer", "buffers")
        metadata[name] = index
    signatures = [_read_signature(t, i, subgraphs) for i, t in enumerate(root.tables(7, "signature_defs"))]
    model = Model(version=version, description=root.string(3, "description") or "",
                  operator_codes=codes, subgraphs=subgraphs, buffers=buffers, metadata=metadata,
                  signature_defs=signatures, size_bytes=buf.size)
    check_subgraph_calls(model)
    return model


def _check_index(value: int, count: int, what: str, of: str) -> None:
    if not 0 <= value < count:
        raise ModelError(f"{what} refers to {of[:-1]} {value}, model has {count} {of}")


def _read_buffer(buf: Buffer, t: Table, index: int) -> Optional[memoryview]:
    data = t.bytes_view(0, "data")
    if data is not None and len(data):
        return data
    offset = t.scalar(1, "ulong", 0, "offset")
    size = t.scalar(2, "ulong", 0, "size")
    if offset > 1 and size:
        # The large-model form (data stored after the flatbuffer): TFLM reads Buffer.data only,
        # so for it the buffer is empty and a tensor using it an activation nothing writes.
        raise ModelError(f"buffer {index} keeps its {size} bytes outside the flatbuffer (offset "
                         f"{offset}, size {size}), the form the converter uses for models over "
                         "2 GB: tflite-micro reads buffer data only from inside the flatbuffer, "
                         "so it would not see this data")
    return None


def _read_opcode(t: Table, index: int) -> OperatorCode:
    deprecated = t.scalar(0, "byte", 0, "deprecated_builtin_code")
    code = max(deprecated, t.scalar(3, "int", 0, "builtin_code"))
    if code < 0:
        raise ModelError(f"operator code {index} has builtin code {code}")
    version = t.scalar(2, "int", 1, "version")
    return OperatorCode(builtin_code=code, custom_code=t.string(1, "custom_code"), version=version)


_ZERO_POINT_RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767),
                     "INT4": (-8, 7)}


def _read_quantization(t: Optional[Table], shape: tuple[int, ...], type_name: str,
                       what: str) -> Optional[Quantization]:
    if t is None:
        return None
    scales = t.array(2, "float", "scale")
    zero_points = t.array(3, "long", "zero_point")
    if scales is None or scales.size == 0:
        return None
    zero_points = (np.zeros(scales.size, np.int64) if zero_points is None
                   else zero_points.astype(np.int64))
    dim = t.scalar(6, "int", 0, "quantized_dimension")
    if zero_points.size != scales.size:
        raise ModelError(f"{what}: {scales.size} scales but {zero_points.size} zero points")
    lo, hi = _ZERO_POINT_RANGE.get(type_name, (-2**31, 2**31 - 1))
    bad = np.flatnonzero((zero_points < lo) | (zero_points > hi))
    if bad.size:
        raise ModelError(f"{what}: zero point {bad[0]} is {int(zero_points[bad[0]])}, outside "
                         f"{lo}..{hi} for {type_name}")
    bad = np.flatnonzero(~np.isfinite(scales) | (scales < 0))
    if bad.size:
        raise ModelError(f"{what}: scale {bad[0]} is {float(scales[bad[0]])}, scales must be "
                         "finite and non-negative")
    if not 0 <= dim < MAX_RANK:
        raise ModelError(f"{what}: quantized_dimension {dim} is out of range")
    if scales.size > 1:
        # TFLM accepts a 1-D per-channel bias whose quantized_dimension names the filter's
        # axis (person_detect has dimension 3 on rank-1 biases), so only the count must agree.
        channels = shape[dim] if dim < len(shape) else math.prod(shape)
        if channels != scales.size:
            raise ModelError(f"{what}: {scales.size} per-channel scales for dimension {dim} "
                             f"of shape {list(shape)}")
    return Quantization(scales=scales.astype(np.float32), zero_points=zero_points,
                        quantized_dimension=dim)


def _read_tensor(t: Table, index: int, sg: int, buffers: list) -> TensorInfo:
    what = f"subgraph {sg} tensor {index}"
    name = t.string(3, "name") or f"tensor_{index}"
    what = f"{what} ('{name}')"
    raw_shape = t.array(0, "int", "shape")
    shape = tuple(int(d) for d in raw_shape) if raw_shape is not None else ()
    if len(shape) > MAX_RANK:
        raise ModelError(f"{what}: rank {len(shape)} exceeds {MAX_RANK}")
    if any(d < 0 for d in shape):
        raise ModelError(f"{what}: shape {list(shape)} has a negative dimension "
                         "(dynamic shapes are not supported on microcontrollers)")
    type_code = t.scalar(1, "byte", 0, "type")
    if not 0 <= type_code < len(schema.TENSOR_TYPES):
        raise ModelError(f"{what}: unknown tensor type {type_code}")
    type_name = schema.TENSOR_TYPES[type_code]
    elem = schema.ELEMENT_SIZE.get(type_name, 0)
    count = math.prod(shape)
    if count * max(elem, 1) > MAX_TENSOR_BYTES:
        raise ModelError(f"{what}: shape {list(shape)} needs {count * max(elem, 1)} bytes, "
                         f"over micro_rt's {MAX_TENSOR_BYTES}-byte (1 GiB) limit: a corrupt dimension?")
    buffer = t.scalar(2, "uint", 0, "buffer")
    _check_index(buffer, len(buffers), f"{what} buffer", "buffers")
    signature = t.array(7, "int", "shape_signature")
    info = TensorInfo(index=index, name=name, type_name=type_name, shape=shape, buffer=buffer,
                      quantization=_read_quantization(t.table(4, "quantization"), shape,
                                                      type_name, f"{what} quantization"),
                      is_variable=bool(t.scalar(5, "bool", 0, "is_variable")),
                      shape_signature=tuple(int(d) for d in signature) if signature is not None else None)
    raw = buffers[buffer]
    # TFLM gives a variable tensor its own persistent buffer and resets it, never reading data.
    if raw is not None and len(raw) and not info.is_variable:
        if type_name == "INT4":
            expected = (info.element_count + 1) // 2
            if len(raw) != expected:
                raise ModelError(f"{what}: buffer holds {len(raw)} bytes, packed INT4 shape "
                                 f"{list(shape)} needs {expected}")
            info.packed_int4 = raw
        else:
            info.data = _constant_array(raw, info, what)
    return info


def _constant_array(raw: memoryview, info: TensorInfo, what: str) -> np.ndarray:
    dtype = info.dtype
    if dtype is None:  # STRING, RESOURCE, VARIANT: keep the raw bytes
        return np.frombuffer(raw, np.uint8)
    if len(raw) != info.nbytes:
        raise ModelError(f"{what}: buffer holds {len(raw)} bytes, shape {list(info.shape)} of "
                         f"{info.type_name} needs {info.nbytes}")
    array = np.frombuffer(raw, dtype.newbyteorder("<"), count=info.element_count)
    return array.reshape(info.shape)


def _read_indices(t: Table, slot: int, name: str, count: int, what: str,
                  optional: bool) -> tuple[int, ...]:
    raw = t.array(slot, "int", name)
    if raw is None:
        return ()
    values = tuple(int(v) for v in raw)
    for i, v in enumerate(values):
        if v == -1 and optional:
            continue
        if not 0 <= v < count:
            raise ModelError(f"{what} {name[:-1] if name.endswith('s') else name} {i} refers to "
                             f"tensor {v}, subgraph has {count} tensors")
    return values


def _read_options(t: Table, op_name: str, what: str) -> dict:
    kind, table = t.union(3, 4, "builtin_options")
    expected = schema.OP_OPTIONS.get(op_name)
    if kind:
        if kind not in schema.OPTION_TABLES:
            if expected is not None:
                raise ModelError(f"{what} ({op_name}) carries builtin_options type {kind}, "
                                 f"expected {expected}")
            return {}
        table_name, fields = schema.OPTION_TABLES[kind]
        if expected is not None and table_name != expected:
            raise ModelError(f"{what} ({op_name}) carries {table_name}, expected {expected}")
        if table is None:
            # The type is set but the table is absent: TFLM's parsers then see no options,
            # exactly as when the type is NONE, so both get the defaults.
            return schema.option_defaults(table_name)
        return _decode_fields(table, fields)
    return schema.option_defaults(expected) if expected else {}


def _decode_fields(table: Table, fields) -> dict:
    options = {}
    for slot, (name, kind, default) in enumerate(fields):
        if kind == "[int]":
            arr = table.array(slot, "int", name)
            options[name] = [int(v) for v in arr] if arr is not None else default
        elif kind == "string":
            options[name] = table.string(slot, name)
        elif kind in schema.ENUM_KINDS:
            names = schema.ENUM_KINDS[kind]
            value = table.scalar(slot, "byte", None, name)
            if value is None:
                options[name] = default
            elif 0 <= value < len(names):
                options[name] = names[value]
            else:
                raise ModelError(f"{table.path} > {name}: value {value} is not a valid {kind}")
        else:
            value = table.scalar(slot, kind, default, name)
            options[name] = bool(value) if kind == "bool" else value
    return options


def _read_operator(t: Table, index: int, sg: int, codes: list[OperatorCode],
                   ntensors: int) -> OperatorInfo:
    what = f"subgraph {sg} operator {index}"
    opcode_index = t.scalar(0, "uint", 0, "opcode_index")
    _check_index(opcode_index, len(codes), f"{what} opcode_index", "operator_codes")
    code = codes[opcode_index]
    inputs = _read_indices(t, 1, "inputs", ntensors, what, optional=True)
    outputs = _read_indices(t, 2, "outputs", ntensors, what, optional=False)
    intermediates = _read_indices(t, 8, "intermediates", ntensors, what, optional=True)
    options = {} if code.is_custom else _read_options(t, code.name, what)
    custom = t.bytes_view(5, "custom_options")
    custom_options = bytes(custom) if custom is not None else None
    large_offset = t.scalar(9, "ulong", 0, "large_custom_options_offset")
    large_size = t.scalar(10, "ulong", 0, "large_custom_options_size")
    if large_offset > 1:
        t.buf.check(large_offset, large_size, f"{what} large custom options")
        custom_options = bytes(t.buf.data[large_offset:large_offset + large_size])
    return OperatorInfo(index=index, opcode_index=opcode_index, op_name=code.name,
                        version=code.version, inputs=inputs, outputs=outputs,
                        intermediates=intermediates, options=options,
                        custom_options=custom_options, is_custom=code.is_custom)


def _read_subgraph(t: Table, sg: int, codes: list[OperatorCode], buffers: list) -> Subgraph:
    tensors = [_read_tensor(tt, i, sg, buffers) for i, tt in enumerate(t.tables(0, "tensors", MAX_TENSORS))]
    what = f"subgraph {sg}"
    inputs = _read_indices(t, 1, "inputs", len(tensors), what, optional=False)
    outputs = _read_indices(t, 2, "outputs", len(tensors), what, optional=False)
    operators = [_read_operator(ot, i, sg, codes, len(tensors))
                 for i, ot in enumerate(t.tables(3, "operators", MAX_OPERATORS))]
    subgraph = Subgraph(index=sg, name=t.string(4, "name") or "", tensors=tensors,
                        inputs=inputs, outputs=outputs, operators=operators)
    _check_dataflow(subgraph)
    return subgraph


def _check_dataflow(sg: Subgraph) -> None:
    """One producer per tensor, no writes to constants or subgraph inputs, no constant
    subgraph inputs, and every input available before the operator that reads it."""
    def name(tensor: int) -> str:
        return f"tensor {tensor} ('{sg.tensors[tensor].name}')"

    inputs = set(sg.inputs)
    for slot, tensor in enumerate(sg.inputs):
        if sg.tensors[tensor].is_constant:
            raise ModelError(f"subgraph {sg.index} input {slot} is {name(tensor)}, which is a "
                             f"constant (buffer {sg.tensors[tensor].buffer} holds data)")
    producer: dict[int, int] = {}
    for op in sg.operators:
        for tensor in op.outputs:
            if tensor in producer:
                raise ModelError(f"subgraph {sg.index} {name(tensor)} is written by operators "
                                 f"{producer[tensor]} and {op.index}")
            if sg.tensors[tensor].is_constant:
                raise ModelError(f"subgraph {sg.index} operator {op.index} ({op.op_name}) writes "
                                 f"constant {name(tensor)}")
            if tensor in inputs:
                raise ModelError(f"subgraph {sg.index} operator {op.index} ({op.op_name}) writes "
                                 f"{name(tensor)}, which is a subgraph input")
            producer[tensor] = op.index
    for op in sg.operators:
        for slot, tensor in enumerate(op.inputs):
            # Neither constant, input nor produced: TFLM treats it as an empty planned tensor.
            if tensor != -1 and producer.get(tensor, -1) >= op.index:
                raise ModelError(f"subgraph {sg.index} operator {op.index} ({op.op_name}) input "
                                 f"{slot} reads {name(tensor)} before any operator produces it "
                                 f"(operator {producer[tensor]} writes it: operators out of "
                                 "order or a cycle)")


def undefined_reads(sg: Subgraph) -> list[str]:
    """Where `sg` reads a tensor nothing defines: neither a subgraph input, a constant, a
    variable nor an operator's output (an operator input or a subgraph output). TFLM plans
    such a tensor and reads whatever its arena holds there."""
    defined = set(sg.inputs) | {t for op in sg.operators for t in op.outputs}

    def undefined(tensor: int) -> bool:
        info = sg.tensors[tensor]
        return (tensor not in defined and not info.is_constant and not info.is_variable
                and info.nbytes > 0)

    def name(tensor: int) -> str:
        return f"tensor {tensor} ('{sg.tensors[tensor].name}')"

    found = [f"operator {op.index} ({op.op_name}) input {slot} reads {name(t)}"
             for op in sg.operators for slot, t in enumerate(op.inputs) if t >= 0 and undefined(t)]
    found += [f"subgraph output {slot} is {name(t)}" for slot, t in enumerate(sg.outputs) if undefined(t)]
    return found


def _read_signature(t: Table, index: int, subgraphs: list[Subgraph]) -> SignatureDef:
    sg_index = t.scalar(4, "uint", 0, "subgraph_index")
    _check_index(sg_index, len(subgraphs), f"signature_def {index} subgraph_index", "subgraphs")
    ntensors = len(subgraphs[sg_index].tensors)

    def tensor_map(slot: int, name: str) -> dict[str, int]:
        result = {}
        for i, m in enumerate(t.tables(slot, name)):
            tensor = m.scalar(1, "uint", 0, "tensor_index")
            _check_index(tensor, ntensors, f"signature_def {index} {name} {i}", "tensors")
            result[m.string(0, "name") or str(i)] = tensor
        return result

    return SignatureDef(key=t.string(2, "signature_key") or "", subgraph_index=sg_index,
                        inputs=tensor_map(0, "inputs"), outputs=tensor_map(1, "outputs"))
