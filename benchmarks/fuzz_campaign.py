"""A long fuzzing campaign against micro_rt (issue 5), `make fuzz`.

    python benchmarks/fuzz_campaign.py [-n 10000] [--seed 0] [--workers N] [--timeout 10] [--write]
    python benchmarks/fuzz_campaign.py --replay K [--seed S]    # one mutant again, in this process

Mutant k is made deterministically from (--seed, k) by `devtools.fuzzing.make_mutant`: 1-3
stacked mutations, schema-level ones (the model decoded by micro_rt's reader, edited, re-encoded
by the builder) or byte-level ones. Each mutant runs in its own forked child, limited to 4 GiB
of address space, through every stage (`devtools.fuzzing.run_stages`: load, info, plan for
every target, an invoke on the host, the same inputs on a virtual Cortex-M4 with CMSIS-NN
kernels), then, when the host invoke ran, tflite-micro on the same inputs (differential mode).

A mutant is counted in its worst class over micro_rt's stages: ok, project error (MicroRtError),
wrapped Python error (a KernelError made from e.g. a ZeroDivisionError inside a kernel),
foreign exception, hang (no answer within --timeout seconds) or crash (the child died by a
signal). The oracle gets its own --timeout; its crashes, hangs and refusals are counted as the
oracle's, never ours. Host and MCU outputs must agree; host and oracle disagreements are
reported. The exit status is 1 when any wrapped, foreign, hang, crash or host/MCU
disagreement was seen. `--write` puts the figures into benchmarks/RESULTS.md (its section
between <!-- begin:fuzz --> and <!-- end:fuzz -->).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads; no BLAS pool across fork()

import argparse  # noqa: E402
import os  # noqa: E402
import collections  # noqa: E402
import multiprocessing as mp  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from multiprocessing.connection import wait  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Optional  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # devtools/: the fuzzers, dev-only (not in the wheel)
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"
MEMORY_LIMIT = 4 << 30          # per child: a runaway allocation becomes MemoryError, not OOM
BAD_CLASSES = ("wrapped", "foreign", "hang", "crash")


def _child(conn, data: bytes, oracle: bool) -> None:
    from devtools import fuzzing
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    result = fuzzing.run_stages(data, lambda kind, payload: conn.send((kind, payload)))
    conn.send(("ours", result.host_vs_mcu))
    if oracle and result.host_outputs is not None:
        conn.send(("start", "oracle"))
        conn.send(("oracle", fuzzing.run_oracle(data, result)))
    conn.send(("end", None))
    conn.close()


@dataclass
class Running:
    k: int
    seed: str
    mutators: str
    proc: mp.Process
    conn: object
    deadline: float
    stage: str = "load"
    stages: list = field(default_factory=list)
    host_vs_mcu: Optional[str] = None
    oracle: Optional[tuple] = None
    ours_done: bool = False
    ended: bool = False
    killed: bool = False                 # by us, at its deadline: a hang
    timeout: float = 10.0


@dataclass
class Tally:
    classes: collections.Counter = field(default_factory=collections.Counter)
    by_stage: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    errors: collections.Counter = field(default_factory=collections.Counter)
    mutators: collections.Counter = field(default_factory=collections.Counter)
    differential: collections.Counter = field(default_factory=collections.Counter)
    examples: dict = field(default_factory=lambda: collections.defaultdict(list))
    slowest: list = field(default_factory=list)

    def example(self, key: str, text: str, keep: int = 3) -> None:
        mutant = text.split(" (", 1)[0]
        if len(self.examples[key]) < keep and not any(e.startswith(mutant + " (") for e in self.examples[key]):
            self.examples[key].append(text)


def _death(run: Running, timeout: float) -> tuple[str, str]:
    """("hang" | "crash", detail) for a child that did not finish its work."""
    if run.killed:
        return "hang", f"no answer after {timeout:.0f} s"
    code = run.proc.exitcode
    return "crash", (f"signal {-code}" if code is not None and code < 0 else f"exit code {code}")


def _finish(run: Running, tally: Tally, timeout: float, now: float, start: float) -> None:
    """Count one finished (or killed) child."""
    name = f"mutant {run.k} ({run.seed}, {run.mutators})"
    classes = [s.outcome for s in run.stages]
    if not run.ours_done:                        # died or hung inside micro_rt's stages
        kind, detail = _death(run, timeout)
        classes.append(kind)
        tally.by_stage[run.stage][kind] += 1
        tally.example(kind, f"{name}: {kind} in stage {run.stage} ({detail})")
    from devtools.fuzzing import worst
    outcome = worst(classes)
    tally.classes[outcome] += 1
    for m in run.mutators.split("+"):
        tally.mutators[m] += 1
    for s in run.stages:
        tally.by_stage[s.stage][s.outcome] += 1
        if s.error:
            tally.errors[f"{s.stage}: {s.error}"] += 1
        if s.outcome in ("wrapped", "foreign"):
            tally.example(f"{s.outcome}: {s.error} at {s.where}",
                          f"{name}, stage {s.stage}: {s.message}")
    if run.host_vs_mcu is not None:
        agree = run.host_vs_mcu == "agree"
        tally.differential["host = MCU" if agree else "host ≠ MCU"] += 1
        if not agree:
            tally.example("host ≠ MCU", f"{name}: {run.host_vs_mcu}", keep=10)
    if run.ours_done and any(s.stage == "host" and s.outcome == "ok" for s in run.stages):
        if run.oracle is not None:
            verdict, detail = run.oracle
            key = {"agree": "host = oracle", "disagree": "host ≠ oracle", "refused": "oracle refused"}[verdict]
            tally.differential[key] += 1
            if detail:
                tally.example(key, f"{name}: {detail}")
        elif run.stage == "oracle":
            kind, detail = _death(run, timeout)
            key = f"oracle {kind}"
            tally.differential[key] += 1
            tally.example(key, f"{name}: {detail}")
    tally.slowest = sorted(tally.slowest + [(now - start, run.k, run.seed, run.mutators)], reverse=True)[:5]


def _drain(run: Running) -> None:
    """Read every message the child has written so far."""
    try:
        while run.conn.poll():
            kind, payload = run.conn.recv()
            if kind == "start":
                run.stage = payload
            elif kind == "done":
                run.stages.append(payload)
            elif kind == "ours":
                run.host_vs_mcu, run.ours_done = payload, True
                run.deadline = time.monotonic() + run.timeout
            elif kind == "oracle":
                run.oracle = payload
            elif kind == "end":
                run.ended = True
    except (EOFError, OSError):
        pass


def _collect(run: Running, ready) -> bool:
    """Read what the child has sent; True when it is done with (ended, or exited). Liveness is
    checked once, before reading: a child seen exited has all its messages in the pipe, so
    none is lost to an exit between two checks."""
    if run.conn not in ready and run.proc.sentinel not in ready:
        return False
    alive = run.proc.is_alive()
    _drain(run)
    if run.ended or not alive:
        run.proc.join(timeout=5)
        return True
    return False


def campaign(n: int, campaign_seed: int, workers: int, timeout: float, oracle: bool) -> tuple[Tally, dict]:
    from devtools import fuzzing
    seeds = fuzzing.seed_models(ROOT, SHARED)
    # Warm every cache the children inherit through fork(): kernels, firmware, hooks, oracle.
    fuzzing.run_stages(seeds["models/conv_variants_int8.tflite"])
    if oracle:
        from micro_rt.oracle import available
        oracle = available()
    ctx = mp.get_context("fork")
    tally, running, next_k, done = Tally(), {}, 0, 0
    t0 = time.monotonic()
    starts = {}
    while done < n:
        while len(running) < workers and next_k < n:
            seed, mutators, data = fuzzing.make_mutant(seeds, campaign_seed, next_k)
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(child, data, oracle), daemon=True)
            proc.start()
            child.close()
            running[parent] = Running(next_k, seed, mutators, proc, parent, time.monotonic() + timeout,
                                      timeout=timeout)
            starts[next_k] = time.monotonic()
            next_k += 1
        ready = wait(list(running) + [r.proc.sentinel for r in running.values()], timeout=0.2)
        now = time.monotonic()
        for conn, run in list(running.items()):
            finished = _collect(run, ready)
            if not finished and now > run.deadline:
                _drain(run)                      # it may have moved on to the oracle in time
            if not finished and now > run.deadline and not run.ended:
                run.killed = True
                run.proc.kill()
                run.proc.join()
                finished = True
            if finished:
                conn.close()
                del running[conn]
                _finish(run, tally, timeout, now, starts.pop(run.k))
                done += 1
                if done % 500 == 0:
                    print(f"  {done}/{n} mutants, {time.monotonic() - t0:.0f} s, "
                          + ", ".join(f"{c} {tally.classes[c]}" for c in fuzzing.CLASSES if tally.classes[c]),
                          flush=True)
    info = {"seconds": time.monotonic() - t0, "seeds": len(seeds), "workers": workers, "names": sorted(seeds),
            "shared": sum(1 for s in seeds if s.startswith("shared/")), "oracle": oracle}
    return tally, info


def _commit() -> str:
    import subprocess
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no",
                                "--", "micro_rt", "kernels", "cortexm"], capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return f"commit {head}" + (" with local changes" if dirty.strip() else "")


def report(tally: Tally, info: dict, n: int, campaign_seed: int, timeout: float, command: str) -> str:
    from devtools.fuzzing import CLASSES, STAGES
    c, d = tally.classes, tally.differential
    lines = [
        "## Fuzzing: every stage, host vs MCU vs tflite-micro (issues 5 and 10)",
        "",
        f"`{command}`, run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at {_commit()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}: campaign seed {campaign_seed}, "
        f"{n:,} mutants, {info['workers']} at a time, each in a forked child (4 GiB address space, "
        f"{timeout:.0f} s for micro_rt's stages and {timeout:.0f} s for the oracle), "
        f"{info['seconds']:.0f} s in all ({1000 * info['seconds'] / max(n, 1):.0f} ms per mutant).",
        "",
        f"Seed models: {info['seeds']} ({info['seeds'] - info['shared'] - 2} in `models/`, {info['shared']} "
        "shared TFLM models up to 1 MiB, 2 builder-made): " + ", ".join(info["names"]) + ". Mutant k of seed s: `make_mutant(seeds, s, k)`, "
        "1-3 stacked mutations, about two thirds schema-level (shapes, types, scales, zero points, "
        "per-channel arrays, option extremes, missing or wrong options tables, opcodes, custom options, "
        "dataflow cycles, IF/WHILE/CALL_ONCE pointing at their own subgraph or out of range, offline plans, "
        "buffer offsets and sizes), the rest byte-level. Stages: load, info, plan on every target, invoke "
        "on the host, invoke on a virtual Cortex-M4 (CMSIS-NN kernels; as `profile` runs it, one call of the "
        "device runtime per invoke, an operator without a C kernel call trapping to its host kernel), then "
        "tflite-micro on the same inputs.",
        "",
        "| class (worst stage of a mutant) | mutants |",
        "|---|---:|",
        *[f"| {cls} | {c[cls]:,} |" for cls in CLASSES],
        "",
        "| differential | mutants |",
        "|---|---:|",
        *[f"| {key} | {d[key]:,} |" for key in ("host = MCU", "host ≠ MCU", "host = oracle", "host ≠ oracle",
                                                 "oracle refused", "oracle crash", "oracle hang")],
        "",
        "| stage | " + " | ".join(CLASSES) + " |",
        "|---|" + "---:|" * len(CLASSES),
        *[f"| {stage} | " + " | ".join(f"{tally.by_stage[stage][cls]:,}" for cls in CLASSES) + " |"
          for stage in STAGES],
        "",
        "Errors by stage and class (top 12): " + ", ".join(f"{k} {v:,}" for k, v in tally.errors.most_common(12)) + ".",
        "",
        "Mutations applied: " + ", ".join(f"{k} {v:,}" for k, v in sorted(tally.mutators.items())) + ".",
        "",
        "Slowest mutants: " + ", ".join(f"#{k} {s} ({m}) {e:.1f} s" for e, k, s, m in tally.slowest) + ".",
    ]
    bad = {key: v for key, v in tally.examples.items() if key.split(":")[0] in BAD_CLASSES or key == "host ≠ MCU"}
    if bad:
        lines += ["", "Examples of the failing classes (replay with `--replay K --seed S`):", ""]
        lines += [f"- {key}: " + " / ".join(v) for key, v in sorted(bad.items())]
    other = {key: v for key, v in tally.examples.items() if key not in bad}
    if other:
        lines += ["", "Examples of the oracle's side:", ""]
        lines += [f"- {key}: " + " / ".join(v[:2]) for key, v in sorted(other.items())]
    return "\n".join(lines)


def replay(k: int, campaign_seed: int) -> int:
    from devtools import fuzzing
    seeds = fuzzing.seed_models(ROOT, SHARED)
    seed, mutators, data = fuzzing.make_mutant(seeds, campaign_seed, k)
    print(f"mutant {k}: {seed}, {mutators}, {len(data)} bytes")
    result = fuzzing.run_stages(data)
    for s in result.stages:
        print(f"  {s.stage:5} {s.outcome:13} {s.seconds:6.3f} s  {s.error or ''} {s.where or ''}  {s.message or ''}")
    print(f"  host vs MCU: {result.host_vs_mcu}")
    if result.host_outputs is not None:
        print(f"  oracle: {fuzzing.run_oracle(data, result)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="number of mutants")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a mutant is a hang")
    parser.add_argument("--no-oracle", action="store_true", help="skip tflite-micro")
    parser.add_argument("--write", action="store_true", help="write the figures into RESULTS.md")
    parser.add_argument("--replay", type=int, metavar="K", help="run mutant K here and explain it")
    args = parser.parse_args()
    if args.replay is not None:
        return replay(args.replay, args.seed)
    print(f"fuzz campaign: {args.n} mutants, seed {args.seed}, {args.workers} at a time", flush=True)
    tally, info = campaign(args.n, args.seed, args.workers, args.timeout, not args.no_oracle)
    command = f"python benchmarks/fuzz_campaign.py -n {args.n} --seed {args.seed}"
    text = report(tally, info, args.n, args.seed, args.timeout, command)
    print("\n" + text)
    if args.write:
        heading, _, rest = text.partition("\n")
        results_md.write_section("fuzz", heading + "\n\n" + results_md.section_header(THREADS) + rest)
    bad = sum(tally.classes[c] for c in BAD_CLASSES) + tally.differential["host ≠ MCU"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
