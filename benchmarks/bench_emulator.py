"""Speed of the virtual MCU: millions of emulated instructions per second with exact counting.

    python benchmarks/bench_emulator.py [--core cortex-m4] [--n 2000000]

Builds a small int8 kernel (a conv-like MAC loop: weights in flash, activations in the arena,
plus an ALU-only loop) with arm-none-eabi-gcc and times `VirtualMCU.call` in these modes:
  raw Unicorn, no hooks (reference ceiling, no counting)
  native block hook (exact counts), no memory hook         <- check_alignment=False, 0 wait states
  native block hook + native memory hook (alignment check) <- the default
  native block hook + memory hook + flash wait-state model
  Python block hook fallback (no C compiler), alignment off
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KERNEL_C = r"""
int mac_kernel(const signed char *w, const signed char *x, int n, int reps) {
    int acc = 0;
    for (int r = 0; r < reps; r++) {
        const signed char *pw = w, *px = x;
        for (int i = 0; i < n; i += 4) {
            acc += pw[0] * px[0] + pw[1] * px[1] + pw[2] * px[2] + pw[3] * px[3];
            pw += 4; px += 4;
        }
        acc >>= 1;
    }
    return acc;
}
typedef struct { int a, b; } pair_t;
int pair_kernel(const pair_t *p, int n, int reps) {        /* LDRD in the hot loop */
    int acc = 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < n; i++) acc += p[i].a * p[i].b;
    return acc;
}
int alu_loop(int n) { unsigned a = 1, b = 2; while (n--) { a = a * 3 + b; b ^= a >> 3; } return (int)(a ^ b); }
"""


def build(core: str, tmp: Path) -> str:
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        sys.exit("arm-none-eabi-gcc not found")
    src = tmp / "k.c"
    src.write_text(KERNEL_C)
    out = tmp / f"{core}.elf"
    subprocess.run([cc, f"-mcpu={core}", "-mthumb", "-mfloat-abi=soft", "-O2", "-nostdlib",
                    "-nostartfiles", "-ffunction-sections", "-Wl,-Ttext=0x08000000",
                    "-Wl,-Tdata=0x20000000", "-Wl,-e,0", "-Wl,--gc-sections",
                    "-Wl,--undefined=mac_kernel", "-Wl,--undefined=alu_loop", "-Wl,--undefined=pair_kernel", str(src), "-o", str(out)],
                   check=True)
    return str(out)


def timed(m, func, *args, repeat=3):
    best = None
    for _ in range(repeat):
        t = time.perf_counter()
        r = m.call(func, *args)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return r, best


def raw_unicorn(elf_path: str, core: str, m_ref, func: str, args, instructions: int):
    """Same code on a bare Unicorn engine with no hooks at all: the ceiling."""
    import unicorn
    from unicorn import unicorn_const as UC
    from unicorn.arm_const import (UC_ARM_REG_LR, UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2,
                                   UC_ARM_REG_R3, UC_ARM_REG_SP)
    from micro_rt.cortexm.machine import CPU_MODELS, FLASH_BASE, SRAM_BASE
    uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
    uc.ctl_set_cpu_model(CPU_MODELS[core])
    uc.mem_map(FLASH_BASE, m_ref.flash_size)
    uc.mem_write(FLASH_BASE, m_ref.read(FLASH_BASE, m_ref.flash_size))
    top = m_ref.stack_top
    uc.mem_map(SRAM_BASE, top - SRAM_BASE)
    uc.mem_write(m_ref.arena_base, bytes(m_ref.arena[:8192]))
    best = None
    for _ in range(3):
        for reg, v in zip((UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3), args):
            uc.reg_write(reg, v)
        uc.reg_write(UC_ARM_REG_SP, top - 64)
        uc.reg_write(UC_ARM_REG_LR, m_ref.ret_addr | 1)
        t = time.perf_counter()
        uc.emu_start(m_ref.symbol(func) | 1, m_ref.ret_addr)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return instructions / best / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--core", default="cortex-m4")
    ap.add_argument("--reps", type=int, default=4000, help="MAC kernel repetitions over 1 KiB")
    args = ap.parse_args()
    from micro_rt.cortexm.machine import VirtualMCU
    from micro_rt.cortexm.native import native_error
    with tempfile.TemporaryDirectory() as tmpd:
        elf = build(args.core, Path(tmpd))
        n = 1024
        w = (np.arange(n) % 251 - 125).astype(np.int8)
        x = (np.arange(n) % 13 - 6).astype(np.int8)
        modes = [
            ("native block hook, no alignment check", dict(check_alignment=False), True),
            ("native block hook + static alignment checks (default)", dict(check_alignment=True), True),
            ("native block + memory hook (strict alignment)", dict(strict_alignment=True), True),
            ("native block + memory hook (2 flash wait states)", dict(flash_wait_states=2), True),
            ("2 wait states, model_flash_data=False (no memory hook)",
             dict(flash_wait_states=2, model_flash_data=False), True),
            ("Python hooks fallback, no alignment check", dict(check_alignment=False), False),
        ]
        print(f"core {args.core}; native hook: {'yes' if native_error() is None else native_error()}")
        print(f"{'mode':58s} {'kernel':>11s} {'M instr/s':>10s} {'instr':>12s} {'cycles':>12s}")
        ref = None
        for label, kw, native in modes:
            m = VirtualMCU(args.core, elf, arena_bytes=8192, native=native, **kw)
            waddr = m.place_constant(w)
            m.arena[:n] = x.view(np.uint8)
            reps = args.reps if native else max(1, args.reps // 20)
            for func, fargs in (("mac_kernel", (waddr, m.arena_base, n, reps)),
                                ("pair_kernel", (m.arena_base, n // 8, reps)),
                                ("alu_loop", (reps * 300,))):
                m.call(func, *fargs[:-1], 1)          # translate once
                r, dt = timed(m, func, *fargs, repeat=3 if native else 1)
                print(f"{label:58s} {func:>11s} {r.instructions / dt / 1e6:10.1f} {r.instructions:12,d} {r.cycles:12,d}")
                if ref is None and func == "mac_kernel":
                    ref = (m, fargs, r.instructions)
        m, fargs, insns = ref
        print(f"{'raw Unicorn, no hooks, no counting (ceiling)':58s} {'mac_kernel':>11s} "
              f"{raw_unicorn(elf, args.core, m, 'mac_kernel', fargs, insns):10.1f}")


if __name__ == "__main__":
    main()
