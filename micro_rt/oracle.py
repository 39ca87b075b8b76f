"""The `tflite-micro` pip runtime as an oracle (an optional extra: `pip install micro-rt[oracle]`).

Used by `micro-rt run --check`, the tests and the benchmarks to prove agreement with TFLM.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from .errors import MicroRtError, OracleError
from .inputs import random_inputs

_ALLOC_LINE = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")
_CATEGORY_LINE = re.compile(r"'([^']+)' used (\d+) bytes with alignment overhead")


def available() -> bool:
    try:
        from tflite_micro import runtime  # noqa: F401
    except ImportError:
        return False
    return True


def tflm_runtime():
    """`tflite_micro.runtime`, or a MicroRtError saying how to install it."""
    try:
        from tflite_micro import runtime
    except ImportError:
        raise MicroRtError("the tflite-micro oracle is not installed: pip install tflite-micro") from None
    return runtime


class _Printed:
    text = ""


@contextmanager
def _tflm_stderr() -> Iterator[_Printed]:
    """Capture what TFLM's C++ code writes to file descriptor 2 (its reasons for refusing a
    model, its allocation printout): contextlib.redirect_stderr cannot see it."""
    printed = _Printed()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield printed
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            printed.text = capture.read().decode(errors="replace")


def _refusal(error: Exception, printed: str) -> OracleError:
    reason = " ".join(printed.split())
    raised = " ".join(str(error).split()) or type(error).__name__
    refusal = OracleError(f"tflite-micro refused the model: {reason} ({raised})" if reason else
                          f"tflite-micro refused the model: {raised}")
    refusal.printed = printed          # TFLM's own lines, as it printed them
    return refusal


def interpreter(data: bytes, arena_size: Optional[int] = None, preserve_all_tensors: bool = False):
    """The oracle's interpreter for `data`; OracleError (a RuntimeError) with TFLM's reason
    when it refuses the model."""
    runtime = tflm_runtime()
    config = (runtime.InterpreterConfig.kPreserveAllTensors if preserve_all_tensors
              else runtime.InterpreterConfig.kAllocationRecording)
    kwargs = {"intrepreter_config": config}   # sic: the package spells it this way
    if arena_size is not None:
        kwargs["arena_size"] = arena_size
    with _tflm_stderr() as printed:
        try:
            return runtime.Interpreter.from_bytes(bytes(data), **kwargs)
        except Exception as e:  # the package raises RuntimeError or ValueError; keep its words
            failure = e
    raise _refusal(failure, printed.text) from failure


def invoke(theirs, inputs: Sequence[np.ndarray]) -> None:
    """Set the oracle's inputs and invoke it; a refusal (TFLM prints why, e.g. an input type
    a kernel does not support) becomes an OracleError carrying that reason."""
    with _tflm_stderr() as printed:
        try:
            for i, value in enumerate(inputs):
                theirs.set_input(value, i)
            theirs.invoke()
            return
        except Exception as e:
            failure = e
    raise _refusal(failure, printed.text) from failure


def allocations(data: bytes, arena_size: int) -> dict:
    """head/tail/total bytes as TFLM's RecordingMicroAllocator prints them (C++ stderr), and
    under "categories" the tail bytes it records per kind ('Persistent buffer data', ...)."""
    it = interpreter(data, arena_size)
    with _tflm_stderr() as printed:
        it.print_allocations()
    found: dict[str, Any] = {k: int(v) for k, v in _ALLOC_LINE.findall(printed.text)}
    if set(found) != {"total", "head", "tail"}:
        raise MicroRtError(f"could not read the oracle's allocation printout: {printed.text[:200]!r}")
    found["categories"] = {k: int(v) for k, v in _CATEGORY_LINE.findall(printed.text)}
    return found


def run(data: bytes, inputs: Sequence[np.ndarray], num_outputs: int,
        arena_size: Optional[int] = None) -> list[np.ndarray]:
    it = interpreter(data, arena_size)
    invoke(it, inputs)
    return [np.array(it.get_output(i)) for i in range(num_outputs)]


# The float bound: micro_rt's float kernels match TFLM's bit for bit except transcendental
# activations and softmax on the virtual MCU, measured at most 4 ulp apart (project f32 models,
# 10 seeds each, host and Cortex-M4). Integer outputs must match exactly.
FLOAT_ULP_BOUND = 4


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per element, how many representable floats lie between a and b (NaN and NaN: 0)."""
    signed = np.dtype(f"i{a.dtype.itemsize}")

    def ordered(x: np.ndarray) -> np.ndarray:   # sign-magnitude bits -> a monotonic integer line
        bits = np.ascontiguousarray(x).view(signed).astype(np.int64)
        return np.where(bits < 0, np.iinfo(signed).min - bits, bits).astype(np.float64)

    distance = np.abs(ordered(a) - ordered(b))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    distance[nan_a & nan_b] = 0
    distance[nan_a ^ nan_b] = np.inf
    return distance


def tolerance_of(dtype: np.dtype) -> str:
    """The agreement required of an output of this type, in words."""
    return f"max {FLOAT_ULP_BOUND} ulp" if np.issubdtype(dtype, np.floating) else "exact"


