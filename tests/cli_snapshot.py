"""Snapshot of what the CLI answers, for refactorings that must not change behaviour.

    python tests/cli_snapshot.py OUT_DIR [--models-dir DIR ...] [--quick]

Runs `micro-rt info/plan/fit/run/profile --json` on every model in models/ and in the shared
models folder (when present), each in a fresh process, and writes one file per model and
command with the exit code, stdout and stderr. Wall-clock figures (emulation seconds, instructions
per second) are blanked, everything else is kept byte for byte. Compare two snapshots with
`diff -r A B`: a restructuring is behaviour-preserving when the diff is empty.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models" / "tflm"

COMMANDS = {
    "info": ["info", "--json"],
    "plan": ["plan", "--json", "--target", "cortex-m4", "--kernels", "cmsis-nn"],
    "plan-host64": ["plan", "--json", "--target", "host64"],
    "fit": ["fit", "--json", "--ram", "4M", "--flash", "16M", "--kernels", "cmsis-nn"],
    "run": ["run", "--json", "--seed", "3"],
    "profile": ["profile", "--json", "--target", "cortex-m4", "--clock", "100MHz"],
    "profile-m0": ["profile", "--json", "--target", "cortex-m0plus", "--clock", "48MHz",
                   "--flash-wait-states", "1"],
}
# Keys whose values are wall-clock measurements of this machine, not answers of micro_rt.
TIMING_KEYS = re.compile(r"seconds|per_second|wall|elapsed", re.I)


def _blank_timing(value):
    if isinstance(value, dict):
        return {k: ("<timing>" if TIMING_KEYS.search(k) else _blank_timing(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank_timing(v) for v in value]
    return value


def snapshot_one(model: Path, name: str, argv: list[str], out_dir: Path) -> None:
    cmd = [sys.executable, "-m", "micro_rt.cli", argv[0], str(model), *argv[1:], "--quiet"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    stdout = run.stdout
    try:
        stdout = json.dumps(_blank_timing(json.loads(stdout)), indent=1, sort_keys=True)
    except ValueError:
        pass
    stdout = stdout.replace(str(model), model.name)
    record = f"exit {run.returncode}\n--- stdout\n{stdout}\n--- stderr\n{run.stderr.replace(str(model), model.name)}"
    (out_dir / f"{model.stem}.{name}.txt").write_text(record)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--models-dir", type=Path, action="append")
    parser.add_argument("--quick", action="store_true", help="skip the models over 1 MB")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    dirs = args.models_dir or [ROOT / "models", SHARED]
    models = sorted(p for d in dirs if d.exists() for p in d.glob("*.tflite"))
    if args.quick:
        models = [m for m in models if m.stat().st_size <= 1_000_000]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(m, n, argv) for m in models for n, argv in COMMANDS.items()]
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda job: snapshot_one(*job, args.out_dir), jobs))
    print(f"{len(jobs)} answers of {len(models)} models written to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
