"""Host invoke time with numpy's BLAS thread pool capped during invoke (micro_rt's default,
`blas_threads=1`) and left alone (`blas_threads=None`), against tflite-micro, on an idle and
on a busy machine (one busy-looping process per core, started and stopped here).

    python benchmarks/bench_blas_threads.py [--runs N] [--write]

Prints a markdown table; with --write, writes it into its own section of RESULTS.md.
This is the one benchmark that does not pin BLAS threads (unpinned-blas-on-purpose): the
thread pool is what it measures.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from micro_rt import Interpreter
from micro_rt.inputs import random_inputs
from micro_rt import oracle
from results_md import write_section

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models" / "tflm"
MODELS = [ROOT / "models" / n for n in ("residual_block_f32.tflite", "residual_block_int8.tflite",
                                        "mobilenet_tiny_f32.tflite", "conv_variants_f32.tflite",
                                        "fully_connected_int8.tflite")]
MODELS += [SHARED / n for n in ("person_detect.tflite", "mobilenet_v2_quantized_1x3x224x224.tflite")]


def _burn(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x += 1


def _time(runners: dict, inputs: list, runs: int) -> dict:
    for it in runners.values():
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
    times = {name: [] for name in runners}
    order = list(runners)
    for run in range(runs):         # interleaved, in a rotating order, so load and cache hit all alike
        for name in order[run % len(order):] + order[:run % len(order)]:
            start = time.perf_counter()
            runners[name].invoke()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def measure(path: Path, runs: int) -> dict:
    data = path.read_bytes()
    capped = Interpreter.from_bytes(data, target="host64")
    free = Interpreter.from_bytes(data, target="host64", blas_threads=None)
    tflm = oracle.interpreter(data, max(capped.arena_required_bytes() * 2, 1 << 16))
    return _time({"capped": capped, "free": free, "tflm": tflm}, random_inputs(capped, 0), runs)


def table(rows: list) -> str:
    lines = ["| machine | model | micro_rt, BLAS capped to 1 (default) | micro_rt, BLAS threads "
             "left alone | tflite-micro | ratio capped / tflm | ratio left alone / tflm |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for load, name, t in rows:
        lines.append(f"| {load} | {name} | {t['capped'] * 1e3:.3f} ms | {t['free'] * 1e3:.3f} ms | "
                     f"{t['tflm'] * 1e3:.3f} ms | {t['capped'] / t['tflm']:.2f} | "
                     f"{t['free'] / t['tflm']:.2f} |")
    return "\n".join(lines)


def reading(rows: list) -> str:
    """The largest effect of the cap in each condition, from the rows above."""
    parts = []
    for load in ("idle", "busy"):
        mine = [(t["free"] / t["capped"], name) for l, name, t in rows if l == load]
        gain, name = max(mine)
        loss, lname = min(mine)
        parts.append(f"{load}: leaving the pool alone is up to {gain:.1f}x slower ({name}) and at "
                     f"best {1 / loss:.2f}x as fast ({lname})")
    return "Reading: " + "; ".join(parts) + "."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = parser.parse_args()
    if not oracle.available():
        print("tflite-micro is not installed: pip install tflite-micro", file=sys.stderr)
        return 1
    from threadpoolctl import threadpool_info
    blas = [f"{lib['internal_api']} {lib['version']}, {lib['num_threads']} threads"
            for lib in threadpool_info() if lib["user_api"] == "blas"]
    models = [p for p in MODELS if p.exists()]
    rows = []
    for load in ("idle", "busy"):
        stop = multiprocessing.Event()
        burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True)
                   for _ in range(os.cpu_count() or 1)] if load == "busy" else []
        for p in burners:
            p.start()
        try:
            for path in models:
                runs = max(5, args.runs // 10) if path.stat().st_size > 1_000_000 else args.runs
                rows.append((load, path.name, measure(path, runs)))
                print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
        finally:
            stop.set()
            for p in burners:
                p.join()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"`python benchmarks/bench_blas_threads.py --runs {args.runs}`, {when}: {platform.machine()}, {os.cpu_count()} cores, "
            f"python {platform.python_version()}, numpy {np.__version__} ({'; '.join(blas)}). "
            "Median of invokes interleaved in rotating order; \"idle\" = no load added by the "
            "script (the machine is shared, so not truly idle), \"busy\" = one busy-looping "
            "process per core running beside the benchmark. micro_rt caps numpy's BLAS pool to one thread during "
            "invoke (`blas_threads=1`, the default) and restores it after; `blas_threads=None` "
            "leaves the pool alone.\n\n" + table(rows) + "\n\n" + reading(rows) + "\n")
    print(text)
    if args.write:
        write_section("blas-threads", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
