"""What every operator runner of micro_rt.cortexm.ops shares: the per-call context (tensor
addresses in the arena or in flash, argument structs laid out in the ARGS area), the kernel
calls a runner describes, little-endian word packing, per-node caches and the dtype tests.

A runner does not call the firmware: it returns the `KernelCall`s that run its operator, and
ops.run_op performs them (ops.perform). The calls of one operator are performed in order, each
after the previous one returned, so each call's argument structs are laid out from the start
of the ARGS area again. A firmware plan (firmware_plan.py) describes every call of a model at
once, with an area that never starts again: each call's structs get their own place.
"""
from __future__ import annotations

import struct
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from micro_rt.kernels.kernel_util import activation_of, activation_range_float, element_count

class UnsupportedOnMcu(NotImplementedError):
    """The operator / type combination has no C kernel (the caller runs the numpy twin)."""


@dataclass(frozen=True)
class KernelCall:
    """One call of a firmware kernel: its symbol, its argument words (AAPCS: r0-r3, then the
    stack) and the argument structs the words point to, as (address, bytes) to write first."""
    symbol: str
    args: tuple[int, ...]
    blocks: tuple[tuple[int, bytes], ...] = ()
    # For kernels that check run-time data (indices read from tensors): a nonzero return means
    # TFLM refuses that data at invoke, or would read or write outside a tensor; this says why.
    refusal: str = ""
    # Run with the machine after the call (a kernel keeping state reads it back).
    after: Optional[Callable[[Any], None]] = None
    # TFLM's kTfLiteAbort: a return value of 1 ends the invoke at this operator (the later
    # operators do not run), as CIRCULAR_BUFFER does until its period comes round.
    ends_run: bool = False


# --------------------------------------------------------------------------- packing

def words(*values: int) -> bytes:
    """Signed 32-bit words, little-endian (integers of a parameter struct)."""
    return struct.pack("<%di" % len(values), *(int(v) for v in values))


def uwords(*values: int) -> bytes:
    """Unsigned 32-bit words, little-endian (pointers, float32 bit patterns)."""
    return struct.pack("<%dI" % len(values), *(int(v) & 0xFFFFFFFF for v in values))


def dims(n: int, h: int, w: int, c: int) -> bytes:
    """A cmsis_nn_dims struct."""
    return words(n, h, w, c)


def f32_bits(x: float) -> int:
    """The IEEE bits of x as float32 (how the soft-float ABI passes it)."""
    return struct.unpack("<I", struct.pack("<f", float(np.float32(x))))[0]


def i32_bytes(values) -> bytes:
    """Integers (multipliers, shifts) as a little-endian int32 array."""
    return np.asarray(values, np.int64).astype("<i4").tobytes()


# --------------------------------------------------------------------------- tensor accessors

def last_axis_rows(c: "CallContext") -> tuple[int, int]:
    """(rows, depth) of an op over the last axis (a scalar: one row of one)."""
    inp = c.t(0)
    depth = int(inp.shape[-1]) if len(inp.shape) else 1
    return (element_count(inp) // depth if depth else 0), depth


def is_f32(t) -> bool:
    return t is not None and np.dtype(t.dtype) == np.float32


def is_i16(t) -> bool:
    return t is not None and np.dtype(t.dtype) == np.int16


def f32_activation(node) -> tuple[int, int]:
    """The fused activation's float32 clamp range, as bit patterns."""
    lo, hi = activation_range_float(activation_of(node))
    return f32_bits(lo), f32_bits(hi)


# --------------------------------------------------------------------------- cores

def core_of(mcu, core: Optional[str] = None) -> str:
    """`core` when given, else the machine's core name (cortex-m4 when it has none)."""
    if core:
        return core
    for attr in ("core", "core_name", "cpu"):
        v = getattr(mcu, attr, None)
        if isinstance(v, str):
            return v
    return "cortex-m4"


# --------------------------------------------------------------------------- caches and placement

def _obj_cache(obj, name: str) -> dict:
    """A dict stored on `obj` itself (so it dies with it: no stale id() keys)."""
    d = obj.__dict__.get(name)
    if d is None:
        d = {}
        obj.__dict__[name] = d
    return d


def node_params(node, key: str, fn: Callable[[], Any]):
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
    ref: Callable[[], Any]
    try:
        ref = weakref.ref(mcu)
    except TypeError:                           # pragma: no cover
        def ref(m: Any = mcu) -> Any:
            return m
    cache[(id(mcu), key)] = (ref, addr)
    return addr


class CallContext:
    """What a runner describes its kernel calls with: the node and its tensors, their
    addresses (arena offsets to SRAM addresses, constants placed in flash), the node's scratch
    buffer, the core, and the argument structs of the call being described."""

    def __init__(self, mcu, node, tensors, arena_offsets, scratch_offset: Any, core: str,
                 persistent_offsets: tuple[int, ...] = ()):
        self.mcu, self.node, self.tensors = mcu, node, tensors
        self.arena_offsets, self.scratch_offset = arena_offsets, scratch_offset
        self.persistent_offsets = persistent_offsets
        self.core = core
        self._args_area = mcu.new_args_area()
        self._blocks: list[tuple[int, bytes]] = []

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
        """The flash address of the node's constant `name` (data_fn() the first time)."""
        return _flash(self.mcu, self.node, name, data_fn)

    def scratch_addr(self, k: int = -1) -> int:
        """The address of the node's scratch buffer k, in request order (0 when it has none).
        `scratch_offset` is one offset or, for a kernel TFLM gives several buffers, a sequence;
        the default, the last, is the kernel library's own request."""
        offsets = self.scratch_offset
        if offsets is None:
            return 0
        if not isinstance(offsets, (tuple, list)):
            offsets = (offsets,)
        return self.mcu.arena_base + int(offsets[k]) if offsets else 0

    def persistent_addr(self, k: int) -> Optional[int]:
        """The address of the node's persistent buffer k (ops.persistent_requests order), None
        when the caller gave the buffers no MCU memory."""
        if k >= len(self.persistent_offsets):
            return None
        return self.mcu.arena_base + int(self.persistent_offsets[k])

    def args(self, data: bytes, writable: bool = False) -> int:
        """The address of an argument struct of the call being described (written when the
        call is performed). `writable`: the kernel writes it (a work buffer, state it keeps):
        a firmware plan puts it in RAM (firmware_plan.py)."""
        addr = self._args_area.reserve(len(data), 4, writable=writable)
        self._blocks.append((addr, bytes(data)))
        return addr

    def nn_context(self, size: int) -> int:
        """A cmsis_nn_context {buf, size}: the node's scratch buffer when the kernel wants one."""
        return self.args(uwords(self.scratch_addr() if size else 0, size))

    def call(self, symbol: str, *args: int, refusal: str = "",
             after: Optional[Callable[[Any], None]] = None, ends_run: bool = False) -> KernelCall:
        """The call of `symbol` with the argument structs laid out since the previous call; the
        next call's structs start again at the beginning of the ARGS area. `refusal`, `after`,
        `ends_run`: see KernelCall."""
        kernel_call = KernelCall(symbol, tuple(int(a) for a in args), tuple(self._blocks), refusal,
                                 after, ends_run)
        self._blocks = []
        self._args_area.reset()
        return kernel_call
