#!/usr/bin/env python3
"""Run every models/*.tflite in the TFLM oracle and compare with LiteRT.

Uses the project venv with the LiteRT extra (`pip install -e ".[test,litert]"`; no TensorFlow needed):

    .venv/bin/python models/check_models.py

For each model: load it with ``tflite_micro.runtime`` (TFLM's Python
interpreter, all builtin ops registered), feed seeded random inputs, invoke,
and compare every output with LiteRT's reference kernels
(``OpResolverType.BUILTIN_REF``).  Prints the arena bytes TFLM reported and the
number of output elements that differ (int8: count and max difference in LSB;
float: max absolute difference).  Exits non-zero if TFLM cannot load or run a
model.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
from tflite_micro import runtime

try:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError:  # LiteRT is optional: TFLM is the oracle
    Interpreter = None

MODELS_DIR = Path(__file__).resolve().parent


def arena_bytes(interp) -> int | None:
    """print_allocations() writes to fd 2 from C++; capture it with dup2."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(tmp.fileno(), 2)
            interp.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    m = re.search(r"Arena allocation total (\d+) bytes", text)
    return int(m.group(1)) if m else None


def _count(getter) -> int:
    """Number of inputs/outputs: probe getter(i) until it raises (TFLM logs the
    failed probe on fd 2, so mute fd 2 meanwhile)."""
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        sys.stderr.flush()
        os.dup2(devnull, 2)
        n = 0
        while True:
            try:
                getter(n)
            except Exception:  # noqa: BLE001
                return n
            n += 1
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def random_input(rng, details):
    dtype = np.dtype(details["dtype"])
    shape = tuple(details["shape"])
    if dtype == np.int8:
        return rng.integers(-128, 128, shape, dtype=np.int8)
    if dtype == np.uint8:
        return rng.integers(0, 256, shape, dtype=np.uint8)
    return rng.uniform(-1, 1, shape).astype(dtype)


def check(path: Path, seed: int = 0):
    data = path.read_bytes()
    tflm = runtime.Interpreter.from_bytes(data)
    rng = np.random.default_rng(seed)
    xs = [random_input(rng, tflm.get_input_details(i))
          for i in range(_count(tflm.get_input_details))]
    for i, x in enumerate(xs):
        tflm.set_input(x, i)
    tflm.invoke()
    outs = [np.array(tflm.get_output(i)) for i in range(_count(tflm.get_output_details))]
    arena = arena_bytes(tflm)

    diffs = []
    if Interpreter is not None:
        lrt = Interpreter(model_content=data,
                          experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
        lrt.allocate_tensors()
        for d, x in zip(lrt.get_input_details(), xs):
            lrt.set_tensor(d["index"], x.reshape(d["shape"]))
        lrt.invoke()
        for d, y in zip(lrt.get_output_details(), outs):
            r = lrt.get_tensor(d["index"])
            if r.shape != y.shape:
                diffs.append(f"shape {y.shape} vs LiteRT {r.shape}")
            elif np.issubdtype(y.dtype, np.integer):
                n = int(np.count_nonzero(r != y))
                diffs.append("exact" if n == 0 else
                             f"{n}/{y.size} differ (max {int(np.max(np.abs(r.astype(int) - y.astype(int))))} LSB)")
            else:
                diffs.append(f"max |diff| {float(np.max(np.abs(r - y))):.2g}")
    return xs, outs, arena, diffs


def _custom_ops(path: Path) -> list[str]:
    from micro_rt.model import read_model
    model = read_model(path.read_bytes())
    return sorted({op.op_name for sg in model.subgraphs for op in sg.operators if op.is_custom})


def main(argv):
    from importlib.metadata import version
    paths = [Path(a) for a in argv] or sorted(MODELS_DIR.glob("*.tflite"))
    failed = 0
    print(f"tflite_micro {version('tflite_micro')}"
          + (f", ai-edge-litert {version('ai-edge-litert')}" if Interpreter is not None else ""))
    skipped = 0
    for p in paths:
        custom = _custom_ops(p)
        if custom:   # e.g. custom_atan: it exists to be refused until its op is registered
            skipped += 1
            print(f"{p.name:34s} skipped: custom op {', '.join(custom)} (no kernel in the oracle)")
            continue
        try:
            xs, outs, arena, diffs = check(p)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"{p.name:34s} FAILED in TFLM: {e}")
            continue
        ins = " ".join(f"{x.dtype}{list(x.shape)}" for x in xs)
        os_ = " ".join(f"{y.dtype}{list(y.shape)}" for y in outs)
        print(f"{p.name:34s} arena {arena!s:>6} B  {ins} -> {os_}")
        if diffs:
            print(f"{'':34s} vs LiteRT ref: {'; '.join(diffs)}")
    print(f"{len(paths) - failed - skipped}/{len(paths) - skipped} models ran in TFLM"
          + (f" ({skipped} with custom ops skipped)" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
