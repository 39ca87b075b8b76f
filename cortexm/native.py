"""Native (C) Unicorn hooks for exact block counting, budget and alignment/flash-data checks.

`HookSet` registers the functions of native_hook.c (found, built and loaded by
native_library.py) with Unicorn's C `uc_hook_add` on the engine handle (`uc._uch`); without the
library it falls back to Python hooks with the same results but about 20x slower.

Data loads from flash (for the flash wait-state model) are seen through the *flash data port*
when the library is loaded: a virtual TLB maps loads from flash pages onto an MMIO alias of the
flash FLASH_ALIAS_OFFSET above it, beyond the 32-bit address space (native_hook.c:
mrt_tlb_fill, mrt_flash_read), so only those loads leave QEMU's fast path. Without it
(`flash_port=False`, or the Python fallback) a memory hook on every access counts them, with the
same counts: the reference the tests hold the port to. The virtual TLB is on with every native
HookSet: it also lets stores to data pages take the fast path (see mrt_tlb_fill).
"""
from __future__ import annotations

import ctypes
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_EPSR, UC_ARM_REG_PC

from micro_rt.errors import EmulationError

from .memory_system import FlashCounts, FlashInterface, MemorySystem
from .static_alignment import ROW_WORDS
from .native_library import (_u64p, _uclib, built_from, cache_dir, installed_library, load_native,  # noqa: F401
                             native_error, native_library_path, source_hash)

_BLOCK_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p)
# where the MMIO alias of the flash lies: 4 GiB above the flash, a physical address no 32-bit
# guest address reaches (only the TLB fill maps flash loads there)
FLASH_ALIAS_OFFSET = 1 << 32
# EPSR with the Thumb bit and no IT state: what the hooks write back after Unicorn restored the
# state of the access they run for (native_hook.c: clear_it_state)
EPSR_THUMB = 1 << 24


class Stats:
    __slots__ = ("bytes", "budget_hit", "flash_reads", "flash_read_misses", "unaligned_total",
                 "unaligned_dropped", "last_block", "fetch_stalls", "line_fills")

    def __init__(self, b=0, hit=False, fr=0, frm=0, ut=0, ud=0, last=None, fs=0, lf=0):
        self.bytes, self.budget_hit, self.flash_reads, self.flash_read_misses = b, hit, fr, frm
        self.unaligned_total, self.unaligned_dropped = ut, ud
        self.last_block = last          # (addr, size) of the last block executed, or None
        self.fetch_stalls, self.line_fills = fs, lf   # instruction fetches from flash so far

    @property
    def flash(self) -> FlashCounts:
        """The flash interface's counts so far (differences of two price a span)."""
        return FlashCounts(self.fetch_stalls, self.flash_read_misses, self.flash_reads)


