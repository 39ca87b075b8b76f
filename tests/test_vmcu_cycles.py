"""The virtual Cortex-M's cycle model: plausible totals, flash wait states and caches, and the
core timing rules checked instruction by instruction against the TRMs (on the test firmware of
vmcu_test_firmware.py, and on hand-assembled blocks).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import requires_arm_gcc
from micro_rt.cortexm.core_timing import block_cost
from micro_rt.cortexm.machine import VirtualMCU
from micro_rt.cortexm.memory_system import MemorySystem
from micro_rt.cortexm.thumb_decode import decode
from vmcu_test_firmware import CORES, bits_f32, elfs, f32_bits, mcu, vfp_elfs  # noqa: F401 (fixtures)

pytestmark = requires_arm_gcc


# ----------------------------------------------------------------------------- cycles
@pytest.mark.parametrize("core", CORES)
def test_cycles_plausible(elfs, core):
    m = mcu(elfs, core)
    r = m.call("count_loop", 1000)
    # 3 single-cycle instructions per iteration plus the taken-branch refill (M7 dual-issues)
    lo, hi = (1500, 3500) if core == "cortex-m7" else (3500, 6000)
    assert lo <= r.cycles <= hi, r.breakdown
    assert r.seconds == pytest.approx(r.cycles / 100e6)
    # loads cost more than ALU on the 3-stage cores
    rd = m.call("sum_words", m.arena_base, 1000)
    assert rd.cycles >= rd.instructions * (0.5 if core == "cortex-m7" else 1.0)


@pytest.mark.parametrize("core", CORES)
def test_cycles_monotone_in_wait_states(elfs, core):
    w = np.arange(2000, dtype=np.int8)
    res = []
    for ws in (0, 1, 2, 4):
        m = mcu(elfs, core, flash_wait_states=ws)
        waddr = m.place_constant(w)
        r = m.call("dot", waddr, m.arena_base, 2000)
        res.append(r)
        assert r.flash_data_reads >= 2000 or ws == 0
    cyc_ = [r.cycles for r in res]
    assert cyc_ == sorted(cyc_) and cyc_[-1] > cyc_[0], cyc_
    assert len({r.instructions for r in res}) == 1
    assert res[-1].breakdown.data_flash > 0


def test_memory_system_cache_vs_no_cache(elfs):
    w = np.arange(512, dtype=np.int8)
    out = {}
    for name, ms in (("art", MemorySystem(3, 16, True, 1024, 8)),
                     ("bare", MemorySystem(3, 16, False, 0, 1))):
        m = mcu(elfs, "cortex-m4", memory_system=ms)
        out[name] = m.call("dot", m.place_constant(w), m.arena_base, 512).cycles
    assert out["bare"] > out["art"]


def test_block_cost_rules_m4():
    # hand-checked against Cortex-M4 TRM Table 3-1 / 3.3.2
    code = bytes.fromhex(
        "0868"      # ldr r0, [r1]
        "4a68"      # ldr r2, [r1, #4]     pipelined: 1
        "0a60"      # str r2, [r1]         after LDR: 1
        "00fb0130"  # mla r0, r0, r1, r3   1
        "7047")     # bx lr                1 (+P taken)
    read = lambda a, n: code[a - 0x1000:a - 0x1000 + n]   # noqa: E731
    bc = block_cost("cortex-m4", 0x1000, len(code), read)
    assert bc.n_insns == 5
    assert bc.cycles == 2 + 1 + 1 + 1 + 1 and bc.taken_extra == 2
    bc0 = block_cost("cortex-m0plus", 0x1000, 6, read)     # the three loads/stores only
    assert bc0.cycles == 6


# ----------------------------------------------------------------------------- FPU (VFP)
def test_vfp_function_trm_cycles_m4(vfp_elfs):
    """Cortex-M4 TRM Table 7-1 (and its note: an arithmetic result used by the next instruction
    costs one more cycle), executed: exact cycles."""
    m = VirtualMCU("cortex-m4", vfp_elfs["cortex-m4"], arena_bytes=4096)
    r = m.call("vfp_madd", f32_bits(1.5), f32_bits(2.0), f32_bits(0.25))
    assert bits_f32(r.return_value) == np.float32(3.25)
    assert r.instructions == 7
    # VMOV x3 (1 each) + VMUL 1+1 + VADD 1+1 + VMOV 1 + BX 1, then P = 2 for the return
    assert r.breakdown.core == 3 + 2 + 2 + 1 + 1 and r.breakdown.branches == 2
    assert r.cycles == 11
    p = m.arena_base
    m.write(p, np.array([3.0, 1.5, 0.0, 7.0], np.float32))
    r = m.call("vfp_mix", p)
    assert m.arena[:16].view(np.float32)[2] == np.float32(np.float32(3.0 / 1.5) * np.float32(1.5)) + np.float32(3.0)
    # VPUSH 1+2, VLDR 2, VLDR 2, VLDM 1+4, VDIV 14+1, VMLA 3+1, VSTR 2, VPOP 1+2, BX 1 (+P 2)
    assert r.breakdown.core == 3 + 2 + 2 + 5 + 15 + 4 + 2 + 3 + 1
    assert r.cycles == r.breakdown.core + 2
    # the M33 uses the M4's FPU table; the M7 dual-issues and so is cheaper
    m33 = VirtualMCU("cortex-m33", vfp_elfs["cortex-m33"], arena_bytes=4096)
    assert m33.call("vfp_madd", f32_bits(1.5), f32_bits(2.0), f32_bits(0.25)).cycles == 11


def test_block_cost_rules_vfp():
    """capstone's VFP names (vldmia, fconsts, fmstat, fmdhr, ...) get their Table 7-1 cost, not
    the 1-cycle default of unknown instructions."""
    src = [  # (encoding, M4 cycles)
        ("2ded028b", 3),   # vpush {d8}: 1 + 2 words
        ("90ed020b", 3),   # vldr d0, [r0, #8]: VLDR.64 3
        ("f7ee007a", 1),   # vmov.f32 s15, #1.0 (capstone: fconsts)
        ("f1ee10fa", 1),   # vmrs APSR_nzcv, fpscr (capstone: fmstat)
        ("20ee010a", 1),   # vmul.f32 s0, s0, s2     1 (+0: the VMLA reads s0 as its addend)
        ("01ee810a", 3),   # vmla.f32 s0, s3, s2     3
        ("80ee810a", 15),  # vdiv.f32 s0, s1, s2     14, +1: the VMOV reads d0 = s0:s1 (alias)
        ("51ec100b", 2),   # vmov r0, r1, d0         2 (two core registers)
        ("bdec028b", 3),   # vpop {d8}               1 + 2
    ]
    code = b"".join(bytes.fromhex(h) for h, _ in src)
    read = lambda a, n: code[a - 0x1000:a - 0x1000 + n]   # noqa: E731
    insns = decode(code, 0x1000)
    assert len(insns) == len(src)
    assert all(i.cls in ("fp", "vld", "vst", "vldm", "vstm") for i in insns), [(i.name, i.cls) for i in insns]
    for core in ("cortex-m4", "cortex-m33"):
        assert block_cost(core, 0x1000, len(code), read).cycles == sum(c for _, c in src)
    # an arithmetic result read by the next instruction as a multiplicand: +1
    dep = bytes.fromhex("20ee010a" "00ee010a")    # vmul.f32 s0, s0, s2 ; vmla.f32 s0, s0, s2
    rd = lambda a, n: dep[a - 0x1000:a - 0x1000 + n]      # noqa: E731
    assert block_cost("cortex-m4", 0x1000, len(dep), rd).cycles == 1 + 1 + 3
    assert block_cost("cortex-m7", 0x1000, len(code), read).cycles < sum(c for _, c in src)
