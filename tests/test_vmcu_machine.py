"""The virtual Cortex-M machine: exact counts, faults, budget, alignment, stack, cycles.

Builds its own tiny test firmware with arm-none-eabi-gcc (required: see conftest.missing),
independent of the kernel firmware in cortexm/firmware.
"""
from __future__ import annotations

import subprocess
import textwrap

import numpy as np
import pytest

from conftest import ARM_GCC as CC, requires_arm_gcc
from micro_rt.errors import EmulationError
from micro_rt.cortexm.core_timing import block_cost
from micro_rt.cortexm.memory_system import MemorySystem
from micro_rt.cortexm.thumb_decode import decode
from micro_rt.cortexm.machine import FLASH_LIMIT, SRAM_BASE, BudgetExceeded, VirtualMCU, page_aligned_buffer


pytestmark = requires_arm_gcc

CORES = ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"]
V7M = ["cortex-m4", "cortex-m7", "cortex-m33"]

COMMON_S = textwrap.dedent("""
    .syntax unified
    .thumb
    .text
    @ r0 = n >= 1: executes 1 + 3n + 2 instructions
    .global count_loop
    .type count_loop, %function
    .thumb_func
    count_loop:
        movs r1, #0
    1:  adds r1, r1, #1
        subs r0, r0, #1
        bne 1b
        mov r0, r1
        bx lr
    .size count_loop, .-count_loop

    @ unaligned word load (faults on Armv6-M, allowed on v7-M unless strict)
    .global ldr_at
    .type ldr_at, %function
    .thumb_func
    ldr_at:
        ldr r0, [r0]
        bx lr
    .size ldr_at, .-ldr_at

    .global jump_to
    .type jump_to, %function
    .thumb_func
    jump_to:
        bx r0
    .size jump_to, .-jump_to
""")

V7M_S = textwrap.dedent("""
    .syntax unified
    .thumb
    .text
    .global ldrd_at
    .type ldrd_at, %function
    .thumb_func
    ldrd_at:
        ldrd r2, r3, [r0]
        adds r0, r2, r3
        bx lr
    .size ldrd_at, .-ldrd_at

    @ r0 = p, r1 = n: n LDRDs with post-increment (static check through writeback)
    .global ldrd_loop
    .type ldrd_loop, %function
    .thumb_func
    ldrd_loop:
        movs r12, #0
    1:  ldrd r2, r3, [r0], #8
        add r12, r12, r2
        subs r1, r1, #1
        bne 1b
        mov r0, r12
        bx lr
    .size ldrd_loop, .-ldrd_loop

    @ r0 = pointer to a pointer: the LDRD base comes from memory (code-hook fallback)
    .global ldrd_indirect
    .type ldrd_indirect, %function
    .thumb_func
    ldrd_indirect:
        ldr r0, [r0]
        ldrd r2, r3, [r0]
        mov r0, r2
        bx lr
    .size ldrd_indirect, .-ldrd_indirect

    @ r0 + 2 then LDM: address computed inside the block
    .global ldm_plus2
    .type ldm_plus2, %function
    .thumb_func
    ldm_plus2:
        adds r0, r0, #2
        ldm r0!, {r2, r3}
        mov r0, r3
        bx lr
    .size ldm_plus2, .-ldm_plus2

    @ 5 instructions whatever r0: IT-skipped instructions count too
    .global it_test
    .type it_test, %function
    .thumb_func
    it_test:
        cmp r0, #0
        ite eq
        moveq r0, #1
        movne r0, #2
        bx lr
    .size it_test, .-it_test
""")

M0_BAD_S = textwrap.dedent("""
    .syntax unified
    .thumb
    .text
    @ a Thumb-2 instruction (sdiv r0, r0, r1) the Armv6-M core must reject
    .global thumb2_insn
    .type thumb2_insn, %function
    .thumb_func
    thumb2_insn:
        .inst.w 0xfb90f0f1
        bx lr
    .size thumb2_insn, .-thumb2_insn
""")

