"""What every operator runner of micro_rt.cortexm.ops shares: the per-call context (tensor
addresses in the arena or in flash, the ARGS area), little-endian word packing, per-node
caches and the small tensor accessors (first scale / zero point, element count, dtype tests).
"""
from __future__ import annotations

import struct
import weakref
from typing import Any, Callable, Optional

import numpy as np

# The tensor accessors are the host kernels' (kernel_util), under the names the runners use.
from micro_rt.kernels.kernel_util import activation_of as _act
from micro_rt.kernels.kernel_util import activation_range_float
from micro_rt.kernels.kernel_util import element_count as _count  # noqa: F401
from micro_rt.kernels.kernel_util import scale_of as _scale  # noqa: F401
from micro_rt.kernels.kernel_util import zero_point_of as _zp  # noqa: F401

DSP_CORES = ("cortex-m4", "cortex-m7", "cortex-m33")


class UnsupportedOnMcu(NotImplementedError):
    """The operator / type combination has no C kernel (the caller runs the numpy twin)."""


# --------------------------------------------------------------------------- packing

def _words(*values: int) -> bytes:
    return struct.pack("<%di" % len(values), *(int(v) for v in values))


def _uwords(*values: int) -> bytes:
    return struct.pack("<%dI" % len(values), *(int(v) & 0xFFFFFFFF for v in values))


def _dims(n: int, h: int, w: int, c: int) -> bytes:
    """A cmsis_nn_dims struct."""
    return _words(n, h, w, c)


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(np.float32(x))))[0]


def _i32_bytes(values) -> bytes:
    """Integers (multipliers, shifts) as a little-endian int32 array."""
    return np.asarray(values, np.int64).astype("<i4").tobytes()


# --------------------------------------------------------------------------- tensor accessors

def _is_f32(t) -> bool:
    return t is not None and np.dtype(t.dtype) == np.float32


def _is_i16(t) -> bool:
    return t is not None and np.dtype(t.dtype) == np.int16


def _f32_act(node) -> tuple[int, int]:
    """The fused activation's float32 clamp range, as bit patterns."""
    lo, hi = activation_range_float(_act(node))
    return _f32_bits(lo), _f32_bits(hi)


# --------------------------------------------------------------------------- cores

def _core_of(mcu, core: Optional[str] = None) -> str:
    if core:
        return core
    for attr in ("core", "core_name", "cpu"):
        v = getattr(mcu, attr, None)
        if isinstance(v, str):
            return v
    return "cortex-m4"


def _has_dsp(core: str) -> bool:
    return core in DSP_CORES


# --------------------------------------------------------------------------- caches and placement

def _obj_cache(obj, name: str) -> dict:
    """A dict stored on `obj` itself (so it dies with it: no stale id() keys)."""
    d = obj.__dict__.get(name)
    if d is None:
        d = {}
        obj.__dict__[name] = d
    return d


def _params(node, key: str, fn: Callable[[], Any]):
    """fn(), computed once per node and cached on it under `key`."""
    cache = _obj_cache(node, "_mrt_params")
    if key not in cache:
        cache[key] = fn()
    return cache[key]


def _flash(mcu, owner, key, data_fn: Callable[[], bytes], align: int = 16) -> int:
    """Address of a constant placed in `mcu`'s flash once; cached on `owner` (tensor or node)."""
    cache = _obj_cache(owner, "_mrt_flash")
    hit = cache.get((id(mcu), key))
    if hit is not None and hit[0]() is mcu:
        return hit[1]
    addr = mcu.place_constant(bytes(data_fn()), align)
    try:
        ref = weakref.ref(mcu)
    except TypeError:                           # pragma: no cover
        ref = (lambda m=mcu: m)
    cache[(id(mcu), key)] = (ref, addr)
    return addr


class _Ctx:
    """Per-call addressing: tensors to SRAM (arena) or flash (constants) addresses."""

    def __init__(self, mcu, node, tensors, arena_offsets, scratch_offset):
        self.mcu, self.node, self.tensors = mcu, node, tensors
        self.arena_offsets, self.scratch_offset = arena_offsets, scratch_offset

    def t(self, i: int):
        """Input i's tensor (None when the input is absent)."""
        idx = self.node.inputs[i] if i < len(self.node.inputs) else -1
        return None if idx < 0 else self.tensors[idx]

    def out(self, i: int = 0):
        return self.tensors[self.node.outputs[i]]

    def addr_of_index(self, idx: int) -> int:
        t = self.tensors[idx]
        if getattr(t, "is_constant", False) and getattr(t, "data", None) is not None:
            data = np.ascontiguousarray(np.asarray(t.data))
            return _flash(self.mcu, t, "data", lambda: data.tobytes())
        return self.mcu.arena_base + int(self.arena_offsets[idx])

    def in_addr(self, i: int) -> int:
        """Input i's address (0 when the input is absent, e.g. an optional bias)."""
        idx = self.node.inputs[i] if i < len(self.node.inputs) else -1
        return 0 if idx < 0 else self.addr_of_index(idx)

    def out_addr(self, i: int = 0) -> int:
        return self.addr_of_index(self.node.outputs[i])

    def const(self, name: str, data_fn: Callable[[], bytes]) -> int:
        return _flash(self.mcu, self.node, name, data_fn)

    def scratch_addr(self) -> int:
        return 0 if self.scratch_offset is None else self.mcu.arena_base + int(self.scratch_offset)

    def args(self, data: bytes) -> int:
        return self.mcu.args_alloc(data, 4)

    def nn_context(self, size: int) -> int:
        """A cmsis_nn_context {buf, size}: the node's scratch buffer when the kernel wants one."""
        return self.args(_uwords(self.scratch_addr() if size else 0, size))
