"""Resident memory of the virtual MCU over many invokes (issue 10), with and without
replacing the Unicorn engine every `RECYCLE_EVERY` kernel calls.

    python benchmarks/bench_mcu_memory.py [-n 100000] [--model PATH] [--write]

Each configuration runs in a fresh process: N invokes of the model (default: TFLM's
hello_world_int8, 3 FULLY_CONNECTED calls per invoke) on a virtual Cortex-M4 with CMSIS-NN
kernels, RSS sampled six times. "recycle off" is the engine kept for the whole run (Unicorn
2.1's emu_start keeps a few hundred bytes per call until the engine is closed); "recycle on"
is the default. A bare-Unicorn loop (one tiny function, no micro_rt) is measured the same way.
`--write` puts the table into benchmarks/RESULTS.md between its markers.
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"
DEFAULT_MODEL = SHARED / "hello_world_int8.tflite"


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_interpreter(model: str, n: int, recycle: bool) -> dict:
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    options = {} if recycle else {"recycle_every": 0}
    it = Interpreter.from_file(model, target="cortex-m4", kernels="cmsis-nn", emulate=True, mcu_options=options)
    inputs = random_inputs(it, 0)
    samples = []
    start = time.perf_counter()
    for k in range(n + 1):
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
        if k % max(1, n // 5) == 0:
            samples.append((k, rss_mib()))
    seconds = time.perf_counter() - start
    calls = sum(1 for r in it.last_run if r.on_mcu) * (n + 1)
    engines = it.executor.mcu.engines_started
    return {"samples": samples, "seconds": seconds, "calls": calls, "engines": engines}


def run_bare(n: int, recycle_every: int) -> dict:
    import unicorn
    from unicorn import unicorn_const as UC
    from unicorn.arm_const import UC_CPU_ARM_CORTEX_M4

    def engine():
        uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
        uc.ctl_set_cpu_model(UC_CPU_ARM_CORTEX_M4)
        uc.mem_map(0x0800_0000, 0x1_0000)
        uc.mem_write(0x0800_0000, b"\x01\x30" * 8 + b"\x00\xbe")      # 8 x adds r0, #1; bkpt
        return uc

    uc, engines, samples = engine(), 1, []
    start = time.perf_counter()
    for k in range(n + 1):
        if recycle_every and k and k % recycle_every == 0:
            uc, engines = None, engines + 1
            uc = engine()
        uc.emu_start(0x0800_0001, 0x0800_0010)
        if k % max(1, n // 5) == 0:
            samples.append((k, rss_mib()))
    return {"samples": samples, "seconds": time.perf_counter() - start, "calls": n + 1, "engines": engines}


def measure(kind: str, model: str, n: int, recycle: bool) -> dict:
    """One configuration in a fresh interpreter process (so RSS starts from the same point)."""
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            f"import bench_mcu_memory as b; "
            + (f"r = b.run_interpreter({model!r}, {n}, {recycle}); " if kind == "micro_rt" else
               f"r = b.run_bare({n}, {10_000 if recycle else 0}); ")
            + "print(json.dumps(r))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100_000, help="invokes (bare: emu_start calls)")
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = parser.parse_args()
    rows = []
    for kind, recycle in (("bare Unicorn", False), ("bare Unicorn", True),
                          ("micro_rt", False), ("micro_rt", True)):
        r = measure("micro_rt" if kind == "micro_rt" else "bare", args.model, args.n, recycle)
        first, last = r["samples"][0][1], r["samples"][-1][1]
        label = f"{kind}, recycle {'on' if recycle else 'off'}"
        rows.append(f"| {label} | {r['calls']:,} | {r['engines']} | {first:.1f} | "
                    f"{' → '.join(f'{m:.0f}' for _, m in r['samples'][1:-1])} | {last:.1f} | "
                    f"{last - first:+.1f} | {r['seconds']:.1f} s |")
        print(rows[-1], flush=True)
    text = "\n".join([
        "## Virtual MCU resident memory over long runs (issue 10)",
        "",
        f"`python benchmarks/bench_mcu_memory.py -n {args.n} --write`, run "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}. micro_rt rows: {args.n:,} invokes of "
        f"`{Path(args.model).name}` on a virtual Cortex-M4 (CMSIS-NN kernels), each configuration in "
        f"a fresh process; bare rows: {args.n:,} `emu_start` calls of an 8-instruction function, the "
        "engine replaced every 10,000 calls when recycling. RSS in MiB.",
        "",
        "| configuration | kernel calls | engines | RSS at start | RSS in between | RSS at end | growth | time |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
        *rows,
        "",
        "Unicorn 2.1's `emu_start` keeps a few hundred bytes per call until its engine is closed;"
        " the virtual MCU replaces its engine every `RECYCLE_EVERY` calls (memory, hook state and"
        " data-cache lines carried over), which keeps long runs flat. Times are wall-clock on a"
        " shared machine, for orientation only (the rows ran at different loads).",
    ])
    print()
    print(text)
    if args.write:
        heading, _, rest = text.partition("\n")
        results_md.write_section("mcu-memory", heading + "\n\n" + results_md.section_header(THREADS) + rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
