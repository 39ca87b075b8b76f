#!/usr/bin/env python3
"""The TFLM oracle's side of make_models_ops.py (project venv, no TensorFlow).

    .venv/bin/python models/tflm_ops.py                  # op x type acceptance table (markdown)
    .venv/bin/python models/tflm_ops.py --json           # the same as JSON
    .venv/bin/python models/tflm_ops.py --describe F...  # ops and tensor types per model (micro_rt's reader)
    .venv/bin/python models/tflm_ops.py --run MODEL IN.npz OUT.npz   # one model in the oracle

Acceptance table: for each operator of issue 12 and each tensor type, a one-operator model is written with
`micro_rt.builder.ModelBuilder` and run in `tflite_micro.runtime` in a child process (the
oracle can crash outright): allocate, set seeded inputs, invoke.  The verdict is `ok`, the
oracle's own error text (its MicroPrintf lines plus the Python exception), or `not
registered` when the oracle's op resolver has no kernel for the op.  Every other builtin
operator of the schema is also tried once, to list what the oracle does not register at all.

Quantized tensors get a plain scale/zero point (int16: zero point 0) except where a
kernel demands fixed output parameters (LOG_SOFTMAX, L2_NORMALIZATION), so a refusal reads
as a refusal of the type, not of the quantization.  Integer inputs of integer kernels are
drawn from 1..9 (no division by zero); index tensors are constants.
"""
from __future__ import annotations

import json
import re
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from micro_rt import schema
from micro_rt.builder import ModelBuilder

TYPES = ("FLOAT32", "INT8", "INT16", "INT32", "INT64", "BOOL")
QUANT = {"INT8": dict(scale=0.05, zero_point=-3), "INT16": dict(scale=0.001, zero_point=0)}
SHORT = {"FLOAT32": "f32", "INT8": "i8", "INT16": "i16", "INT32": "i32", "INT64": "i64",
         "BOOL": "bool"}


class Graph:
    """A one-operator model under construction: graph inputs, constants, outputs."""

    def __init__(self, dtype: str):
        self.dtype = dtype
        self.b = ModelBuilder("micro_rt tflm_ops probe")

    def _q(self, dtype: str, quant: Optional[dict]) -> dict:
        if quant is not None:
            return quant
        return QUANT.get(dtype, {})

    def inp(self, shape, dtype: Optional[str] = None, quant: Optional[dict] = None) -> int:
        dtype = dtype or self.dtype
        t = self.b.add_tensor(f"in{len(self.b.inputs)}", shape, dtype, **self._q(dtype, quant))
        self.b.inputs.append(t)
        return t

    def const(self, values, dtype: str = "INT32", quant: Optional[dict] = None) -> int:
        arr = np.asarray(values)
        return self.b.add_tensor(f"c{len(self.b.tensors)}", arr.shape, dtype,
                                 data=arr.astype(schema.NUMPY_DTYPE[dtype]), **self._q(dtype, quant))

    def out(self, shape, dtype: Optional[str] = None, quant: Optional[dict] = None) -> int:
        dtype = dtype or self.dtype
        t = self.b.add_tensor(f"out{len(self.b.outputs)}", shape, dtype, **self._q(dtype, quant))
        self.b.outputs.append(t)
        return t

    def op(self, name: str, ins, outs, **options) -> bytes:
        self.b.add_operator(name, ins, outs, options=options or None)
        return self.b.build()


def unary(op: str, **options) -> Callable[[Graph], bytes]:
    return lambda g: g.op(op, [g.inp([1, 4, 4, 3])], [g.out([1, 4, 4, 3])], **options)


def binary(op: str, out_dtype: Optional[str] = None) -> Callable[[Graph], bytes]:
    return lambda g: g.op(op, [g.inp([1, 4, 3]), g.inp([1, 4, 3])], [g.out([1, 4, 3], out_dtype)])


def reduce(op: str) -> Callable[[Graph], bytes]:
    return lambda g: g.op(op, [g.inp([1, 4, 3]), g.const([1])], [g.out([1, 3])])


