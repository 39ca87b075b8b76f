"""A long fuzzing campaign against micro_rt's loader and interpreter (issue 5), `make fuzz`.

    python benchmarks/fuzz_campaign.py [-n 10000] [--seed 0] [--workers N] [--timeout 10] [--write]
    python benchmarks/fuzz_campaign.py --replay K      # one mutant again, in this process

Mutant k is made deterministically from (--seed, k) by `micro_rt.fuzzing.make_mutant`
(bit flips, overwrites, truncation, forged offsets/vtables, splices; through the builder:
huge dims, swapped tensor indices, operator cycles, forged constants/options/quantization/
io/opcodes/offline plans), loaded with `Interpreter.from_bytes` and, when it loads, invoked
once on zeros. Each runs in a worker process: a worker that dies (segfault, abort, OOM kill)
counts a crash, one that takes longer than --timeout seconds counts a hang (it is killed
and replaced), an exception that is not a MicroRtError counts as foreign (first tracebacks
printed). The bad counts must all be zero; the exit status is 1 otherwise.

Also reported, for information: KernelErrors the interpreter made by wrapping a foreign
exception raised inside a kernel (a check the kernel's prepare should have made itself).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads (workers inherit it)

import argparse  # noqa: E402
import collections  # noqa: E402
import multiprocessing as mp  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"
MEMORY_LIMIT = 6 << 30          # per worker: a runaway allocation becomes MemoryError, not OOM


def _worker(conn, campaign_seed: int, seed_names: list[str]) -> None:
    import numpy as np
    from micro_rt import fuzzing
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass
    np.seterr(all="ignore")
    all_seeds = fuzzing.seed_models(ROOT, SHARED)
    seeds = {name: all_seeds[name] for name in seed_names}
    conn.send(("ready",))
    while True:
        k = conn.recv()
        if k is None:
            return
        try:
            seed, mutator, data = fuzzing.make_mutant(seeds, campaign_seed, k)
        except Exception:
            conn.send(("harness", k, "?", "?", traceback.format_exc()))
            continue
        start = time.perf_counter()
        try:
            status, error = fuzzing.run_mutant(data)
            conn.send(("done", k, seed, mutator, status, time.perf_counter() - start,
                       type(error).__name__ if error else None, fuzzing.wrapped_cause(error),
                       str(error)[:200] if error else None))
        except BaseException:       # the property is broken: not a MicroRtError
            conn.send(("foreign", k, seed, mutator, traceback.format_exc()))


class _Worker:
    def __init__(self, ctx, campaign_seed, seed_names):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, campaign_seed, seed_names), daemon=True)
        self.proc.start()
        child.close()
        self.conn.recv()                       # "ready"
        self.job = None
        self.started = 0.0

    def submit(self, k):
        self.job, self.started = k, time.monotonic()
        self.conn.send(k)

    def kill(self):
        self.proc.kill()
        self.proc.join()
        self.conn.close()


def campaign(n: int, campaign_seed: int, workers: int, timeout: float, show: int,
             write: bool = False) -> int:
    from micro_rt import fuzzing
    seed_names = sorted(fuzzing.seed_models(ROOT, SHARED))
    print(f"fuzz campaign: {n} mutants, seed {campaign_seed}, {workers} workers, "
          f"{timeout:.0f} s per mutant, {len(seed_names)} seed models "
          f"({sum(1 for s in seed_names if s.startswith('shared/'))} shared)", flush=True)
    ctx = mp.get_context("fork")
    pool = [_Worker(ctx, campaign_seed, seed_names) for _ in range(workers)]
    counts = collections.Counter()
    by_error = collections.Counter()
    by_mutator = collections.Counter()
    wrapped = collections.Counter()
    wrapped_example = {}
    bad_reports: list[str] = []
    slowest: list[tuple[float, int, str, str]] = []
    next_k, done = 0, 0
    t0 = time.monotonic()

    def record_bad(kind, k, text):
        counts[kind] += 1
        if len([r for r in bad_reports if r.startswith(kind)]) < show:
            bad_reports.append(f"{kind} mutant {k}: {text}")

    while done < n:
        for w in pool:
            if w.job is None and next_k < n:
                w.submit(next_k)
                next_k += 1
        busy = [w for w in pool if w.job is not None]
        ready = mp.connection.wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=0.5)
        now = time.monotonic()
        for i, w in enumerate(pool):
            if w.job is None:
                continue
            k = w.job
            if w.conn in ready:
                try:
                    msg = w.conn.recv()
                except (EOFError, OSError):
                    msg = None
                if msg is not None:
                    kind = msg[0]
                    if kind == "done":
                        _, _, seed, mutator, status, elapsed, err, cause, text = msg
                        counts[status] += 1
                        by_mutator[mutator.split("+")[0]] += 1
                        if err:
                            by_error[f"{status}: {err}"] += 1
                        if cause:
                            key = f"{cause}"
                            wrapped[key] += 1
                            wrapped_example.setdefault(key, f"mutant {k} ({seed}, {mutator}): {text}")
                        slowest.append((elapsed, k, seed, mutator))
                        slowest = sorted(slowest, reverse=True)[:5]
                    elif kind == "foreign":
                        record_bad("foreign", k, f"({msg[2]}, {msg[3]})\n{msg[4]}")
                    else:
                        record_bad("harness", k, msg[4])
                    w.job = None
                    done += 1
                    continue
            if not w.proc.is_alive() or (w.conn in ready and w.job is not None):
                code = w.proc.exitcode
                w.kill()
                record_bad("crash", k, f"worker died (exit code {code})")
                pool[i] = _Worker(ctx, campaign_seed, seed_names)
                done += 1
            elif now - w.started > timeout:
                w.kill()
                record_bad("hang", k, f"no answer after {timeout:.0f} s")
                pool[i] = _Worker(ctx, campaign_seed, seed_names)
                done += 1
        if done and done % 1000 == 0 and counts["_progress"] != done:
            counts["_progress"] = done
            print(f"  {done}/{n} mutants, {time.monotonic() - t0:.0f} s", flush=True)
    for w in pool:
        w.conn.send(None)
        w.proc.join(timeout=5)
        if w.proc.is_alive():
            w.kill()
    duration = time.monotonic() - t0

    print(f"\nmutants                          : {n}")
    print(f"loaded OK (and invoked)          : {counts['loaded']}")
    print(f"clean MicroRtError rejections    : {counts['rejected'] + counts['invoke-error']} "
          f"(at load {counts['rejected']}, at invoke {counts['invoke-error']})")
    print(f"crashes (worker died)            : {counts['crash']}")
    print(f"hangs over {timeout:.0f} s                  : {counts['hang']}")
    print(f"exceptions not MicroRtError      : {counts['foreign']}")
    if counts["harness"]:
        print(f"harness errors (mutator bugs)    : {counts['harness']}")
    print(f"duration                         : {duration:.1f} s "
          f"({1000 * duration / max(n, 1):.1f} ms per mutant, {workers} workers)")
    print("\nerrors by class:", ", ".join(f"{k} {v}" for k, v in by_error.most_common()))
    print("mutants by mutator:", ", ".join(f"{k} {v}" for k, v in sorted(by_mutator.items())))
    print("slowest:", ", ".join(f"#{k} {s} ({m}) {e:.2f} s" for e, k, s, m in slowest))
    if wrapped:
        print(f"\nKernelErrors wrapping a foreign exception inside a kernel: {sum(wrapped.values())}")
        for key, v in wrapped.most_common(15):
            print(f"  {v:5d}  {key}   e.g. {wrapped_example[key]}")
    for report in bad_reports:
        print("\n" + report)
    bad = counts["crash"] + counts["hang"] + counts["foreign"] + counts["harness"]
    if write:
        rows = [("mutants", f"{n:,}"), ("loaded OK (and invoked)", f"{counts['loaded']:,}"),
                ("clean MicroRtError rejections",
                 f"{counts['rejected'] + counts['invoke-error']:,} (at load {counts['rejected']:,}, "
                 f"at invoke {counts['invoke-error']:,})"),
                ("crashes (worker died)", f"**{counts['crash']}**"),
                (f"hangs over {timeout:.0f} s", f"**{counts['hang']}**"),
                ("exceptions not MicroRtError", f"**{counts['foreign']}**"),
                ("harness errors (mutator bugs)", f"**{counts['harness']}**"),
                ("duration", f"{duration:.1f} s ({1000 * duration / max(n, 1):.1f} ms per mutant, "
                             f"{workers} workers)")]
        table = [f"| count | seed {campaign_seed} |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in rows]
        classes = ", ".join(f"{k} {v:,}" for k, v in by_error.most_common())
        results_md.write_section("fuzzing", results_md.section_header(THREADS) + "\n" +
                                 f"{len(seed_names)} seed models "
                                 f"({sum(1 for s in seed_names if s.startswith('shared/'))} shared).\n\n" +
                                 "\n".join(table) + f"\n\nRejections by class: {classes}.")
    return 1 if bad else 0


def replay(k: int, campaign_seed: int) -> int:
    from micro_rt import fuzzing
    seeds = fuzzing.seed_models(ROOT, SHARED)
    seed, mutator, data = fuzzing.make_mutant(seeds, campaign_seed, k)
    print(f"mutant {k}: {seed}, {mutator}, {len(data)} bytes")
    start = time.perf_counter()
    status, error = fuzzing.run_mutant(data)
    print(f"{status} in {time.perf_counter() - start:.3f} s: "
          f"{type(error).__name__ if error else ''} {error or ''}")
    if error is not None and error.__cause__ is not None:
        traceback.print_exception(error.__cause__)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="number of mutants")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a mutant is a hang")
    parser.add_argument("--show", type=int, default=5, help="tracebacks shown per bad kind")
    parser.add_argument("--replay", type=int, metavar="K", help="run mutant K here and explain it")
    parser.add_argument("--write", action="store_true", help="write the counts into RESULTS.md")
    args = parser.parse_args()
    if args.replay is not None:
        return replay(args.replay, args.seed)
    print(f"date {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, {platform.node()}, {platform.machine()}, "
          f"{platform.processor() or platform.platform()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}", flush=True)
    return campaign(args.n, args.seed, args.workers, args.timeout, args.show, args.write)


if __name__ == "__main__":
    sys.exit(main())
