"""A firmware image run from its reset vector on the virtual MCU: `micro-rt emulate`.

The loop: take any pending exception that can preempt; run the engine until something needs
the system (a semihosting BKPT, an SVC, a fault, a branch to EXC_RETURN, a register write that
pends an exception, the next SysTick interrupt or --max-cycles: the native hook's budget stops
the engine before the block that would pass it, so a resumed run counts every block once);
handle it; go on. A SysTick interrupt is taken at the first block boundary at or after its
modelled time; an exception pended by a register write (NVIC, ICSR), right after the writing
instruction; one pending while masked, within 16 instructions of the code unmasking it.
"""
from __future__ import annotations

from contextlib import nullcontext
from typing import Optional

import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_MSP, UC_ARM_REG_PC, UC_ARM_REG_SP

from ..calling import STACK_PAINT, StackProbe
from ..faults import INTR_BKPT
from ..thumb_decode import has_fp_instruction
from .exceptions import CFSR_BITS, HFSR_BITS, Exc, FaultRecord, Lockup, bit_names, exception_name
from .machine import EmulateRequest, FirmwareMachine
from .peripherals import MmioPolicy
from .report import Ending, FirmwareReport
from .run_report import RunOutcome, firmware_report
from .semihosting import SEMIHOSTING_BKPT

__all__ = ["EmulateRequest", "run_firmware"]

STOP_ADDRESS = 0xFFFF_FFFE                 # never executed: the engine's "until"
EXC_RETURN_AREA = 0xFFFF_FF00
MAX_SLICE = 1 << 26                        # instructions between checks of --max-cycles
MASKED_SLICE = 16                          # ... while an exception waits for its mask to lift
NEAR = 8                                   # cycles: a SysTick this close is due now
INTR_UDEF, INTR_SWI, INTR_PREFETCH_ABORT, INTR_DATA_ABORT = 1, 2, 3, 4
INTR_EXCEPTION_EXIT = 8                    # QEMU's Armv8-M: a branch to EXC_RETURN
INTR_USAGE = {INTR_UDEF: (16, "undefined instruction"), 17: (19, "coprocessor not present or disabled"),
              18: (17, "invalid state (a branch without the Thumb bit)"), 22: (24, "unaligned access")}
MEMORY_CAUSES = {UC.UC_MEM_READ_UNMAPPED: ("read of unmapped memory", 9),
                 UC.UC_MEM_WRITE_UNMAPPED: ("write to unmapped memory", 9),
                 UC.UC_MEM_FETCH_UNMAPPED: ("instruction fetch from unmapped memory", 8),
                 UC.UC_MEM_WRITE_PROT: ("write to read-only memory (flash)", 9),
                 UC.UC_MEM_READ_PROT: ("read of protected memory", 9),
                 UC.UC_MEM_FETCH_PROT: ("instruction fetch from non-executable memory", 0)}


def run_firmware(req: EmulateRequest) -> FirmwareReport:
    """Run the image of `req` from reset to its exit, a lock-up or --max-cycles."""
    return FirmwareRun(FirmwareMachine(req)).run()


