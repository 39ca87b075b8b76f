"""The Unicorn engine behind a virtual MCU, and its replacement every `recycle_every` calls.

Unicorn 2.1's emu_start keeps a few hundred bytes per call that only closing the engine
returns (see benchmarks/bench_mcu_memory.py). Every region is host memory mapped zero-copy
(memory_map.py) and the hooks keep their state outside the engine (native.HookSet), so after
`recycle_every` calls the engine is replaced by a fresh one over the same memory, with the same
hooks, registers at their reset values: the calls after it see no difference.
"""
from __future__ import annotations

import gc
import weakref
from typing import Any, Callable, Optional

import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import (UC_ARM_REG_FPSCR, UC_ARM_REG_PC, UC_CPU_ARM_CORTEX_M0, UC_CPU_ARM_CORTEX_M4,
                               UC_CPU_ARM_CORTEX_M7, UC_CPU_ARM_CORTEX_M33)

from micro_rt.errors import EmulationError

from .memory_map import FLASH_BASE
from .native import HookSet

RECYCLE_EVERY = 10_000                   # emu_start calls before the engine is replaced

CPU_MODELS = {
    "cortex-m0plus": UC_CPU_ARM_CORTEX_M0,     # Unicorn has no M0+: same ISA (Armv6-M)
    "cortex-m4": UC_CPU_ARM_CORTEX_M4,
    "cortex-m7": UC_CPU_ARM_CORTEX_M7,
    "cortex-m33": UC_CPU_ARM_CORTEX_M33,
}


