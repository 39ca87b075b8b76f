"""The virtual Cortex-M machine: exact counts, AAPCS, faults, budget, engine lifetime, alignment,
stack, FPU semantics (on the test firmware of vmcu_test_firmware.py; the cycle model is tested in
test_vmcu_cycles.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import requires_arm_gcc
from micro_rt.errors import EmulationError
from micro_rt.cortexm.machine import FLASH_LIMIT, SRAM_BASE, BudgetExceeded, VirtualMCU
from vmcu_test_firmware import CORES, V7M, bits_f32, elfs, f32_bits, mcu, vfp_elfs  # noqa: F401 (fixtures)

pytestmark = requires_arm_gcc


# ----------------------------------------------------------------------------- counting
@pytest.mark.parametrize("core", CORES)
def test_loop_instruction_count_exact(elfs, core):
    m = mcu(elfs, core)
    for n in (1, 7, 1000, 100_000):
        r = m.call("count_loop", n)
        assert r.return_value == n
        assert r.instructions == 3 * n + 3
    # agrees with Unicorn's own translation-block sizes
    edges = m.hooks.edges()
    via_tb = sum(cnt * m.uc.ctl_request_cache(c)[1] for (_, _, c, _), cnt in edges.items())
    assert via_tb == 3 * 100_000 + 3


@pytest.mark.parametrize("core", CORES)
def test_python_fallback_matches_native(elfs, core):
    a = mcu(elfs, core, native=True)
    b = mcu(elfs, core, native=False)
    assert a.hooks.native and not b.hooks.native
    for f, args in (("count_loop", (50,)), ("rec", (6,)), ("sum8", tuple(range(1, 9)))):
        ra, rb = a.call(f, *args), b.call(f, *args)
        assert (ra.return_value, ra.instructions, ra.cycles, ra.stack_bytes) == \
               (rb.return_value, rb.instructions, rb.cycles, rb.stack_bytes)


@pytest.mark.parametrize("core", V7M)
def test_it_skipped_instructions_are_counted(elfs, core):
    m = mcu(elfs, core)
    assert m.call("it_test", 0).return_value == 1
    assert m.call("it_test", 0).instructions == 5
    r = m.call("it_test", 3)
    assert (r.return_value, r.instructions) == (2, 5)


# ----------------------------------------------------------------------------- AAPCS, data, arena
@pytest.mark.parametrize("core", CORES)
def test_more_than_four_arguments(elfs, core):
    m = mcu(elfs, core)
    args = (1, -2, 3, 4, 5, 6, -7, 8)
    assert m.call("sum8", *args).return_value == sum((i + 1) * a for i, a in enumerate(args))
    assert m.call("get_data").return_value == 7            # .data initialised from the ELF


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_zero_copy_arena_and_weights(elfs, core):
    m = mcu(elfs, core, arena_bytes=4096, arena_misalign=4)
    assert m.arena_base % 16 == 4
    buf = m.new_arena_buffer(4096)
    assert buf.ctypes.data % 4096 == 0 and buf.nbytes % 4096 == 0
    m.map_arena(buf)
    view = buf[4:4 + 100]
    view[:] = np.arange(100, dtype=np.uint8)
    m.call("add1", m.arena_base, 100)
    assert np.array_equal(view, np.arange(1, 101, dtype=np.uint8))     # no copy back needed
    w = np.arange(-20, 20, dtype=np.int8)
    x = np.arange(40, dtype=np.int8)
    waddr = m.place_constant(w)
    assert m.place_constant(w) == waddr and waddr % 16 == 0
    assert m.symbol_at(waddr).startswith("weights+")
    m.arena[:40] = x.view(np.uint8)
    r = m.call("dot", waddr, m.arena_base, 40)
    assert r.return_value == int(np.dot(w.astype(np.int32), x.astype(np.int32)))


def test_args_area_and_flash_growth(elfs):
    m = mcu(elfs, "cortex-m4", flash_bytes=64 * 1024)
    m.args_reset()
    a = m.args_alloc(np.arange(4, dtype=np.int32).tobytes())
    assert m.read(a, 16) == np.arange(4, dtype=np.int32).tobytes()
    big = np.ones(200_000, dtype=np.int32)            # 800 KB: flash must grow
    addr = m.place_constant(big)
    assert m.call("sum_words", addr, len(big)).return_value == len(big)
    with pytest.raises(EmulationError, match="ARGS"):
        m.args_alloc(bytes(5000))


# ----------------------------------------------------------------------------- faults
@pytest.mark.parametrize("core", CORES)
def test_unmapped_read_and_write_fault(elfs, core):
    m = mcu(elfs, core)
    with pytest.raises(EmulationError) as ei:
        m.call("bad_read")
    msg = str(ei.value)
    assert "bad_read" in msg and "0x40000000" in msg and "read" in msg and "pc 0x08" in msg
    with pytest.raises(EmulationError, match=r"bad_write.*write.*0x50000010"):
        m.call("bad_write", 1)
    with pytest.raises(EmulationError, match=r"fetch.*0x30000000"):
        m.call("jump_to", 0x30000001)
    # the machine is usable after a fault
    assert m.call("count_loop", 3).instructions == 12


def test_arena_overrun_hits_guard_page(elfs):
    m = mcu(elfs, "cortex-m4", arena_bytes=4096)
    end = m.arena_map + m.arena.nbytes + m.arena_misalign
    with pytest.raises(EmulationError, match="guard page"):
        m.call("add1", end - 8, 64)


@pytest.mark.parametrize("core", CORES)
def test_budget_exhausted_never_hangs(elfs, core):
    m = mcu(elfs, core)
    with pytest.raises(BudgetExceeded, match=r"spin: did not finish within its instruction budget "
                                             r"of 200,000 \(stopped at pc 0x[0-9a-f]+ <spin") as info:
        m.call("spin", budget=200_000)
    assert info.value.in_code and info.value.budget == 200_000
    with pytest.raises(EmulationError, match="count_loop: did not finish within its instruction budget of 1,000"):
        m.call("count_loop", 10_000, budget=1000)
    assert m.call("count_loop", 10, budget=33).instructions == 33


@pytest.mark.parametrize("core", CORES)
def test_runaway_outside_the_firmware_is_called_so(elfs, core):
    # `b .` (0xE7FE) written into the arena, then jumped to: a loop in data, not in any kernel
    m = mcu(elfs, core)
    m.arena[:4] = np.frombuffer(b"\xfe\xe7\xfe\xe7", np.uint8)
    with pytest.raises(BudgetExceeded, match=r"jump_to: ran away: executing SRAM \(arena\), not the "
                                             r"firmware's code within its instruction budget of 5,000") as info:
        m.call("jump_to", m.arena_base | 1, budget=5000)
    assert not info.value.in_code


# ----------------------------------------------------------------------------- engine lifetime
@pytest.mark.parametrize("core", CORES)
def test_engine_recycle_keeps_memory_counts_and_cycles(elfs, core):
    """A machine that replaces its Unicorn engine every 2 calls gives the same results, memory
    and cycle counts (flash data-cache state included) as one that never does."""
    runs = {}
    for every in (0, 2):
        m = mcu(elfs, core, recycle_every=every, flash_wait_states=2)
        data = np.arange(64, dtype=np.int32)
        addr = m.place_constant(data)
        out = []
        for i in range(7):
            m.call("add1", m.arena_base, 16 + i)                      # SRAM state carried over
            r = m.call("sum_words", addr + 4 * i, 32)                  # flash data reads, cached
            out.append((r.return_value, r.instructions, r.cycles, r.stack_bytes, r.flash_data_reads))
        out.append(bytes(m.arena[:64]))
        out.append(m.read(addr, 256))
        runs[every] = out
        assert m.engines_started == (1 if every == 0 else 7)
    assert runs[0] == runs[2]


def test_closed_machine_refuses_calls(elfs):
    m = mcu(elfs, "cortex-m4")
    m.close()
    m.close()
    with pytest.raises(EmulationError, match="the virtual MCU was closed"):
        m.call("count_loop", 3)


def test_flash_limit_is_an_emulation_error(elfs):
    with pytest.raises(EmulationError, match=r"the model's constants need 402,653,184 bytes of flash; "
                                             r"the emulated flash holds at most [\d,]+ bytes of constants "
                                             r"\(402,653,184 bytes from 0x08000000 to SRAM at 0x20000000"):
        mcu(elfs, "cortex-m4", weights_bytes=FLASH_LIMIT)
    m = mcu(elfs, "cortex-m4", flash_bytes=64 * 1024)
    with pytest.raises(EmulationError, match=r"flash full: .* at most 402,653,184 bytes"):
        m.engine.grow_flash(SRAM_BASE + 16)


def test_invalid_instruction_on_m0(elfs):
    m = mcu(elfs, "cortex-m0plus")
    with pytest.raises(EmulationError, match=r"thumb2_insn.*(invalid|undefined).*0x08"):
        m.call("thumb2_insn", 6, 3)


# ----------------------------------------------------------------------------- alignment
@pytest.mark.parametrize("core", V7M)
def test_unaligned_ldrd_reported(elfs, core):
    m = mcu(elfs, core)
    m.arena[:16] = np.arange(16, dtype=np.uint8)
    r = m.call("ldrd_at", m.arena_base + 4)       # word aligned: LDRD is fine
    assert r.alignment_events == []
    r = m.call("ldrd_at", m.arena_base + 2)
    assert len(r.alignment_events) == 1
    ev = r.alignment_events[0]
    assert ev.kind == "LDRD" and ev.symbol == "ldrd_at" and "ldrd" in ev.disassembly
    assert ev.address == m.arena_base + 2 and ev.fatal
    lo = int.from_bytes(bytes(range(2, 6)), "little")
    hi = int.from_bytes(bytes(range(6, 10)), "little")
    assert r.return_value == ((lo + hi) & 0xFFFFFFFF) - (1 << 32 if (lo + hi) & 0x80000000 else 0)
    # an unaligned LDR is legal on v7-M: an event only in strict mode
    assert m.call("ldr_at", m.arena_base + 1).alignment_events == []
    s = mcu(elfs, core, strict_alignment=True)
    evs = s.call("ldr_at", s.arena_base + 1).alignment_events
    assert [e.kind for e in evs] == ["LDR"] and evs[0].symbol == "ldr_at"
    off = mcu(elfs, core, check_alignment=False)
    assert off.call("ldrd_at", off.arena_base + 2).alignment_events == []


@pytest.mark.parametrize("core", V7M)
@pytest.mark.parametrize("mode", ["static", "memory-hook", "flash-port", "python"])
def test_alignment_static_paths(elfs, core, mode):
    kw = {"static": {}, "memory-hook": {"flash_wait_states": 1, "flash_port": False},
          "flash-port": {"flash_wait_states": 1}, "python": {"native": False}}[mode]
    m = mcu(elfs, core, **kw)
    assert m.alignment_mode == ("memory hook" if mode == "memory-hook" else "static + block hook")
    base = m.arena_base
    assert m.call("ldrd_loop", base, 5).alignment_events == []
    evs = m.call("ldrd_loop", base + 1, 5).alignment_events
    assert [(e.kind, e.symbol, e.address) for e in evs] == [("LDRD", "ldrd_loop+0x4", base + 1)]
    assert evs[0].count >= 5
    # base loaded from memory: checked by a code hook on the instruction
    m.write(base + 64, (base + 6).to_bytes(4, "little"))
    evs = m.call("ldrd_indirect", base + 64).alignment_events
    assert [(e.kind, e.address) for e in evs] == [("LDRD", base + 6)]
    m.write(base + 64, (base + 8).to_bytes(4, "little"))
    assert m.call("ldrd_indirect", base + 64).alignment_events == []
    evs = m.call("ldm_plus2", base).alignment_events
    assert [(e.kind, e.address) for e in evs] == [("LDM", base + 2)]
    assert m.call("ldm_plus2", base + 2).alignment_events == []


def test_unaligned_ldr_faults_on_m0(elfs):
    m = mcu(elfs, "cortex-m0plus")
    assert m.call("ldr_at", m.arena_base + 4).return_value == 0
    with pytest.raises(EmulationError, match=r"ldr_at.*unaligned") as ei:
        m.call("ldr_at", m.arena_base + 2)
    ev = ei.value.event
    assert ev.address == m.arena_base + 2 and ev.symbol == "ldr_at" and ev.kind == "LDR"


# ----------------------------------------------------------------------------- stack
@pytest.mark.parametrize("core", CORES)
def test_stack_high_water_mark(elfs, core):
    m = mcu(elfs, core)
    hw = [m.call("rec", n).stack_bytes for n in (0, 5, 10, 20)]
    frame = (hw[2] - hw[1]) // 5
    assert frame >= 24 and hw[0] > 0
    assert hw[3] - hw[2] == 10 * frame and hw[2] - hw[1] == 5 * frame
    assert m.call("rec", 20).return_value == sum(range(1, 21))
    assert m.call("count_loop", 5).stack_bytes == 0
    with pytest.raises(EmulationError, match="stack overflow"):
        mcu(elfs, core, stack_bytes=1024).call("rec", 1000)


# ----------------------------------------------------------------------------- FPU (VFP)
@pytest.mark.parametrize("core", V7M)
def test_vfp_denormals_are_ieee(vfp_elfs, core):
    """FPSCR.FZ = 0 (no flush to zero), DN = 0, round to nearest: the numpy float32 results,
    bit for bit, for denormal products, denormal operands and rounding."""
    m = VirtualMCU(core, vfp_elfs[core], arena_bytes=4096)
    cases = [(1e-20, 1e-20, 0.0), (1e-40, 2.0, 0.0), (1e-45, 0.5, 0.0), (3e-39, -1.0, 1e-39),
             (1.1, 3.3, 1e-8), (np.float32(2) ** -126, 0.75, 0.0), (np.inf, 0.0, 1.0), (-0.0, 1.0, 0.0)]
    for a, b, c in cases:
        a, b, c = np.float32(a), np.float32(b), np.float32(c)
        with np.errstate(all="ignore"):
            want = np.float32(a * b) + c
        got = bits_f32(m.call("vfp_madd", f32_bits(a), f32_bits(b), f32_bits(c)).return_value)
        assert got.view(np.uint32) == want.view(np.uint32) or (np.isnan(got) and np.isnan(want)), (a, b, c, got, want)
    assert bits_f32(m.call("vfp_madd", f32_bits(1e-20), f32_bits(1e-20), 0).return_value) != 0    # not flushed


@pytest.mark.parametrize("core", V7M)
def test_unaligned_vldr_reported(vfp_elfs, core):
    """VLDR/VSTR/VLDM/VSTM are always word-aligned on Armv7-M/v8-M (Unicorn does not fault): an
    unaligned one is reported as fatal by the static check and by the memory hook."""
    for strict in (False, True):
        m = VirtualMCU(core, vfp_elfs[core], arena_bytes=4096, strict_alignment=strict)
        assert not m.call("vfp_ld", m.arena_base + 4).alignment_events
        ev = m.call("vfp_ld", m.arena_base + 2).alignment_events
        assert len(ev) == 1 and ev[0].kind == "VLDR" and ev[0].fatal, ev
