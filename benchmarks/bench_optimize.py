"""Arena optimizer (issue 6): head bytes before and after `micro-rt optimize`, as the
tflite-micro oracle reports them, with micro_rt's prediction and the lower bounds.

    python benchmarks/bench_optimize.py [--time-limit S] [--seeds N] [--write] [MODEL ...]

Default models: the int8 TFLM models TFLM loads with builtin ops (../shared/models/tflm) and
every models/*_int8*.tflite. Outputs of the optimized model are compared bit for bit with the
original's on seeded inputs, with micro_rt (when it has every kernel) and with the oracle.
--write puts the table into RESULTS.md (section optimizer).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

from micro_rt import oracle  # noqa: E402
from micro_rt.optimize import check_outputs, optimize  # noqa: E402

SHARED = ROOT.parent / "shared" / "models" / "tflm"
SHARED_INT8 = ["hello_world_int8", "micro_speech_quantized", "person_detect", "simple_add_model",
               "network_tester_model", "mobilenet_v2_quantized_1x3x224x224", "test_conv_model",
               "keyword_scrambled_8bit", "trained_lstm_int8", "dtln_noise_suppression"]


def default_models() -> list[Path]:
    shared = [SHARED / f"{n}.tflite" for n in SHARED_INT8 if (SHARED / f"{n}.tflite").exists()]
    return shared + sorted((ROOT / "models").glob("*_int8*.tflite"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = ap.parse_args()
    paths = [Path(p) for p in args.models] or default_models()
    rows, failures = [], 0
    table = ["| model | original head (oracle) | optimized head (oracle) | micro_rt predicted | "
             "lower bound, file order | lower bound, chosen order | best over all orders | "
             "reordered | placement | ratio orig/opt | outputs equal | time |",
             "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|---:|"]
    print("\n".join(table))
    for path in paths:
        data = path.read_bytes()
        start = time.monotonic()
        try:
            result = optimize(data, time_limit=args.time_limit)
            if result.unresolved_ops:          # micro_rt lacks kernels: let the oracle choose
                result = optimize(data, time_limit=args.time_limit, oracle_verify=True)
        except Exception as e:  # report and go on
            table.append(f"| {path.name} | error: {type(e).__name__}: {e} |")
            print(table[-1])
            failures += 1
            continue
        seconds = time.monotonic() - start
        arena = max(result.original_plan.required_bytes * 2, 1 << 16) + (1 << 16)
        before = oracle.allocations(data, arena)["head"]
        after = oracle.allocations(result.data, arena)["head"]
        check = check_outputs(data, result.data, seeds=range(args.seeds))
        equal = [f"{who} {'yes' if ok else 'NO'}" for who in ("oracle", "micro_rt")
                 if (ok := check[who]) is not None]
        ok = after <= before and all(check[w] is not False for w in ("oracle", "micro_rt"))
        failures += not ok
        best = f"{result.order_bound}" + ("" if result.order_peak_exact else " (bound)")
        table.append(f"| {path.name} | {before} | {after} | {result.predicted_head} | "
                     f"{result.original_bound} | {result.chosen_bound} | {best} | "
                     f"{'yes' if result.reordered else 'no'} | {result.placement} | "
                     f"{before / after if after else 1:.3f} | {', '.join(equal)} | {seconds:.1f} s |")
        print(table[-1], flush=True)
        rows.append((path.name, before, after, after == result.predicted_head))
    total_before = sum(r[1] for r in rows)
    total_after = sum(r[2] for r in rows)
    improved = sum(r[2] < r[1] for r in rows)
    predicted = sum(r[3] for r in rows)
    summary = (f"{len(rows)} models: {improved} smaller, none larger; the oracle's optimized head "
               f"equals micro_rt's prediction on {predicted} of {len(rows)}; sum of heads "
               f"{total_before} B -> {total_after} B." if not failures else
               f"{failures} model(s) failed (larger head, differing outputs or errors).")
    print(summary)
    if args.write:
        results_md.write_section("optimizer", results_md.section_header(THREADS) + "\n" +
                                 "\n".join(table) + "\n\n" + summary)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
