"""Why a call on the virtual MCU did not return, in the firmware's terms.

A call stops early on a memory fault (unmapped or protected address), a CPU exception
(UsageFault, unaligned access, BKPT, ...), an invalid instruction or its instruction budget.
`CallFaults` turns each into an EmulationError naming the function called, the pc and its
symbol, the instruction, the address and the memory region it lies in.
"""
from __future__ import annotations

from typing import Any, Optional, Protocol

import unicorn
from capstone import arm as csarm
from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_SP

from micro_rt.errors import EmulationError

from . import alignment
from .alignment import AlignmentEvent
from .static_alignment import CAPSTONE_TO_UNICORN
from .thumb_decode import DISASSEMBLER

class FaultedMachine(Protocol):
    """What CallFaults reads of the machine whose call failed (machine.VirtualMCU is one): named
    here so that this module does not import the machine that uses it."""
    elf: Any
    core: str
    armv6m: bool
    memory: Any

    @property
    def uc(self) -> Any: ...
    @property
    def ret_addr(self) -> int: ...
    @property
    def stack_bytes(self) -> int: ...

    def symbol_at(self, pc: int) -> str: ...
    def read_code(self, addr: int, n: int) -> bytes: ...
    def region_of(self, addr: int) -> str: ...

# QEMU exception numbers seen through UC_HOOK_INTR
EXCEPTIONS = {1: "undefined instruction (UsageFault)", 2: "SVC", 3: "prefetch abort (instruction fetch fault)",
              4: "data abort", 5: "IRQ", 6: "FIQ", 7: "breakpoint (BKPT)", 8: "exception return",
              17: "coprocessor not present (NOCP UsageFault)", 18: "invalid state (INVSTATE UsageFault)",
              19: "stack limit overflow (STKOF)", 22: "unaligned access (UsageFault)"}
INTR_BKPT = 7
_MEMORY_FAULTS = {UC.UC_MEM_READ_UNMAPPED: "read of unmapped memory",
                  UC.UC_MEM_WRITE_UNMAPPED: "write to unmapped memory",
                  UC.UC_MEM_FETCH_UNMAPPED: "instruction fetch from unmapped memory",
                  UC.UC_MEM_WRITE_PROT: "write to read-only memory",
                  UC.UC_MEM_READ_PROT: "read of protected memory",
                  UC.UC_MEM_FETCH_PROT: "instruction fetch from non-executable memory"}


class BudgetExceeded(EmulationError):
    """A call ran `instructions` (at least) against its `budget` without returning."""

    def __init__(self, message: str, *, function: str, budget: int, instructions: int, pc: int,
                 symbol: str, in_code: bool):
        super().__init__(message)
        self.function, self.budget, self.instructions = function, budget, instructions
        self.pc, self.symbol, self.in_code = pc, symbol, in_code


