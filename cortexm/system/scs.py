"""The System Control Space (0xE000E000 and the debug blocks around it), which Unicorn does not
emulate: SCB, NVIC, SysTick, DWT, ITM and the FPU's context registers.

Register addresses and reset values are those of the Armv7-M Architecture Reference Manual
(ARM DDI 0403, B3.2 System Control Space, B3.3 SysTick, B3.4 NVIC, C1.8 DWT, C1.7 ITM) and, for the
Armv8-M and Armv6-M cores, the same registers where those architectures keep them. A debugger is
taken to be attached with trace on: ITM's TCR.ITMENA and TER[0] read 1, so that a program's
ITM_SendChar prints (an SWO viewer would have set them). SysTick's CALIB reads NOREF: there is no
reference clock, SysTick counts the core clock. The Cortex-M0+ has no cycle counter (its DWT has
none, Armv6-M C1.8): its DWT reads as zero, and the report says when a program read it.

Registers that are not modelled (TPIU, ETM, the ROM tables, MPU regions) read back what was written
or zero, and are listed in the report; they change nothing in the run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import unicorn

from .exceptions import Exc, ExceptionUnit

SCS_BASE = 0xE000_0000
SCS_SIZE = 0x10_0000

ITM_STIM0, ITM_TER, ITM_TCR = 0xE000_0000, 0xE000_0E00, 0xE000_0E80
DWT_CTRL, DWT_CYCCNT = 0xE000_1000, 0xE000_1004
SYST_CSR, SYST_RVR, SYST_CVR, SYST_CALIB = 0xE000_E010, 0xE000_E014, 0xE000_E018, 0xE000_E01C
NVIC_ISER, NVIC_ICER, NVIC_ISPR, NVIC_ICPR, NVIC_IABR, NVIC_IPR = (0xE000_E100, 0xE000_E180, 0xE000_E200,
                                                                    0xE000_E280, 0xE000_E300, 0xE000_E400)
NVIC_STIR = 0xE000_EF00
CPUID, ICSR, VTOR, AIRCR, SCR, CCR = 0xE000_ED00, 0xE000_ED04, 0xE000_ED08, 0xE000_ED0C, 0xE000_ED10, 0xE000_ED14
SHPR1, SHPR2, SHPR3, SHCSR, CFSR, HFSR = 0xE000_ED18, 0xE000_ED1C, 0xE000_ED20, 0xE000_ED24, 0xE000_ED28, 0xE000_ED2C
MMFAR, BFAR = 0xE000_ED34, 0xE000_ED38
CLIDR, CTR, CCSIDR, CSSELR, CPACR = 0xE000_ED78, 0xE000_ED7C, 0xE000_ED80, 0xE000_ED84, 0xE000_ED88
DEMCR = 0xE000_EDFC
FPCCR, FPCAR = 0xE000_EF34, 0xE000_EF38
CACHE_MAINTENANCE = (0xE000_EF50, 0xE000_EF7C)     # ICIALLU ... DCCISW (Cortex-M7)

# CPUID of the revisions Unicorn's models stand for (Arm TRMs: M0+ r0p1, M4 r0p1, M7 r1p2, M33 r0p3)
CPUIDS = {"cortex-m0plus": 0x410CC601, "cortex-m4": 0x410FC241, "cortex-m7": 0x411FC272,
          "cortex-m33": 0x410FD213}
CCR_RESET = {"cortex-m0plus": 0x0000_0208, "cortex-m4": 0x0000_0200, "cortex-m7": 0x0004_0200,
             "cortex-m33": 0x0000_0201}
CCR_DC, CCR_IC = 1 << 16, 1 << 17
DWT_CTRL_RESET = 0x4000_0000          # NUMCOMP = 4 (Cortex-M4/M7 TRM DWT), CYCCNTENA = 0
VECTKEY = 0x05FA
# registers that read back what was written and act through the state they hold
KEPT = {ITM_TER: "itm_ter", ITM_TCR: "itm_tcr", CPACR: "cpacr", CSSELR: "csselr", FPCCR: "exc.fpccr",
        FPCAR: "exc.fpcar", MMFAR: "exc.mmfar", BFAR: "exc.bfar"}
KEPT_MASK = {CSSELR: 0xF}


@dataclass
class SystemEvents:
    """What the SCS saw that the run reports or acts on."""
    console: bytearray = field(default_factory=bytearray)       # ITM stimulus port 0
    reset_requested: bool = False
    cyccnt_reads: int = 0
    cyccnt_reads_without_counter: int = 0     # M0+ (no counter) or DWT / trace disabled
    unmodelled: dict = field(default_factory=dict)               # address -> accesses
    cache_enables: list = field(default_factory=list)            # (cycle, "I-cache on", ...)


class SystemControlSpace:
    """Reads and writes of the SCS, on a Unicorn MMIO region. `cycles()` is the running cycle
    count; `caches_changed(icache, dcache)` follows CCR's cache enables (Cortex-M7);
    `stop()` ends the engine's run before the next block (SysTick's set-up: the loop schedules
    its interrupt); `stop_now()` right after the writing instruction, so the run loop takes an
    exception the write pended where silicon would (NVIC, ICSR, AIRCR)."""

    def __init__(self, core: str, exceptions: ExceptionUnit, cycles: Callable[[], int],
                 caches_changed: Callable[[bool, bool], None], stop: Callable[[], None],
                 stop_now: Callable[[], None],
                 dcache_geometry: tuple[int, int, int] = (0, 0, 0), icache_geometry: tuple[int, int, int] = (0, 0, 0)):
        self.core = core
        self.exc = exceptions
        self.cycles = cycles
        self._caches_changed = caches_changed
        self._stop = stop
        self._stop_now = stop_now
        self.events = SystemEvents()
        self.counter = CycleCounter(core != "cortex-m0plus", cycles)
        self.systick = SysTick(cycles)
        self.ccr = CCR_RESET[core]
        self.cpacr = 0
        self.itm_tcr, self.itm_ter = 1, 1
        self.csselr = 0
        self._geometry = {0: dcache_geometry, 1: icache_geometry}   # CSSELR.InD -> (sets, ways, line)
        self._plain: dict[int, int] = {}     # registers kept as written (MPU, SCR, ACTLR, ...)
        self.on_cyccnt: Optional[Callable[[int], None]] = None   # told each value a read returns

    # ------------------------------------------------------------------ Unicorn MMIO
    def map_into(self, uc: unicorn.Uc) -> None:
        uc.mmio_map(SCS_BASE, SCS_SIZE, self._mmio_read, None, self._mmio_write, None)

    def _mmio_read(self, uc, offset: int, size: int, _user) -> int:
        addr = SCS_BASE + offset
        word = self.read(addr & ~3)
        shift = 8 * (addr & 3)
        return (word >> shift) & ((1 << (8 * size)) - 1)

    def _mmio_write(self, uc, offset: int, size: int, value: int, _user) -> None:
        """A byte or halfword write reaches `write` as the word with its bytes in place: the
        other bytes 0, which a write-1-to-clear or write-1-to-set register (CFSR, ICSR, the
        NVIC's) leaves alone; the byte-wide priority registers keep their other bytes."""
        addr = SCS_BASE + offset
        word, shift = addr & ~3, 8 * (addr & 3)
        value = (value << shift) & 0xFFFFFFFF
        if size < 4 and (NVIC_IPR <= addr < NVIC_IPR + 0x1F0 or SHPR1 <= addr < SHPR3 + 4):
            mask = ((1 << 8 * size) - 1) << shift
            value |= self.read(word) & ~mask
        self.write(word, value)

    def systick_next(self) -> Optional[int]:
        """The cycle of the next SysTick interrupt, when enabled with TICKINT."""
        return self.systick.next_interrupt()

    # ------------------------------------------------------------------ registers
    def _kept(self, addr: int):
        """(object, attribute) of a register read back as written, or None."""
        name = KEPT.get(addr)
        if name is None:
            return None
        return (self.exc, name[4:]) if name.startswith("exc.") else (self, name)

    def read(self, addr: int) -> int:
        exc = self.exc
        kept = self._kept(addr)
        if kept is not None:
            return getattr(*kept)
        if addr == ITM_STIM0:
            return 1                                         # FIFO ready
        if 0xE000_1000 <= addr < 0xE000_2000:
            if not self.counter.exists:
                if addr == DWT_CYCCNT:
                    self.events.cyccnt_reads_without_counter += 1
                return 0
            if addr == DWT_CTRL:
                return self.counter.dwt_ctrl
            if addr == DWT_CYCCNT:
                self.events.cyccnt_reads += 1
                if not self.counter.counting:
                    self.events.cyccnt_reads_without_counter += 1
                value = self.counter.cyccnt()
                if self.on_cyccnt is not None:
                    self.on_cyccnt(value)
                return value
        if SYST_CSR <= addr <= SYST_CALIB:
            return self.systick.read(addr)
        if NVIC_ISER <= addr < NVIC_ISER + 0x40 or NVIC_ICER <= addr < NVIC_ICER + 0x40:
            base = 16 + 32 * ((addr & 0x3F) >> 2)
            return sum(1 << i for i in range(32) if base + i in exc.enabled)
        if NVIC_ISPR <= addr < NVIC_ISPR + 0x40 or NVIC_ICPR <= addr < NVIC_ICPR + 0x40:
            base = 16 + 32 * ((addr & 0x3F) >> 2)
            return sum(1 << i for i in range(32) if base + i in exc.pending)
        if NVIC_IABR <= addr < NVIC_IABR + 0x40:
            base = 16 + 32 * ((addr & 0x3F) >> 2)
            return sum(1 << i for i in range(32) if base + i in exc.active)
        if NVIC_IPR <= addr < NVIC_IPR + 0x1F0:
            n = 16 + addr - NVIC_IPR
            return sum(exc.priority.get(n + i, 0) << (8 * i) for i in range(4))
        if addr == CPUID:
            return CPUIDS[self.core]
        if addr == ICSR:
            active = exc.current or 0
            pend = exc.next_pending_any()
            return (active | (pend or 0) << 12 | (1 << 22 if exc.pending else 0)
                    | (1 << 28 if Exc.PENDSV in exc.pending else 0)
                    | (1 << 26 if Exc.SYSTICK in exc.pending else 0))
        if addr == VTOR:
            return exc.vtor
        if addr == AIRCR:
            return 0xFA05_0000 | exc.prigroup << 8
        if addr == CCR:
            return self.ccr
        if SHPR1 <= addr <= SHPR3:
            n = 4 + addr - SHPR1
            return sum(exc.priority.get(n + i, 0) << (8 * i) for i in range(4))
        if addr == SHCSR:
            active = sum(1 << b for n, b in ((Exc.MEMMANAGE, 0), (Exc.BUSFAULT, 1), (Exc.USAGEFAULT, 3),
                                             (Exc.SVCALL, 7), (Exc.PENDSV, 10), (Exc.SYSTICK, 11))
                         if n in exc.active)
            return exc.shcsr | active
        if addr == CFSR:
            return exc.cfsr
        if addr == HFSR:
            return exc.hfsr
        if addr == CLIDR:
            return 0x0900_0003 if self.core == "cortex-m7" else 0
        if addr == CTR:
            return 0x8303_C003 if self.core == "cortex-m7" else 0
        if addr == DEMCR:
            return self.counter.demcr
        if addr == CCSIDR:
            sets, ways, line = self._geometry[self.csselr & 1]
            if not sets:
                return 0
            return ((sets - 1) << 13 | (ways - 1) << 3 | (max(line, 16).bit_length() - 1 - 4)
                    | 0xF000_0000)
        return self._unmodelled_read(addr)

    def write(self, addr: int, value: int) -> None:
        exc = self.exc
        kept = self._kept(addr)
        if kept is not None:
            owner, name = kept
            setattr(owner, name, value & KEPT_MASK.get(addr, 0xFFFF_FFFF))
        elif addr == ITM_STIM0:
            self.events.console.append(value & 0xFF)
        elif 0xE000_1000 <= addr < 0xE000_2000:
            if self.counter.exists:
                self.counter.write_dwt(addr, value)
        elif SYST_CSR <= addr <= SYST_CVR:          # SYST_CALIB is read-only: written, it is unmodelled
            if self.systick.write(addr, value):
                self._stop()
        elif NVIC_ISER <= addr < NVIC_ISER + 0x40:
            self._bits(addr, value, exc.enabled.add)
            self._stop_now()
        elif NVIC_ICER <= addr < NVIC_ICER + 0x40:
            self._bits(addr, value, exc.enabled.discard)
        elif NVIC_ISPR <= addr < NVIC_ISPR + 0x40:
            self._bits(addr, value, exc.pending.add)
            self._stop_now()
        elif NVIC_ICPR <= addr < NVIC_ICPR + 0x40:
            self._bits(addr, value, exc.pending.discard)
        elif NVIC_IPR <= addr < NVIC_IPR + 0x1F0:
            for i in range(4):
                exc.priority[16 + addr - NVIC_IPR + i] = value >> (8 * i) & 0xFF
        elif addr == NVIC_STIR:
            exc.pending.add(16 + (value & 0x1FF))
            self._stop_now()
        elif addr == ICSR:
            if value & (1 << 28):
                exc.pending.add(Exc.PENDSV)
            if value & (1 << 27):
                exc.pending.discard(Exc.PENDSV)
            if value & (1 << 26):
                exc.pending.add(Exc.SYSTICK)
            if value & (1 << 25):
                exc.pending.discard(Exc.SYSTICK)
            if value & (1 << 31):
                exc.pending.add(Exc.NMI)
            self._stop_now()
        elif addr == VTOR:
            exc.vtor = value & ~0x7F
        elif addr == AIRCR:
            if value >> 16 == VECTKEY:
                exc.prigroup = value >> 8 & 7
                if value & 4:
                    self.events.reset_requested = True
                    self._stop_now()
        elif addr == CCR:
            ccr_before = self.ccr
            self.ccr = value
            if self.core == "cortex-m7" and (ccr_before ^ value) & (CCR_DC | CCR_IC):
                self._caches_changed(bool(value & CCR_IC), bool(value & CCR_DC))
        elif SHPR1 <= addr <= SHPR3:
            for i in range(4):
                exc.priority[4 + addr - SHPR1 + i] = value >> (8 * i) & 0xFF
        elif addr == SHCSR:
            exc.shcsr = value & 0x0007_0000
        elif addr == CFSR:
            exc.cfsr &= ~value
        elif addr == HFSR:
            exc.hfsr &= ~value
        elif addr == DEMCR:
            self.counter.write_demcr(value)
        elif CACHE_MAINTENANCE[0] <= addr < CACHE_MAINTENANCE[1]:
            pass                 # invalidate / clean by set-way or address: nothing to keep
        else:
            self._plain[addr] = value
            self.events.unmodelled[addr] = self.events.unmodelled.get(addr, 0) + 1

    def _bits(self, addr: int, value: int, act: Callable[[int], None]) -> None:
        base = 16 + 32 * ((addr & 0x3F) >> 2)
        for i in range(32):
            if value >> i & 1:
                act(base + i)

    def _unmodelled_read(self, addr: int) -> int:
        self.events.unmodelled[addr] = self.events.unmodelled.get(addr, 0) + 1
        return self._plain.get(addr, 0)


class CycleCounter:
    """DWT_CYCCNT (Armv7-M C1.8.8): the running cycle count while DEMCR.TRCENA and
    DWT_CTRL.CYCCNTENA are both set, held while either is clear, and writable. `exists`: the
    core has one (the Cortex-M0+ has none)."""

    def __init__(self, exists: bool, cycles: Callable[[], int]):
        self.exists = exists
        self.cycles = cycles
        self.demcr = 0
        self.dwt_ctrl = DWT_CTRL_RESET if exists else 0
        self._offset = 0                      # CYCCNT = cycles() - offset while counting
        self._frozen = 0                      # its value while not counting

    @property
    def counting(self) -> bool:
        return self.exists and bool(self.demcr & (1 << 24)) and bool(self.dwt_ctrl & 1)

    def cyccnt(self) -> int:
        return ((self.cycles() - self._offset) if self.counting else self._frozen) & 0xFFFFFFFF

    def write_dwt(self, addr: int, value: int) -> None:
        """A write in the DWT block: DWT_CTRL's writable bits, or CYCCNT (LAR, LSR and the
        comparators are accepted and change nothing)."""
        if addr == DWT_CTRL:
            before = self.counting
            self.dwt_ctrl = (self.dwt_ctrl & 0xF000_0000) | (value & 0x0FFF_FFFF)
            self._counting_changed(before)
        elif addr == DWT_CYCCNT:
            self._frozen = value
            self._offset = self.cycles() - value

    def write_demcr(self, value: int) -> None:
        before = self.counting
        self.demcr = value
        self._counting_changed(before)

    def _counting_changed(self, before: bool) -> None:
        if before and not self.counting:
            self._frozen = (self.cycles() - self._offset) & 0xFFFFFFFF
        elif not before and self.counting:
            self._offset = self.cycles() - self._frozen


class SysTick:
    """SysTick (Armv7-M B3.3) counting the core clock: SYST_CSR, RVR, CVR and CALIB (NOREF: no
    reference clock), its interrupt at the modelled cycle the run loop asks for."""

    def __init__(self, cycles: Callable[[], int]):
        self.cycles = cycles
        self.csr = 0
        self.rvr = 0
        self._start: Optional[int] = None     # cycle the counter was (re)loaded at
        self._cvr_at_start = 0
        self._countflag = False

    def period(self) -> int:
        return (self.rvr & 0xFFFFFF) + 1

    def next_interrupt(self) -> Optional[int]:
        """The cycle of the next interrupt, when enabled with TICKINT."""
        if self.csr & 3 != 3 or self._start is None or self.rvr == 0:
            return None
        first = self._cvr_at_start or self.period()
        now = self.cycles()
        if now < self._start + first:
            return self._start + first
        k = (now - self._start - first) // self.period() + 1
        return self._start + first + k * self.period()

    def _value(self) -> int:
        if not self.csr & 1 or self._start is None:
            return self._cvr_at_start
        # The clock advances block by block, so a read in the block that enabled the counter
        # sees no cycle pass; on the core that read runs at least a cycle after the write, when
        # the counter has reloaded from SYST_RVR (it does so on the next timer clock after a
        # write clears SYST_CVR) and counts down from there.
        elapsed = max(1, self.cycles() - self._start)
        first = self._cvr_at_start or self.period()
        if elapsed < first:
            return (first - elapsed) % (self.rvr + 1 if self.rvr else 1)
        self._countflag = True
        return (self.rvr - (elapsed - first) % self.period()) & 0xFFFFFF

    def read(self, addr: int) -> int:
        if addr == SYST_CSR:
            v = self.csr | 4 | (0x10000 if self._countflag else 0)
            self._value()
            v |= 0x10000 if self._countflag else 0
            self._countflag = False
            return v
        if addr == SYST_RVR:
            return self.rvr
        if addr == SYST_CVR:
            return self._value()
        return 0x8000_0000                                   # SYST_CALIB: NOREF

    def write(self, addr: int, value: int) -> bool:
        """A register write; True when the run loop must look again at when the next interrupt
        is due (the counter was enabled or reloaded)."""
        if addr == SYST_CSR:
            was = self.csr & 1
            self.csr = value & 7
            if self.csr & 1 and not was:
                self._start = self.cycles()
            return True
        if addr == SYST_RVR:
            self.rvr = value & 0xFFFFFF
        elif addr == SYST_CVR:
            self._cvr_at_start = 0                           # any write clears it
            self._countflag = False
            if self.csr & 1:
                self._start = self.cycles()
            return True
        return False
