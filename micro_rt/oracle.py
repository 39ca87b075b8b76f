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
_CATEGORY_LINE = re.compile(r"'([^']+)' used (\d+) bytes with alignment overhead")


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
    """head/tail/total bytes as TFLM's RecordingMicroAllocator prints them (C++ stderr), and
    under "categories" the tail bytes it records per kind ('Persistent buffer data', ...)."""
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
    found["categories"] = {k: int(v) for k, v in _CATEGORY_LINE.findall(text)}
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


def random_inputs(it, seed: int) -> list[np.ndarray]:
    """Seeded inputs covering each input's whole range (ints) or [-1, 1] (floats)."""
    rng = np.random.default_rng(seed)
    inputs = []
    for i in range(it.num_inputs):
        details = it.get_input_details(i)
        dtype = np.dtype(details["dtype"])
        shape = tuple(int(d) for d in details["shape"])
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            inputs.append(rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype))
        else:
            inputs.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
    return inputs


def paired(data: bytes, preserve_all_tensors: bool = False, **interpreter_kwargs):
    """micro_rt's interpreter and the oracle's on the same model, the oracle's arena sized
    from micro_rt's minimum with room to spare."""
    from .interpreter import Interpreter
    ours = Interpreter.from_bytes(data, preserve_all_tensors=preserve_all_tensors, **interpreter_kwargs)
    theirs = interpreter(data, max(ours.arena_required_bytes() * 2, 1 << 16), preserve_all_tensors)
    return ours, theirs


def invoke_both(ours, theirs, inputs: Sequence[np.ndarray]) -> None:
    """Give both interpreters the same inputs and invoke them."""
    for i, x in enumerate(inputs):
        ours.set_input(x, i)
        theirs.set_input(x, i)
    ours.invoke()
    theirs.invoke()


def _equal(ours: np.ndarray, theirs: np.ndarray) -> bool:
    if np.issubdtype(ours.dtype, np.floating):
        return bool(np.allclose(ours, theirs, rtol=1e-5, atol=1e-6))
    return bool(np.array_equal(ours, theirs))


def check_model(data: bytes, seeds: Sequence[int] = range(20), **interpreter_kwargs) -> dict:
    """Run micro_rt and the oracle on seeded inputs; compare every output.

    On a mismatch, rerun that seed with every tensor preserved on both sides and name the
    first operator whose output differs.
    """
    ours, theirs = paired(data, **interpreter_kwargs)
    failures = []
    for seed in seeds:
        inputs = random_inputs(ours, seed)
        invoke_both(ours, theirs, inputs)
        for k in range(ours.num_outputs):
            a, b = ours.get_output(k), np.array(theirs.get_output(k))
            if not _equal(a, b):
                failures.append({"seed": seed, "output": k,
                                 "differing": int(np.count_nonzero(a != b)), "size": a.size,
                                 "max_abs_diff": float(np.max(np.abs(a.astype(np.float64) - b))),
                                 "first_bad_op": first_differing_op(data, inputs, **interpreter_kwargs)})
                break
    return {"seeds": len(list(seeds)), "outputs": ours.num_outputs, "failures": failures}


def first_differing_op(data: bytes, inputs: Sequence[np.ndarray], **interpreter_kwargs) -> Optional[str]:
    ours, theirs = paired(data, preserve_all_tensors=True, **interpreter_kwargs)
    invoke_both(ours, theirs, inputs)
    for node in ours.nodes:
        for t in node.outputs:
            a = ours.get_tensor(t)
            b = np.array(theirs.GetTensor(t, 0)["tensor_data"]).reshape(a.shape)
            if not _equal(a, b):
                return (f"op {node.index} {node.op_name}: output tensor {t} "
                        f"('{ours.tensors[t].name}') differs in {int(np.count_nonzero(a != b))} "
                        f"of {a.size} elements")
    return None