def arg(op: str, out_dtype: str) -> Callable[[Graph], bytes]:
    return lambda g: g.op(op, [g.inp([1, 4, 3]), g.const([1])], [g.out([1, 3], out_dtype)],
                          output_type=out_dtype)


def gather(indices_dtype: str) -> Callable[[Graph], bytes]:
    return lambda g: g.op("GATHER", [g.inp([4, 3]), g.const([2, 0, 3], indices_dtype)],
                          [g.out([3, 3])], axis=0)


def gather_nd(indices_dtype: str) -> Callable[[Graph], bytes]:
    return lambda g: g.op("GATHER_ND", [g.inp([4, 3]), g.const([[2, 1], [0, 0]], indices_dtype)],
                          [g.out([2])])


def transpose_conv(bias: bool) -> Callable[[Graph], bytes]:
    def make(g: Graph) -> bytes:
        wtype = "INT8" if g.dtype in ("INT8", "INT16") else g.dtype
        w = g.const(np.arange(2 * 3 * 3 * 2).reshape(2, 3, 3, 2) % 5 - 2, wtype,
                    quant=dict(scale=[0.02, 0.03], zero_point=0) if wtype == "INT8" else None)
        ins = [g.const([1, 8, 8, 2]), w, g.inp([1, 4, 4, 2])]
        if bias:
            btype = {"INT8": "INT32", "INT16": "INT64"}.get(g.dtype, g.dtype)
            bq = (dict(scale=[0.05 * 0.02, 0.05 * 0.03], zero_point=0) if g.dtype == "INT8" else
                  dict(scale=[0.001 * 0.02, 0.001 * 0.03], zero_point=0) if g.dtype == "INT16" else None)
            ins.append(g.const([3, -4], btype, quant=bq))
        return g.op("TRANSPOSE_CONV", ins, [g.out([1, 8, 8, 2])], padding="SAME", stride_w=2, stride_h=2)
    return make


def embedding_lookup(g: Graph) -> bytes:
    value = g.const(np.arange(20).reshape(5, 4) % 7 - 3, g.dtype)
    return g.op("EMBEDDING_LOOKUP", [g.const([3, 0, 4]), value], [g.out([3, 4])])


def embedding_lookup_hybrid(g: Graph) -> bytes:
    """int8 table, float32 output: TFLM's hybrid path (table dequantized on lookup; TFLM
    wants a symmetric table, zero point 0, as dynamic-range quantization writes it)."""
    value = g.const(np.arange(20).reshape(5, 4) % 7 - 3, g.dtype,
                    quant=dict(scale=0.05, zero_point=0) if g.dtype in QUANT else None)
    return g.op("EMBEDDING_LOOKUP", [g.const([3, 0, 4]), value], [g.out([3, 4], "FLOAT32")])


def prelu(g: Graph) -> bytes:
    """TFLM wants an int8 alpha under int16 activations (what 16x8 quantization would give)."""
    alpha = ([[0.1, 0.2, -0.5]] if g.dtype == "FLOAT32" else [[1, 2, -5]])
    atype = "INT8" if g.dtype == "INT16" else g.dtype
    return g.op("PRELU", [g.inp([1, 4, 3]), g.const(alpha, atype)], [g.out([1, 4, 3])])


def split(g: Graph) -> bytes:
    return g.op("SPLIT", [g.const(1), g.inp([2, 4])], [g.out([2, 2]), g.out([2, 2])], num_splits=2)


def split_v(g: Graph) -> bytes:
    return g.op("SPLIT_V", [g.inp([2, 5]), g.const([2, 3]), g.const(1)],
                [g.out([2, 2]), g.out([2, 3])], num_splits=2)