class CallFaults:
    """The errors of the calls of one machine (it reads the machine's registers and code)."""

    def __init__(self, mcu: FaultedMachine):
        self._mcu = mcu

    def _where(self, pc: int) -> str:
        return f"pc 0x{pc:08x} <{self._mcu.symbol_at(pc)}>"

    def _disassembly(self, pc: int) -> tuple[str, str]:
        return alignment.decode_one(self._mcu.read_code(pc, 4), pc)

    def budget(self, name: str, budget: int, insns: int, pc: int) -> BudgetExceeded:
        """The call did not return within its budget. Stopped in the firmware's code it is a
        kernel that did not finish; stopped anywhere else, it ran away."""
        mcu = self._mcu
        in_code = mcu.elf.function_at(pc) is not None or pc == mcu.ret_addr
        what = ("did not finish" if in_code else
                f"ran away: executing {mcu.region_of(pc)}, not the firmware's code")
        return BudgetExceeded(f"{name}: {what} within its instruction budget of {budget:,} "
                              f"(stopped at pc 0x{pc:08x} <{mcu.symbol_at(pc)}>)",
                              function=name, budget=budget, instructions=insns, pc=pc,
                              symbol=mcu.symbol_at(pc), in_code=in_code)

    def engine_error(self, name: str, err: unicorn.UcError, pc: int,
                     fault: Optional[tuple]) -> EmulationError:
        """Unicorn stopped with `err`: a memory fault (recorded by the engine's hook), an
        invalid instruction or something else."""
        if fault is not None:
            return self._memory_fault(name, *fault)
        if err.errno == UC.UC_ERR_INSN_INVALID:
            dis = self._disassembly(pc)[1]
            return EmulationError(f"{name}: invalid instruction '{dis}' at {self._where(pc)} "
                                  f"(address 0x{pc:08x}; not in {self._mcu.core}'s instruction set?)")
        return EmulationError(f"{name}: emulation error '{err}' at {self._where(pc)} (address 0x{pc:08x})")

    def _memory_fault(self, name: str, access: int, address: int, size: int, fpc: int) -> EmulationError:
        mcu = self._mcu
        uc = mcu.uc
        kind = _MEMORY_FAULTS.get(access, f"memory fault {access}")
        if access in (UC.UC_MEM_FETCH_UNMAPPED, UC.UC_MEM_FETCH_PROT):
            lr = uc.reg_read(UC_ARM_REG_LR)
            where = f"pc 0x{address:08x} (jumped there; lr 0x{lr:08x} <{mcu.symbol_at(lr)}>)"
        else:
            where = self._where(fpc)
        region = mcu.region_of(address)
        sp = uc.reg_read(UC_ARM_REG_SP)
        if region.startswith("guard") and sp < mcu.memory.stack_region[0] + 64:
            region = f"stack overflow: SP 0x{sp:08x} is at the bottom of the {mcu.stack_bytes} B stack"
        return EmulationError(f"{name}: {kind} at address 0x{address:08x} ({size} B, {region}) by {where}")

    def exception(self, name: str, intno: int, pc: int) -> EmulationError:
        """The CPU took exception `intno` at pc (the engine stopped there)."""
        mcu = self._mcu
        what = EXCEPTIONS.get(intno, f"exception {intno}")
        if intno in (4, 22) or (intno == 3 and mcu.armv6m):
            return self._data_abort(name, what, pc)
        if intno == INTR_BKPT:
            return EmulationError(f"{name}: hit a breakpoint (BKPT) at {self._where(pc)} (address 0x{pc:08x})")
        if intno == 1:
            dis = self._disassembly(pc)[1]
            return EmulationError(f"{name}: {what}: '{dis}' at {self._where(pc)} (address 0x{pc:08x})")
        return EmulationError(f"{name}: {what} at {self._where(pc)} (address 0x{pc:08x}): "
                              "HardFault-like condition")

    def _data_abort(self, name: str, what: str, pc: int) -> EmulationError:
        """A data abort: an unaligned access fault (with its AlignmentEvent as `.event`) when
        the address the load/store at pc uses is unaligned for it, else the abort itself."""
        mcu = self._mcu
        m, dis = self._disassembly(pc)
        addr = self._effective_address(pc)
        if addr is not None and (addr & 3) and m in alignment.ALWAYS_ALIGNED | alignment.SINGLE_LDST or \
                (addr is not None and addr & 1 and m in ("ldrh", "strh", "ldrsh")):
            ev = AlignmentEvent(pc, addr, 0, alignment.kind_name(m), mcu.symbol_at(pc), dis, 1, True)
            err = EmulationError(f"{name}: unaligned access fault: {ev.kind} at address 0x{addr:08x} "
                                 f"by {self._where(pc)} '{dis}'"
                                 + (" (Armv6-M faults on every unaligned access)" if mcu.armv6m else ""))
            err.event = ev
            return err
        return EmulationError(f"{name}: {what} at {self._where(pc)} '{dis}'"
                              + (f", address 0x{addr:08x} ({mcu.region_of(addr)})" if addr is not None else ""))

    def _effective_address(self, pc: int) -> Optional[int]:
        """Address accessed by the load/store at pc, from the current registers."""
        try:
            insn = next(DISASSEMBLER.disasm(self._mcu.read_code(pc, 4), pc, count=1))
        except StopIteration:
            return None
        for op in insn.operands:
            if op.type == csarm.ARM_OP_MEM:
                base = self._register(op.mem.base, pc)
                idx = self._register(op.mem.index, pc) if op.mem.index else 0
                if op.mem.index and op.mem.lshift:
                    idx <<= op.mem.lshift
                if op.subtracted:
                    idx = -idx
                return (base + idx + op.mem.disp) & 0xFFFFFFFF
        name = insn.mnemonic.split(".")[0]
        if name.startswith(("ldm", "stm")) and insn.operands:
            return self._register(insn.operands[0].reg, pc)
        if name.startswith(("push", "pop")):
            sp = self._mcu.uc.reg_read(UC_ARM_REG_SP)
            return sp - 4 * len(insn.operands) if name.startswith("push") else sp
        return None

    def _register(self, csreg: int, pc: int) -> int:
        if csreg == csarm.ARM_REG_PC:
            return (pc + 4) & ~3
        return self._mcu.uc.reg_read(CAPSTONE_TO_UNICORN[csreg])
