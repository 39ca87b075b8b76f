"""What a user waits for (issue 24): `profile` and `boards` as whole processes, and the emulation
rate of one invoke against bare Unicorn on the same firmware and plan.

    python benchmarks/bench_wall.py [--models DIR_OR_FILES ...] [--runs 3] [--write]

1. `micro-rt profile MODEL --target cortex-m4 --json`, a new process each run: wall seconds
   (median of --runs, after one untimed run), and the share of them that is emulation (the
   report's `emulation_seconds`: from the first instruction of the first invoke to the last);
   and one process whose block-cost cache starts empty (cold).
2. `micro-rt boards MODEL` over the 12 catalog boards, a new process (after one untimed run):
   wall seconds.
3. Emulation rate per configuration (model x core x flash wait states): one Interpreter with
   emulate=True, the FIRST invoke timed as a user experiences it (plan written, translations
   made) and a second one; then a fresh Unicorn engine over the same memory, with plain
   mappings and no hook at all (no counting, no cycle model, no alignment check, no flash
   port), boots the same image once, its translations made as it goes like the first invoke's,
   timed to its last instruction: first / bare says how much of Unicorn's own speed is left. A model
   with a host entry is not run bare (there is no host without the hooks).

Goals (issue 24; benchmarks, never timed tests): emulation >= 150 M instructions/s in every
configuration (aim 300), `profile` of an MLPerf Tiny model <= 1 s wall (aim 0.5), `boards`
over 12 boards <= 5 s for an MLPerf model (aim 2). --write puts the tables into RESULTS.md
(section wall-time).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"
CLI = [sys.executable, "-m", "micro_rt.cli"]
GOAL_RATE, GOAL_PROFILE, GOAL_BOARDS = 150, 1.0, 5.0
RATE_CASES = [("person_detect", "cortex-m4", 0), ("person_detect", "cortex-m4", 5),
              ("person_detect", "cortex-m0plus", 5), ("person_detect", "cortex-m7", 5),
              ("person_detect", "cortex-m33", 5), ("residual_block_f32", "cortex-m4", 0),
              ("residual_block_f32", "cortex-m4", 5), ("mobilenet_tiny_f32", "cortex-m7", 5),
              ("dtln_noise_suppression", "cortex-m33", 5)]


def find_model(name: str) -> Path | None:
    for path in (ROOT / "models" / f"{name}.tflite", SHARED / f"{name}.tflite"):
        if path.exists():
            return path
    return None


# A user's installed package has its bytecode (pip compiles it at install). This workplace's
# environment sets PYTHONDONTWRITEBYTECODE, which makes every process compile every module
# again (~0.35 s of a profile here), so the processes run without it, each command once untimed
# first: that writes the bytecode and the firmware's block prices, as a user's first run does.
# The cold column times a process whose block-cost cache (MICRO_RT_CACHE) starts empty.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed_process(argv: list[str], env: dict | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env or USER_ENV)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 3):
        raise SystemExit(f"error: {' '.join(argv)} exited {done.returncode}: {done.stderr[-400:]}")
    return wall, done.stdout


def profile_row(path: Path, runs: int) -> dict:
    argv = CLI + ["profile", str(path), "--target", "cortex-m4", "--json"]
    timed_process(argv)                                  # bytecode and block prices written
    with tempfile.TemporaryDirectory() as empty:
        cold, _ = timed_process(argv, {**USER_ENV, "MICRO_RT_CACHE": empty})
    walls, shares = [], []
    for _ in range(runs):
        wall, out = timed_process(argv)
        walls.append(wall)
        shares.append(json.loads(out)["emulation_seconds"] / wall)
    return {"model": path.stem, "wall": statistics.median(walls), "share": statistics.median(shares),
            "cold": cold}


def rate_row(path: Path, core: str, wait_states: int) -> dict:
    """First and second invoke on the hooked machine, then the same image booted bare."""
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    it = Interpreter.from_file(str(path), target=core, kernels="cmsis-nn", emulate=True,
                               mcu_options={"flash_wait_states": wait_states})
    for i, x in enumerate(random_inputs(it, 0)):
        it.set_input(x, i)
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        it.invoke()
        seconds.append(time.perf_counter() - start)
    instructions = sum(r.instructions for r in it.last_run) + it.executor.last_runtime.instructions
    row = {"model": path.stem, "core": core, "ws": wait_states, "instructions": instructions,
           "first": instructions / seconds[0] / 1e6, "second": instructions / seconds[1] / 1e6,
           "bare": None, "host_entries": len(it.executor.host_entries())}
    if not row["host_entries"]:
        row["bare"] = bare_rate(it.executor.mcu, instructions)
    it.close()
    return row


def bare_rate(mcu, instructions: int) -> float | None:
    """M instructions/s of a fresh Unicorn engine over the same memory (plain mappings, no hook
    at all) booting the image from its reset vector to mrt_start's BKPT #4; None when it does
    not end there."""
    import unicorn
    from unicorn.arm_const import UC_ARM_REG_FPSCR, UC_ARM_REG_LR, UC_ARM_REG_PC, UC_ARM_REG_SP

    from micro_rt.cortexm.engine import CPU_MODELS
    from micro_rt.cortexm.memory_map import FLASH_BASE
    uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB)
    uc.ctl_set_cpu_model(CPU_MODELS[mcu.core])
    mcu.memory.map_into(uc)
    top, reset = (int.from_bytes(mcu.read(FLASH_BASE + k, 4), "little") for k in (0, 4))
    uc.reg_write(UC_ARM_REG_SP, top)
    uc.reg_write(UC_ARM_REG_LR, 0xFFFF_FFFF)
    if mcu.has_fpu:
        uc.reg_write(UC_ARM_REG_FPSCR, 0)
    start = time.perf_counter()
    try:
        uc.emu_start(reset | 1, 0)          # ends at mrt_start's BKPT #4, which no hook takes
    except unicorn.UcError:
        pass
    seconds = time.perf_counter() - start
    done = mcu.read(uc.reg_read(UC_ARM_REG_PC) & ~1, 2) == bytes([0x04, 0xBE])
    return instructions / seconds / 1e6 if done else None


def markdown(profiles: list, boards: list, rates: list, missing: list) -> str:
    lines = [results_md.section_header(THREADS), "",
             f"`micro-rt profile MODEL --target cortex-m4 --json`, a new process each run (median), after one "
             f"untimed run (the bytecode and the firmware's block prices written, as a user's first run leaves "
             f"them); cold: one process whose block-cost cache starts empty: goal <= {GOAL_PROFILE:g} s.", "",
             "| model | wall s | emulation share | cold wall s | <= 1 s |", "|---|---:|---:|---:|---|"]
    lines += [f"| {p['model']} | {p['wall']:.2f} | {100 * p['share']:.0f}% | {p['cold']:.2f} | "
              f"{'yes' if p['wall'] <= GOAL_PROFILE else 'no'} |" for p in profiles]
    lines += ["", f"`micro-rt boards MODEL` (12 catalog boards), a new process: goal <= {GOAL_BOARDS:g} s.", "",
              "| model | wall s | <= 5 s |", "|---|---:|---|"]
    lines += [f"| {b['model']} | {b['wall']:.2f} | {'yes' if b['wall'] <= GOAL_BOARDS else 'no'} |" for b in boards]
    lines += ["", "Emulation rate of one invoke, M instructions per wall second (the first invoke as a user "
              "waits for it: the plan written and the code translated; the second; and bare Unicorn booting "
              f"the same image with every hook removed): goal >= {GOAL_RATE} for the first.", "",
              "| model | core | wait states | instructions | first | second | bare Unicorn | first / bare | >= 150 |",
              "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rates:
        bare = f"{r['bare']:.0f}" if r["bare"] else f"not run ({r['host_entries']} host entries)"
        ratio = f"{r['first'] / r['bare']:.2f}" if r["bare"] else "-"
        lines.append(f"| {r['model']} | {r['core']} | {r['ws']} | {r['instructions']:,} | {r['first']:.0f} | "
                     f"{r['second']:.0f} | {bare} | {ratio} | {'yes' if r['first'] >= GOAL_RATE else 'no'} |")
    lines += [""] + [f"- {m}" for m in missing]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=[os.environ.get("MLPERF_MODELS", "/work/mlperf")],
                        help="MLPerf Tiny .tflite files, or a directory of them")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    paths = []
    for item in args.models:
        p = Path(item)
        paths += sorted(p.glob("*.tflite")) if p.is_dir() else [p]
    missing = [f"{item}: no .tflite found, profile and boards not measured" for item in args.models
               if not (Path(item).is_dir() and any(Path(item).glob("*.tflite")) or Path(item).is_file())]
    profiles = [profile_row(p, args.runs) for p in paths]
    boards = []
    for p in paths[:2]:
        timed_process(CLI + ["boards", str(p)])
        wall, _ = timed_process(CLI + ["boards", str(p)])
        boards.append({"model": p.stem, "wall": wall})
    rates = []
    for name, core, ws in RATE_CASES:
        path = find_model(name)
        if path is None:
            missing.append(f"{name}: not in models/ or ../shared/models/tflm/, its rate not measured")
            continue
        rates.append(rate_row(path, core, ws))
        print(rates[-1], flush=True)
    body = markdown(profiles, boards, rates, missing)
    print(body)
    if args.write:
        results_md.write_section("wall-time", body)


if __name__ == "__main__":
    main()
