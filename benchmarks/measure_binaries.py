"""The published software itself on the virtual board: how much of a board answer's error is
micro_rt's cycle and memory model, and how much the software (issue 20).

    python benchmarks/measure_binaries.py MANIFEST.json [--write]

A published latency measures one binary: a runtime and its kernels, built one way. micro_rt's
`profile --board` prices micro_rt's own runtime and kernels, so its error against the figure
mixes two things: how its software differs from the one measured, and how its cycle and memory
model differs from the silicon. Running the measured software itself on the virtual board
separates them: its error is the model's alone (up to what the build could not reproduce, which
the manifest names).

The binaries are built OUTSIDE the project from a submission's published sources (the project
holds neither their sources, nor binaries, nor a script that builds them), each with a harness
of one's own that runs one inference and exits through semihosting:

    {"board": BOARD, "published_source": SOURCE NAME as in published_latency.json,
     "sources": {NAME: COMMIT, ...}, "compiler": "...", "flags": "...", "harness": "...",
     "not_reproduced": "...", "date": "YYYY-MM-DD", "timed": FUNCTION (one inference),
     "apps": [{"benchmark": BENCHMARK, "model": PATH.tflite (for micro_rt's estimate),
               "elf": PATH.elf, "build": "what this build sets (e.g. the flash interface)"}]}

Each binary runs under `micro-rt emulate --board BOARD` from its reset vector, its FUNCTION's one
call timed (cortexm/system/call_watch.py). Beside it: the published figure
(cortexm/board_data/measurements/published_latency.json, the row of that source and benchmark)
and micro_rt's own estimate (`profile MODEL --board BOARD --clock <the published clock>`).
--write keeps the figures in cortexm/board_data/measurements/published_binaries.json and the
table in RESULTS.md (section published-binaries). No parameter is fitted to them.
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MEASUREMENTS = ROOT / "cortexm" / "board_data" / "measurements"
PUBLISHED = MEASUREMENTS / "published_latency.json"
OUT = MEASUREMENTS / "published_binaries.json"
MAX_CYCLES = 5_000_000_000


def _published(source: str, benchmark: str) -> dict:
    rows = [e for e in json.loads(PUBLISHED.read_text())["entries"]
            if e["source"]["name"] == source and e["benchmark"] == benchmark]
    if len(rows) != 1:
        raise SystemExit(f"{len(rows)} rows of published_latency.json for {source!r}, {benchmark}: one expected")
    return rows[0]


def _emulated(elf: Path, board, timed: str) -> dict:
    from micro_rt.cortexm.system.machine import EmulateRequest
    from micro_rt.cortexm.system.run import run_firmware
    report = run_firmware(EmulateRequest(elf, board=board, timed=(timed,), max_cycles=MAX_CYCLES))
    calls = report.timed_calls.get(timed, [])
    if not report.ending.ok or report.exit_code != 0 or len(calls) != 1:
        raise SystemExit(f"{elf}: {report.message}; {len(calls)} call(s) of {timed}, one expected")
    return {"cycles": calls[0].cycles, "instructions": calls[0].instructions,
            "flash_interface": report.memory_at_end, "notes": report.notes}


def _estimate(model: Path, board: str, clock_hz: int) -> dict:
    from micro_rt.profile import emulated_profile
    from micro_rt.run_setup import make_setup
    setup = make_setup(board=board, clock_hz=clock_hz)
    report, it = emulated_profile(model.read_bytes(), setup.target, setup.clock_hz,
                                  memory_system=setup.mcu_memory_system())
    it.close()
    return {"cycles": report["total_cycles"], "instructions": report["total_instructions"]}


def measure(manifest: dict) -> dict:
    from micro_rt.cortexm.boards import load_board
    board = load_board(manifest["board"])
    rows = []
    for app in manifest["apps"]:
        elf, model = Path(app["elf"]), Path(app["model"])
        published = _published(manifest["published_source"], app["benchmark"])
        clock = published["clock_hz"]
        if clock != board.clock.default_hz:
            raise SystemExit(f"{app['benchmark']}: published at {clock} Hz, the board's clock is "
                             f"{board.clock.default_hz}: emulate quotes cycles at the board's")
        ran, ours = _emulated(elf, board, manifest["timed"]), _estimate(model, board.name, clock)
        rows.append({"benchmark": app["benchmark"], "build": app["build"],
                     "elf_sha256": hashlib.sha256(elf.read_bytes()).hexdigest()[:16],
                     "model": model.name, "model_sha256": hashlib.sha256(model.read_bytes()).hexdigest()[:16],
                     "scope": published["validation"]["scope"],
                     "published_cycles": published["cycles_per_inference"],
                     "binary_cycles": ran["cycles"], "binary_instructions": ran["instructions"],
                     "flash_interface": ran["flash_interface"],
                     "micro_rt_cycles": ours["cycles"], "micro_rt_instructions": ours["instructions"]})
        r = rows[-1]
        print(f"{r['benchmark']:<22}{r['build']:<34} published {r['published_cycles']:>11,}  binary "
              f"{r['binary_cycles']:>11,} ({r['binary_cycles'] / r['published_cycles'] - 1:+.1%})  "
              f"micro_rt {r['micro_rt_cycles']:>11,} ({r['micro_rt_cycles'] / r['published_cycles'] - 1:+.1%})",
              flush=True)
    keep = ("board", "published_source", "sources", "compiler", "flags", "harness", "not_reproduced",
            "date", "timed")
    return {**{k: manifest[k] for k in keep}, "measured_with": f"micro-rt emulate ELF --board {board.name}",
            "rows": rows}


def _pct(x: float) -> str:
    return f"{x:+.1%}"


def section(data: dict) -> str:
    lines = ["## The published software itself on the virtual board (issue 20)", "",
             results_md.section_header(THREADS), "",
             f"Binaries built outside the project from the sources of *{data['published_source']}* "
             f"({', '.join(f'{k} {v}' for k, v in data['sources'].items())}), compiler {data['compiler']}, "
             f"flags `{data['flags']}`; harness: {data['harness']}. Not reproduced: {data['not_reproduced']}. "
             f"Each runs under `{data['measured_with']}` from its reset vector, its `{data['timed']}` "
             "call timed. binary error = the binary's emulated cycles / published - 1: the cycle and "
             "memory model's error on the software that was measured. micro_rt error = `profile "
             "--board` (micro_rt's own runtime and kernels) / published - 1, as the calibration "
             "table counts it. No parameter is fitted to these figures; they were measured after "
             "the model's last change.", "",
             "| benchmark | build | scope | published cycles | binary cycles | binary error | "
             "micro_rt cycles | micro_rt error | binary instructions | micro_rt instructions |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["rows"]:
        p = r["published_cycles"]
        lines.append(f"| {r['benchmark']} | {r['build']} | {r['scope']} | {p:,} | {r['binary_cycles']:,} | "
                     f"{_pct(r['binary_cycles'] / p - 1)} | {r['micro_rt_cycles']:,} | "
                     f"{_pct(r['micro_rt_cycles'] / p - 1)} | {r['binary_instructions']:,} | "
                     f"{r['micro_rt_instructions']:,} |")
    lines.append("")
    for build in dict.fromkeys(r["build"] for r in data["rows"]):
        rs = [r for r in data["rows"] if r["build"] == build and r["scope"] == "in"]
        if rs:
            binary = sum(abs(r["binary_cycles"] / r["published_cycles"] - 1) for r in rs) / len(rs)
            ours = sum(abs(r["micro_rt_cycles"] / r["published_cycles"] - 1) for r in rs) / len(rs)
            lines.append(f"- {build}: over the {len(rs)} in-scope rows, mean |error| of the binaries "
                         f"{binary:.1%}, of micro_rt's estimate {ours:.1%}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name} and RESULTS.md's section")
    args = ap.parse_args()
    data = measure(json.loads(args.manifest.read_text()))
    body = section(data)
    print(body)
    if args.write:
        OUT.write_text(json.dumps(data, indent=1) + "\n")
        results_md.write_section("published-binaries", body)


if __name__ == "__main__":
    main()
