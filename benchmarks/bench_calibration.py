"""micro_rt's latency on catalog boards against published measurements of TFLM with CMSIS-NN on
the same boards (issue 14: how far the cycle model is from silicon, per core).

    python benchmarks/bench_calibration.py --models DIR [--write]

The measurements are cortexm/board_data/measurements/published_latency.json: MLPerf Tiny
performance-mode results (median throughput over back-to-back inferences), of which only the
entries marked `tflm_with_cmsis_nn` are compared (the other runtimes are not what micro_rt
models). DIR holds MLPerf Tiny's reference models as mlcommons/tiny publishes them
(benchmark/training/*/trained_models/): ad01_int8.tflite, kws_ref_model.tflite,
pretrainedResnet_quant.tflite, vww_96_int8.tflite; they are not shipped with micro_rt.

Each model runs once on the virtual MCU as `micro-rt profile MODEL --board B --clock <the
published clock>` does. No parameter of the cycle model is fitted to these figures: every row
is a check on results the model was not calibrated on. The published latency includes what
micro_rt does not simulate yet (TFLM's interpreter between operators, the benchmark harness),
and the submitters' CMSIS-NN versions are older than the algorithms micro_rt's kernels follow.
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENTS = ROOT / "cortexm" / "board_data" / "measurements" / "published_latency.json"
MODEL_FILES = {"anomaly_detection": "ad01_int8.tflite", "keyword_spotting": "kws_ref_model.tflite",
               "image_classification": "pretrainedResnet_quant.tflite",
               "visual_wake_words": "vww_96_int8.tflite"}


def measure(models: Path) -> list[dict]:
    from micro_rt.profile import emulated_profile
    from micro_rt.run_setup import make_setup
    entries = json.loads(MEASUREMENTS.read_text())["entries"]
    rows = []
    for e in entries:
        if not e["tflm_with_cmsis_nn"]:
            continue
        path = models / MODEL_FILES[e["benchmark"]]
        if not path.exists():
            raise SystemExit(f"{path} missing: --models must hold {', '.join(MODEL_FILES.values())}")
        setup = make_setup(board=e["board"], clock_hz=e["clock_hz"])
        report, it = emulated_profile(path.read_bytes(), setup.target, setup.clock_hz,
                                      flash_wait_states=setup.flash_wait_states,
                                      memory_system=setup.mcu_memory_system())
        it.close()
        if not report["complete"]:
            raise SystemExit(f"{path.name} on {e['board']}: the profile is incomplete "
                             f"({report['ops_not_counted']})")
        rows.append({"board": e["board"], "core": setup.target, "benchmark": e["benchmark"],
                     "model": path.name,
                     "sha256": hashlib.sha256(path.read_bytes()).hexdigest()[:16], "clock_mhz": e["clock_hz"] / 1e6,
                     "published_ms": e["latency_ms"], "ours_ms": report["total_ms"],
                     "ratio": report["total_ms"] / e["latency_ms"],
                     "source": e["source"]["name"]})
        print(f"{e['board']:<15}{e['benchmark']:<22}published {e['latency_ms']:>9.3f} ms  "
              f"micro_rt {report['total_ms']:>9.3f} ms  ({rows[-1]['ratio'] - 1:+.1%})", flush=True)
    return rows


def section(rows: list[dict]) -> str:
    lines = ["## Latency against published TFLM + CMSIS-NN measurements (issue 14)", "",
             results_md.section_header(THREADS),
             "Published: MLPerf Tiny performance-mode medians on the same board and clock "
             "(cortexm/board_data/measurements/published_latency.json, each with its source); "
             "micro_rt: one inference of its CMSIS-NN-style C kernels on the virtual MCU with the "
             "board's flash interface (`micro-rt profile MODEL --board B`). No cycle-model "
             "parameter was fitted to these figures: every row is a held-out check.", "",
             "| board | core | benchmark (model) | MHz | published ms | micro_rt ms | micro_rt / published |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['board']} | {r['core']} | {r['benchmark']} ({r['model']}) | "
                     f"{r['clock_mhz']:g} | {r['published_ms']:.3f} | {r['ours_ms']:.3f} | "
                     f"{r['ratio']:.3f} |")
    lines += ["", "| core | boards | rows | error range | mean abs error |", "|---|---|---:|---|---:|"]
    for core in sorted({r["core"] for r in rows}):
        mine = [r for r in rows if r["core"] == core]
        errors = [r["ratio"] - 1 for r in mine]
        boards = ", ".join(sorted({r["board"] for r in mine}))
        lines.append(f"| {core} | {boards} | {len(mine)} | {min(errors):+.1%} to {max(errors):+.1%} | "
                     f"{sum(abs(x) for x in errors) / len(errors):.1%} |")
    models = sorted({(r["model"], r["sha256"]) for r in rows})
    lines += ["", "Models (sha256 prefix; mlcommons/tiny, benchmark/training/*/trained_models/): "
              + ", ".join(f"{m} {h}" for m, h in models) + ".",
              "", "Sources: " + "; ".join(sorted({r["source"] for r in rows})) + "."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=os.environ.get("MICRO_RT_MLPERF_MODELS"),
                        help="directory with the MLPerf Tiny reference models (or $MICRO_RT_MLPERF_MODELS)")
    parser.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = parser.parse_args()
    if args.models is None:
        parser.error("--models DIR (or $MICRO_RT_MLPERF_MODELS) is required")
    body = section(measure(args.models))
    print(body)
    if args.write:
        results_md.write_section("calibration", body)


if __name__ == "__main__":
    main()