class HookSet:
    """Block-edge counting + budget (+ optional memory hook) on one Unicorn engine.

    Must be installed before the engine's first emu_start (hooks added later miss cached
    translations). edges(): {(prev, prev_size, cur, cur_size): count}; prev is the block executed
    before (`entry_prev` for the first block of a call).
    """

    def __init__(self, uc: unicorn.Uc, *, memory_hook: bool, check_alignment: bool,
                 flash_lo: int, flash_hi: int, memory_system: Optional[MemorySystem] = None,
                 prefer_native: bool = True, static_checks=None, flash_port: bool = False):
        """static_checks: static_alignment.static_checks' StaticChecks (by_start, by_pc), checked
        in the block hook / in code hooks on by_pc's instructions.
        memory_system: the flash interface whose fetches and data loads the hooks simulate
        (fetches only with wait states; data loads only with the memory hook or the port).
        flash_port: count data loads from flash through the flash data port (native only; the
        caller then hands the flash's host memory to `add_flash_segments`)."""
        self.static_checks = static_checks
        # the instructions whose check is a code hook (by_pc keys); None: all. Unicorn walks
        # every code hook at every hooked instruction it runs, so fewer hooks run faster
        self.code_hook_pcs: Optional[set] = None
        self._code_handles: list = []
        self.uc: Optional[unicorn.Uc] = uc          # None once detached
        self.memory_hook = memory_hook
        self.check_alignment = check_alignment
        self.flash_lo, self.flash_hi = flash_lo, flash_hi
        self.memory_system = memory_system or MemorySystem()
        self.flash_model = FlashInterface(self.memory_system, fetch=self.memory_system.wait_states > 0)
        # the ctypes library (its functions are untyped); None: the Python hooks (native False)
        self._lib: Any = load_native() if prefer_native else None
        self.native = self._lib is not None
        self._handles: list[int] = []
        self.flash_port = bool(flash_port) and self.native
        self._priced: set[tuple[int, int]] = set()      # blocks whose cost the library holds
        self._segments: dict[int, tuple[int, int, int]] = {}    # lo -> (hi, host address, user data)
        if self.native:
            self._install_native()
        else:
            self._install_python()

    # ---- native ----
    def _install_native(self):
        lib = self._lib
        uclib = _uclib()
        self._uclib = uclib
        self._state = ctypes.c_void_p(lib.mrt_new())
        if not self._state.value:
            raise MemoryError("mrt_new failed")
        stop = ctypes.cast(uclib.uc_emu_stop, ctypes.c_void_p)
        rr = ctypes.cast(uclib.uc_reg_read, ctypes.c_void_p)
        lib.mrt_set_funcs(self._state, stop, rr, UC_ARM_REG_PC)
        lib.mrt_set_it_reset(self._state, ctypes.cast(uclib.uc_reg_write, ctypes.c_void_p), UC_ARM_REG_EPSR)
        self._configure_native()
        lib.mrt_set_alias(self._state, FLASH_ALIAS_OFFSET if self.flash_port else 0)
        if self.static_checks is not None:
            for which, table in enumerate(self.static_checks.native):
                n_starts, n_rows = len(table.starts) // 12, len(table.rows) // (4 * ROW_WORDS)
                sa = (ctypes.c_uint32 * max(1, 3 * n_starts)).from_buffer_copy(table.starts or bytes(4))
                ca = (ctypes.c_uint32 * max(1, ROW_WORDS * n_rows)).from_buffer_copy(table.rows or bytes(4))
                if lib.mrt_set_checks(self._state, which, sa, n_starts, ca, n_rows):
                    raise MemoryError("mrt_set_checks failed")
        self._add_native_hooks()

    def _add_native_hooks(self):
        lib = self._lib
        self._add_code_hooks()
        self._add(UC.UC_HOOK_BLOCK, ctypes.cast(lib.mrt_block_hook, ctypes.c_void_p).value, 1, 0)
        if self.memory_hook:
            self._add(UC.UC_HOOK_MEM_READ | UC.UC_HOOK_MEM_WRITE,
                      ctypes.cast(lib.mrt_mem_hook, ctypes.c_void_p).value, 1, 0)
        # the virtual TLB (mrt_tlb_fill) also keeps stores on QEMU's fast path, with or without
        # the flash data port
        self._engine().ctl_set_tlb_mode(UC.UC_TLB_VIRTUAL)  # type: ignore[attr-defined]   # Unicorn 2.1's, not in its stubs
        self._add(UC.UC_HOOK_TLB_FILL, ctypes.cast(lib.mrt_tlb_fill, ctypes.c_void_p).value, 1, 0)
        for lo, (hi, _, user) in sorted(self._segments.items()):
            self._map_alias(lo, hi, user)

    def add_flash_segments(self, segments) -> None:
        """The flash's host memory, [(lo, hi, host address)]: the flash data port reads the bytes
        of data loads from there. Segments already known are skipped (flash only grows)."""
        if not self.flash_port:
            return
        for lo, hi, host in segments:
            if lo in self._segments:
                continue
            user = self._lib.mrt_add_segment(self._state, lo, hi, ctypes.c_void_p(host))
            if not user:
                raise MemoryError("mrt_add_segment failed")
            self._segments[lo] = (hi, host, user)
            if self.uc is not None:
                self._map_alias(lo, hi, user)

    def _map_alias(self, lo: int, hi: int, user: int) -> None:
        read = ctypes.cast(self._lib.mrt_flash_read, ctypes.c_void_p)
        status = self._uclib.uc_mmio_map(self._engine()._uch, ctypes.c_uint64(lo + FLASH_ALIAS_OFFSET),
                                         ctypes.c_uint64(hi - lo), read, ctypes.c_void_p(user),
                                         None, None)
        if status != UC.UC_ERR_OK:
            raise unicorn.UcError(status)

    def attach(self, uc: unicorn.Uc) -> None:
        """Install the same hooks, with their state (counts, data-cache lines), on a fresh engine
        that has not run yet; the previous engine is left to be closed by its owner."""
        self.detach()
        self.uc = uc
        if self.native:
            self._add_native_hooks()
        else:
            self._add_python_hooks()

    def set_code_hook_pcs(self, pcs: set) -> None:
        """Only these instructions' alignment checks as code hooks (the by_pc keys), on this
        engine (before it translates them) and the later ones. The Python hooks (the slow
        reference path) keep every check."""
        self.code_hook_pcs = set(pcs)
        uc = self.uc
        if not self.native or uc is None:
            return
        for h in self._code_handles:
            self._uclib.uc_hook_del(uc._uch, ctypes.c_size_t(h))
            self._handles.remove(h)
        self._add_code_hooks()

    def _add_code_hooks(self) -> None:
        """The native code hooks of the by_pc checks (those of `code_hook_pcs` alone, when set)."""
        self._code_handles = []
        if self.static_checks is None:
            return
        code_fp = ctypes.cast(self._lib.mrt_code_hook, ctypes.c_void_p).value
        for pc in self.static_checks.keys(1):
            if self.code_hook_pcs is None or pc in self.code_hook_pcs:
                self._add(UC.UC_HOOK_CODE, code_fp, pc, pc)
                self._code_handles.append(self._handles[-1])

    def detach(self) -> None:
        """Remove the hooks from the current engine (which drops the engine's references to
        Python callbacks, so it can be closed as soon as its owner lets go of it)."""
        uc = self.uc
        if uc is not None:
            for h in self._handles:
                try:
                    if self.native:
                        self._uclib.uc_hook_del(uc._uch, ctypes.c_size_t(h))
                    else:
                        uc.hook_del(h)
                except Exception:
                    pass
        self._handles = []
        self.uc = None

    def _engine(self) -> unicorn.Uc:
        """The engine the hooks are on (EmulationError when detached from every engine)."""
        if self.uc is None:
            raise EmulationError("the hooks are on no engine (detached)")
        return self.uc

    def _add(self, htype: int, fptr: Optional[int], begin: int, end: int):
        handle = ctypes.c_size_t()
        status = self._uclib.uc_hook_add(self._engine()._uch, ctypes.byref(handle), htype,
                                         ctypes.c_void_p(fptr), self._state,
                                         ctypes.c_uint64(begin), ctypes.c_uint64(end))
        if status != UC.UC_ERR_OK:
            raise unicorn.UcError(status)
        self._handles.append(handle.value)

    @contextmanager
    def observing(self, lo: int, hi: int, callback: Callable) -> Iterator[None]:
        """Within the block, `callback(uc, address, size, None)` runs for every block starting in
        [lo, hi], after the block was counted (as a Unicorn block hook added after ours would).
        Natively the block hook makes the call (mrt_set_observer): a Unicorn hook of its own,
        even on a small range, slows every block down. An exception in the callback stops the
        emulation and is raised when the block ends."""
        if not self.native:
            engine = self._engine()
            handle = engine.hook_add(UC.UC_HOOK_BLOCK, callback, begin=lo, end=hi)
            # translations made before the hook would not call it (ctl_flush_tb: Unicorn 2.1's, not in its stubs)
            engine.ctl_flush_tb()  # type: ignore[attr-defined]
            try:
                yield
            finally:
                engine.hook_del(handle)
            return
        failed: list = []
        uc = self._engine()

        def trampoline(_engine, address, size, _user):
            if failed:
                return
            try:
                callback(uc, address, size, None)
            except BaseException as e:     # a ctypes callback cannot raise: stop and raise later
                failed.append(e)
                uc.emu_stop()

        function = _BLOCK_CALLBACK(trampoline)
        self._lib.mrt_set_observer(self._state, lo, hi, ctypes.cast(function, ctypes.c_void_p))
        try:
            yield
        finally:
            self._lib.mrt_set_observer(self._state, 0, 0, None)
        if failed:
            raise failed[0]

    def _configure_native(self) -> None:
        """Hand the flash range and the flash interface to the library (its caches emptied)."""
        lib, ms = self._lib, self.memory_system
        shift = lambda n: max(0, int(n).bit_length() - 1)      # noqa: E731 (powers of two)
        if (lib.mrt_configure_mem(self._state, int(self.check_alignment), self.flash_lo, self.flash_hi,
                                  shift(ms.data_unit), ms.dcache_lines, ms.dcache_ways)
                or lib.mrt_configure_fetch(self._state, int(self.flash_model.fetch_on), shift(ms.line_bytes),
                                           ms.icache_lines, ms.icache_ways, int(ms.prefetch),
                                           ms.wait_states, ms.sequential_fill)):
            raise MemoryError("mrt_configure_mem / mrt_configure_fetch failed")

    def set_memory_system(self, memory_system: MemorySystem) -> None:
        """The flash interface changed while running (a firmware wrote its latency or cache
        enables): simulate the new one from here; its caches start empty. Counts are kept."""
        self.memory_system = memory_system
        model = FlashInterface(memory_system, fetch=memory_system.wait_states > 0)
        model.fetch_stalls, model.fills = self.flash_model.fetch_stalls, self.flash_model.fills
        model.data_reads, model.data_misses = self.flash_model.data_reads, self.flash_model.data_misses
        self.flash_model = model
        if self.native:
            self._configure_native()

    def set_flash_range(self, lo: int, hi: int):
        """The flash moved or grew: the caches start empty, as after a reset."""
        self.flash_lo, self.flash_hi = lo, hi
        if self.native:
            self._configure_native()
        else:
            self.flash_model.flush()

    # ---- python fallback ----
    def _install_python(self):
        self._edges: dict = {}
        self._edge_stalls: dict = {}
        self._key = (0, 0, 0, 0)
        self._prev = (0, 0)
        self._bytes = 0
        self._budget = 1 << 62
        self._hit = False
        self._from = 0
        self._unal: dict = {}
        self._unal_total = 0
        flash = self.flash_model

        by_start, by_pc = self.static_checks if self.static_checks is not None else ({}, {})

        def run_checks(uc, checks, end):
            for c in checks:
                if c.pc >= end:
                    continue
                v = c.const
                for r, k in c.terms:
                    v += k * uc.reg_read(r)
                v &= 0xFFFFFFFF
                if v & c.mask:
                    self._record(c.pc, v, c.size, UC.UC_MEM_WRITE if c.write else UC.UC_MEM_READ)

        def block(uc, address, size, _):
            if self._bytes + size > self._budget and self._bytes > self._from and not self._hit:
                self._hit = True              # stopped before the block runs: not counted
                uc.emu_stop()
                return
            key = (self._prev[0], self._prev[1], address, size)
            e = self._edges
            e[key] = e.get(key, 0) + 1
            self._key = key
            chk = by_start.get(address)
            if chk:
                run_checks(uc, chk, address + size)
            self._prev = (address, size)
            if self.flash_lo <= address < self.flash_hi:
                before = flash.fetch_stalls
                flash.fetch_block(address, size)
                self._charge(key, flash.fetch_stalls - before, 0)
            self._bytes += size

        self._python_hooks: list[tuple[int, Callable[..., Any], int, int]] = [(UC.UC_HOOK_CODE, lambda uc, a, s, _, c=checks: run_checks(uc, c, 1 << 33), pc, pc)
                              for pc, checks in by_pc.items()]
        self._python_hooks.append((UC.UC_HOOK_BLOCK, block, 1, 0))
        if self.memory_hook:
            def mem(uc, access, address, size, value, _):
                uc.reg_write(UC_ARM_REG_EPSR, EPSR_THUMB)    # the IT state: native_hook.c clear_it_state
                if self.check_alignment and address & (3 if size >= 4 else size - 1):
                    self._record(uc.reg_read(UC_ARM_REG_PC), address, size, access)
                if access == UC.UC_MEM_READ and self.flash_lo <= address < self.flash_hi:
                    # an unaligned load is two naturally aligned ones (native_hook.c)
                    first = address & ~(size - 1)
                    for a in ((first, first + size) if address != first else (first,)):
                        before = flash.data_misses
                        flash.data_read(a)
                        self._charge(self._key, 0, flash.data_misses - before, 1)
            self._python_hooks.append((UC.UC_HOOK_MEM_READ | UC.UC_HOOK_MEM_WRITE, mem, 1, 0))
        self._add_python_hooks()

    def _add_python_hooks(self):
        engine = self._engine()
        for htype, callback, begin, end in self._python_hooks:
            self._handles.append(engine.hook_add(htype, callback, begin=begin, end=end))

    def _charge(self, key, fetch_stalls: int, data_misses: int, data_reads: int = 0) -> None:
        if fetch_stalls or data_misses or data_reads:
            f, d, r = self._edge_stalls.get(key, (0, 0, 0))
            self._edge_stalls[key] = (f + fetch_stalls, d + data_misses, r + data_reads)

    def _record(self, pc, address, size, access):
        self._unal_total += 1
        rec = self._unal.get(pc)
        if rec is None:
            self._unal[pc] = [pc, address, size, access, 1]
        else:
            rec[4] += 1

    # ---- common API ----
    def reset(self, budget_instructions: int, entry_prev: int):
        byte_budget = 4 * int(budget_instructions)     # >= 1 instruction per 4 bytes
        if self.native:
            self._lib.mrt_reset(self._state, ctypes.c_uint64(min(byte_budget, (1 << 64) - 1)), entry_prev)
        else:
            self._edges = {}
            self._edge_stalls = {}
            self._prev = (entry_prev, 0)
            self._bytes = 0
            self._budget = byte_budget
            self._hit = False
            self._from = 0
            self.flash_model.reset()
            self._unal = {}
            self._unal_total = 0

    def set_budget(self, more_instructions: int) -> None:
        """Let the run go on for at least `more_instructions` (at most twice as many: the budget
        counts bytes) and stop before the block that would pass that; the counts are kept. A run
        stopped so resumes at the pc it stopped at, where the next block is counted once."""
        limit = min(self.stats().bytes + 4 * max(0, int(more_instructions)), (1 << 64) - 1)
        if self.native:
            self._lib.mrt_set_budget(self._state, ctypes.c_uint64(limit))
        else:
            self._budget, self._hit, self._from = limit, False, self._bytes

    def edges(self) -> dict:
        if not self.native:
            return dict(self._edges)
        n = self._lib.mrt_edge_count(self._state)
        buf = (ctypes.c_uint64 * (5 * max(n, 1)))()
        k = self._lib.mrt_edges(self._state, buf, n)
        vals = list(buf)
        return {(vals[5 * i], vals[5 * i + 1], vals[5 * i + 2], vals[5 * i + 3]): vals[5 * i + 4]
                for i in range(k)}

    def stop_at_next_block(self) -> None:
        """End the run before the next block starts (for a callback inside a block: Unicorn's
        emu_stop from an MMIO callback stops at the accessing instruction, which then runs again)."""
        if self.native:
            self._lib.mrt_stop_at_next_block(self._state)
        else:
            self._budget, self._from, self._hit = self._bytes, -1, False

    def truncate_last_block(self, executed: int) -> None:
        """The block counted last ran only its first `executed` bytes (the run stopped inside
        it and goes on after them): count that part instead of the whole block."""
        if self.native:
            status = self._lib.mrt_truncate_last_block(self._state, int(executed))
            if status == -2:
                raise MemoryError("mrt_truncate_last_block failed")
            if status:
                raise ValueError(f"{executed} bytes are not inside the last block counted")
            return
        key = self._key
        if key not in self._edges or not 0 < executed < key[3] or self._prev != key[2:]:
            raise ValueError(f"{executed} bytes are not inside the last block counted")
        self._edges[key] -= 1
        moved = (0, 0, 0)
        if not self._edges[key]:
            del self._edges[key]
            moved = self._edge_stalls.pop(key, (0, 0, 0))
        part = (key[0], key[1], key[2], executed)
        self._edges[part] = self._edges.get(part, 0) + 1
        self._charge(part, *moved)
        self._bytes -= key[3] - executed
        self._prev, self._key = (key[2], executed), part

    def edge_count(self) -> int:
        """How many distinct edges were counted so far (grows only when new code runs)."""
        return self._lib.mrt_edge_count(self._state) if self.native else len(self._edges)

    def keep_edge_stalls(self) -> None:
        """Count the flash interface's stalls per edge from here (for `edge_stalls`; off by
        default: the table it needs costs the profile's emulation speed)."""
        if self.native and self._lib.mrt_keep_edge_flash(self._state):
            raise MemoryError("mrt_keep_edge_flash failed")

    def edge_stalls(self) -> dict:
        """{(prev, prev_size, cur, cur_size): (fetch stall cycles, data-cache misses, data loads
        from flash)}: what the flash interface met, each charged to the block that met it (for a
        per-function profile)."""
        if not self.native:
            return dict(self._edge_stalls)
        n = self._lib.mrt_edge_count(self._state)
        buf = (ctypes.c_uint64 * (7 * max(n, 1)))()
        k = self._lib.mrt_edge_stalls(self._state, buf, n)
        v = list(buf)
        return {tuple(v[7 * i:7 * i + 4]): tuple(v[7 * i + 4:7 * i + 7]) for i in range(k)}

    def stats(self) -> Stats:
        if not self.native:
            last = self._prev if self._prev[1] else None
            f = self.flash_model
            return Stats(self._bytes, self._hit, f.data_reads, f.data_misses, self._unal_total, 0, last,
                         f.fetch_stalls, f.fills)
        buf = (ctypes.c_uint64 * 12)()
        self._lib.mrt_stats(self._state, buf)
        last = (buf[7], buf[8]) if buf[8] else None
        return Stats(buf[0], bool(buf[1]), buf[2], buf[3], buf[5], buf[6], last, buf[10], buf[11])

    def account(self, edges: dict, costs: dict,
                window: Optional[tuple[Optional[tuple[int, int]], FlashCounts]] = None
                ) -> Optional[tuple[int, int, int, int, int, int, int]]:
        """(instructions, blocks, core, branches, fetch, data_flash, words loaded) of the call just run, priced
        natively from the edge table and the flash interface's totals (native_hook.c
        mrt_account: the twin of cycles.account); None with the Python hooks. costs:
        {(addr, size): BlockCost} holding every block of `edges`. `window`: (last block, flash
        counts) of a part of the call, whose edges are `edges`."""
        if not self.native:
            return None
        lib, priced = self._lib, self._priced
        for (_, _, c, cs) in edges:
            if (c, cs) not in priced:
                bc = costs[(c, cs)]
                if lib.mrt_set_cost(self._state, c, cs, bc.n_insns, bc.cycles, bc.taken_extra, bc.loads):
                    raise MemoryError("mrt_set_cost failed")
                priced.add((c, cs))
        data_miss = self.memory_system.data_miss
        out = (ctypes.c_int64 * 7)()
        if window is None:
            status = lib.mrt_account(self._state, data_miss, out)
        else:
            last, flash = window
            flat = (ctypes.c_uint64 * (5 * max(len(edges), 1)))(*(v for key, n in edges.items() for v in (*key, n)))
            status = lib.mrt_account_window(self._state, flat, len(edges), *(last or (0, 0)), flash.fetch_stalls,
                                            flash.data_misses, data_miss, out)
        if status:
            raise MemoryError(f"mrt_account failed ({status})")
        return tuple(out)

    def unaligned(self) -> list[tuple[int, int, int, int, int]]:
        """[(pc, first address, size, access type, count)]"""
        if not self.native:
            return [tuple(v) for v in self._unal.values()]
        buf = (ctypes.c_uint64 * (5 * 256))()
        k = self._lib.mrt_unaligned(self._state, buf, 256)
        vals = list(buf)
        return [tuple(vals[5 * i:5 * i + 5]) for i in range(k)]

    def clear_edges(self) -> None:
        """Forget the edges so far (the budget's count and the previous block stay)."""
        if self.native:
            self._lib.mrt_clear_edges(self._state)
        else:
            self._edges = {}
            self._edge_stalls = {}

    def clear_unaligned(self) -> None:
        """Forget the unaligned records so far (`stats().unaligned_total` keeps counting)."""
        if self.native:
            self._lib.mrt_clear_unaligned(self._state)
        else:
            self._unal = {}

    def close(self):
        self.detach()
        if self.native and getattr(self, "_state", None) is not None and self._state.value:
            self._lib.mrt_free(self._state)
            self._state = ctypes.c_void_p(0)

    def __del__(self):  # the engine may be gone already: only free our state
        try:
            if self.native and self._state.value:
                self._lib.mrt_free(self._state)
                self._state = ctypes.c_void_p(0)
        except Exception:
            pass
