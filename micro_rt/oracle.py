"""The `tflite-micro` pip runtime as an oracle (an optional extra: `pip install micro-rt[oracle]`).

Used by `micro-rt run --check`, the tests and the benchmarks to prove agreement with TFLM.
"""
from __future__ import annotations

import os
import re
import tempfile
from typing import Optional, Sequence

import numpy as np

from .errors import MicroRtError

_ALLOC_LINE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")


def available() -> bool:
    try:
        from tflite_micro import runtime  # noqa: F401
    except ImportError:
        return False
    return True


def _runtime():
    try:
        from tflite_micro import runtime
    except ImportError:
        raise MicroRtError("the tflite-micro oracle is not installed: pip install tflite-micro") from None
    return runtime


def interpreter(data: bytes, arena_size: Optional[int] = None, preserve_all_tensors: bool = False):
    runtime = _runtime()
    config = (runtime.InterpreterConfig.kPreserveAllTensors if preserve_all_tensors
              else runtime.InterpreterConfig.kAllocationRecording)
    kwargs = {"intrepreter_config": config}   # sic: the package spells it this way
    if arena_size is not None:
        kwargs["arena_size"] = arena_size
    return runtime.Interpreter.from_bytes(bytes(data), **kwargs)


def allocations(data: bytes, arena_size: int) -> dict:
    """head/tail/total bytes as TFLM's RecordingMicroAllocator prints them (C++ stderr)."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            it = interpreter(data, arena_size)
            it.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode(errors="replace")
    found = {k: int(v) for k, v in _ALLOC_LINE.findall(text)}
    if set(found) != {"total", "head", "tail"}:
        raise MicroRtError(f"could not read the oracle's allocation printout: {text[:200]!r}")
    return found


def run(data: bytes, inputs: Sequence[np.ndarray], num_outputs: int,
        arena_size: Optional[int] = None) -> list[np.ndarray]:
    it = interpreter(data, arena_size)
    for i, value in enumerate(inputs):
        it.set_input(value, i)
    it.invoke()
    return [np.array(it.get_output(i)) for i in range(num_outputs)]


def compare_with_oracle(data: bytes, inputs: Sequence[np.ndarray],
                        outputs: Sequence[np.ndarray]) -> list[dict]:
    """Per output: equal (int: every byte; float: 1e-5 relative) and a verdict line."""
    expected = run(data, inputs, len(outputs), arena_size=max(len(data) * 10, 1 << 20))
    report = []
    for i, (ours, theirs) in enumerate(zip(outputs, expected)):
        if np.issubdtype(ours.dtype, np.floating):
            equal = bool(np.allclose(ours, theirs, rtol=1e-5, atol=1e-6))
        else:
            equal = bool(np.array_equal(ours, theirs))
        diff = int(np.count_nonzero(ours != theirs))
        verdict = ("agrees with tflite-micro" if equal else
                   f"DIFFERS from tflite-micro in {diff} of {ours.size} elements "
                   f"(max |diff| {np.max(np.abs(ours.astype(np.float64) - theirs)):g})")
        report.append({"index": i, "equal": equal, "differing_elements": diff, "verdict": verdict})
    return report
