"""Invoke time of micro_rt's host kernels against the tflite-micro pip runtime (TFLM's C++
reference kernels), measured in one process, interleaved, median of many runs.

    python benchmarks/bench_host_kernels.py [--runs N] [--write]

Prints a table of median invoke times and the ratio micro_rt / tflite-micro (goal <= 0.5);
--write puts it in RESULTS.md (section host-kernels). BLAS runs on one thread (results_md).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from micro_rt.inputs import random_inputs  # noqa: E402
from micro_rt import oracle  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models" / "tflm"
REAL_MODELS = ["person_detect.tflite", "micro_speech_quantized.tflite",
               "mobilenet_v2_quantized_1x3x224x224.tflite", "keyword_scrambled_8bit.tflite",
               "micro_speech_lstm.tflite", "dtln_noise_suppression.tflite"]


def models() -> list[Path]:
    found = [SHARED / n for n in REAL_MODELS if (SHARED / n).exists()]
    return found + sorted((ROOT / "models").glob("*.tflite"))


def time_model(path: Path, runs: int) -> tuple[float, float]:
    data = path.read_bytes()
    ours, theirs = oracle.paired(data)
    for _ in range(2):                     # warm up both
        oracle.invoke_both(ours, theirs, random_inputs(ours, 0))
    a, b = [], []
    for _ in range(runs):                  # interleaved so drift hits both alike
        t0 = time.perf_counter()
        ours.invoke()
        t1 = time.perf_counter()
        theirs.invoke()
        t2 = time.perf_counter()
        a.append(t1 - t0)
        b.append(t2 - t1)
    return statistics.median(a), statistics.median(b)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = parser.parse_args()
    if not oracle.available():
        print("tflite-micro is not installed: pip install tflite-micro", file=sys.stderr)
        return 1
    rows = []
    for path in models():
        if path.name.startswith("custom_"):     # needs the user's own kernel
            continue
        runs = max(3, args.runs // 10) if path.stat().st_size > 1_000_000 else args.runs
        ours, theirs = time_model(path, runs)
        rows.append((path.name, ours, theirs, ours / theirs))
        print(f"{path.name}: {ours * 1e3:.3f} ms vs {theirs * 1e3:.3f} ms", flush=True)
    header = "| model | micro_rt invoke | tflite-micro invoke | ratio |\n|---|---:|---:|---:|"
    lines = [header] + [f"| {n} | {a * 1e3:.3f} ms | {b * 1e3:.3f} ms | {r:.2f} |" for n, a, b, r in rows]
    met = sum(r <= 0.5 for *_, r in rows)
    body = (results_md.section_header(THREADS) + "\nMedian of interleaved invokes, both runtimes "
            "in one process on the same inputs.\n\n" + "\n".join(lines) +
            f"\n\nGoal ratio <= 0.5 met on {met} of {len(rows)} models.")
    print(body)
    if args.write:
        results_md.write_section("host-kernels", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