class FirmwareRun:
    def __init__(self, m: FirmwareMachine):
        self.m = m
        self.uc = m.uc
        self.faults: list[FaultRecord] = []
        self.ending: Optional[Ending] = None
        self.message = ""
        self.exit_code: Optional[int] = None
        self.handlers: set[int] = set()
        self._looked = (0, 0)            # (cycles, instructions) at the last look (_slice)

    # ------------------------------------------------------------------ the loop
    def run(self) -> FirmwareReport:
        m, uc = self.m, self.uc
        self.paint_lo = self._paint_stack()
        # a boot stage in RAM may lie in the stack's paint: painted again when it enters the image
        m.on_image_entry.append(self._paint_stack)
        pc, sp, lr = m.start_registers()
        uc.reg_write(UC_ARM_REG_MSP, sp)
        uc.reg_write(UC_ARM_REG_SP, sp)
        if lr is not None:
            uc.reg_write(UC_ARM_REG_LR, lr)
        m.reset_counts(1 << 60)
        tick_due = None
        while self.ending is None:
            now = m.clock.now()
            if now + NEAR >= m.req.max_cycles:
                self._end(Ending.MAX_CYCLES, f"stopped at --max-cycles {m.req.max_cycles:,} without "
                                             f"exiting, at pc 0x{pc:08x} <{self.symbol(pc)}>")
                break
            if tick_due is None:
                tick_due = m.scs.systick_next()
            if tick_due is not None and now + NEAR >= tick_due:
                m.exceptions.pending.add(Exc.SYSTICK)
                tick_due = None
            pc = self._take_pending(pc)
            if self.ending is not None:
                break
            m.hooks.set_budget(self._slice(now, tick_due))
            m.interrupt = m.stop_reason = None
            error = None
            try:
                with (m.hooks.observing(0, 0xFFFF_FFFF, self._lazy_fp_watch) if m.exceptions.lazy_pending
                      else nullcontext()):
                    uc.emu_start(pc | 1, STOP_ADDRESS)
            except unicorn.UcError as exc:
                error = exc
            except Lockup as why:
                self._end(Ending.LOCKUP, str(why))
                break
            pc = uc.reg_read(UC_ARM_REG_PC)
            pc = self._handle_stop(pc, error)
            if m.scs.events.reset_requested and self.ending is None:
                self._end(Ending.RESET_REQUEST, f"the program requested a system reset "
                                                f"(AIRCR.SYSRESETREQ) near pc 0x{pc:08x} <{self.symbol(pc)}>")
        assert self.ending is not None
        return firmware_report(m, RunOutcome(self.ending, self.message, self.exit_code, self.faults,
                                             frozenset(self.handlers), self._stack_high_water()))

    def _slice(self, now: int, tick_due: Optional[int]) -> int:
        """Instructions to run before the next look: a quarter of the cycles to the next event
        at the cycles per instruction of the last slice (of the run so far at first): the budget
        counts 4 bytes an instruction, so up to twice as many 16-bit ones run, and the code
        ahead may be slower than the code behind; so each look lands short of the event, and the
        last one a block past it at most."""
        target = self.m.req.max_cycles if tick_due is None else min(tick_due, self.m.req.max_cycles)
        insns = self.m.clock.instructions
        ran_cycles, ran_insns = now - self._looked[0], insns - self._looked[1]
        self._looked = (now, insns)
        cpi = max(0.5, ran_cycles / ran_insns if ran_insns else now / insns if insns else 1.0)
        # an exception pending while masked is taken once the code unmasks it (CPSIE, MSR
        # BASEPRI: instructions, not register writes the machine sees): look often meanwhile
        longest = MASKED_SLICE if self.m.exceptions.pending else MAX_SLICE
        return int(max(1, min(longest, (target - now) / cpi / 4)))

    def _lazy_fp_watch(self, uc: unicorn.Uc, address: int, size: int, _user) -> None:
        """While FP space waits for its lazy save: before a block with an FP instruction runs,
        the save (which this slice's blocks saw none of: the FP registers are still the
        interrupted code's)."""
        exc = self.m.exceptions
        if exc.lazy_pending and has_fp_instruction(self.m.read_code(address, size)):
            exc.preserve_fp_state(uc)

    def _take_pending(self, pc: int) -> int:
        exc = self.m.exceptions
        n = exc.next_pending(self.uc)
        while n is not None:
            try:
                handler = exc.take(self.uc, n, pc)
            except Lockup as why:
                self._end(Ending.LOCKUP, f"{exception_name(n)} could not be taken: {why}")
                return pc
            self.handlers.add(handler)
            pc = handler
            n = exc.next_pending(self.uc)
        return pc

    def _handle_stop(self, pc: int, error: Optional[unicorn.UcError]) -> int:
        m = self.m
        if m.boot_failure is not None:
            self._end(Ending.BOOT_FAILED, m.boot_failure)
            return pc
        if m.stopped_in_write and m.interrupt is None and m.stop_reason is None and error is None:
            return m.resume_after_write(pc)
        m.stopped_in_write = False
        if m.interrupt is not None:
            intno, ipc = m.interrupt
            return self._on_interrupt(intno, ipc)
        if m.stop_reason is not None:
            access, address, size, fpc = m.stop_reason
            if access == UC.UC_MEM_FETCH_UNMAPPED and address >= EXC_RETURN_AREA:
                return self._exception_return(address)
            if m.peripherals.is_peripheral(address) and m.req.mmio is MmioPolicy.STOP:
                what = "read of" if access == UC.UC_MEM_READ_UNMAPPED else "write to"
                self._end(Ending.UNMODELLED_PERIPHERAL,
                          f"{what} 0x{address:08x} ({size} B), a peripheral micro_rt does not model, "
                          f"by pc 0x{fpc:08x} <{self.symbol(fpc)}> (run with --ignore-mmio to read such "
                          "addresses as 0 and count them)")
                return fpc
            cause, bit = MEMORY_CAUSES.get(access, (f"memory access type {access}", 9))
            is_data = access in (UC.UC_MEM_READ_UNMAPPED, UC.UC_MEM_WRITE_UNMAPPED, UC.UC_MEM_WRITE_PROT,
                                 UC.UC_MEM_READ_PROT)
            return self._fault(cause, bit, fpc, address if is_data else None)
        if error is not None:
            if error.errno == UC.UC_ERR_INSN_INVALID:
                return self._fault("undefined instruction", 16, pc, None)
            if error.errno in (UC.UC_ERR_READ_UNALIGNED, UC.UC_ERR_WRITE_UNALIGNED, UC.UC_ERR_FETCH_UNALIGNED):
                return self._fault("unaligned access", 24, pc, None)
            self._end(Ending.ERROR, f"the engine stopped at pc 0x{pc:08x} <{self.symbol(pc)}>: {error}")
        return pc

    def _on_interrupt(self, intno: int, ipc: int) -> int:
        m, uc = self.m, self.uc
        if intno == INTR_BKPT:
            imm = self.m.read_code(ipc, 2)[:1]
            if imm == bytes([SEMIHOSTING_BKPT]):
                try:
                    m.semihost.call(uc)
                except unicorn.UcError:
                    return self._fault("semihosting parameter block outside memory", 9, ipc,
                                       uc.reg_read(unicorn.arm_const.UC_ARM_REG_R1))
                if m.semihost.exit is not None:
                    code = m.semihost.exit.code
                    self.exit_code = code - (1 << 32) if code & 0x8000_0000 else code
                    self._end(Ending.EXIT, f"the program exited with code {self.exit_code}")
                return ipc + 2
            self._end(Ending.BREAKPOINT, f"BKPT #{imm[0] if imm else 0} at pc 0x{ipc:08x} "
                                         f"<{self.symbol(ipc)}>: a debugger would halt here")
            return ipc
        if intno == INTR_SWI:
            m.exceptions.pending.add(Exc.SVCALL)
            if m.exceptions.next_pending(uc) != Exc.SVCALL:
                m.exceptions.pending.discard(Exc.SVCALL)
                return self._fault("SVC where SVCall cannot be taken (priority)", None, ipc - 2, None)
            return ipc
        if intno in (INTR_PREFETCH_ABORT, INTR_EXCEPTION_EXIT) and ipc >= EXC_RETURN_AREA:
            return self._exception_return(ipc)
        if intno in INTR_USAGE:
            bit, cause = INTR_USAGE[intno]
            return self._fault(cause, bit, ipc, None)
        if intno == INTR_PREFETCH_ABORT:
            return self._fault("instruction fetch fault", 0, ipc, None)
        if intno == INTR_DATA_ABORT:
            return self._fault("data access fault", 9, ipc, None)
        self._end(Ending.ERROR, f"CPU exception {intno} at pc 0x{ipc:08x} <{self.symbol(ipc)}>, which "
                                "micro_rt does not model")
        return ipc

    def _exception_return(self, address: int) -> int:
        try:
            return self.m.exceptions.exception_return(self.uc, address | 1)
        except Lockup as why:
            self._end(Ending.LOCKUP, str(why))
            return address

    def _fault(self, cause: str, cfsr_bit: Optional[int], pc: int, address: Optional[int]) -> int:
        exc, uc = self.m.exceptions, self.uc
        record = FaultRecord("HardFault", cause, pc, self.symbol(pc), address, cycle=self.m.clock.now())
        self.faults.append(record)
        try:
            target = exc.fault_target(cfsr_bit, uc)
        except Lockup as why:
            record.cfsr = bit_names(exc.cfsr, CFSR_BITS)
            self._end(Ending.LOCKUP, f"{cause} by pc 0x{pc:08x} <{self.symbol(pc)}>: {why}")
            return pc
        if address is not None and cfsr_bit is not None and not exc.armv6m:
            if cfsr_bit == 9:
                exc.bfar, exc.cfsr = address, exc.cfsr | 1 << 15
            elif cfsr_bit == 1:
                exc.mmfar, exc.cfsr = address, exc.cfsr | 1 << 7
        record.exception = exception_name(target)
        record.cfsr, record.hfsr = bit_names(exc.cfsr, CFSR_BITS), bit_names(exc.hfsr, HFSR_BITS)
        try:
            handler = exc.take(uc, target, pc)
        except Lockup as why:
            self._end(Ending.LOCKUP, f"{cause} by pc 0x{pc:08x} <{self.symbol(pc)}>: {why}")
            return pc
        self.handlers.add(handler)
        record.handled_by = self.symbol(handler)
        return handler

    def _end(self, ending: Ending, message: str) -> None:
        self.ending, self.message = ending, message

    def symbol(self, pc: int) -> str:
        return self.m.fw.image.symbol_at(pc)

    # ------------------------------------------------------------------ the stack
    def _paint_stack(self) -> int:
        """Paint the RAM between the image's static data and the initial stack pointer (a
        linker script's NOLOAD stack section below it is stack, and painted); the lowest address
        painted."""
        m = self.m
        region = m.amap.region_holding(m.initial_sp - 4)
        low = region.base
        for s in m.fw.image.segments:
            end = s.vaddr + s.memsz
            if region.base <= s.vaddr < m.initial_sp and end <= m.initial_sp and not m.is_stack_reservation(s):
                low = max(low, end)
        low = (low + 7) & ~7
        if m.initial_sp > low:
            self.uc.mem_write(low, bytes([STACK_PAINT]) * (m.initial_sp - low))
        return low

    def _stack_high_water(self) -> int:
        m = self.m
        low = self.paint_lo
        top = m.heap.stats.break_top
        if top is not None and low <= top < m.initial_sp:
            low = (top + 7) & ~7
        if m.initial_sp <= low:
            return 0
        return StackProbe.high_water(self.uc, low, m.initial_sp)
