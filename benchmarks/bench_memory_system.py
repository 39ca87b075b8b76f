"""Emulation speed of whole inferences with the memory-system model on (issue 14).

    python benchmarks/bench_memory_system.py [--models person_detect mobilenet_v2_quantized_1x3x224x224]
                                             [--cores ...] [--wait-states 0 5] [--reference-models person_detect]
                                             [--write]

For each model, core and flash wait-state count (the core's default flash interface,
memory_system.default_memory_system): build the interpreter on the virtual MCU, feed a seeded
random input, invoke (one firmware call of the device runtime per invoke, what `profile` runs;
its instructions and cycles include the runtime's own). Models up to --big-macs MACs are invoked
twice and the second invoke is timed (Unicorn's translation cache warm); bigger ones once.

Reports emulated instructions per second two ways: per wall-clock second, and per second of
this process's CPU time (time.process_time). On a machine shared with other jobs the wall
clock counts their time too; the load average is printed with the table. The goal is at least
150 M instructions/s in every configuration (aim: 300).

The default path sees flash data loads through the native flash data port and prices cycles
natively (cortexm/native.py). --reference-models also runs those models with the reference path
at the wait-state counts above 0 (a memory hook on every access and Python pricing:
flash_port=False and HookSet.account off), which is what the port replaced, and checks that the
cycles are the same. --write puts the table into RESULTS.md (section vmcu-memory-speed).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"
CORES = ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"]
GOAL, AIM = 150, 300          # M instructions/s


def _model_path(m: str) -> Path:
    return Path(m) if m.endswith(".tflite") else SHARED / f"{m}.tflite"


def run(path: Path, core: str, wait_states: int, big_macs: int, reference: bool = False) -> dict:
    """One configuration: the timed invoke's instructions, cycles, wall and CPU seconds."""
    from micro_rt import Interpreter
    from micro_rt.cortexm.native import HookSet
    from micro_rt.inputs import random_inputs
    saved = HookSet.account
    if reference:             # Python pricing (cycles.account) instead of the native one
        HookSet.account = lambda *args, **kw: None
    try:
        it = Interpreter.from_file(str(path), target=core, kernels="cmsis-nn", emulate=True,
                                   mcu_options={"flash_wait_states": wait_states,
                                                "flash_port": not reference})
        invokes = 0
        while True:
            for i, x in enumerate(random_inputs(it, 0)):
                it.set_input(x, i)
            wall, cpu = time.perf_counter(), time.process_time()
            it.invoke()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            invokes += 1
            macs = sum(r.macs for r in it.last_run)
            if invokes == 2 or macs > big_macs:
                break
        instructions = sum(r.instructions for r in it.last_run) + it.executor.last_runtime.instructions
        cycles = sum(r.cycles for r in it.last_run) + it.executor.last_runtime.cycles
        it.close()
    finally:
        HookSet.account = saved
    return dict(model=path.stem, core=core, wait_states=wait_states, reference=reference,
                invokes=invokes, instructions=instructions, cycles=cycles, wall_s=wall, cpu_s=cpu,
                mips_wall=instructions / wall / 1e6, mips_cpu=instructions / cpu / 1e6)


def markdown(results: list, load: tuple) -> str:
    lines = [results_md.section_header(THREADS),
             f"Load average (1 min) before / after the runs: {load[0]:.1f} / {load[1]:.1f} on "
             f"{os.cpu_count()} CPUs: the wall-clock rate counts other jobs' time too; the CPU-time "
             "rate is this process's own.", "",
             "Path: `port` = flash data loads through the native flash data port, cycles priced "
             "natively (the default); `reference` = a memory hook on every access and Python "
             "pricing (what the port replaced; same cycles). Every run is one firmware call of the "
             "device runtime per invoke (what `profile` runs; the runtime's own instructions and "
             "cycles included).", "",
             f"| model | core | wait states | path | invokes | emulated instructions | cycles | "
             f"wall s | M instr/s (wall) | CPU s | M instr/s (CPU) | >= {GOAL} M/s (CPU) |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        ok = "yes" if r["mips_cpu"] >= GOAL else "no"
        lines.append(f"| {r['model']} | {r['core']} | {r['wait_states']} | "
                     f"{'reference' if r['reference'] else 'port'} | {r['invokes']} | "
                     f"{r['instructions']:,} | {r['cycles']:,} | {r['wall_s']:.2f} | "
                     f"{r['mips_wall']:.0f} | {r['cpu_s']:.2f} | {r['mips_cpu']:.0f} | {ok} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["person_detect", "mobilenet_v2_quantized_1x3x224x224"])
    ap.add_argument("--cores", nargs="+", default=CORES)
    ap.add_argument("--wait-states", nargs="+", type=int, default=[0, 5])
    ap.add_argument("--reference-models", nargs="*", default=["person_detect"],
                    help="also run these with the memory hook and Python pricing (wait states > 0)")
    ap.add_argument("--big-macs", type=int, default=50_000_000,
                    help="models with more MACs are invoked once (default 50M)")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    a = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    results = []
    for m in a.models:
        path = _model_path(m)
        for core in a.cores:
            for ws in a.wait_states:
                runs = [False] + ([True] if ws and path.stem in a.reference_models else [])
                for reference in runs:
                    r = run(path, core, ws, a.big_macs, reference)
                    results.append(r)
                    print(f"{r['model']} {core} ws={ws} {'reference' if reference else 'port'}: "
                          f"{r['instructions']:,} instr, {r['cycles']:,} cycles, wall {r['wall_s']:.2f} s "
                          f"({r['mips_wall']:.0f} M/s), CPU {r['cpu_s']:.2f} s ({r['mips_cpu']:.0f} M/s)",
                          flush=True)
                if runs[-1] and results[-1]["cycles"] != results[-2]["cycles"]:
                    print(f"error: {m} {core} ws={ws}: the port's cycles {results[-2]['cycles']:,} "
                          f"differ from the reference's {results[-1]['cycles']:,}", file=sys.stderr)
                    return 1
    table = markdown(results, (load0, os.getloadavg()[0]))
    print()
    print(table)
    if a.write:
        results_md.write_section("vmcu-memory-speed", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
