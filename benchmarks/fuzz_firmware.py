"""The fuzzer's firmware stage: mutated firmware images through `micro-rt emulate` (issue 21).

    python benchmarks/fuzz_firmware.py [-n 3000] [--seed 0] [--max-cycles 200000] [--write]

The seed images are the test programs of tests/firmware_src (printf, DWT, SysTick, heap, a
HardFault, RAM code with VTOR), built here with arm-none-eabi-gcc for the Cortex-M4 and M0+.
Mutant k is made from (--seed, k) by `devtools.elf_fuzzing.make_firmware_mutant`: 1-3
stacked mutations of the ELF header, a program or section header, the symbol table, the vector
table, the code or a truncation. Each runs in a forked child (a crash kills only the child)
with `--max-cycles`; a child that does not answer within --timeout seconds is a hang. The class
of each: a report, a MicroRtError, a foreign exception (any other: a bug), a hang or a crash.
Exit status 1 when any foreign exception, hang or crash was seen. `--write` puts the table into
benchmarks/RESULTS.md (between <!-- begin:fuzz-firmware --> and <!-- end:fuzz-firmware -->).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()

import argparse  # noqa: E402
import collections  # noqa: E402
import multiprocessing as mp  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # devtools/: the fuzzers, dev-only (not in the wheel)
SOURCES = ROOT / "tests" / "firmware_src"
PROGRAMS = ("hello", "dwt_loop", "systick", "heap", "hardfault", "ramcode")
CORES = ("cortex-m4", "cortex-m0plus")


def seed_images(out: Path) -> dict[str, bytes]:
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None:
        sys.exit("arm-none-eabi-gcc not installed: the seed images are built with it")
    seeds = {}
    for core in CORES:
        for program in PROGRAMS:
            elf = out / f"{program}-{core}.elf"
            subprocess.run([gcc, f"-mcpu={core}", "-mthumb", "-O2", "-specs=rdimon.specs", f"-L{SOURCES}", "-T",
                            str(SOURCES / "link.ld"), str(SOURCES / "vectors.c"), str(SOURCES / f"{program}.c"),
                            "-Wl,--gc-sections", "-o", str(elf)], check=True)
            seeds[f"{program}-{core}"] = elf.read_bytes()
    return seeds


def _child(conn, data: bytes, max_cycles: int) -> None:
    from devtools.elf_fuzzing import check_firmware
    try:
        outcome = check_firmware(data, max_cycles)
        conn.send(("report" if outcome == "report" else "project error", outcome))
    except BaseException as exc:          # noqa: BLE001 (what the campaign looks for)
        conn.send(("foreign", f"{type(exc).__name__}: {exc}"))


def run_one(data: bytes, max_cycles: int, timeout: float) -> tuple[str, str]:
    parent, child = mp.Pipe(duplex=False)
    proc = mp.get_context("fork").Process(target=_child, args=(child, data, max_cycles))
    proc.start()
    child.close()
    if parent.poll(timeout):
        try:
            result = parent.recv()
        except EOFError:                      # the child died before it answered
            proc.join()
            result = ("crash", f"exit code {proc.exitcode}")
    elif proc.is_alive():
        proc.kill()
        result = ("hang", f"no answer within {timeout} s")
    else:
        result = ("crash", f"exit code {proc.exitcode}")
    proc.join()
    return result


def main() -> int:
    from devtools.elf_fuzzing import make_firmware_mutant
    import micro_rt.cortexm.system.run  # noqa: F401 (imported once, before the children fork)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-cycles", type=int, default=200_000)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        seeds = seed_images(Path(tmp))
    names = sorted(seeds)
    classes: collections.Counter = collections.Counter()
    errors: collections.Counter = collections.Counter()
    mutators: collections.Counter = collections.Counter()
    bad = []
    slowest = 0.0
    start = time.monotonic()
    for k in range(args.n):
        seed = names[k % len(names)]
        applied, data = make_firmware_mutant(seeds[seed], args.seed, k)
        t = time.monotonic()
        cls, detail = run_one(data, args.max_cycles, args.timeout)
        slowest = max(slowest, time.monotonic() - t)
        classes[cls] += 1
        mutators.update(applied.split("+"))
        if cls == "project error":
            errors[detail.removeprefix("error: ")] += 1
        if cls in ("foreign", "hang", "crash"):
            bad.append(f"mutant {k} ({seed}, {applied}): {cls}: {detail}")
    seconds = time.monotonic() - start
    lines = [f"### Firmware images through `emulate`: {args.n:,} mutants, seed {args.seed}", "",
             f"Seeds: {', '.join(names)} (tests/firmware_src). Each mutant in a forked child with "
             f"--max-cycles {args.max_cycles:,}; a hang is no answer within {args.timeout:g} s. "
             f"{seconds:.0f} s in all, the slowest mutant {slowest:.2f} s.", "",
             "| outcome | mutants |", "|---|---:|"]
    for cls in ("report", "project error", "foreign", "hang", "crash"):
        lines.append(f"| {cls} | {classes[cls]:,} |")
    lines += ["", "Project errors by type: " + ", ".join(f"{k} {v:,}" for k, v in errors.most_common()) + ".",
              "Mutations applied: " + ", ".join(f"{k} {v:,}" for k, v in sorted(mutators.items())) + "."]
    lines += [""] + (bad[:20] if bad else ["No foreign exception, hang or crash."])
    text = "\n".join(lines)
    print(text)
    if args.write:
        heading, _, rest = text.partition("\n")
        results_md.write_section("fuzz-firmware", heading + "\n\n" + results_md.section_header(THREADS) + rest)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
