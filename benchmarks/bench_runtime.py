"""The whole inference on the virtual MCU, one emulator entry per invoke (issues 14, 21): emulation
speed and the device runtime's own part.

    python benchmarks/bench_runtime.py [--models mobilenet_tiny_int8 person_detect]
                                       [--cores cortex-m4 cortex-m0plus] [--invokes 3] [--write]

For each model (models/NAME.tflite, else ../shared/models/tflm/NAME.tflite, skipped with a note
when absent) and core, the model runs the same seeded input `--invokes` times after one warm-up
invoke (Unicorn's translation cache and the block-cost cache warm). Reported: wall and CPU
seconds per invoke, emulated M instructions per wall and per CPU second (all instructions: the
operators' and the runtime's; on a shared machine CPU seconds are the steadier figure),
emulator entries per invoke (one, plus one per host entry's trap); and the runtime's own
instructions and cycles (its line in `profile`).
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


def measure(path: Path, core: str, invokes: int) -> dict:
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    it = Interpreter.from_file(str(path), target=core, kernels="cmsis-nn", emulate=True)
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
    row = {"wall": wall / invokes, "cpu": cpu / invokes,
           "instructions": sum(r.instructions for r in it.last_run) + own.instructions,
           "entries": len(entries) / invokes, "runtime_instructions": own.instructions,
           "runtime_cycles": own.cycles, "cycles": sum(r.cycles for r in it.last_run) + own.cycles}
    it.close()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["mobilenet_tiny_int8", "person_detect"])
    parser.add_argument("--cores", nargs="+", default=["cortex-m4", "cortex-m0plus"])
    parser.add_argument("--invokes", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    lines = ["| model | core | emulator entries / invoke | wall s / invoke | CPU s / invoke | "
             "M instr / wall s | M instr / CPU s | runtime instructions | runtime cycles | runtime % of cycles |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for name in args.models:
        path = find_model(name)
        if path is None:
            notes.append(f"{name}: not found (models/ or ../shared/models/tflm/), not measured")
            continue
        for core in args.cores:
            r = measure(path, core, args.invokes)
            share = 100 * r["runtime_cycles"] / r["cycles"]
            lines.append(f"| {name} | {core} | {r['entries']:.0f} | {r['wall']:.3f} | {r['cpu']:.3f} | "
                         f"{r['instructions'] / r['wall'] / 1e6:.1f} | {r['instructions'] / r['cpu'] / 1e6:.1f} | "
                         f"{r['runtime_instructions']} | {r['runtime_cycles']} | {share:.3f} |")
            print(lines[-1], flush=True)
    body = results_md.section_header(THREADS) + "\n" + "\n".join(lines) + "\n" + \
        "".join(f"\n{n}" for n in notes)
    print(body)
    if args.write:
        results_md.write_section("vmcu-runtime", body)


if __name__ == "__main__":
    main()
