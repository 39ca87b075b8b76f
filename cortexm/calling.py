"""The calling convention of the virtual MCU: how a kernel receives its arguments and where its
argument structs live, and how much stack a call used.

AAPCS: the first four argument words in r0-r3, the rest on the stack at [sp] (sp 8-aligned),
the return address in lr (the BKPT trampoline after the firmware image), the result in r0.
Argument structs (CMSIS-NN's dims and params, micro_rt's parameter blocks) are laid out in the
ARGS area at the start of SRAM; the stack is painted before every call and its high-water mark
is the lowest byte no longer holding the paint.
"""
from __future__ import annotations

import unicorn
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_SP

from micro_rt.errors import EmulationError

from .memory_map import round_up

STACK_PAINT = 0xA5
_ARG_REGISTERS = (UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3)


class ArgsArea:
    """Lays out argument structs one after the other in [base, end), each aligned; `reset` starts
    over (a call's structs only need to live until it returns)."""

    def __init__(self, base: int, end: int):
        self.base, self.end = base, end
        self._next = base

    def reset(self) -> None:
        self._next = self.base

    def reserve(self, nbytes: int, align: int = 4, writable: bool = False) -> int:
        """The address of the next `nbytes` bytes (EmulationError when the area is full).
        `writable`: the kernel writes them (ARGS is RAM: every block is)."""
        addr = round_up(self._next, max(1, align))
        if addr + nbytes > self.end:
            raise EmulationError(f"ARGS area ({self.end - self.base} B) full: cannot place {nbytes} more bytes")
        self._next = addr + nbytes
        return addr


class StackProbe:
    """The stack high-water mark of a call, by painting the stack before it."""

    def __init__(self, stack_bytes: int):
        self.stack_bytes = stack_bytes
        self._paint = bytes([STACK_PAINT]) * stack_bytes

    def paint(self, uc: unicorn.Uc, stack_top: int) -> int:
        """Paint the stack below `stack_top`; returns its lowest address."""
        lo = stack_top - self.stack_bytes
        uc.mem_write(lo, self._paint)
        return lo

    @staticmethod
    def high_water(uc: unicorn.Uc, paint_lo: int, sp: int) -> int:
        """Bytes below the entry `sp` the call wrote."""
        data = uc.mem_read(paint_lo, sp - paint_lo)
        stripped = data.lstrip(bytes([STACK_PAINT]))
        lowest = paint_lo + (len(data) - len(stripped))
        return max(0, sp - lowest)


def enter(uc: unicorn.Uc, args: list[int], stack_top: int, return_address: int) -> int:
    """Set up the registers and stacked arguments of a call with the 32-bit words `args`;
    returns the sp at entry."""
    sp = stack_top
    extra = args[4:]
    if extra:
        sp = (sp - 4 * len(extra)) & ~7
        uc.mem_write(sp, b"".join(v.to_bytes(4, "little") for v in extra))
    for reg, v in zip(_ARG_REGISTERS, args[:4]):
        uc.reg_write(reg, v)
    uc.reg_write(UC_ARM_REG_SP, sp)
    uc.reg_write(UC_ARM_REG_LR, return_address | 1)
    return sp


def result(uc: unicorn.Uc) -> int:
    """r0 as a signed 32-bit integer."""
    r0 = uc.reg_read(UC_ARM_REG_R0)
    return r0 - (1 << 32) if r0 & 0x80000000 else r0