# op (or op with a variant note) -> how to build it for a given tensor type
PROBES: dict[str, Callable[[Graph], bytes]] = {
    "ABS": unary("ABS"), "CEIL": unary("CEIL"), "COS": unary("COS"), "ELU": unary("ELU"),
    "EXP": unary("EXP"), "FLOOR": unary("FLOOR"), "LOG": unary("LOG"), "NEG": unary("NEG"),
    "ROUND": unary("ROUND"), "RSQRT": unary("RSQRT"), "SIN": unary("SIN"), "SQRT": unary("SQRT"),
    "SQUARE": unary("SQUARE"), "ZEROS_LIKE": unary("ZEROS_LIKE"),
    "LOGICAL_NOT": unary("LOGICAL_NOT"),
    "LOG_SOFTMAX": lambda g: g.op("LOG_SOFTMAX", [g.inp([1, 4, 4, 3])], [g.out(
        [1, 4, 4, 3], quant=dict(scale=16 / 256, zero_point=127) if g.dtype == "INT8" else None)]),
    "L2_NORMALIZATION": lambda g: g.op("L2_NORMALIZATION", [g.inp([1, 4, 4, 3])], [g.out(
        [1, 4, 4, 3], quant=dict(scale=1 / 128, zero_point=0) if g.dtype == "INT8" else None)]),
    "ADD_N": lambda g: g.op("ADD_N", [g.inp([1, 4, 3]) for _ in range(3)], [g.out([1, 4, 3])]),
    "DIV": binary("DIV"), "FLOOR_DIV": binary("FLOOR_DIV"), "FLOOR_MOD": binary("FLOOR_MOD"),
    "SQUARED_DIFFERENCE": binary("SQUARED_DIFFERENCE"),
    "PRELU": prelu,
    "LOGICAL_AND": binary("LOGICAL_AND"), "LOGICAL_OR": binary("LOGICAL_OR"),
    "EQUAL": binary("EQUAL", "BOOL"), "NOT_EQUAL": binary("NOT_EQUAL", "BOOL"),
    "GREATER": binary("GREATER", "BOOL"), "GREATER_EQUAL": binary("GREATER_EQUAL", "BOOL"),
    "LESS": binary("LESS", "BOOL"), "LESS_EQUAL": binary("LESS_EQUAL", "BOOL"),
    "SELECT_V2": lambda g: g.op("SELECT_V2", [g.inp([1, 4, 3], "BOOL"), g.inp([1, 4, 3]),
                                              g.inp([1, 1, 3])], [g.out([1, 4, 3])]),
    "ARG_MAX": arg("ARG_MAX", "INT32"), "ARG_MAX (output int64)": arg("ARG_MAX", "INT64"),
    "ARG_MIN": arg("ARG_MIN", "INT32"), "ARG_MIN (output int64)": arg("ARG_MIN", "INT64"),
    "BATCH_MATMUL": lambda g: g.op("BATCH_MATMUL", [g.inp([2, 3, 4]), g.inp([2, 4, 5])],
                                   [g.out([2, 3, 5])]),
    "BATCH_TO_SPACE_ND": lambda g: g.op("BATCH_TO_SPACE_ND", [g.inp([4, 2, 2, 1]), g.const([2, 2]),
                                                              g.const([[0, 0], [0, 0]])], [g.out([1, 4, 4, 1])]),
    "SPACE_TO_BATCH_ND": lambda g: g.op("SPACE_TO_BATCH_ND", [g.inp([1, 4, 4, 1]), g.const([2, 2]),
                                                              g.const([[0, 0], [0, 0]])], [g.out([4, 2, 2, 1])]),
    "BROADCAST_ARGS": lambda g: g.op("BROADCAST_ARGS", [g.const([2, 1, 3], g.dtype),
                                                        g.const([4, 1], g.dtype)], [g.out([3])]),
    "BROADCAST_TO": lambda g: g.op("BROADCAST_TO", [g.inp([1, 3]), g.const([2, 3])], [g.out([2, 3])]),
    "CUMSUM": lambda g: g.op("CUMSUM", [g.inp([2, 4]), g.const(1)], [g.out([2, 4])]),
    "DEPTH_TO_SPACE": lambda g: g.op("DEPTH_TO_SPACE", [g.inp([1, 2, 2, 4])], [g.out([1, 4, 4, 1])],
                                     block_size=2),
    "SPACE_TO_DEPTH": lambda g: g.op("SPACE_TO_DEPTH", [g.inp([1, 4, 4, 1])], [g.out([1, 2, 2, 4])],
                                     block_size=2),
    "DYNAMIC_UPDATE_SLICE": lambda g: g.op("DYNAMIC_UPDATE_SLICE", [g.inp([4, 4]), g.inp([2, 2]),
                                                                    g.const([1, 2])], [g.out([4, 4])]),
    "DYNAMIC_UPDATE_SLICE (int64 start)": lambda g: g.op(
        "DYNAMIC_UPDATE_SLICE", [g.inp([4, 4]), g.inp([2, 2]), g.const([1, 2], "INT64")], [g.out([4, 4])]),
    "EMBEDDING_LOOKUP": embedding_lookup,
    "EMBEDDING_LOOKUP (float32 output)": embedding_lookup_hybrid,
    "FILL": lambda g: g.op("FILL", [g.const([2, 3]), g.inp([])], [g.out([2, 3])]),
    "FILL (int64 dims)": lambda g: g.op("FILL", [g.const([2, 3], "INT64"), g.inp([])], [g.out([2, 3])]),
    "GATHER": gather("INT32"), "GATHER (int64 indices)": gather("INT64"),
    "GATHER (int16 indices)": gather("INT16"),
    "GATHER_ND": gather_nd("INT32"), "GATHER_ND (int64 indices)": gather_nd("INT64"),
    "L2_POOL_2D": lambda g: g.op("L2_POOL_2D", [g.inp([1, 4, 4, 2])], [g.out([1, 2, 2, 2])],
                                 padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2),
    "MIRROR_PAD": lambda g: g.op("MIRROR_PAD", [g.inp([1, 3, 3, 1]), g.const([[0, 0], [1, 1], [2, 2], [0, 0]])],
                                 [g.out([1, 5, 7, 1])], mode=0),
    "REDUCE_ALL": reduce("REDUCE_ALL"), "REDUCE_MAX": reduce("REDUCE_MAX"),
    "REDUCE_MIN": reduce("REDUCE_MIN"), "SUM": reduce("SUM"),
    "RESIZE_BILINEAR": lambda g: g.op("RESIZE_BILINEAR", [g.inp([1, 2, 3, 2]), g.const([4, 6])],
                                      [g.out([1, 4, 6, 2])]),
    "RESIZE_NEAREST_NEIGHBOR": lambda g: g.op("RESIZE_NEAREST_NEIGHBOR", [g.inp([1, 2, 3, 2]), g.const([4, 6])],
                                              [g.out([1, 4, 6, 2])]),
    "REVERSE_V2": lambda g: g.op("REVERSE_V2", [g.inp([2, 4]), g.const([1])], [g.out([2, 4])]),
    "SLICE": lambda g: g.op("SLICE", [g.inp([3, 4]), g.const([1, 1]), g.const([2, 2])], [g.out([2, 2])]),
    "SPLIT": split, "SPLIT_V": split_v,
    "TRANSPOSE_CONV": transpose_conv(bias=True), "TRANSPOSE_CONV (no bias)": transpose_conv(bias=False),
    "UNPACK": lambda g: g.op("UNPACK", [g.inp([2, 3])], [g.out([3]), g.out([3])], num=2, axis=0),
}