class Engine:
    """One machine's Unicorn engine with its hooks, recycled every `recycle_every` calls (0: never).

    `memory` is the machine's layout (memory_map.MemoryMap for a model's image, or a firmware
    run's system.address_map.AddressMap): it maps its host memory on each engine (`map_into`),
    names the host memory behind the flash the flash data port reads (`flash_segments`), and
    the ranges where an access faults (`fault_ranges`: the only ones hooked).
    `new_hooks(uc)` makes the machine's HookSet on the first engine; later engines re-attach it;
    `on_engine(uc)`, after each engine is made, maps the machine's own MMIO parts on it.
    A memory fault or a CPU exception met during a call is kept in `fault` / `interrupt` for
    the caller to explain (faults.py); `on_fault(uc, access, address, size)` may first let the
    access go on (True: it mapped memory there)."""

    def __init__(self, core: str, memory: Any, new_hooks: Callable[[unicorn.Uc], HookSet], *,
                 has_fpu: bool, recycle_every: int = RECYCLE_EVERY,
                 on_engine: Optional[Callable[[unicorn.Uc], None]] = None,
                 on_fault: Optional[Callable[[unicorn.Uc, int, int, int], bool]] = None):
        self.core = core
        self.memory = memory
        self.has_fpu = has_fpu
        self.recycle_every = int(recycle_every)
        self._new_hooks = new_hooks
        self._on_engine = on_engine
        self._on_fault = on_fault
        self.hooks: Optional[HookSet] = None
        self.uc: Optional[unicorn.Uc] = None
        self.engines_started = 0
        self.fault: Optional[tuple] = None       # (access, address, size, pc) of a memory fault
        self.interrupt: Optional[tuple] = None   # (exception number, pc)
        self._own_hooks: list = []
        self._fault_hooks: list = []
        self._ctx0 = None
        self._calls_on_engine = 0
        self.start()

    def start(self) -> None:
        """A fresh Unicorn engine over the same host memory, with the same hooks (and hook state:
        the flash data-cache lines carry over), registers at their reset values."""
        self.retire()
        # CPU: THUMB mode + explicit model first (UC_MODE_MCLASS would force an M33)
        uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
        uc.ctl_set_cpu_model(CPU_MODELS[self.core])
        self.memory.map_into(uc)
        if self.hooks is None:
            self.hooks = self._new_hooks(uc)
        else:
            self.hooks.attach(uc)
        self.hooks.add_flash_segments(self.memory.flash_segments())
        self._own_hooks = [uc.hook_add(UC.UC_HOOK_INTR, self._on_intr)]
        self.uc = uc
        self.refresh_fault_hooks()
        # FPU cores (the firmware uses VFP through -mfloat-abi=softfp): IEEE 754 defaults in FPSCR,
        # i.e. FZ=0 (denormals are kept, not flushed), DN=0 (NaN operands propagate), AHP=0,
        # RMode=0 (round to nearest even): the numpy twins' float32 semantics. Unicorn's reset
        # value is already 0; it is written explicitly so every call (context restore) starts so.
        # Unicorn/QEMU executes VFP instructions without the CPACR enable a reset handler would do.
        if self.has_fpu:
            uc.reg_write(UC_ARM_REG_FPSCR, 0)
        self._ctx0 = uc.context_save()
        self.uc = uc
        self.engines_started += 1
        self._calls_on_engine = 0
        if self._on_engine is not None:
            self._on_engine(uc)

    def retire(self) -> None:
        """Unhook the current engine and let go of it; it is closed (uc_close) and its memory
        freed when the last reference goes. Unicorn's Python hook wrappers keep the engine in a
        reference cycle, so a collection is run when dropping it was not enough."""
        if self.uc is None:
            return
        if self.hooks is not None:
            self.hooks.detach()
        for handle in self._own_hooks + self._fault_hooks:
            self.uc.hook_del(handle)
        self._own_hooks = []
        self._fault_hooks = []
        self._ctx0 = None
        engine = weakref.ref(self.uc)
        self.uc = None
        if engine() is not None:
            gc.collect()

    def close(self) -> None:
        """Free the engine and the hooks' native state now."""
        self.retire()
        if self.hooks is not None:
            self.hooks.close()

    def begin_call(self) -> unicorn.Uc:
        """The engine for the next call (a fresh one when this one has run `recycle_every`
        calls), registers at their reset values, no fault recorded."""
        self.live()
        if self.recycle_every and self._calls_on_engine >= self.recycle_every:
            self.start()
        self._calls_on_engine += 1
        uc = self.live()
        uc.context_restore(self._ctx0)
        self.fault = None
        self.interrupt = None
        return uc

    def live(self) -> unicorn.Uc:
        """The current engine (EmulationError after `close`)."""
        if self.uc is None:
            raise EmulationError("the virtual MCU was closed: create a new one")
        return self.uc

    def run(self, entry: int, stop: int) -> Optional[unicorn.UcError]:
        """Run from `entry` (Thumb) until the pc reaches `stop`; the engine's error, if any."""
        uc = self.live()
        try:
            uc.emu_start(entry | 1, stop)
        except unicorn.UcError as exc:
            if exc.errno == UC.UC_ERR_FETCH_PROT and self.fault is None:   # in a mapped region
                pc = uc.reg_read(UC_ARM_REG_PC)
                self.fault = (UC.UC_MEM_FETCH_PROT, pc, 2, pc)
            return exc
        return None

    def refresh_fault_hooks(self) -> None:
        """Hook faults on the memory's fault ranges only (call after every change of the map). A page
        no memory hook covers keeps QEMU's fast path for stores once written (tlb_set_dirty);
        a fetch from a mapped but non-executable region (the stack) is caught in `run`."""
        uc = self.live()
        for handle in self._fault_hooks:
            uc.hook_del(handle)
        self._fault_hooks = [uc.hook_add(UC.UC_HOOK_MEM_UNMAPPED | UC.UC_HOOK_MEM_PROT, self._on_invalid_mem,
                                         begin=lo, end=hi)
                             for lo, hi in self.memory.fault_ranges()]

    def grow_flash(self, end: int) -> None:
        """Map flash up to `end` and let the hooks count data loads from all of it."""
        self.memory.grow_flash(self.live(), end)
        self.refresh_fault_hooks()
        assert self.hooks is not None            # made with the first engine
        self.hooks.set_flash_range(FLASH_BASE, self.memory.flash_end)
        self.hooks.add_flash_segments(self.memory.flash_segments())

    # ------------------------------------------------------------------ hooks (rare paths)
    def _on_invalid_mem(self, uc, access, address, size, value, _):
        if self._on_fault is not None and self._on_fault(uc, access, address, size):
            return True
        self.fault = (access, address, size, uc.reg_read(UC_ARM_REG_PC))
        return False

    def _on_intr(self, uc, intno, _):
        self.interrupt = (intno, uc.reg_read(UC_ARM_REG_PC))
        uc.emu_stop()
