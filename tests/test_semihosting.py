"""Semihosting's string reads (cortexm/system/semihosting.py): SYS_WRITE0's string is read up to
its NUL however close it ends to the top of mapped memory, and a string that runs off mapped
memory is a memory fault the run reports, never a Python error of another kind."""
from __future__ import annotations

import pytest
import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_R0, UC_ARM_REG_R1

from micro_rt.cortexm.system.semihosting import Op, Semihost

RAM, PAGE = 0x2000_0000, 0x1000


def _machine(text: bytes, at: int) -> unicorn.Uc:
    uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
    uc.mem_map(RAM, PAGE)
    uc.mem_write(at, text)
    uc.reg_write(UC_ARM_REG_R0, Op.WRITE0.value)
    uc.reg_write(UC_ARM_REG_R1, at)
    return uc


@pytest.mark.parametrize("back", [1, 2, 5, 17, 63, 64, 65, 200])
def test_write0_reads_a_string_ending_at_the_top_of_memory(back):
    text = b"x" * (back - 1) + b"\0"               # its NUL in the last byte of the page
    host = Semihost(lambda: 0, 100_000_000)
    host.call(_machine(text, RAM + PAGE - back))
    assert host.console == b"x" * (back - 1)


def test_write0_of_a_string_running_off_memory_is_a_memory_fault():
    host = Semihost(lambda: 0, 100_000_000)
    with pytest.raises(unicorn.UcError):
        host.call(_machine(b"y" * 40, RAM + PAGE - 40))    # no NUL before the end of the page
