"""The smallest arena tflite-micro really allocates a model in, probed in child processes.

TFLM can crash outright (signal 11) instead of failing cleanly when its arena is too small,
so every probe runs in a child process: a crash counts as "does not fit". The arena size
is bisected in steps of 16 bytes (TFLM aligns its arena to 16).

    true_minimum(model)              -> the smallest arena_size that works
    fits_exactly(model, n)           -> (fits at n, fits at n - 16), one child for both
    minimum_mismatches(cases)        -> the cases whose claimed minimum is not TFLM's
    probe_many([(model, n), ...])    -> fits or not for each, in as few children as possible

Used by the arena tests and by benchmarks that compare micro_rt's reported minimum.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Sequence, Union

STEP = 16
_TIMEOUT_S = 300
# Above this TFLM is taken not to allocate the model at all (an unsupported operator, say).
MAX_PROBE_BYTES = 1 << 28

# The child allocates each (model, arena size) pair in turn, printing one line per pair
# before it tries the next, so a crash part-way still tells which pairs worked.
_CHILD = r"""
import sys
from tflite_micro import runtime
models = {}
for pair in sys.argv[1:]:
    path, size = pair.rsplit(':', 1)
    if path not in models:
        models[path] = open(path, 'rb').read()
    try:
        runtime.Interpreter.from_bytes(models[path], arena_size=int(size))
        print('PROBE fits', flush=True)
    except RuntimeError:
        print('PROBE fails', flush=True)
"""

ModelSource = Union[str, Path, bytes]


def _as_path(model: ModelSource, keep: list) -> Path:
    if isinstance(model, (str, Path)):
        return Path(model)
    handle = tempfile.NamedTemporaryFile(suffix=".tflite", delete=False)
    handle.write(bytes(model))
    handle.close()
    keep.append(handle.name)
    return Path(handle.name)


def probe_many(pairs: Sequence[tuple[ModelSource, int]]) -> list[bool]:
    """Whether TFLM allocates each model in its arena size, all in as few children as
    possible: a pair the child did not answer (it crashed on it) counts as too small and
    the rest go to a fresh child."""
    temporary: list = []
    try:
        args = [f"{_as_path(model, temporary)}:{int(size)}" for model, size in pairs]
        answers: list[bool] = []
        while len(answers) < len(args):
            result = subprocess.run([sys.executable, "-c", _CHILD, *args[len(answers):]],
                                    capture_output=True, text=True, timeout=_TIMEOUT_S)
            lines = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("PROBE ")]
            answers += [line == "fits" for line in lines]
            if result.returncode != 0 and len(answers) < len(args):
                answers.append(False)                   # the crash: too small
            elif not lines and len(answers) < len(args):
                raise RuntimeError(f"the tflite-micro child failed: {result.stderr[-500:]}")
        return answers
    finally:
        for name in temporary:
            os.unlink(name)


def probe(model: ModelSource, sizes: Sequence[int]) -> list[bool]:
    """Whether TFLM allocates the model in each arena size, tried in order."""
    temporary: list = []
    try:
        path = _as_path(model, temporary)
        return probe_many([(path, size) for size in sizes])
    finally:
        for name in temporary:
            os.unlink(name)


def fits(model: ModelSource, arena_size: int) -> bool:
    return probe(model, [arena_size])[0]


def fits_exactly(model: ModelSource, arena_size: int) -> tuple[bool, bool]:
    """(TFLM allocates in arena_size, TFLM allocates in arena_size - 16): the size is TFLM's
    true minimum when this is (True, False). The working size is tried first, so a crash
    on the smaller one cannot hide it."""
    at, below = probe(model, [arena_size, arena_size - STEP])
    return at, below


def minimum_mismatches(cases: Sequence[tuple[str, ModelSource, int]]) -> list[str]:
    """For (name, model, claimed minimum) cases, those where TFLM does not allocate in the
    claimed size or also allocates 16 bytes below it, each with TFLM's true minimum."""
    answers = probe_many([(model, size + d) for _, model, size in cases for d in (0, -STEP)])
    wrong = []
    for k, (name, model, size) in enumerate(cases):
        if answers[2 * k] and not answers[2 * k + 1]:
            continue
        try:
            truth = f"tflite-micro's minimum is {true_minimum(model, size)}"
        except RuntimeError as e:
            truth = str(e)
        wrong.append(f"{name}: micro_rt says {size}, {truth}")
    return wrong


def true_minimum(model: ModelSource, hint: Optional[int] = None) -> int:
    """TFLM's smallest working arena, by bisection in steps of 16 bytes.

    `hint` (e.g. micro_rt's own figure) only chooses where to start; the answer is checked
    at both ends in fresh children whatever the hint. Raises RuntimeError when TFLM does not
    allocate the model in MAX_PROBE_BYTES (or 64 times the hint) at all.
    """
    temporary: list = []
    try:
        path = _as_path(model, temporary)
        start = max(STEP, (hint or 0) // STEP * STEP)
        cap = max(MAX_PROBE_BYTES, 64 * start) if hint is None else min(MAX_PROBE_BYTES, 64 * start)
        if not fits(path, cap):
            raise RuntimeError(f"tflite-micro does not allocate {path} in {cap} bytes")
        lo, hi = 0, cap                          # 0 never fits; cap does
        if start < cap:
            if fits(path, start):
                hi = start
            else:
                lo = start
        while hi - lo > STEP:
            mid = (lo + hi) // 2 // STEP * STEP
            if fits(path, mid):
                hi = mid
            else:
                lo = mid
        at, below = fits_exactly(path, hi)
        if not at or (hi > STEP and below):
            raise RuntimeError(f"tflite-micro's minimum for {path} is not monotonic near {hi}")
        return hi
    finally:
        for name in temporary:
            os.unlink(name)


if __name__ == "__main__":      # python tests/oracle_minimum.py model.tflite ...
    for name in sys.argv[1:]:
        print(name, true_minimum(name))
