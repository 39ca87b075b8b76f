"""A bounds-checked flatbuffer table reader.

The `flatbuffers` runtime trusts its input; a forged offset there becomes an IndexError or
a struct.error deep inside. This reader checks every offset before it follows it and
raises `ModelError` with the path of the field ("subgraph 0 > tensor 12 > shape"), so a
broken file is reported, never crashed on.
"""
from __future__ import annotations

import struct
from typing import Optional

import numpy as np

from .errors import ModelError

_SCALARS = {
    "bool": ("<B", 1), "byte": ("<b", 1), "ubyte": ("<B", 1), "short": ("<h", 2),
    "ushort": ("<H", 2), "int": ("<i", 4), "uint": ("<I", 4), "long": ("<q", 8),
    "ulong": ("<Q", 8), "float": ("<f", 4), "double": ("<d", 8),
}
_NUMPY = {
    "bool": np.uint8, "byte": np.int8, "ubyte": np.uint8, "short": np.int16,
    "ushort": np.uint16, "int": np.int32, "uint": np.uint32, "long": np.int64,
    "ulong": np.uint64, "float": np.float32, "double": np.float64,
}


class Buffer:
    """The whole file, with checked primitive reads."""

    def __init__(self, data: bytes):
        self.data = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
        self.size = len(self.data)

    def check(self, pos: int, nbytes: int, what: str) -> None:
        if pos < 0 or nbytes < 0 or pos + nbytes > self.size:
            raise ModelError(f"{what}: bytes {pos}..{pos + nbytes} lie outside the "
                             f"{self.size}-byte file")

    def scalar(self, kind: str, pos: int, what: str):
        fmt, n = _SCALARS[kind]
        self.check(pos, n, what)
        return struct.unpack_from(fmt, self.data, pos)[0]

    def follow(self, pos: int, what: str) -> int:
        """Resolve a uoffset stored at `pos` to an absolute position."""
        target = pos + self.scalar("uint", pos, what)
        self.check(target, 0, what)
        return target


class Table:
    """One flatbuffer table; fields are addressed by their slot number in the schema."""

    def __init__(self, buf: Buffer, pos: int, path: str):
        self.buf, self.pos, self.path = buf, pos, path
        vtable = pos - buf.scalar("int", pos, f"{path} (vtable offset)")
        buf.check(vtable, 4, f"{path} (vtable)")
        vt_size = buf.scalar("ushort", vtable, f"{path} (vtable size)")
        if vt_size < 4 or vt_size % 2:
            raise ModelError(f"{path}: vtable size {vt_size} is invalid")
        buf.check(vtable, vt_size, f"{path} (vtable)")
        self._vtable, self._nfields = vtable, (vt_size - 4) // 2
        self._table_size = buf.scalar("ushort", vtable + 2, f"{path} (table size)")

    def _field_pos(self, slot: int) -> Optional[int]:
        if slot >= self._nfields:
            return None
        off = self.buf.scalar("ushort", self._vtable + 4 + 2 * slot, f"{self.path} (vtable)")
        return None if off == 0 else self.pos + off

    def has(self, slot: int) -> bool:
        return self._field_pos(slot) is not None

    @property
    def field_count(self) -> int:
        """Slots in this table's vtable (present or not)."""
        return self._nfields

    def target(self, slot: int, name: str) -> Optional[int]:
        """Absolute position of the table, vector or string an offset field points to."""
        pos = self._field_pos(slot)
        return None if pos is None else self.buf.follow(pos, f"{self.path} > {name}")

    def vector_targets(self, slot: int, name: str) -> list[int]:
        """Absolute positions of the elements of a vector of tables (or strings)."""
        vec = self._vector(slot, 4, name)
        if vec is None:
            return []
        start, length = vec
        return [self.buf.follow(start + 4 * i, f"{self.path} > {name}[{i}]") for i in range(length)]

    def scalar(self, slot: int, kind: str, default, name: str = ""):
        pos = self._field_pos(slot)
        if pos is None:
            return default
        return self.buf.scalar(kind, pos, f"{self.path} > {name or slot}")

    def table(self, slot: int, name: str) -> Optional["Table"]:
        pos = self._field_pos(slot)
        if pos is None:
            return None
        return Table(self.buf, self.buf.follow(pos, f"{self.path} > {name}"), f"{self.path} > {name}")

    def _vector(self, slot: int, elem_size: int, name: str) -> Optional[tuple[int, int]]:
        pos = self._field_pos(slot)
        if pos is None:
            return None
        what = f"{self.path} > {name}"
        start = self.buf.follow(pos, what)
        length = self.buf.scalar("uint", start, what)
        self.buf.check(start + 4, length * elem_size, f"{what} ({length} elements)")
        return start + 4, length

    def string(self, slot: int, name: str) -> Optional[str]:
        vec = self._vector(slot, 1, name)
        if vec is None:
            return None
        start, length = vec
        return bytes(self.buf.data[start:start + length]).decode("utf-8", errors="replace")

    def array(self, slot: int, kind: str, name: str) -> Optional[np.ndarray]:
        """A vector of scalars as a read-only numpy array (a view of the file)."""
        dtype = np.dtype(_NUMPY[kind]).newbyteorder("<")
        vec = self._vector(slot, dtype.itemsize, name)
        if vec is None:
            return None
        start, length = vec
        return np.frombuffer(self.buf.data, dtype=dtype, count=length, offset=start)

    def bytes_view(self, slot: int, name: str) -> Optional[memoryview]:
        vec = self._vector(slot, 1, name)
        if vec is None:
            return None
        start, length = vec
        return self.buf.data[start:start + length]

    def tables(self, slot: int, name: str, limit: Optional[int] = None) -> list["Table"]:
        vec = self._vector(slot, 4, name)
        if vec is None:
            return []
        start, length = vec
        what = f"{self.path} > {name}"
        if limit is not None and length > limit:
            raise ModelError(f"{what}: {length} entries, over micro_rt's limit of {limit}")
        return [Table(self.buf, self.buf.follow(start + 4 * i, f"{what}[{i}]"), f"{what}[{i}]")
                for i in range(length)]

    def union(self, type_slot: int, value_slot: int, name: str) -> tuple[int, Optional["Table"]]:
        kind = self.scalar(type_slot, "ubyte", 0, f"{name}_type")
        return kind, (self.table(value_slot, name) if kind else None)
