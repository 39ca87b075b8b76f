"""Load and plan time on long operator chains (issue 10): micro_rt / tflite-micro.

    python benchmarks/bench_planner.py [--ops 2048 8192 16384 32768] [--runs 3] [--write]

Each model is a chain of RELU operators on float32[1, 8] tensors (one tensor per step, so
the planner sees as many buffers as operators). Timed: constructing the interpreter from
the file (read, validate, init and prepare every kernel, plan the arena), micro_rt's
`Interpreter.from_file` against tflite-micro's `runtime.Interpreter.from_file`, in the same
process, interleaved, median of `--runs`. Both report the same head (checked). `--write`
writes the table into this benchmark's section of benchmarks/RESULTS.md.
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from micro_rt import Interpreter  # noqa: E402
from micro_rt import oracle  # noqa: E402
from micro_rt.builder import ModelBuilder  # noqa: E402

def relu_chain(n_ops: int) -> bytes:
    b = ModelBuilder("relu chain")
    tensors = [b.add_tensor(f"t{i}", [1, 8], "FLOAT32") for i in range(n_ops + 1)]
    for i in range(n_ops):
        b.add_operator("RELU", [tensors[i]], [tensors[i + 1]])
    b.inputs, b.outputs = [tensors[0]], [tensors[-1]]
    return b.build()


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(n_ops: int, runs: int, folder: Path) -> dict:
    path = folder / f"chain_{n_ops}.tflite"
    path.write_bytes(relu_chain(n_ops))
    runtime = oracle.tflm_runtime()
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(_time(lambda: Interpreter.from_file(path, target="host64")))
        theirs.append(_time(lambda: runtime.Interpreter.from_file(str(path))))
    head = Interpreter.from_file(path, target="host64").plan.head_bytes
    tflm_head = oracle.allocations(path.read_bytes(), len(path.read_bytes()) * 10)["head"]
    if head != tflm_head:
        raise SystemExit(f"{n_ops} ops: micro_rt head {head} != tflite-micro head {tflm_head}")
    return {"ops": n_ops, "bytes": path.stat().st_size, "micro_rt": statistics.median(ours),
            "tflite_micro": statistics.median(theirs), "head": head}


def table(rows: list[dict]) -> str:
    lines = ["| operators | file bytes | micro_rt load+plan | tflite-micro load+plan | ratio | head (both) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['ops']} | {r['bytes']} | {r['micro_rt']:.2f} s | {r['tflite_micro']:.2f} s | "
                     f"{r['micro_rt'] / r['tflite_micro']:.2f} | {r['head']} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, nargs="*", default=[2048, 8192, 16384, 32768])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="replace the section in RESULTS.md")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in args.ops:
            rows.append(measure(n, args.runs, Path(folder)))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    text = (results_md.section_header(THREADS) +
            "\nInterpreter construction from the file (read, validate, init and prepare each kernel, "
            "plan the arena) for a chain of RELU operators on float32[1, 8], micro_rt vs "
            "tflite-micro in one process, interleaved, median of the runs; both give the same "
            "head.\n\n" + table(rows))
    print("\n" + text)
    if args.write:
        results_md.write_section("planner-chains", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
