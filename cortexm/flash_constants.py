"""Constant data (weights, biases, multipliers, lookup tables) placed in the virtual MCU's flash.

The WEIGHTS area follows the firmware image; each constant is copied there once and keeps
its address: the same object, or the same bytes at the same alignment, placed again is
found, not copied. Kernels then read constants from flash as on a device, with the wait
states and data cache of the memory system (cycles.py).
"""
from __future__ import annotations

import hashlib

from micro_rt.errors import EmulationError

from .engine import Engine
from .memory_map import as_bytes, round_up


class FlashConstants:
    """The WEIGHTS area of one machine: [base, end) is what has been placed so far."""

    def __init__(self, engine: Engine, base: int):
        self._engine = engine
        self.base = base
        self.end = base
        self._by_digest: dict[tuple[bytes, int], int] = {}
        self._by_id: dict[int, tuple[object, int]] = {}

    def place(self, data, align: int = 16) -> int:
        """The flash address of `data` (bytes or a numpy array), copied there the first time.
        Flash grows as needed."""
        key_id = id(data)
        hit = self._by_id.get(key_id)
        if hit is not None and hit[0] is data:
            return hit[1]
        raw = as_bytes(data)
        digest = (hashlib.blake2b(raw, digest_size=16).digest(), align)
        addr = self._by_digest.get(digest)
        if addr is None:
            addr = self._copy(raw, align)
            self._by_digest[digest] = addr
        self._by_id[key_id] = (data, addr)
        return addr

    def _copy(self, raw: bytes, align: int) -> int:
        addr = round_up(self.end, max(1, align))
        end = addr + len(raw)
        if end > self._engine.memory.flash_end:
            self._engine.grow_flash(end)
        if raw:
            uc = self._engine.uc
            if uc is None:
                raise EmulationError("the virtual MCU is closed: no constant can be placed in its flash")
            uc.mem_write(addr, raw)
        self.end = end
        return addr