@dataclass
class Agreement:
    """How one output of micro_rt compared with the oracle's over a series of input sets."""
    index: int
    dtype: str
    input_sets: int = 0
    equal: bool = True
    bit_exact: bool = True
    differing_elements: int = 0          # in the worst input set
    size: int = 0
    max_abs_diff: float = 0.0
    max_ulp: Optional[float] = None      # floats only
    first_failing_set: Optional[int] = None

    @property
    def is_float(self) -> bool:
        return np.issubdtype(np.dtype(self.dtype), np.floating)

    @property
    def tolerance(self) -> str:
        return tolerance_of(np.dtype(self.dtype))

    def add(self, ours: np.ndarray, theirs: np.ndarray) -> None:
        """Compare one input set's output (ours against the oracle's)."""
        theirs = np.asarray(theirs)
        self.size = ours.size
        if ours.dtype != theirs.dtype or ours.shape != theirs.shape:
            differing, abs_diff = ours.size, float("inf")
            ulp = float("inf") if self.is_float else None
            equal = False
        else:
            same = ours == theirs
            if self.is_float:
                same |= np.isnan(ours) & np.isnan(theirs)
            differing = int(np.count_nonzero(~same))
            diff = np.abs(ours[~same].astype(np.float64) - theirs[~same])
            abs_diff = float(np.max(np.where(np.isnan(diff), np.inf, diff), initial=0.0))
            ulp = float(np.max(_ulps(ours, theirs), initial=0.0)) if self.is_float else None
            equal = ulp <= FLOAT_ULP_BOUND if ulp is not None else differing == 0
        if not equal and self.first_failing_set is None:
            self.first_failing_set = self.input_sets
        self.equal &= bool(equal)
        self.bit_exact &= ours.tobytes() == theirs.tobytes()
        self.differing_elements = max(self.differing_elements, differing)
        self.max_abs_diff = max(self.max_abs_diff, abs_diff)
        if ulp is not None:
            self.max_ulp = max(self.max_ulp or 0.0, ulp)
        self.input_sets += 1

    @property
    def verdict(self) -> str:
        sets = f"{self.input_sets} input set{'s' if self.input_sets != 1 else ''}"
        if self.bit_exact:
            return f"bit-exact with tflite-micro on {sets}"
        if self.equal:
            return (f"agrees with tflite-micro within the float bound of {FLOAT_ULP_BOUND} ulp "
                    f"on {sets} (max {self.max_ulp:g} ulp seen, max |diff| {self.max_abs_diff:g})")
        ulp = f", max {self.max_ulp:g} ulp" if self.max_ulp is not None else ""
        return (f"DIFFERS from tflite-micro (required: {self.tolerance}) in up to "
                f"{self.differing_elements} of {self.size} elements, first in input set "
                f"{self.first_failing_set} (max |diff| {self.max_abs_diff:g}{ulp})")

    def as_dict(self) -> dict:
        return {"index": self.index, "dtype": self.dtype, "tolerance": self.tolerance,
                "equal": self.equal, "bit_exact": self.bit_exact, "input_sets": self.input_sets,
                "differing_elements": self.differing_elements, "size": self.size,
                "max_abs_diff": self.max_abs_diff, "max_ulp": self.max_ulp,
                "first_failing_set": self.first_failing_set, "verdict": self.verdict}


def within_tolerance(ours: np.ndarray, theirs: np.ndarray) -> bool:
    """Ints equal; floats within FLOAT_ULP_BOUND ulp, element by element."""
    agreement = Agreement(0, np.asarray(ours).dtype.name)
    agreement.add(np.asarray(ours), theirs)
    return agreement.equal


def _oracle_arena(ours) -> int:
    return max(ours.arena_required_bytes() * 2, 1 << 16)


def check_against_oracle(data: bytes, ours, input_sets: Sequence[Sequence[np.ndarray]],
                         progress: Optional[Callable[[int, int], None]] = None) -> list[Agreement]:
    """Run micro_rt's interpreter `ours` and the oracle on each input set; one Agreement per
    output. OracleError when the oracle refuses the model. `ours` is reset first: the oracle
    starts fresh, and a stateful model (variables, a kernel's own state) must start alike."""
    theirs = interpreter(data, _oracle_arena(ours))
    ours.reset()
    agreements = [Agreement(k, np.dtype(ours.get_output_details(k)["dtype"]).name)
                  for k in range(ours.num_outputs)]
    for n, inputs in enumerate(input_sets):
        if progress is not None:
            progress(n, len(input_sets))
        for i, x in enumerate(inputs):
            ours.set_input(x, i)
        ours.invoke()
        invoke(theirs, inputs)
        for a in agreements:
            a.add(ours.get_output(a.index), np.array(theirs.get_output(a.index)))
    return agreements


def paired(data: bytes, preserve_all_tensors: bool = False, **interpreter_kwargs):
    """micro_rt's interpreter and the oracle's on the same model, the oracle's arena sized
    from micro_rt's minimum with room to spare. micro_rt's kernels are the oracle's build's,
    reference, unless `interpreter_kwargs` name others."""
    from .interpreter import Interpreter
    interpreter_kwargs.setdefault("kernels", "reference")
    ours = Interpreter.from_bytes(data, preserve_all_tensors=preserve_all_tensors, **interpreter_kwargs)
    theirs = interpreter(data, _oracle_arena(ours), preserve_all_tensors)
    return ours, theirs


def invoke_both(ours, theirs, inputs: Sequence[np.ndarray]) -> None:
    """Give both interpreters the same inputs and invoke them."""
    for i, x in enumerate(inputs):
        ours.set_input(x, i)
        theirs.set_input(x, i)
    ours.invoke()
    theirs.invoke()


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
            if not within_tolerance(a, b):
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
            if not within_tolerance(a, b):
                return (f"op {node.index} {node.op_name}: output tensor {t} "
                        f"('{ours.tensors[t].name}') differs in {int(np.count_nonzero(a != b))} "
                        f"of {a.size} elements")
    return None
