"""A load or store inside a Thumb-2 IT block must not change how the code after it runs.

Unicorn 2.1 calls QEMU's cpu_restore_state before it runs a TLB-fill hook (the virtual TLB of
the flash data port, native.py) or a memory hook, then resumes the translation block. That
leaves the IT state of the access in the CPU state, where QEMU keeps 0 while a block runs, so
the next block was translated as if it were inside an IT block: conditional code ran or was
skipped wrongly (the Signal RFFT kernel's copy loop on the M4 lost samples; unicorn issue
#2309). It shows when such an access is the first touch of a page since the engine started
(a TLB miss) or, with a memory hook, the last access of its block. The routine below is both,
and every memory mode of the machine must run it right on every Thumb-2 core.

The other way round, a translation block that ends at a page boundary inside an IT block hands
its IT state to the next block through the CPU state. When the next page is not in the TLB yet,
QEMU's block lookup (helper_lookup_tb_ptr) fills it before it finds no block and returns to the
main loop, which reads the IT state again to translate the block: the fill of an instruction
fetch must leave that state alone (it restored nothing), or the rest of the IT block runs
unconditionally (__aeabi_dmul's ITTTE straddling a 1 KiB page on the M33 called its special-case
path once and DEQUANTIZE returned a wrong first element).
"""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt.cortexm.machine import VirtualMCU

# f(r0 = first address, r1 = stride, r2 = count): the sum of the words at r0 + k * r1
#     push {r4, r5, lr}; movs r4, #0; movs r5, #0
# 1:  cmp r4, r2; itt lt; ldrlt r3, [r0]; addlt r5, r5, r3
#     add r0, r1; adds r4, #1; cmp r4, r2; bne 1b
#     mov r0, r5; pop {r4, r5, pc}
SUM_STRIDED = bytes.fromhex("30b5002400259442bcbf0368ed18084401349442f7d1284630bd")
PAGE = 4096
PAGES = 16

MODES = {
    "virtual TLB": {},
    "flash data port": {"flash_wait_states": 5},
    "memory hook": {"flash_wait_states": 5, "flash_port": False},
    "strict alignment": {"strict_alignment": True},
    "python hooks": {"flash_wait_states": 5, "native": False},
}


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m7", "cortex-m33"])
def test_a_load_in_an_it_block_leaves_the_code_after_it_unchanged(core):
    words = (np.arange(1, PAGES + 1, dtype=np.uint32) * 0x01010101).astype("<u4")
    expected = int(words.sum()) & 0xFFFFFFFF
    instructions = set()
    for mode, options in MODES.items():
        m = VirtualMCU(core, arena_bytes=PAGES * PAGE, **options)
        try:
            code = m.place_constant(SUM_STRIDED, 16)
            arena = m.arena.view("<u4")
            arena[::PAGE // 4] = words
            flash = m.place_constant(np.repeat(words, PAGE // 4), PAGE)
            # each source twice: first with every page a TLB miss, then with the TLB warm
            for source in (m.arena_base, flash, m.arena_base, flash):
                r = m.call(code | 1, source, PAGE, PAGES)
                assert r.return_value & 0xFFFFFFFF == expected, (core, mode, hex(source))
                instructions.add(r.instructions)
        finally:
            m.close()
    assert len(instructions) == 1, instructions


# f(r0, r1) = 1 if r0 == r1 else 2, with the IT block split by a page boundary after MOVEQ:
#     cmp r0, r1; ite eq; moveq r0, #1 | movne r0, #2; bx lr
CMP_ITE_HEAD, CMP_ITE_TAIL = bytes.fromhex("88420cbf0120"), bytes.fromhex("02207047")
BOUNDARY = 4096        # a multiple of every page size Unicorn's Arm cores use (1 KiB)


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m7", "cortex-m33"])
def test_an_it_block_across_a_page_boundary_keeps_its_condition(core):
    code = np.zeros(2 * BOUNDARY, np.uint8)
    entry = BOUNDARY - len(CMP_ITE_HEAD)
    code[entry:BOUNDARY] = np.frombuffer(CMP_ITE_HEAD, np.uint8)
    code[BOUNDARY:BOUNDARY + len(CMP_ITE_TAIL)] = np.frombuffer(CMP_ITE_TAIL, np.uint8)
    for mode, options in MODES.items():
        m = VirtualMCU(core, arena_bytes=PAGE, **options)
        try:
            base = m.place_constant(code, BOUNDARY)
            # the first call meets the second page with a cold TLB and no block translated there
            for a, b, expected in ((5, 5, 1), (5, 6, 2), (7, 7, 1)):
                r = m.call((base + entry) | 1, a, b)
                assert r.return_value == expected, (core, mode, a, b)
        finally:
            m.close()
