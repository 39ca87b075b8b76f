"""The heap of a firmware run, watched at the entries of its allocator: malloc, free, realloc,
calloc (newlib's reentrant `_malloc_r` family when the image has it, else the plain names) and
`_sbrk`.

A code hook on each entry reads the arguments; the result is read where the call returns, by a
one-shot block hook on the return address. A
call made inside a watched call (newlib's realloc calling malloc) is not counted again. Bytes in
use are the sizes asked for; the heap's extent is what _sbrk handed out. Each call is also
counted by the function it came from, so "mallocs per inference" is the count from the
inference's functions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_SP

from ..elf import ElfImage

# (reentrant name, argument registers after the reent pointer), (plain name, argument registers)
WATCHED = {
    "malloc": (("_malloc_r", (UC_ARM_REG_R1,)), ("malloc", (UC_ARM_REG_R0,))),
    "free": (("_free_r", (UC_ARM_REG_R1,)), ("free", (UC_ARM_REG_R0,))),
    "realloc": (("_realloc_r", (UC_ARM_REG_R1, UC_ARM_REG_R2)), ("realloc", (UC_ARM_REG_R0, UC_ARM_REG_R1))),
    "calloc": (("_calloc_r", (UC_ARM_REG_R1, UC_ARM_REG_R2)), ("calloc", (UC_ARM_REG_R0, UC_ARM_REG_R1))),
    "sbrk": (("_sbrk_r", (UC_ARM_REG_R1,)), ("_sbrk", (UC_ARM_REG_R0,))),
}


@dataclass
class HeapStats:
    calls: dict = field(default_factory=lambda: {k: 0 for k in WATCHED})
    bytes_requested: int = 0          # by malloc, calloc and realloc
    in_use: int = 0
    peak_in_use: int = 0
    failed: int = 0                   # allocations that returned NULL
    sbrk_bytes: int = 0               # the heap's extent as _sbrk grew it
    break_top: Optional[int] = None   # the highest program break handed out
    watched: tuple = ()               # the symbols watched
    callers: dict = field(default_factory=dict)   # "malloc" -> {calling function: calls}

    def to_dict(self) -> dict:
        return {"calls": dict(self.calls), "bytes_requested": self.bytes_requested,
                "in_use_at_end": self.in_use, "peak_in_use": self.peak_in_use,
                "failed_allocations": self.failed, "sbrk_bytes": self.sbrk_bytes,
                "watched": list(self.watched),
                "callers": {what: dict(sorted(by.items(), key=lambda kv: -kv[1])) for what, by in self.callers.items()}}


class HeapWatch:
    def __init__(self, image: ElfImage):
        self.image = image
        self.stats = HeapStats()
        self._entries: dict[int, tuple[str, tuple]] = {}
        names = []
        for what, choices in WATCHED.items():
            for name, regs in choices:
                sym = image.symbols.get(name)
                if sym is not None and sym.is_func:
                    self._entries[sym.addr] = (what, regs)
                    names.append(name)
                    break
        self.stats.watched = tuple(names)
        self._live: dict[int, int] = {}              # pointer -> bytes
        self._pending: dict[str, tuple] = {}         # family -> (what, args, return address, sp, hook)

    def install(self, uc: unicorn.Uc) -> None:
        """Hooks on the entries: before the first emu_start (later hooks miss translated code)."""
        for addr in self._entries:
            uc.hook_add(UC.UC_HOOK_CODE, self._on_entry, begin=addr, end=addr)

    def _on_entry(self, uc, address, size, _user) -> None:
        what, regs = self._entries[address]
        family = "sbrk" if what == "sbrk" else "malloc"
        if family in self._pending:
            return                                   # inside a watched call of its family
        self.stats.calls[what] += 1
        args = tuple(uc.reg_read(r) for r in regs)
        ret = uc.reg_read(UC_ARM_REG_LR) & ~1
        caller = self.image.function_at(ret - 2)
        by = self.stats.callers.setdefault(what, {})
        name = caller.name if caller is not None else f"0x{ret:08x}"
        by[name] = by.get(name, 0) + 1
        # a block hook: the return lands by a branch, so a translation block starts at `ret`, and
        # a block hook added now fires on blocks already translated (a code hook would not)
        hook = uc.hook_add(UC.UC_HOOK_BLOCK, self._on_return, family, begin=ret, end=ret)
        self._pending[family] = (what, args, ret, uc.reg_read(UC_ARM_REG_SP), hook)

    def _on_return(self, uc, address, size, family) -> None:
        p = self._pending.get(family)
        if p is None or address != p[2] or uc.reg_read(UC_ARM_REG_SP) < p[3]:
            return                                   # the same address reached another way
        what, args, _, _, hook = p
        del self._pending[family]
        uc.hook_del(hook)
        result = uc.reg_read(UC_ARM_REG_R0)
        s = self.stats
        if what == "malloc":
            self._allocated(result, args[0])
        elif what == "calloc":
            self._allocated(result, args[0] * args[1])
        elif what == "realloc":
            if result or not args[1]:
                s.in_use -= self._live.pop(args[0], 0)
            self._allocated(result, args[1])
        elif what == "free":
            s.in_use -= self._live.pop(args[0], 0)
        elif what == "sbrk":
            incr = args[0] - (1 << 32) if args[0] & 0x8000_0000 else args[0]
            if result != 0xFFFFFFFF:
                s.sbrk_bytes += incr
                top = result + incr
                s.break_top = top if s.break_top is None else max(s.break_top, top)

    def _allocated(self, ptr: int, nbytes: int) -> None:
        s = self.stats
        s.bytes_requested += nbytes
        if not ptr:
            s.failed += 1 if nbytes else 0
            return
        self._live[ptr] = nbytes
        s.in_use += nbytes
        s.peak_in_use = max(s.peak_in_use, s.in_use)
