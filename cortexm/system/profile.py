"""A flat per-function profile of a firmware run, from its block edges and the ELF's symbols.

Exclusive figures are exact: each executed block's cycles (core_timing), the refill of each taken
branch charged to the function holding the branch, and the flash interface's stalls charged to
the block that met them (native_hook.c keeps them per edge). Calls are the edges that enter a
function at its first instruction from elsewhere; an exception's entry into its handler is not a
call. Inclusive cycles follow gprof's assumption: each call of a function costs its average, so
a callee's inclusive time is shared among its callers by their call counts (recursion is cut
where it closes a cycle). C++ names are shown demangled; a local function whose name several
files define (a TFLM kernel's `(anonymous namespace)::Eval`) carries its file.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from ..demangle import Demangler
from ..elf import ElfImage

NO_SYMBOL = "(no symbol)"


@dataclass
class FunctionRow:
    name: str
    address: Optional[int]
    instructions: int = 0
    exclusive_cycles: int = 0
    inclusive_cycles: int = 0
    calls: int = 0
    memory_stall_cycles: int = 0       # the part of exclusive cycles spent waiting for flash

    def to_dict(self) -> dict:
        return {"function": self.name, "address": None if self.address is None else f"0x{self.address:08x}",
                "calls": self.calls, "instructions": self.instructions,
                "exclusive_cycles": self.exclusive_cycles, "inclusive_cycles": self.inclusive_cycles,
                "memory_stall_cycles": self.memory_stall_cycles}


@dataclass
class FlatProfile:
    rows: list[FunctionRow] = field(default_factory=list)   # by exclusive cycles, largest first
    extra: dict = field(default_factory=dict)                # cycles not in any block ("exception entry": n)

    def row(self, name: str) -> Optional[FunctionRow]:
        return next((r for r in self.rows if r.name == name), None)


def flat_profile(image: ElfImage, edges: dict, costs: dict, stalls: dict, *,
                 handlers: Iterable[int] = (), extra: Optional[dict] = None) -> FlatProfile:
    """edges {(prev, ps, cur, cs): n}; costs {(addr, size): BlockCost}; stalls {edge: memory
    stall cycles (clock.RunningCycles.edge_memory_cycles)}; handlers: exception handler
    addresses (entries not calls)."""
    handlers = {h & ~1 for h in handlers}
    func_of: dict[int, Optional[object]] = {}

    def owner(addr: int):
        if addr not in func_of:
            func_of[addr] = image.function_at(addr)
        return func_of[addr]

    rows: dict[str, FunctionRow] = {}
    arcs: dict[tuple[str, str], int] = {}

    readable = Demangler()

    def row_of(sym) -> FunctionRow:
        name = readable(sym.name) if sym is not None else NO_SYMBOL
        r = rows.get(name)
        if r is None:
            r = rows[name] = FunctionRow(name, sym.addr if sym is not None else None)
        return r

    for key, n in edges.items():
        p, ps, c, cs = key
        bc = costs[(c, cs)]
        sym = owner(c)
        r = row_of(sym)
        mem = stalls.get(key, 0)
        r.instructions += n * bc.n_insns
        r.exclusive_cycles += n * bc.cycles + mem
        r.memory_stall_cycles += mem
        if p and p + ps != c and (p, ps) in costs:
            row_of(owner(p)).exclusive_cycles += n * costs[(p, ps)].taken_extra
        if sym is not None and c == sym.addr and c not in handlers:
            caller = owner(p) if p else None
            if caller is not sym:
                r.calls += n
                if caller is not None:
                    arc = (row_of(caller).name, r.name)
                    arcs[arc] = arcs.get(arc, 0) + n
    _inclusive(rows, arcs)
    ordered = sorted(rows.values(), key=lambda r: (-r.exclusive_cycles, r.name))
    return FlatProfile(ordered, dict(extra or {}))


def _inclusive(rows: dict[str, FunctionRow], arcs: dict[tuple[str, str], int]) -> None:
    callees: dict[str, list[tuple[str, int]]] = {}
    for (caller, callee), n in arcs.items():
        callees.setdefault(caller, []).append((callee, n))
    done: dict[str, int] = {}
    on_path: set[str] = set()

    def incl(name: str) -> int:
        if name in done:
            return done[name]
        if name in on_path:
            return 0                                  # a cycle of calls: cut here
        on_path.add(name)
        total = rows[name].exclusive_cycles
        for callee, n in callees.get(name, ()):
            calls = rows[callee].calls
            if calls and callee != name:
                total += incl(callee) * n // calls
        on_path.discard(name)
        done[name] = total
        return total

    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(rows) + 100))
    try:
        for name in rows:
            rows[name].inclusive_cycles = incl(name)
    finally:
        sys.setrecursionlimit(limit)
