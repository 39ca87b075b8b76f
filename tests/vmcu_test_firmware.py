"""The tiny test firmware of the virtual-machine tests (test_vmcu_machine.py, test_vmcu_cycles.py):
assembly and C functions built per core with arm-none-eabi-gcc (required: see conftest.missing),
independent of the kernel firmware in cortexm/firmware, and the module-scoped fixtures that
build them (`elfs`, `vfp_elfs`: import them into a test module to use them).
"""
from __future__ import annotations

import subprocess
import textwrap

import numpy as np
import pytest

from conftest import ARM_GCC as CC
from micro_rt.cortexm.machine import VirtualMCU

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


def build(tmp, core: str) -> str:
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
        out[core] = build(d, core)
    return out


def mcu(elfs, core, **kw):
    kw.setdefault("arena_bytes", 8192)
    return VirtualMCU(core, elfs[core], **kw)


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


def f32_bits(x) -> int:
    return int(np.float32(x).view(np.uint32))


def bits_f32(bits: int) -> np.float32:
    return np.uint32(bits & 0xFFFFFFFF).view(np.float32)

