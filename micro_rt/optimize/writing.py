"""Writing the optimized model: edits to an existing .tflite that keep every byte they are not
asked to change, and the offline memory plan TFLM honours (`write_model`).

`micro-rt optimize` reorders the operators of the main subgraph and replaces a metadata entry
(the offline memory plan). Rebuilding the model from micro_rt's own records would drop what
micro_rt does not model (quantization min/max, shape_signature, sparsity, signature defs,
options fields newer than its schema, ...). Instead the original file is kept whole, and a new
root is written in front of it: a Model table and a SubGraph table that point into the old
bytes for every field, and only the operators vector, the metadata vector and the buffers
vector are new. Flatbuffer offsets point forward, so everything written before the old bytes
can refer to anything in them; the old root and the tables it replaced stay behind unused.
The old bytes move by a multiple of 16, so every buffer keeps its alignment.

The tensor offsets go into `OfflineMemoryAllocation` metadata ([1, 1, tensors, offset per
tensor or -1]), the format `allocation_info.offline_offsets` reads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import flatbuffers
import numpy as np

from .. import schema
from ..allocation_info import OFFLINE_METADATA
from ..builder import buffer_table
from ..errors import MicroRtError
from ..flatbuf import Buffer, Table

__all__ = ["OFFLINE_METADATA", "ModelEdit", "rewrite_model", "write_model"]

# Field slots of the two tables written anew, and how to copy each (schema.fbs, version 3).
# "offset": a table, vector or string, pointed to where it is; otherwise a scalar kind.
MODEL_FIELDS = {0: ("version", "uint"), 1: ("operator_codes", "offset"), 2: ("subgraphs", "offset"),
                3: ("description", "offset"), 4: ("buffers", "offset"),
                5: ("metadata_buffer", "offset"), 6: ("metadata", "offset"),
                7: ("signature_defs", "offset")}
SUBGRAPH_FIELDS = {0: ("tensors", "offset"), 1: ("inputs", "offset"), 2: ("outputs", "offset"),
                   3: ("operators", "offset"), 4: ("name", "offset"),
                   5: ("debug_metadata_index", "int")}
_SCALAR_SLOT = {"uint": "PrependUint32Slot", "int": "PrependInt32Slot"}
_ALIGN = 16          # the converter's alignment for buffer data


@dataclass
class ModelEdit:
    """What to change: the main subgraph's operator order (position -> original index) and
    metadata entries to set (name -> bytes) or remove (name -> None)."""
    operator_order: Optional[Sequence[int]] = None
    metadata: dict[str, Optional[bytes]] = field(default_factory=dict)


def rewrite_model(data: bytes, edit: ModelEdit) -> bytes:
    """`data` with `edit` applied and every other field kept as it is."""
    data = bytes(data)
    buf, root, main, subgraphs = _open_model(data)
    fb, old = _builder_holding(data)
    new_vectors = _edit_metadata(fb, buf, root, old, edit.metadata)
    if edit.operator_order is not None:
        new_vectors[2] = _reorder_operators(fb, main, subgraphs, old, edit.operator_order)
    model = _copy_table(fb, root, MODEL_FIELDS, old, new_vectors)
    fb.Finish(model, file_identifier=schema.FILE_IDENTIFIER)
    out = bytes(fb.Output())
    assert (len(out) - old) % _ALIGN == 0, "old bytes moved by a non-multiple of 16"
    return out


def write_model(data: bytes, order: Sequence[int], tensor_offsets: Optional[Sequence[int]]) -> bytes:
    """The model with its operators in `order` and (unless None) an offline plan; any existing
    OfflineMemoryAllocation metadata is replaced (or dropped when tensor_offsets is None).
    Every other field is kept as it is in `data` (`rewrite_model`)."""
    plan = None
    if tensor_offsets is not None:
        values = [1, 1, len(tensor_offsets)] + [int(v) for v in tensor_offsets]
        plan = np.asarray(values, "<i4").tobytes()
    return rewrite_model(data, ModelEdit(operator_order=order, metadata={OFFLINE_METADATA: plan}))


def _open_model(data: bytes) -> tuple[Buffer, Table, Table, list[int]]:
    """(buffer, Model table, main SubGraph table, subgraph positions) of a model micro_rt can
    rewrite without losing a field."""
    buf = Buffer(data)
    if len(data) < 8 or data[4:8] != schema.FILE_IDENTIFIER:
        raise MicroRtError("not a TFLite flatbuffer: cannot rewrite it")
    root = Table(buf, buf.follow(0, "root table offset"), "model")
    _check_known_fields(root, MODEL_FIELDS, "Model")
    subgraphs = root.vector_targets(2, "subgraphs")
    if not subgraphs:
        raise MicroRtError("model has no subgraphs: nothing to rewrite")
    main = Table(buf, subgraphs[0], "subgraph 0")
    _check_known_fields(main, SUBGRAPH_FIELDS, "SubGraph")
    buffer_tables = [Table(buf, pos, f"buffer {i}") for i, pos in
                     enumerate(root.vector_targets(4, "buffers"))]
    for i, t in enumerate(buffer_tables):
        if t.scalar(1, "ulong", 0, "offset") > 1:
            raise MicroRtError(f"buffer {i} is stored after the flatbuffer (a model over 2 GB): "
                               "micro_rt cannot rewrite such a model")
    return buf, root, main, subgraphs


def _builder_holding(data: bytes) -> tuple[flatbuffers.Builder, int]:
    """A builder whose first (highest) bytes are `data`, padded to 16; and `old`, the builder
    offset of position 0 of the old file (position p is at old - p)."""
    padded = data + bytes(-len(data) % _ALIGN)
    fb = flatbuffers.Builder(len(padded) + 4096)
    fb.Prep(_ALIGN, len(padded))
    fb.head -= len(padded)
    fb.Bytes[fb.head:fb.head + len(padded)] = padded
    return fb, len(padded)


def _edit_metadata(fb: flatbuffers.Builder, buf: Buffer, root: Table, old: int,
                   edits: dict[str, Optional[bytes]]) -> dict[int, int]:
    """Set or remove the metadata entries in `edits`: the new metadata and buffers vectors
    (Model slots 6 and 4), or nothing when no entry changed."""
    metadata = [(Table(buf, pos, f"metadata {i}"), pos)
                for i, pos in enumerate(root.vector_targets(6, "metadata"))]
    names = [t.string(0, "name") or "" for t, _ in metadata]
    buffer_refs = [old - pos for pos in root.vector_targets(4, "buffers")]
    meta_refs = [old - pos for _, pos in metadata]
    used_elsewhere = _buffers_in_use(root, buf, metadata)

    changed_meta = False
    for name, value in edits.items():
        index = names.index(name) if name in names else None
        slot = None if index is None else int(metadata[index][0].scalar(1, "uint", 0, "buffer"))
        # the entry's own buffer, when nothing else reads it (None: a new one is added)
        own = slot if slot is not None and slot < len(buffer_refs) and used_elsewhere.get(slot, 0) <= 1 else None
        if value is None:
            if index is not None:
                del metadata[index], names[index], meta_refs[index]
                changed_meta = True
            if own is not None:            # nothing else reads it: do not carry stale data
                buffer_refs[own] = buffer_table(fb, b"")
            continue
        new_buffer = buffer_table(fb, value)
        if own is not None:
            buffer_refs[own] = new_buffer
            at = own
        else:
            at = len(buffer_refs)
            buffer_refs.append(new_buffer)
        entry = _metadata_entry(fb, name, at)
        if index is None:
            meta_refs.append(entry)
        else:                              # same place in the list as the entry it replaces
            meta_refs[index] = entry
        changed_meta = True
    if not changed_meta:
        return {}
    return {6: _offset_vector(fb, meta_refs), 4: _offset_vector(fb, buffer_refs)}


def _metadata_entry(fb: flatbuffers.Builder, name: str, buffer_index: int) -> int:
    name_ref = fb.CreateString(name)
    fb.StartObject(2)
    fb.PrependUOffsetTRelativeSlot(0, name_ref, 0)
    fb.PrependUint32Slot(1, buffer_index, None)
    return fb.EndObject()


def _reorder_operators(fb: flatbuffers.Builder, main: Table, subgraphs: list[int], old: int,
                       order: Sequence[int]) -> int:
    """The new subgraphs vector: the main subgraph copied with its operators in `order`."""
    operators = main.vector_targets(3, "operators")
    order = list(order)
    if sorted(order) != list(range(len(operators))):
        raise MicroRtError(f"operator order {order} is not a permutation of the "
                           f"{len(operators)} operators")
    ops_vector = _offset_vector(fb, [old - operators[i] for i in order])
    new_main = _copy_table(fb, main, SUBGRAPH_FIELDS, old, {3: ops_vector})
    return _offset_vector(fb, [new_main] + [old - p for p in subgraphs[1:]])


def _check_known_fields(table: Table, known: dict, what: str) -> None:
    unknown = [slot for slot in range(table.field_count) if slot not in known and table.has(slot)]
    if unknown:
        raise MicroRtError(f"{what} field(s) {unknown} are newer than micro_rt's schema: "
                           "rewriting the model would lose them")


def _buffers_in_use(root: Table, buf: Buffer, metadata: list) -> dict[int, int]:
    """How many references each buffer index has (tensors, metadata, metadata_buffer)."""
    counts: dict[int, int] = {}

    def add(index: int) -> None:
        counts[index] = counts.get(index, 0) + 1

    for s, pos in enumerate(root.vector_targets(2, "subgraphs")):
        sg = Table(buf, pos, f"subgraph {s}")
        for t in sg.tables(0, "tensors"):
            add(t.scalar(2, "uint", 0, "buffer"))
    for t, _ in metadata:
        add(t.scalar(1, "uint", 0, "buffer"))
    listed = root.array(5, "int", "metadata_buffer") if root.has(5) else None
    for index in listed if listed is not None else ():
        add(int(index))
    return counts


def _offset_vector(fb: flatbuffers.Builder, refs: list[int]) -> int:
    fb.StartVector(4, len(refs), 4)
    for ref in reversed(refs):
        fb.PrependUOffsetTRelative(ref)
    return fb.EndVector()


def _copy_table(fb: flatbuffers.Builder, table: Table, fields: dict, old: int,
                replaced: dict[int, int]) -> int:
    """A copy of `table` whose offset fields point at the old objects (builder offset
    old - position), except the slots in `replaced`, which point at new ones."""
    refs: dict[int, Optional[int]] = {}
    for slot, (name, kind) in fields.items():
        if kind == "offset":
            target = table.target(slot, name)
            refs[slot] = replaced[slot] if slot in replaced else None if target is None else old - target
    fb.StartObject(max(fields) + 1)
    for slot, (name, kind) in fields.items():
        if kind == "offset":
            if refs[slot] is not None:
                fb.PrependUOffsetTRelativeSlot(slot, refs[slot], 0)
        elif table.has(slot):
            getattr(fb, _SCALAR_SLOT[kind])(slot, table.scalar(slot, kind, 0, name), None)
    return fb.EndObject()
