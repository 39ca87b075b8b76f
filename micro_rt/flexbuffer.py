"""A bounds-checked reader for the flexbuffer maps custom operators keep their options in.

TFLM's custom kernels read their options with `FlexbufferWrapper`: the root is a map, and a
value is fetched by its position among the map's keys (flexbuffers sort them) and converted
to int32 / bool / float as `flexbuffers::Reference::AsInt64` etc. would. `read_options`
returns the whole map as {key: value}; kernels look values up by name, which gives the same
value as TFLM's position for every well-formed map and a clear error for a missing key.

Format facts (flexbuffers, in our words): the buffer ends with the root value, its packed
type byte and the root's byte width. A packed type is (type << 2) | log2(bit width of the
value it points to). Offsets count backwards from where they are stored. A vector/map
stores its length just before its first element; a map also stores, before that, an offset
to its keys vector and that vector's byte width; elements are followed by one packed type
byte each (typed vectors have none).
"""
from __future__ import annotations

import struct
from typing import Any, Optional

from .errors import ModelError

# flexbuffers type codes
_NULL, _INT, _UINT, _FLOAT, _KEY, _STRING = 0, 1, 2, 3, 4, 5
_INDIRECT_INT, _INDIRECT_UINT, _INDIRECT_FLOAT, _MAP, _VECTOR = 6, 7, 8, 9, 10
_VECTOR_INT, _VECTOR_UINT, _VECTOR_FLOAT, _VECTOR_KEY = 11, 12, 13, 14
_BOOL, _VECTOR_BOOL = 26, 36
_INLINE: dict[int, str] = {_NULL: "null", _INT: "int", _UINT: "uint", _FLOAT: "float", _BOOL: "uint"}
_INDIRECT = {_INDIRECT_INT: "int", _INDIRECT_UINT: "uint", _INDIRECT_FLOAT: "float"}
_TYPED_VECTOR = {_VECTOR_INT: "int", _VECTOR_UINT: "uint", _VECTOR_FLOAT: "float",
                 _VECTOR_BOOL: "uint"}
_MAX_DEPTH = 16


class _Reader:
    def __init__(self, data: bytes, what: str):
        self.data, self.what = bytes(data), what

    def fail(self, message: str) -> ModelError:
        return ModelError(f"{self.what}: malformed flexbuffer options ({message})")

    def scalar(self, pos: int, width: int, kind: str) -> Any:
        if width not in (1, 2, 4, 8) or pos < 0 or pos + width > len(self.data):
            raise self.fail(f"{width}-byte value at byte {pos} is outside the {len(self.data)} bytes")
        raw = self.data[pos:pos + width]
        if kind == "float":
            if width < 4:
                raise self.fail(f"{width}-byte float at byte {pos}")
            return struct.unpack("<f" if width == 4 else "<d", raw)[0]
        return int.from_bytes(raw, "little", signed=kind == "int")

    def target(self, pos: int, width: int) -> int:
        return pos - self.scalar(pos, width, "uint")

    def value(self, pos: int, parent_width: int, packed: int, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise self.fail("nested deeper than 16 levels")
        kind, width = packed >> 2, 1 << (packed & 3)
        if kind in _INLINE:
            v = None if kind == _NULL else self.scalar(pos, parent_width, _INLINE[kind])
            return bool(v) if kind == _BOOL else v
        at = self.target(pos, parent_width)
        if kind in _INDIRECT:
            return self.scalar(at, width, _INDIRECT[kind])
        if kind == _KEY:
            end = self.data.find(b"\0", max(at, 0))
            if at < 0 or end < 0:
                raise self.fail(f"unterminated key at byte {at}")
            return self.data[at:end].decode("utf-8", "replace")
        if kind == _STRING:
            n = self.scalar(at - width, width, "uint")
            if at + n > len(self.data):
                raise self.fail(f"string of {n} bytes at byte {at} runs past the end")
            return self.data[at:at + n].decode("utf-8", "replace")
        if kind == _MAP:
            return self.map(at, width, depth)
        if kind == _VECTOR:
            return self.vector(at, width, depth)
        if kind in _TYPED_VECTOR:
            n = self.length(at, width)
            items = [self.scalar(at + i * width, width, _TYPED_VECTOR[kind]) for i in range(n)]
            return [bool(v) for v in items] if kind == _VECTOR_BOOL else items
        raise self.fail(f"value type {kind} is not read by micro_rt")

    def length(self, at: int, width: int) -> int:
        n = self.scalar(at - width, width, "uint")
        if n > len(self.data) or at + n * width > len(self.data):
            raise self.fail(f"{n} elements at byte {at} run past the end")
        return n

    def vector(self, at: int, width: int, depth: int) -> list:
        n = self.length(at, width)
        types = at + n * width
        if types + n > len(self.data):
            raise self.fail(f"type bytes of a {n}-element vector run past the end")
        return [self.value(at + i * width, width, self.data[types + i], depth + 1) for i in range(n)]

    def map(self, at: int, width: int, depth: int) -> dict:
        values = self.vector(at, width, depth)
        keys_at = self.target(at - 3 * width, width)
        keys_width = self.scalar(at - 2 * width, width, "uint")
        if self.length(keys_at, keys_width) != len(values):
            raise self.fail("a map's key and value counts differ")
        keys = [self.value(keys_at + i * keys_width, keys_width, (_KEY << 2), depth + 1)
                for i in range(len(values))]
        return dict(zip(keys, values))


def read_root(data: bytes, what: str = "custom options") -> Any:
    """The root value of the flexbuffer in `data` (a map, a vector or a scalar), as
    `flexbuffers::GetRoot` reads it. `what` names the operator in errors (ModelError)."""
    reader = _Reader(data, what)
    if len(reader.data) < 3:
        raise reader.fail(f"only {len(reader.data)} bytes")
    width, packed = reader.data[-1], reader.data[-2]
    return reader.value(len(reader.data) - 2 - width, width, packed)


def read_options(data: Optional[bytes], what: str = "custom options") -> dict:
    """The flexbuffer map in `data` as {key: value}; an empty dict for no options.
    `what` names the operator in errors (ModelError)."""
    if not data:
        return {}
    root = read_root(data, what)
    if not isinstance(root, dict):
        raise _Reader(data, what).fail(f"the root is a {type(root).__name__}, not a map")
    return root