C_SRC = textwrap.dedent("""
    int sum8(int a, int b, int c, int d, int e, int f, int g, int h)
    { return a + 2*b + 3*c + 4*d + 5*e + 6*f + 7*g + 8*h; }

    __attribute__((noinline)) int rec(int n) {
        volatile char buf[24];
        buf[0] = (char)n;
        if (n <= 0) return 0;
        int r = rec(n - 1);
        return r + buf[0];
    }
    int spin(void) { for (;;) { __asm__ volatile("nop"); } }
    int bad_read(void) { return *(volatile int *)0x40000000; }
    void bad_write(int v) { *(volatile int *)0x50000010 = v; }
    int data_var = 7;
    int get_data(void) { return data_var; }
    void add1(unsigned char *p, int n) { for (int i = 0; i < n; i++) p[i] += 1; }
    int dot(const signed char *w, const signed char *x, int n) {
        int acc = 0;
        for (int i = 0; i < n; i++) acc += w[i] * x[i];
        return acc;
    }
    int sum_words(const int *p, int n) { int s = 0; for (int i = 0; i < n; i++) s += p[i]; return s; }
""")

ENTRY = ["count_loop", "ldr_at", "jump_to", "sum8", "rec", "spin", "bad_read", "bad_write",
         "get_data", "add1", "dot", "sum_words", "ldrd_at", "it_test", "thumb2_insn",
         "ldrd_loop", "ldrd_indirect", "ldm_plus2"]


