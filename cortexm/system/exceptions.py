"""Exception entry and return, priorities and fault status, as the Armv7-M / Armv8-M / Armv6-M
architecture describes them; Unicorn executes only the instructions.

Unicorn (QEMU without its NVIC) stops the run at an SVC, a BKPT, a fault and at a branch to an
EXC_RETURN value (a prefetch abort at 0xFFFFFFxx); the run loop (run.py) hands each here:
`take` pushes the frame on the stack in use (8 words; 26 with the FP context) and sets LR to
EXC_RETURN and goes to the vector; `exception_return` pops it. QEMU keeps IPSR at 0 (writing it
would start QEMU's own exception return, which needs the NVIC Unicorn lacks), so the active
exceptions are tracked here, and code that reads IPSR sees Thread mode.

The FP context follows FPCCR as the Armv7-M ARM (B1.5.7, "lazy context preservation") has it.
With LSPEN set (its reset value), an entry with CONTROL.FPCA reserves the 18 FP words, sets
FPCCR.LSPACT and points FPCAR at them; S0-S15 and FPSCR are written there (`preserve_fp_state`)
only when the handler reaches its first FP instruction (the run loop watches the blocks it runs
while LSPACT is set), and a return that finds LSPACT still set leaves the FP registers alone.
With LSPEN clear they are written at entry. The check is per block: an FP instruction whose IT
condition fails still counts as the first one.

Cycles: the entry latency is the core's documented interrupt latency in a zero-wait-state system
(Cortex-M0+ TRM, ARM DDI 0484C, 3.6.1: 15 cycles; Cortex-M3/M4: 12 cycles, Arm's published table
of Cortex-M interrupt latencies, read in a third-party copy; Cortex-M7: "typically 12, worst case
14", Arm's white paper "Cortex-M for Beginners", as quoted on Arm's community forum). For the
Cortex-M33 no document was found: 12 is used and every report that took an exception says so.
The return's latency, from the return instruction to the next instruction of the interrupted
code, is 10 cycles on the Cortex-M4 (Arm knowledge article 103489845, "What is the true interrupt
latency of Cortex-M3 and Cortex-M4 for interrupt entry and exit?", citing the Cortex-M4 TRM), added
after the return branch's own cycles; for the other cores no document was found and it is not
priced, which the reports say. Writing or reading the FP context costs up to 17 cycles more on
the Cortex-M4 (the same article): charged as 17 when the words are written (at entry, or at the
lazy save) and when a return reads them back; the other cores' figure is not documented, and the
reports say so.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Optional

import unicorn
from unicorn.arm_const import (UC_ARM_REG_CONTROL, UC_ARM_REG_FPSCR, UC_ARM_REG_LR, UC_ARM_REG_MSP,
                               UC_ARM_REG_PRIMASK, UC_ARM_REG_PSP, UC_ARM_REG_R0,
                               UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_R12,
                               UC_ARM_REG_S0, UC_ARM_REG_SP, UC_ARM_REG_XPSR)

try:                                    # Armv7-M only
    from unicorn.arm_const import UC_ARM_REG_BASEPRI, UC_ARM_REG_FAULTMASK
except ImportError:                     # pragma: no cover
    UC_ARM_REG_BASEPRI = UC_ARM_REG_FAULTMASK = None  # type: ignore[assignment]


class Exc(IntEnum):
    RESET = 1
    NMI = 2
    HARDFAULT = 3
    MEMMANAGE = 4
    BUSFAULT = 5
    USAGEFAULT = 6
    SVCALL = 11
    DEBUGMON = 12
    PENDSV = 14
    SYSTICK = 15


def exception_name(n: int) -> str:
    try:
        return {Exc.HARDFAULT: "HardFault", Exc.MEMMANAGE: "MemManage", Exc.BUSFAULT: "BusFault",
                Exc.USAGEFAULT: "UsageFault", Exc.SVCALL: "SVCall", Exc.PENDSV: "PendSV",
                Exc.SYSTICK: "SysTick", Exc.NMI: "NMI", Exc.DEBUGMON: "DebugMonitor"}[Exc(n)]
    except ValueError:
        return f"IRQ{n - 16}" if n >= 16 else f"exception {n}"


ENTRY_LATENCY = {"cortex-m0plus": 15, "cortex-m4": 12, "cortex-m7": 12, "cortex-m33": 12}
LATENCY_DOCUMENTED = {"cortex-m0plus": True, "cortex-m4": True, "cortex-m7": True, "cortex-m33": False}
RETURN_LATENCY = {"cortex-m4": 10}         # documented only for the M3/M4: the others are not priced
FP_CONTEXT_CYCLES = {"cortex-m4": 17}      # writing or reading S0-S15 + FPSCR: the same article
FPCCR_ASPEN, FPCCR_LSPEN, FPCCR_LSPACT = 1 << 31, 1 << 30, 1     # Armv7-M ARM B3.2.21
FPCCR_THREAD, FPCCR_HFRDY = 1 << 3, 1 << 4
FP_FRAME_OFFSET = 0x20                     # S0 follows the 8 basic words
EXC_RETURN_BASE = 0xFFFFFF00
THREAD_BASE_PRIORITY = 256

# Configurable Fault Status Register bits (Armv7-M ARM B3.2.15): MMFSR [7:0], BFSR [15:8], UFSR [31:16]
CFSR_BITS = {0: "IACCVIOL", 1: "DACCVIOL", 3: "MUNSTKERR", 4: "MSTKERR", 5: "MLSPERR", 7: "MMARVALID",
             8: "IBUSERR", 9: "PRECISERR", 10: "IMPRECISERR", 11: "UNSTKERR", 12: "STKERR",
             13: "LSPERR", 15: "BFARVALID", 16: "UNDEFINSTR", 17: "INVSTATE", 18: "INVPC", 19: "NOCP",
             20: "STKOF", 24: "UNALIGNED", 25: "DIVBYZERO"}
HFSR_BITS = {1: "VECTTBL", 30: "FORCED", 31: "DEBUGEVT"}
FAULT_OF_BIT = {b: (Exc.MEMMANAGE if b < 8 else Exc.BUSFAULT if b < 16 else Exc.USAGEFAULT) for b in CFSR_BITS}
SHCSR_ENABLE = {Exc.MEMMANAGE: 16, Exc.BUSFAULT: 17, Exc.USAGEFAULT: 18}


def bit_names(value: int, names: dict) -> list[str]:
    return [name for bit, name in sorted(names.items()) if value >> bit & 1]


@dataclass
class FaultRecord:
    """One fault the run met: what it was, where, and what handled it."""
    exception: str              # HardFault, BusFault, ...
    cause: str                  # e.g. "read of unmapped memory", "undefined instruction"
    pc: int
    symbol: str
    address: Optional[int]      # the data address, for a data access fault
    cfsr: list[str] = field(default_factory=list)
    hfsr: list[str] = field(default_factory=list)
    handled_by: str = ""        # the handler's symbol, or "" when the run stopped there
    cycle: int = 0

    def __str__(self) -> str:
        bits = " ".join(self.cfsr + self.hfsr)
        at = f" at 0x{self.address:08x}" if self.address is not None else ""
        by = f"; handled by {self.handled_by}" if self.handled_by else ""
        return (f"{self.exception}: {self.cause}{at} by pc 0x{self.pc:08x} <{self.symbol}>"
                f"{' [' + bits + ']' if bits else ''}{by}")


class Lockup(Exception):
    """A fault while the HardFault or NMI handler runs, or a vector that cannot be taken: the core
    would lock up (Armv7-M ARM B1.5.15). Carries the reason."""


class ExceptionUnit:
    """The NVIC's and SCB's exception state of one run, and entry / return on the engine."""

    def __init__(self, core: str, read, write, has_fpu: bool, irqs: int = 496):
        self.core = core
        self.armv6m = core == "cortex-m0plus"
        self.has_fpu = has_fpu
        self._read, self._write = read, write      # memory access (raise unicorn.UcError)
        self.irqs = irqs
        self.vtor = 0
        self.priority: dict[int, int] = {}         # exception number -> 8-bit priority
        self.enabled: set[int] = set()             # IRQ exception numbers enabled in the NVIC
        self.pending: set[int] = set()
        self.active: list[int] = []                # innermost last
        self.shcsr = 0
        self.cfsr = 0
        self.hfsr = 0
        self.mmfar = 0
        self.bfar = 0
        self.prigroup = 0
        self.taken: dict[int, int] = {}            # exception number -> times taken
        self.entry_cycles = 0                      # cycles charged for entries
        self.return_cycles = 0                     # ... and for returns (RETURN_LATENCY)
        self.fpccr = FPCCR_ASPEN | FPCCR_LSPEN if has_fpu else 0     # FPCCR's reset value
        self.fpcar = 0
        self.fp_frames = 0                         # entries that stacked the FP context
        self.lazy_frames = 0                       # ... of which lazily (space reserved, LSPACT set)
        self.lazy_saves = 0                        # lazy saves a handler's FP instruction made
        self.fp_cycles = 0                         # FP_CONTEXT_CYCLES charged (entry, save, return)

    # ---- priorities
    def priority_of(self, n: int) -> int:
        if n == Exc.RESET:
            return -3
        if n == Exc.NMI:
            return -2
        if n == Exc.HARDFAULT:
            return -1
        return self.priority.get(n, 0)

    def _group(self, prio: int) -> int:
        if prio < 0:
            return prio
        return prio & ~((2 << self.prigroup) - 1) & 0xFF if not self.armv6m else prio

    def execution_priority(self, uc: unicorn.Uc) -> int:
        prio = THREAD_BASE_PRIORITY
        for n in self.active:
            prio = min(prio, self._group(self.priority_of(n)))
        if uc.reg_read(UC_ARM_REG_PRIMASK) & 1:
            prio = min(prio, 0)
        if not self.armv6m and UC_ARM_REG_BASEPRI is not None:
            basepri = uc.reg_read(UC_ARM_REG_BASEPRI) & 0xFF
            if basepri:
                prio = min(prio, self._group(basepri))
            if uc.reg_read(UC_ARM_REG_FAULTMASK) & 1:
                prio = min(prio, -1)
        return prio

    def can_take(self, n: int) -> bool:
        return n < 16 or n in self.enabled

    def next_pending(self, uc: unicorn.Uc) -> Optional[int]:
        """The pending exception that would preempt now (lowest priority value, then number)."""
        current = self.execution_priority(uc)
        best = None
        for n in self.pending:
            if not self.can_take(n):
                continue
            p = self._group(self.priority_of(n))
            if p < current and (best is None or (p, n) < best):
                best = (p, n)
        return None if best is None else best[1]

    def next_pending_any(self) -> Optional[int]:
        """The pending exception of highest priority, whether or not it can preempt now (ICSR's
        VECTPENDING)."""
        cands = [(self._group(self.priority_of(n)), n) for n in self.pending if self.can_take(n)]
        return min(cands)[1] if cands else None

    # ---- faults
    def fault_target(self, cfsr_bit: Optional[int], uc: unicorn.Uc) -> int:
        """Record a fault's status bits; the exception that takes it (its own handler when
        enabled in SHCSR and able to preempt, else HardFault, escalated). Raises Lockup when
        even HardFault cannot preempt (a fault in the HardFault or NMI handler)."""
        current = self.execution_priority(uc)
        if self.armv6m or cfsr_bit is None:
            target = Exc.HARDFAULT
        else:
            self.cfsr |= 1 << cfsr_bit
            own = FAULT_OF_BIT[cfsr_bit]
            if self.shcsr >> SHCSR_ENABLE[own] & 1 and self._group(self.priority_of(own)) < current:
                target = own
            else:
                target = Exc.HARDFAULT
                self.hfsr |= 1 << 30          # FORCED: escalated from a configurable fault
        if -1 >= current:
            raise Lockup("a fault while the HardFault or NMI handler runs (the core locks up)")
        return target

    # ---- entry and return
    def vector(self, n: int) -> int:
        try:
            return struct.unpack("<I", self._read(self.vtor + 4 * n, 4))[0]
        except unicorn.UcError:
            raise Lockup(f"the vector of {exception_name(n)} at 0x{self.vtor + 4 * n:08x} (VTOR "
                         f"0x{self.vtor:08x}) is in no memory region") from None

    def take(self, uc: unicorn.Uc, n: int, return_pc: int) -> int:
        """Enter exception `n` (preempting what runs at `return_pc`): push the frame, set LR and
        the stack, mark it active; the handler's address (run from there)."""
        handler = self.vector(n)
        if not handler & 1 or handler & ~1 == 0:
            raise Lockup(f"the vector of {exception_name(n)} is 0x{handler:08x}, not a Thumb "
                         "handler address (no handler in the vector table)")
        control = uc.reg_read(UC_ARM_REG_CONTROL)
        thread = not self.active
        on_psp = thread and control & 2
        fp_frame = self.has_fpu and bool(control & 4)
        sp = uc.reg_read(UC_ARM_REG_SP)
        words = 26 if fp_frame else 8
        frame = (sp - 4 * words) & ~7
        realigned = (sp - 4 * words) & 4
        xpsr = uc.reg_read(UC_ARM_REG_XPSR) & ~0x1FF | (1 << 9 if realigned else 0)
        regs = [uc.reg_read(r) for r in (UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3,
                                          UC_ARM_REG_R12, UC_ARM_REG_LR)]
        data = struct.pack("<8I", *regs, return_pc & ~1, (xpsr | 1 << 24) & 0xFFFFFFFF)
        lazy = fp_frame and bool(self.fpccr & FPCCR_LSPEN)
        if fp_frame and not lazy:
            data += self._fp_words(uc)
            self.fp_cycles += FP_CONTEXT_CYCLES.get(self.core, 0)
        try:
            self._write(frame, data)
        except unicorn.UcError:
            raise Lockup(f"stacking {exception_name(n)}'s frame at 0x{frame & 0xFFFFFFFF:08x} faulted: the "
                         "stack pointer is outside RAM") from None
        if lazy:
            self.fpcar = frame + FP_FRAME_OFFSET
            self.fpccr = (self.fpccr & ~FPCCR_THREAD | FPCCR_LSPACT | FPCCR_HFRDY
                          | (FPCCR_THREAD if thread else 0))
            self.lazy_frames += 1
        exc_return = 0xFFFFFFE1 | (0 if fp_frame else 0x10) | (8 if thread else 0) | (4 if on_psp else 0)
        if on_psp:
            uc.reg_write(UC_ARM_REG_PSP, frame)
            uc.reg_write(UC_ARM_REG_CONTROL, control & ~(2 | 4))   # the handler runs on MSP
        else:
            uc.reg_write(UC_ARM_REG_SP, frame)
            if fp_frame:
                uc.reg_write(UC_ARM_REG_CONTROL, control & ~4)
        uc.reg_write(UC_ARM_REG_LR, exc_return)
        self.pending.discard(n)
        self.active.append(n)
        self.taken[n] = self.taken.get(n, 0) + 1
        self.entry_cycles += ENTRY_LATENCY[self.core]
        self.fp_frames += bool(fp_frame)
        return handler & ~1

    def exception_return(self, uc: unicorn.Uc, exc_return: int) -> int:
        """Return from the innermost active exception through `exc_return`: pop the frame; the
        pc to go on at."""
        if not self.active:
            raise Lockup(f"a branch to EXC_RETURN 0x{exc_return:08x} in Thread mode (no exception "
                         "is active)")
        to_thread, from_psp, basic = exc_return & 8, exc_return & 4, exc_return & 0x10
        self.active.pop()
        if bool(to_thread) != (not self.active):
            raise Lockup(f"EXC_RETURN 0x{exc_return:08x} returns to "
                         f"{'Thread' if to_thread else 'Handler'} mode, but "
                         f"{'exceptions are still active' if to_thread else 'no exception is'}")
        control = uc.reg_read(UC_ARM_REG_CONTROL)
        if from_psp:
            uc.reg_write(UC_ARM_REG_CONTROL, control | 2)
            sp = uc.reg_read(UC_ARM_REG_PSP)
        else:
            sp = uc.reg_read(UC_ARM_REG_MSP)
        words = 8 if basic else 26
        try:
            raw = self._read(sp, 4 * words)
        except unicorn.UcError:
            raise Lockup(f"unstacking at 0x{sp:08x} faulted") from None
        r = struct.unpack(f"<{words}I", raw)
        for reg, v in zip((UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_R12,
                           UC_ARM_REG_LR), r[:6]):
            uc.reg_write(reg, v)
        if not basic and self.fpccr & FPCCR_LSPACT:
            self.fpccr &= ~FPCCR_LSPACT           # never saved: the registers still hold the context
        elif not basic:
            for i in range(16):
                uc.reg_write(UC_ARM_REG_S0 + i, r[8 + i])
            uc.reg_write(UC_ARM_REG_FPSCR, r[24])
            self.fp_cycles += FP_CONTEXT_CYCLES.get(self.core, 0)
        xpsr = r[7]
        new_sp = sp + 4 * words + (4 if xpsr & (1 << 9) else 0)
        uc.reg_write(UC_ARM_REG_PSP if from_psp else UC_ARM_REG_MSP, new_sp)
        control = uc.reg_read(UC_ARM_REG_CONTROL)
        uc.reg_write(UC_ARM_REG_CONTROL, (control | 4) if not basic else (control & ~4))
        uc.reg_write(UC_ARM_REG_XPSR, (xpsr & 0xFFFFFE00 & ~(1 << 9)) | (1 << 24))
        self.return_cycles += RETURN_LATENCY.get(self.core, 0)
        return r[6]

    @property
    def latency_cycles(self) -> int:
        """The cycles of every entry and return taken so far (in no block of code)."""
        return self.entry_cycles + self.return_cycles + self.fp_cycles

    @property
    def lazy_pending(self) -> bool:
        """FP space reserved and not yet written (FPCCR.LSPACT): the first FP instruction saves."""
        return bool(self.fpccr & FPCCR_LSPACT)

    def preserve_fp_state(self, uc: unicorn.Uc) -> None:
        """The lazy save, before the first FP instruction LSPACT meets: S0-S15 and FPSCR into the
        space at FPCAR (the Armv7-M ARM's PreserveFPState); LSPACT clears."""
        try:
            self._write(self.fpcar, self._fp_words(uc))
        except unicorn.UcError:
            raise Lockup(f"the lazy FP save at FPCAR 0x{self.fpcar:08x} faulted") from None
        self.fpccr &= ~FPCCR_LSPACT
        self.lazy_saves += 1
        self.fp_cycles += FP_CONTEXT_CYCLES.get(self.core, 0)

    @staticmethod
    def _fp_words(uc: unicorn.Uc) -> bytes:
        """S0-S15, FPSCR and the reserved word: the FP part of a frame."""
        fregs = [uc.reg_read(UC_ARM_REG_S0 + i) for i in range(16)]
        return struct.pack("<16I", *fregs) + struct.pack("<II", uc.reg_read(UC_ARM_REG_FPSCR), 0)

    @property
    def current(self) -> Optional[int]:
        return self.active[-1] if self.active else None
