"""micro_rt's latency on catalog boards against every published measurement whose kernels are
CMSIS-NN (issue 20: how far a board answer is from silicon, per board and per core).

    python benchmarks/bench_calibration.py --models DIR [--write]

The measurements are cortexm/board_data/measurements/published_latency.json: MLPerf Tiny
performance-mode results (median throughput over back-to-back inferences). Each entry's
`validation.scope` decides its place:
- `in`: CMSIS-NN's kernels ran, under TFLM or another runtime (microTVM): a validation row;
- `apart`: CMSIS-NN is named, but the software or the measurement is not what micro_rt emulates:
  listed in a table of its own with the reason, not counted;
- `other-kernels`: the runtime's own kernels: not listed.
DIR holds MLPerf Tiny's reference models as mlcommons/tiny publishes them
(benchmark/training/*/trained_models/): ad01_int8.tflite, kws_ref_model.tflite,
pretrainedResnet_quant.tflite, vww_96_int8.tflite; they are not shipped with micro_rt.

Held-out discipline (what these numbers may and may not be used for):
- No cycle-model or board parameter is fitted to these measurements. A parameter comes from a
  document (reference manual, datasheet, TRM, vendor HAL code) cited in the code or the board
  file; where the documents are silent the board file says which reading was taken and why.
- A change of the model cites its document in its commit and where the parameter lives.
- Each row says whether its figure was seen while the cycle model was last changed
  (`validation.seen` in the measurements file): a row added after a change is a true held-out
  check; a seen row is only a regression check of that change.

Each model runs once on the virtual MCU as `micro-rt profile MODEL --board B --clock <the
published clock>` does. --write replaces the `calibration` section of RESULTS.md and writes
cortexm/board_data/measurements/validation.json, the per-board summary every board answer
prints (micro_rt.cortexm.validation); that file carries the fingerprint of the code it measured
(firmware, cycle model, board files), and a test fails when the code moves on without a re-run.
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENTS = ROOT / "cortexm" / "board_data" / "measurements" / "published_latency.json"
MODEL_FILES = {"anomaly_detection": "ad01_int8.tflite", "keyword_spotting": "kws_ref_model.tflite",
               "image_classification": "pretrainedResnet_quant.tflite",
               "visual_wake_words": "vww_96_int8.tflite"}
LISTED = ("in", "apart")


def measure(models: Path) -> list[dict]:
    """One row per listed measurement; each (board, clock, model) is emulated once."""
    from micro_rt.profile import emulated_profile
    from micro_rt.run_setup import make_setup
    entries = [e for e in json.loads(MEASUREMENTS.read_text())["entries"]
               if e["validation"]["scope"] in LISTED]
    estimates: dict[tuple, dict] = {}
    rows = []
    for e in entries:
        path = models / MODEL_FILES[e["benchmark"]]
        if not path.exists():
            raise SystemExit(f"{path} missing: --models must hold {', '.join(MODEL_FILES.values())}")
        key = (e["board"], e["clock_hz"], path.name)
        if key not in estimates:
            setup = make_setup(board=e["board"], clock_hz=e["clock_hz"])
            report, it = emulated_profile(path.read_bytes(), setup.target, setup.clock_hz,
                                          memory_system=setup.mcu_memory_system())
            it.close()
            if not report["complete"]:
                raise SystemExit(f"{path.name} on {e['board']}: the profile is incomplete "
                                 f"({report['ops_not_counted']})")
            estimates[key] = {"core": setup.target, "ms": report["total_ms"],
                              "instructions": report["total_instructions"],
                              "cycles": report["total_cycles"]}
        est = estimates[key]
        rows.append({"board": e["board"], "core": est["core"], "benchmark": e["benchmark"],
                     "model": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()[:16],
                     "clock_mhz": e["clock_hz"] / 1e6, "scope": e["validation"]["scope"],
                     "reason": e["validation"]["reason"], "seen": e["validation"].get("seen", False),
                     "software": software(e), "published_ms": e["latency_ms"],
                     "ours_ms": est["ms"], "ours_cycles": est["cycles"],
                     "ours_instructions": est["instructions"],
                     "error": est["ms"] / e["latency_ms"] - 1, "source": e["source"]["name"]})
        print(f"{e['board']:<15}{e['benchmark']:<22}{e['validation']['scope']:<6}published "
              f"{e['latency_ms']:>9.3f} ms  micro_rt {est['ms']:>9.3f} ms  ({rows[-1]['error']:+.1%})",
              flush=True)
    return rows


def software(e: dict) -> str:
    """What the measurement ran: runtime and kernel library as the submission names them."""
    libraries = e["libraries"] if e["libraries"] and e["libraries"] != e["runtime"] else ""
    if e["tflm_with_cmsis_nn"] and not libraries:
        libraries = "CMSIS-NN"
    return f"{e['runtime']} + {libraries}" if libraries else e["runtime"]


def summary(rows: list[dict], key: str) -> dict[str, dict]:
    """In-scope rows grouped by `key` (board or core): count, error range, mean |error|."""
    out: dict[str, dict] = {}
    for r in rows:
        if r["scope"] != "in":
            continue
        g = out.setdefault(r[key], {"errors": [], "boards": set(), "core": r["core"]})
        g["errors"].append(r["error"])
        g["boards"].add(r["board"])
    return {k: {"measurements": len(g["errors"]), "min_error": min(g["errors"]),
                "max_error": max(g["errors"]),
                "mean_abs_error": sum(abs(x) for x in g["errors"]) / len(g["errors"]),
                "boards": sorted(g["boards"]), "core": g["core"]}
            for k, g in sorted(out.items())}


def _row(r: dict) -> str:
    return (f"| {r['board']} | {r['core']} | {r['benchmark']} | {r['software']} | "
            f"{r['clock_mhz']:g} | {r['published_ms']:.3f} | {r['ours_ms']:.3f} | "
            f"{r['error']:+.1%} | {'yes' if r['seen'] else 'no'} | {r['source']} |")


COLUMNS = ("board", "core", "benchmark", "software measured", "MHz", "published ms", "micro_rt ms",
           "error", "seen", "source")
NUMERIC = {"MHz", "published ms", "micro_rt ms", "error"}


def _header(columns: tuple[str, ...]) -> list[str]:
    return ["| " + " | ".join(columns) + " |",
            "|" + "|".join("---:" if c in NUMERIC else "---" for c in columns) + "|"]


def section(rows: list[dict]) -> str:
    lines = ["## Validation: board latency against published CMSIS-NN measurements (issue 20)", "",
             results_md.section_header(THREADS),
             "Every published inference measurement on a catalog board whose kernels are CMSIS-NN "
             "(cortexm/board_data/measurements/published_latency.json, each with its source and "
             "the reason for its scope). micro_rt: one inference of its CMSIS-NN-style C kernels "
             "and its device runtime on the virtual MCU with the board's flash interface at the "
             "published clock (`micro-rt profile MODEL --board B --clock F`). error = micro_rt / "
             "published - 1. No parameter is fitted to these figures; `seen` says whether the "
             "figure was looked at while the cycle model was last changed (then the row checks "
             "that change, it is not held out).", "", "### In scope (counted)", "",
             *_header(COLUMNS)]
    lines += [_row(r) for r in rows if r["scope"] == "in"]
    for key in ("board", "core"):
        lines += ["", f"Per {key}:", "", f"| {key} | measurements | error range | mean abs error |",
                  "|---|---:|---|---:|"]
        for name, s in summary(rows, key).items():
            lines.append(f"| {name} | {s['measurements']} | {s['min_error']:+.1%} to "
                         f"{s['max_error']:+.1%} | {s['mean_abs_error']:.1%} |")
    apart = [r for r in rows if r["scope"] == "apart"]
    if apart:
        lines += ["", "### Shown apart (not counted): software micro_rt does not emulate", "",
                  *_header((*COLUMNS, "why apart"))]
        lines += [_row(r) + f" {r['reason']} |" for r in apart]
    models = sorted({(r["model"], r["sha256"]) for r in rows})
    lines += ["", "Models (sha256 prefix; mlcommons/tiny, benchmark/training/*/trained_models/): "
              + ", ".join(f"{m} {h}" for m, h in models) + "."]
    return "\n".join(lines)


def write_summary(rows: list[dict]) -> Path:
    from micro_rt.cortexm.validation import SUMMARY_PATH, code_fingerprint
    seen = sorted({r["source"] for r in rows if r["scope"] == "in" and r["seen"]})
    data = {"schema": 1,
            "description": "Written by benchmarks/bench_calibration.py --write: micro_rt's board "
                           "latency against the in-scope published CMSIS-NN measurements, per "
                           "board and per core (error = micro_rt / published - 1). Read by "
                           "micro_rt.cortexm.validation for the validation status of every board "
                           "answer.",
            "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "code_fingerprint": code_fingerprint(),
            "benchmarks": sorted({r["benchmark"] for r in rows if r["scope"] == "in"}),
            "seen_sources": seen,
            "boards": summary(rows, "board"), "cores": summary(rows, "core")}
    SUMMARY_PATH.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {SUMMARY_PATH}")
    return SUMMARY_PATH


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, default=os.environ.get("MICRO_RT_MLPERF_MODELS"),
                        help="directory with the MLPerf Tiny reference models (or $MICRO_RT_MLPERF_MODELS)")
    parser.add_argument("--write", action="store_true",
                        help="write the table into RESULTS.md and the per-board summary")
    args = parser.parse_args()
    if args.models is None:
        parser.error("--models DIR (or $MICRO_RT_MLPERF_MODELS) is required")
    rows = measure(args.models)
    body = section(rows)
    print(body)
    if args.write:
        results_md.write_section("calibration", body)
        write_summary(rows)


if __name__ == "__main__":
    main()