def _build(tmp, core: str) -> str:
    srcs = []
    for name, text in (("common.S", COMMON_S), ("funcs.c", C_SRC)):
        (tmp / name).write_text(text)
        srcs.append(str(tmp / name))
    if core in V7M:
        (tmp / "v7m.S").write_text(V7M_S)
        srcs.append(str(tmp / "v7m.S"))
    else:
        (tmp / "m0bad.S").write_text(M0_BAD_S)
        srcs.append(str(tmp / "m0bad.S"))
    out = tmp / f"{core}.elf"
    keep = [f"-Wl,--undefined={s}" for s in ENTRY]
    cmd = [CC, f"-mcpu={core}", "-mthumb", "-mfloat-abi=soft", "-O2", "-nostdlib", "-nostartfiles",
           "-ffunction-sections", "-fno-inline", "-Wl,-Ttext=0x08000000", "-Wl,-Tdata=0x20000000",
           "-Wl,-e,0", "-Wl,--gc-sections", *keep, *srcs, "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    return str(out)


@pytest.fixture(scope="module")
def elfs(tmp_path_factory):
    out = {}
    for core in CORES:
        d = tmp_path_factory.mktemp(core)
        out[core] = _build(d, core)
    return out


def mcu(elfs, core, **kw):
    kw.setdefault("arena_bytes", 8192)
    return VirtualMCU(core, elfs[core], **kw)


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
@pytest.mark.parametrize("mode", ["static", "memory-hook", "python"])
def test_alignment_static_paths(elfs, core, mode):
    kw = {"static": {}, "memory-hook": {"flash_wait_states": 1}, "python": {"native": False}}[mode]
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
# The kernel firmware uses the FPU on M4 / M7 / M33 (-mfloat-abi=softfp). These functions take and
# return float32 bit patterns in core registers, like the firmware's soft-float calling convention.
VFP_S = textwrap.dedent("""
    .syntax unified
    .thumb
    .text
    @ r0, r1, r2 = a, b, c (float32 bits): returns a * b + c, two roundings
    .global vfp_madd
    .type vfp_madd, %function
    .thumb_func
    vfp_madd:
        vmov s0, r0              @ 1
        vmov s1, r1              @ 1
        vmov s2, r2              @ 1
        vmul.f32 s3, s0, s1      @ 1, +1: the next instruction reads s3
        vadd.f32 s3, s3, s2      @ 1, +1: the next instruction reads s3
        vmov r0, s3              @ 1
        bx lr                    @ 1 + P
    .size vfp_madd, .-vfp_madd

    @ r0 = float p[4]: p[2] = p[0] / p[1] * p[1] + p[0]   (p[3] unused, loaded)
    .global vfp_mix
    .type vfp_mix, %function
    .thumb_func
    vfp_mix:
        vpush {s16-s17}          @ 1+2
        vldr s16, [r0]           @ 2
        vldr s17, [r0, #4]       @ 2
        vldmia r0, {s0-s3}       @ 1+4
        vdiv.f32 s4, s16, s17    @ 14, +1: read by the VMLA as a multiplicand
        vmla.f32 s0, s4, s1      @ 3, +1: read by the VSTR
        vstr s0, [r0, #8]        @ 2
        vpop {s16-s17}           @ 1+2
        bx lr                    @ 1 + P
    .size vfp_mix, .-vfp_mix

    .global vfp_ld
    .type vfp_ld, %function
    .thumb_func
    vfp_ld:
        vldr s0, [r0]
        vmov r0, s0
        bx lr
    .size vfp_ld, .-vfp_ld
""")
FPU_FLAGS = {"cortex-m4": "fpv4-sp-d16", "cortex-m7": "fpv5-d16", "cortex-m33": "fpv5-sp-d16"}


@pytest.fixture(scope="module")
def vfp_elfs(tmp_path_factory):
    out = {}
    for core, fpu in FPU_FLAGS.items():
        d = tmp_path_factory.mktemp(core + "-vfp")
        (d / "vfp.S").write_text(VFP_S)
        elf = d / "vfp.elf"
        subprocess.run([CC, f"-mcpu={core}", "-mthumb", "-mfloat-abi=softfp", f"-mfpu={fpu}", "-nostdlib",
                        "-nostartfiles", "-Wl,-Ttext=0x08000000", "-Wl,-e,0", str(d / "vfp.S"), "-o", str(elf)],
                       check=True, capture_output=True)
        out[core] = str(elf)
    return out


def _bits(x) -> int:
    return int(np.float32(x).view(np.uint32))


def _f32(bits: int) -> np.float32:
    return np.uint32(bits & 0xFFFFFFFF).view(np.float32)


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
        got = _f32(m.call("vfp_madd", _bits(a), _bits(b), _bits(c)).return_value)
        assert got.view(np.uint32) == want.view(np.uint32) or (np.isnan(got) and np.isnan(want)), (a, b, c, got, want)
    assert _f32(m.call("vfp_madd", _bits(1e-20), _bits(1e-20), 0).return_value) != 0    # not flushed


def test_vfp_function_trm_cycles_m4(vfp_elfs):
    """Cortex-M4 TRM Table 7-1 (and its note: an arithmetic result used by the next instruction
    costs one more cycle), executed: exact cycles."""
    m = VirtualMCU("cortex-m4", vfp_elfs["cortex-m4"], arena_bytes=4096)
    r = m.call("vfp_madd", _bits(1.5), _bits(2.0), _bits(0.25))
    assert _f32(r.return_value) == np.float32(3.25)
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
    assert m33.call("vfp_madd", _bits(1.5), _bits(2.0), _bits(0.25)).cycles == 11


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


@pytest.mark.parametrize("core", V7M)
def test_unaligned_vldr_reported(vfp_elfs, core):
    """VLDR/VSTR/VLDM/VSTM are always word-aligned on Armv7-M/v8-M (Unicorn does not fault): an
    unaligned one is reported as fatal by the static check and by the memory hook."""
    for strict in (False, True):
        m = VirtualMCU(core, vfp_elfs[core], arena_bytes=4096, strict_alignment=strict)
        assert not m.call("vfp_ld", m.arena_base + 4).alignment_events
        ev = m.call("vfp_ld", m.arena_base + 2).alignment_events
        assert len(ev) == 1 and ev[0].kind == "VLDR" and ev[0].fatal, ev
