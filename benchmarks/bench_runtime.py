"""Whole-invoke mode against call-by-call mode on the virtual MCU (issue 14): emulation speed.

    python benchmarks/bench_runtime.py [--models mobilenet_tiny_int8 person_detect]
                                       [--cores cortex-m4 cortex-m0plus] [--invokes 3] [--write]

For each model (models/NAME.tflite, else ../shared/models/tflm/NAME.tflite, skipped with a note
when absent) and core, both modes run the same seeded input `--invokes` times after one warm-up
invoke (Unicorn's translation cache and the block-cost cache warm). Reported per mode: wall and
CPU seconds per invoke, emulated M instructions per wall and per CPU second (all instructions:
the operators', plus the runtime's in whole-invoke mode; on a shared machine CPU seconds are the
steadier figure), emulator entries per invoke; and the
runtime's own instructions and cycles (whole-invoke mode's line in `profile`).
--write puts the table into RESULTS.md (section vmcu-runtime).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"


def find_model(name: str):
    for path in (ROOT / "models" / f"{name}.tflite", SHARED / f"{name}.tflite"):
        if path.exists():
            return path
    return None


def measure(path: Path, core: str, whole: bool, invokes: int) -> dict:
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    it = Interpreter.from_file(str(path), target=core, kernels="cmsis-nn", emulate=True, mcu_options={"whole_invoke": whole})
    for i, x in enumerate(random_inputs(it, 0)):
        it.set_input(x, i)
    it.invoke()                                   # warm-up: plan, translations, block costs
    executor = it.executor
    entries = []
    real = executor.mcu.engine.run

    def counting(*args):
        entries.append(1)
        return real(*args)

    executor.mcu.engine.run = counting
    wall = cpu = 0.0
    for _ in range(invokes):
        w, c = time.perf_counter(), time.process_time()
        it.invoke()
        wall += time.perf_counter() - w
        cpu += time.process_time() - c
    own = executor.last_runtime
    instructions = sum(r.instructions for r in it.last_run) + (own.instructions if own else 0)
    row = {"wall": wall / invokes, "cpu": cpu / invokes, "instructions": instructions,
           "entries": len(entries) / invokes, "runs_whole": executor.runs_whole(),
           "runtime_instructions": own.instructions if own else None,
           "runtime_cycles": own.cycles if own else None,
           "cycles": sum(r.cycles for r in it.last_run) + (own.cycles if own else 0)}
    it.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mobilenet_tiny_int8", "person_detect"])
    parser.add_argument("--cores", nargs="+", default=["cortex-m4", "cortex-m0plus"])
    parser.add_argument("--invokes", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = ["| model | core | mode | emulator entries / invoke | wall s / invoke | CPU s / invoke | "
             "M instr / wall s | M instr / CPU s | runtime instructions | runtime cycles | runtime % of cycles |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for name in args.models:
        path = find_model(name)
        if path is None:
            notes.append(f"{name}: not found (models/ or ../shared/models/tflm/), not measured")
            continue
        for core in args.cores:
            for whole in (False, True):
                r = measure(path, core, whole, args.invokes)
                mode = "whole invoke" if r["runs_whole"] else ("call by call" if not whole else
                                                               "call by call (did not plan)")
                share = (f"{100 * r['runtime_cycles'] / r['cycles']:.3f}" if r["runtime_cycles"] is not None
                         else "not measured")
                lines.append(f"| {name} | {core} | {mode} | {r['entries']:.0f} | {r['wall']:.3f} | {r['cpu']:.3f} | "
                             f"{r['instructions'] / r['wall'] / 1e6:.1f} | {r['instructions'] / r['cpu'] / 1e6:.1f} | "
                             f"{r['runtime_instructions'] if r['runtime_instructions'] is not None else '-'} | "
                             f"{r['runtime_cycles'] if r['runtime_cycles'] is not None else '-'} | {share} |")
                print(lines[-1], flush=True)
    body = results_md.section_header(THREADS) + "\n" + "\n".join(lines) + "\n" + \
        "".join(f"\n{n}" for n in notes)
    print(body)
    if args.write:
        results_md.write_section("vmcu-runtime", body)


if __name__ == "__main__":
    main()