# Probes whose quantized inputs must map to positive reals (RSQRT refuses negative input).
POSITIVE = {"RSQRT"}
# TFLM's FILL refusal prints a type name's address with %d ("got <n>", a different number
# every run): keep the table reproducible.
_GARBAGE = re.compile(r"(for input 1, got )-?\d+")
_NODE_FAILED = re.compile(r"Node \S+ \(number \d+\) failed to (invoke|prepare) with status \d+$")


@dataclass
class Verdict:
    status: str          # ok | refused | crashed | not registered | not built
    detail: str = ""
    allocations: Optional[dict] = None


def run_model(path: str, inputs: Optional[str] = None, outputs: Optional[str] = None,
              seed: int = 0, positive: bool = False) -> Verdict:
    """Run one model in the oracle in a child process (this file with --child).

    `inputs`: an .npz with arrays `step<k>_in<i>` (one invoke per step, state kept between
    steps); without it one invoke on seeded random inputs.  `outputs`: where the child
    writes `step<k>_out<i>`."""
    args = [sys.executable, __file__, "--child", path, inputs or "-", outputs or "-", str(seed),
            "pos" if positive else "any"]
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return Verdict("crashed", "no answer within 300 s")
    if r.returncode < 0:
        return Verdict("crashed", f"signal {-r.returncode}")
    try:
        return Verdict(**json.loads(r.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError, TypeError):
        return Verdict("crashed", f"exit {r.returncode}: {r.stderr.strip()[-200:]}")


def run_bytes(data: bytes, seed: int = 0, positive: bool = False) -> Verdict:
    with tempfile.NamedTemporaryFile(suffix=".tflite", delete=False) as f:
        f.write(data)
    try:
        return run_model(f.name, seed=seed, positive=positive)
    finally:
        os.unlink(f.name)


def random_input(rng: np.random.Generator, details: dict, positive: bool) -> np.ndarray:
    dtype = np.dtype(details["dtype"])
    shape = tuple(int(d) for d in details["shape"])
    q = details["quantization_parameters"]
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype in (np.int8, np.int16) and q["scales"].size:
        info = np.iinfo(dtype)
        lo = int(q["zero_points"][0]) + 1 if positive else info.min
        return rng.integers(lo, int(info.max) + 1, shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(1, 10, shape).astype(dtype)
    return rng.uniform(0.1, 2.0, shape).astype(dtype)


def _count(getter) -> int:
    n = 0
    while True:
        try:
            getter(n)
        except Exception:  # noqa: BLE001 - the oracle has no input/output count
            return n
        n += 1


def _child(path: str, inputs: str, outputs: str, seed: int, positive: bool) -> None:
    """Load, allocate, invoke; print one JSON verdict line.  TFLM's MicroPrintf goes to fd 2."""
    log = tempfile.TemporaryFile()
    os.dup2(log.fileno(), 2)

    def printed() -> str:
        log.seek(0)
        lines = [ln.strip() for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
        log.seek(0)
        log.truncate()
        # TFLM's closing "Node X (number n) failed to ..." line adds nothing to a reason.
        said = [ln for ln in dict.fromkeys(lines) if not _NODE_FAILED.match(ln)] or lines[-1:]
        return _GARBAGE.sub(r"\1<a pointer>", " | ".join(said))

    def verdict(status: str, detail: str = "", allocations: Optional[dict] = None) -> None:
        print(json.dumps(dict(status=status, detail=detail, allocations=allocations)))

    from tflite_micro import runtime
    data = open(path, "rb").read()
    try:
        it = runtime.Interpreter.from_bytes(data, arena_size=max(1 << 16, 16 * len(data)))
    except Exception as e:  # noqa: BLE001 - the oracle raises RuntimeError/ValueError
        text = printed() or str(e)
        return verdict("not registered" if "Didn't find op for builtin opcode" in text else "refused",
                       f"load: {text}")
    printed()
    it.print_allocations()
    found = dict(re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", printed()))
    allocations = {k: int(v) for k, v in found.items()}
    n_in, n_out = _count(it.get_input_details), _count(it.get_output_details)
    printed()
    if inputs == "-":
        rng = np.random.default_rng(seed)
        steps = [[random_input(rng, it.get_input_details(i), positive) for i in range(n_in)]]
    else:
        arrays = np.load(inputs)
        steps = [[arrays[f"step{k}_in{i}"] for i in range(n_in)]
                 for k in range(len({n.split("_")[0] for n in arrays.files}))]
    results = {}
    for k, xs in enumerate(steps):
        for i, x in enumerate(xs):
            it.set_input(x, i)
        try:
            it.invoke()
        except Exception as e:  # noqa: BLE001
            return verdict("refused", f"invoke: {printed() or e}", allocations)
        for i in range(n_out):
            results[f"step{k}_out{i}"] = np.array(it.get_output(i))
    if outputs != "-":
        np.savez(outputs, **results)
    verdict("ok", "", allocations)


def matrix(jobs: int = 2) -> dict:
    """{probe name: {type: verdict}} for PROBES, and the builtins the oracle does not register."""
    work = [(name, dtype, make) for name, make in PROBES.items() for dtype in TYPES]
    others = [op for op in schema.BUILTIN_OPS
              if op not in ("CUSTOM", "DELEGATE", "PLACEHOLDER_FOR_GREATER_OP_CODES")]

    def probe(item) -> Verdict:
        name, dtype, make = item
        try:
            data = make(Graph(dtype))
        except Exception as e:  # noqa: BLE001 - e.g. a type numpy cannot cast the constants to
            return Verdict("not built", str(e))
        return run_bytes(data, positive=name.split()[0] in POSITIVE)

    def registered(op: str) -> Verdict:
        g = Graph("FLOAT32")
        return run_bytes(g.op(op, [g.inp([1, 4])], [g.out([1, 4])]))

    with ThreadPoolExecutor(jobs) as pool:
        verdicts = list(pool.map(probe, work))
        reg = list(pool.map(registered, others))
    table: dict = {}
    for (name, dtype, _), v in zip(work, verdicts):
        table.setdefault(name, {})[dtype] = dict(status=v.status, detail=v.detail)
    missing = [op for op, v in zip(others, reg) if v.status == "not registered"]
    return {"types": list(TYPES), "probes": table, "not_registered": missing}


def markdown(result: dict) -> str:
    """The acceptance table: one row per probe, one column per type, refusals footnoted."""
    types = result["types"]
    notes: dict[str, int] = {}
    rows = []
    for name, per_type in result["probes"].items():
        cells = []
        for t in types:
            v = per_type[t]
            if v["status"] == "ok":
                cells.append("yes")
                continue
            key = f"{v['status']}: {v['detail']}" if v["detail"] else v["status"]
            n = notes.setdefault(key, len(notes) + 1)
            cells.append(f"no [{n}]")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    head = ("| op | " + " | ".join(SHORT[t] for t in types) + " |\n|---|"
            + "---|" * len(types) + "\n")
    foot = "\n".join(f"{n}. {key.replace('|', '/')}" for key, n in notes.items())
    missing = ", ".join(result["not_registered"])
    return (head + "\n".join(rows) + "\n\nWhy not (the oracle's own words):\n\n" + foot +
            f"\n\nBuiltin operators the oracle does not register at all: {missing}.\n")


def _data_type(op, sg) -> str:
    """The type an op works in: its first output's, or its first input's for ops whose output
    type says nothing about the kernel (comparisons, ARG_MAX/MIN, SHAPE) or that have none."""
    name = op.op_name
    by_input = name in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL",
                        "ARG_MAX", "ARG_MIN", "SHAPE", "QUANTIZE", "DEQUANTIZE")
    if op.outputs and not by_input:
        return sg.tensors[op.outputs[0]].type_name
    ins = [i for i in op.inputs if i >= 0]
    if name == "ASSIGN_VARIABLE":
        ins = ins[1:]
    return sg.tensors[ins[0]].type_name if ins else "-"


def describe(path: str) -> dict:
    """Ops (with the type each works in) and tensor types per subgraph, by micro_rt's reader."""
    from micro_rt.model import read_model
    model = read_model(Path(path).read_bytes())
    out = []
    for sg in model.subgraphs:
        out.append(dict(
            ops=[f"{op.op_name}:{_data_type(op, sg)}" for op in sg.operators],
            tensor_types=sorted({t.type_name for t in sg.tensors}),
            inputs=[f"{sg.tensors[i].type_name}{list(sg.tensors[i].shape)}" for i in sg.inputs],
            outputs=[f"{sg.tensors[i].type_name}{list(sg.tensors[i].shape)}" for i in sg.outputs]))
    return {"subgraphs": out}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2], argv[3], int(argv[4]), argv[5] == "pos")
        return 0
    if argv[:1] == ["--run"]:
        print(json.dumps(run_model(*argv[1:4]).__dict__))
        return 0
    if argv[:1] == ["--describe"]:
        print(json.dumps({p: describe(p) for p in argv[1:]}))
        return 0
    result = matrix()
    if "--json" in argv:
        from importlib.metadata import version
        result.update(version=version("tflite_micro"), markdown=markdown(result))
        print(json.dumps(result, indent=1))
    else:
        print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
