"""Cycles per MAC (weighted layers) or per element (everything else) of every C kernel of the
virtual MCU (issue 12), one single-operator model per (operator, input type).

    python benchmarks/bench_op_cycles.py [--cores cortex-m0plus cortex-m4] [--only CONV_2D ...]
                                         [--kernels cmsis-nn|reference] [--json out.json] [--write]
    python benchmarks/bench_op_cycles.py --flavours [--cores ...] [--write]

The list of kernels is micro_rt.cortexm.ops.KERNELS: a kernel registered there later appears
here without editing this script. Each (op, type) runs on a builder-made model of one
operator: a representative shape from SHAPES below when the operator has one, otherwise the
first case of devtools/op_models/type_cases.py (the table-driven type cases every operator adds,
shared with the tests) whose input has that type and that micro_rt accepts; those cases are
tiny, so the call's fixed cost weighs in their per-element figure (the `model` column says
which). Kernels registered for any element type (data movement) run on int8 data where a type
case has it. The SVDF, LSTM, Signal, detection and circular-buffer models come from
devtools/op_models/ too.

Per row: MACs (micro_rt.analysis.op_macs), elements (the larger of the first input and the
output), instructions and cycles of one invoke (micro_rt.inputs.random_inputs, seed 1) with
`kernels="cmsis-nn"`, and cycles per MAC,
or per element when the operator has no MACs. A row whose operator did not run on the MCU says
so (a hole in the profile). The second table sets the int16 (16x8) weighted layers against
their int8 twins of the same shape. --write puts both into RESULTS.md (section op-cycles).
`--kernels reference` measures the reference flavour's kernels instead (printed, not written).

--flavours (issue 14) runs every kernel the reference flavour replaces
(micro_rt.cortexm.ops.REFERENCE_KERNELS: TFLM's reference loops in plain C) and its CMSIS-NN-style
counterpart on the same model, per core: cycles per MAC or element and stack of each, and how
many times the reference's cycles the optimized kernel saves; --write puts that table into
RESULTS.md (section op-cycles-flavours).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from dataclasses import asdict, dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Iterator, Optional  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # devtools/: the op models the tests share, dev-only (not in the wheel)
TYPE_NAME = {"int8": "INT8", "int16": "INT16", "float32": "FLOAT32", "any": "INT8"}
WEIGHTED = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
# Output quantization TFLM requires of these operators (scale, zero point) per output type.
FIXED_OUT = {"LOGISTIC": {"INT8": (1 / 256, -128), "INT16": (1 / 32768, 0)},
             "TANH": {"INT8": (1 / 128, 0), "INT16": (1 / 32768, 0)},
             "SOFTMAX": {"INT8": (1 / 256, -128), "INT16": (1 / 32768, 0)}}


def _t(shape, typ: str, scale: float = 0.05, zp: int = 0, data=None, qdim: int = 0) -> dict:
    """A tensor spec: quantized types get a scale and zero point (int16: zero point 0)."""
    d = dict(shape=tuple(shape), type=typ, data=data, qdim=qdim)
    if typ in ("INT8", "INT16"):
        d.update(scale=scale, zp=zp if typ == "INT8" else 0)
    return d


def _i32(values) -> dict:
    values = np.asarray(values, np.int32)
    return dict(shape=values.shape, type="INT32", data=values)


def single_op(op: str, inputs: list[dict], output: dict, options: Optional[dict] = None) -> bytes:
    """A model of one operator; inputs without data are the graph inputs."""
    from micro_rt.builder import ModelBuilder
    b = ModelBuilder("op cycles")
    ins = [b.add_tensor(f"in{k}", s["shape"], s["type"], data=s.get("data"), scale=s.get("scale"),
                        zero_point=s.get("zp"), quantized_dimension=s.get("qdim", 0))
           for k, s in enumerate(inputs)]
    out = b.add_tensor("out", output["shape"], output["type"], scale=output.get("scale"),
                       zero_point=output.get("zp"))
    b.add_operator(op, ins, [out], options=options or {})
    b.inputs, b.outputs = [i for i, s in zip(ins, inputs) if s.get("data") is None], [out]
    return b.build()


def _layer(op: str, typ: str) -> bytes:
    """A mid-sized layer of a vision / keyword-spotting model; int16 means 16x8 (int8 weights,
    int64 bias), float32 float weights; per-channel weight scales for the quantized types."""
    rng = np.random.default_rng(0)
    q = typ != "FLOAT32"
    wtype, btype = ("INT8", "INT64" if typ == "INT16" else "INT32") if q else ("FLOAT32", "FLOAT32")
    if op == "CONV_2D":
        x, w, y, oc, qdim = (1, 16, 16, 16), (32, 3, 3, 16), (1, 16, 16, 32), 32, 0
        opts = {"padding": "SAME", "stride_h": 1, "stride_w": 1}
    elif op == "DEPTHWISE_CONV_2D":
        x, w, y, oc, qdim = (1, 16, 16, 32), (1, 3, 3, 32), (1, 16, 16, 32), 32, 3
        opts = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "depth_multiplier": 1}
    else:
        x, w, y, oc, qdim = (1, 256), (64, 256), (1, 64), 64, 0
        opts = {}
    wscale = list(rng.uniform(0.002, 0.01, oc)) if q and op != "FULLY_CONNECTED" else 0.005
    weights = rng.integers(-127, 128, w) if q else rng.uniform(-0.5, 0.5, w)
    bias_scale = 0.05 * (np.asarray(wscale) if isinstance(wscale, list) else wscale)
    bias = rng.integers(-2000, 2000, oc) if q else rng.uniform(-1, 1, oc)
    return single_op(op, [_t(x, typ, 0.05, -3), _t(w, wtype, wscale, 0, weights, qdim),
                          _t((oc,), btype, bias_scale, 0, bias)], _t(y, typ, 0.2, 5), opts)


def _unary(op: str, typ: str, options: Optional[dict] = None) -> bytes:
    s = (1, 16, 16, 16)
    scale, zp = FIXED_OUT.get(op, {}).get(typ, (0.04, 2))
    return single_op(op, [_t(s, typ, 0.03, 1)], _t(s, typ, scale, zp), options)


def _binary(op: str, typ: str) -> bytes:
    s = (1, 16, 16, 16)
    same = op in ("MAXIMUM", "MINIMUM")
    return single_op(op, [_t(s, typ, 0.05, 1), _t(s, typ, 0.05 if same else 0.07, -2)],
                     _t(s, typ, 0.05 if same else 0.1, 3))


def _pool(op: str, typ: str) -> bytes:
    return single_op(op, [_t((1, 16, 16, 16), typ)], _t((1, 8, 8, 16), typ),
                     {"padding": "VALID", "stride_h": 2, "stride_w": 2, "filter_height": 2, "filter_width": 2})


def _quantize(op: str, typ: str) -> bytes:
    s = (1, 4096)
    to = {"QUANTIZE": {"FLOAT32": "INT8", "INT8": "INT16", "INT16": "INT8"}, "DEQUANTIZE": {}}[op].get(typ, "FLOAT32")
    return single_op(op, [_t(s, typ, 0.02, 1)], _t(s, to, 0.03, -1))


def _svdf(op: str, typ: str) -> bytes:
    """A keyword-spotting SVDF layer: 64 inputs, 128 filters, memory 16, int16 state (as the
    converter writes it)."""
    from devtools.op_models.svdf import svdf_model
    return svdf_model(1, 64, 128, 1, 16, "int16" if typ == "INT8" else "float")


def _lstm(op: str, typ: str) -> bytes:
    """A keyword-spotting LSTM layer: 8 steps of 32 inputs, 32 cells."""
    from devtools.op_models.lstm import lstm_model
    return lstm_model({"INT8": "int8", "INT16": "int16"}.get(typ, "float32"), 1, 8, 32, 32)


def _signal(op: str, typ: str) -> bytes:
    """A Signal op of an audio front end, one of the cases tests/test_vmcu_signal.py runs
    (devtools/op_models/signal.py; the first case of that op whose input type matches: int16 /
    int32 / float32; "INT8" stands for the kernel registered for any type, e.g. the uint32
    filter banks and the int32 FFTs)."""
    from devtools.op_models.signal import signal_cases, wide_fft_cases
    from devtools.op_models.signal import single_op as signal_op
    from micro_rt.model import read_model
    if op == "SignalFilterBankSquareRoot":          # its scale bits a constant: random ones are refused
        return signal_op(op, [((40,), "UINT64"), ((), "INT32", np.array(7, np.int32))], [((40,), "UINT32")], {})
    rng = np.random.default_rng(0)
    for _, data, _, _ in signal_cases(rng) + wide_fft_cases(rng):
        sg = read_model(data).main
        node = sg.operators[0]
        dtype = np.dtype(sg.tensors[node.inputs[0]].dtype).name.upper()
        if node.op_name == op and (dtype == typ or (typ == "INT8" and dtype not in ("INT16", "FLOAT32"))):
            return data
    raise LookupError(f"no Signal case for {op} {typ}")


def _detection(op: str, typ: str) -> bytes:
    """An SSD head's post-processing: 400 anchors, 10 classes + background, regular NMS, 10
    detections (seeded anchors and options of devtools/op_models/detection.py)."""
    from devtools.op_models.detection import ssd_head
    return ssd_head(400, 10, True, True, 10, score_threshold=0.5)


def _circular_buffer(op: str, typ: str) -> bytes:
    """A streaming keyword-spotting buffer: 13 slots of 1 x 40 int8 (period 1: every invoke runs on)."""
    from devtools.op_models.circular_buffer import streaming_model
    return streaming_model(13, 40, None)


def _batch_matmul(op: str, typ: str) -> bytes:
    """An attention-style product: 2 batches of [16, 32] by constant [32, 24] weights (the
    operands TFLM's CMSIS-NN glue hands arm_batch_matmul_s8 for int8)."""
    rng = np.random.default_rng(0)
    rhs = rng.integers(-127, 128, (2, 32, 24)) if typ != "FLOAT32" else rng.uniform(-0.5, 0.5, (2, 32, 24))
    return single_op(op, [_t((2, 16, 32), typ, 0.05, -3), _t((2, 32, 24), typ, 0.01, 0, rhs)],
                     _t((2, 16, 24), typ, 0.2, 5))


def _transpose_conv(op: str, typ: str) -> bytes:
    """A decoder's upsampling layer: [1, 8, 8, 16] to [1, 16, 16, 16], 3x3, stride 2."""
    rng = np.random.default_rng(0)
    q = typ != "FLOAT32"
    wtype, btype = ("INT8", "INT64" if typ == "INT16" else "INT32") if q else ("FLOAT32", "FLOAT32")
    wscale = list(rng.uniform(0.002, 0.01, 16)) if q else 0.005
    weights = rng.integers(-127, 128, (16, 3, 3, 16)) if q else rng.uniform(-0.5, 0.5, (16, 3, 3, 16))
    bias = rng.integers(-2000, 2000, 16) if q else rng.uniform(-1, 1, 16)
    bias_scale = 0.05 * np.asarray(wscale) if q else 0.005
    return single_op(op, [_i32([1, 16, 16, 16]), _t((16, 3, 3, 16), wtype, wscale, 0, weights),
                          _t((1, 8, 8, 16), typ, 0.05, -3), _t((16,), btype, list(bias_scale) if q else 0.005, 0, bias)],
                     _t((1, 16, 16, 16), typ, 0.2, 5), {"padding": "SAME", "stride_h": 2, "stride_w": 2})


# Representative shapes: op -> maker(op, type name) -> model bytes.
SHAPES: dict[str, Callable[[str, str], bytes]] = {
    **{op: _layer for op in WEIGHTED},
    **{op: _binary for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")},
    **{op: _unary for op in ("RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH")},
    "LEAKY_RELU": lambda op, t: _unary(op, t, {"alpha": 0.2}),
    "AVERAGE_POOL_2D": _pool, "MAX_POOL_2D": _pool,
    "SOFTMAX": lambda op, t: single_op(op, [_t((4, 256), t, 0.1)], _t((4, 256), t, *FIXED_OUT[op].get(t, (0.1, 0))),
                                       {"beta": 1.0}),
    "QUANTIZE": _quantize, "DEQUANTIZE": _quantize, "SVDF": _svdf,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    "BATCH_MATMUL": _batch_matmul,
    "TRANSPOSE_CONV": _transpose_conv,
    "MEAN": lambda op, t: single_op(op, [_t((1, 16, 16, 32), t), _i32([1, 2])], _t((1, 1, 1, 32), t, 0.04),
                                    {"keep_dims": True}),
    # TFLM's own custom operators (no type case: devtools/op_models/type_cases.py holds builtins)
    **{op: _signal for op in ("SignalWindow", "SignalFftAutoScale", "SignalRfft", "SignalIrfft", "SignalEnergy",
                              "SignalFilterBank", "SignalFilterBankSquareRoot", "SignalFilterBankSpectralSubtraction",
                              "SignalPCAN", "SignalFilterBankLog", "SignalDelay", "SignalFramer", "SignalStacker",
                              "SignalOverlapAdd")},
    "TFLite_Detection_PostProcess": _detection, "CIRCULAR_BUFFER": _circular_buffer,
}


def _type_cases() -> list[tuple[str, str, bytes]]:
    from devtools.op_models.type_cases import type_cases
    return type_cases()


def _first_input_dtype(data: bytes) -> np.dtype:
    """The element type of the first operator's first input (uint8 for an operator without
    inputs, such as VAR_HANDLE: no kernel is keyed by it)."""
    from micro_rt.model import read_model
    sg = read_model(data).main
    inputs = [i for i in sg.operators[0].inputs if i >= 0]
    return np.dtype(sg.tensors[inputs[0]].dtype) if inputs else np.dtype(np.uint8)


def candidate_models(op: str, dtype: str, fallback: list) -> Iterator[tuple[str, bytes]]:
    """(source, model bytes) to try for kernel (op, dtype): the representative shape, then the
    type cases whose first input the registry maps to this very kernel."""
    from micro_rt.cortexm.ops import KERNELS, kernel_for
    if op in SHAPES:
        yield "representative", SHAPES[op](op, TYPE_NAME[dtype])
    cases = [(label, data) for label, case_op, data in fallback
             if case_op == op and kernel_for(op, _first_input_dtype(data)) is KERNELS[(op, dtype)]]
    # Kernels for any element type: int8 data first (an index or shape input may come first).
    cases.sort(key=lambda case: _first_input_dtype(case[1]) != np.int8)
    for label, data in cases:
        yield f"type case `{label}`", data


@dataclass
class Row:
    op: str
    dtype: str
    core: str
    model: str
    shape: str
    on_mcu: bool
    macs: int
    elements: int
    instructions: int
    cycles: int
    stack_bytes: int = 0
    kernels: str = "cmsis-nn"

    @property
    def per(self) -> str:
        if not self.on_mcu:
            return "host (no C kernel ran)"
        if self.macs:
            return f"{self.cycles / self.macs:.2f} /MAC"
        return f"{self.cycles / self.elements:.2f} /elem"


def measure(op: str, dtype: str, core: str, fallback: list, kernels: str = "cmsis-nn") -> Optional[Row]:
    """One invoke of the first candidate model micro_rt accepts, on `core`, with the C kernels
    of the flavour `kernels`."""
    from micro_rt import Interpreter
    from micro_rt.analysis import op_macs
    from micro_rt.cortexm.ops import DATA_INPUT
    from micro_rt.errors import MicroRtError
    from micro_rt.inputs import random_inputs
    for source, data in candidate_models(op, dtype, fallback):
        try:
            it = Interpreter.from_bytes(data, target=core, kernels=kernels, emulate=True)
        except MicroRtError:
            continue
        try:
            for k, x in enumerate(random_inputs(it, 1)):
                it.set_input(x, k)
            it.invoke()
        except MicroRtError:          # e.g. an index input the random data sends out of range
            continue
        rec = it.last_run[0]
        sg = it.model.main
        node = sg.operators[0]
        ins = [i for i in node.inputs if i >= 0]
        data_input = ins[min(DATA_INPUT.get(node.op_name, 0), len(ins) - 1)] if ins else -1
        first = sg.tensors[data_input].shape if ins else ()          # VAR_HANDLE has no input
        out = sg.tensors[node.outputs[0]].shape if node.outputs else ()
        return Row(op, dtype, core, source, f"{list(first)}->{list(out)}", rec.on_mcu, op_macs(sg, node),
                   max(math.prod(first), math.prod(out)), rec.instructions, rec.cycles, rec.stack_bytes, kernels)
    return None


def markdown(rows: list[Row], missing: list[str], cores: list[str], kernels: str = "cmsis-nn") -> str:
    lines = [results_md.section_header(THREADS),
             "One invoke of a single-operator model per C kernel registered in "
             f"micro_rt.cortexm.ops.KERNELS, `kernels=\"{kernels}\"`, default machine config. "
             "Weighted layers: cycles per MAC; other operators: cycles per element (the larger of "
             "the first input and the output). int16 weighted layers are 16x8 (int8 weights).", "",
             "| op | input type | model | shape | " + " | ".join(f"{c} cycles | {c} per" for c in cores) + " |",
             "|---|---|---|---|" + "---:|---:|" * len(cores)]
    by_key: dict[tuple, dict[str, Row]] = {}
    for r in rows:
        by_key.setdefault((r.op, r.dtype), {})[r.core] = r
    for (op, dtype), per_core in by_key.items():
        first = next(iter(per_core.values()))
        cells = " | ".join(f"{per_core[c].cycles:,} | {per_core[c].per}" if c in per_core else "- | -"
                           for c in cores)
        lines.append(f"| {op} | {dtype} | {first.model} | {first.shape} | {cells} |")
    if missing:
        lines += ["", "No single-operator model micro_rt accepts for: " + ", ".join(missing) + "."]
    lines += ["", "16x8 weighted layers against int8 of the same shape (cycles per MAC):", "",
              "| op | core | int8 | int16 | int16 / int8 |", "|---|---|---:|---:|---:|"]
    for op in WEIGHTED:
        for core in cores:
            a, b = by_key.get((op, "int8"), {}).get(core), by_key.get((op, "int16"), {}).get(core)
            if a and b and a.macs and b.macs and a.on_mcu and b.on_mcu:
                x, y = a.cycles / a.macs, b.cycles / b.macs
                lines.append(f"| {op} | {core} | {x:.2f} | {y:.2f} | {y / x:.2f}x |")
    return "\n".join(lines) + "\n"


def flavour_rows(cores: list[str], fallback: list) -> tuple[list[tuple[Row, Row]], list[str]]:
    """(cmsis-nn row, reference row) per kernel the reference flavour replaces and core."""
    from micro_rt.cortexm.ops import REFERENCE_KERNELS
    pairs, missing = [], []
    for op, dtype in REFERENCE_KERNELS:
        for core in cores:
            cmsis = measure(op, dtype, core, fallback)
            ref = measure(op, dtype, core, fallback, "reference")
            if cmsis is None or ref is None:
                missing.append(f"{op} {dtype}")
                break
            pairs.append((cmsis, ref))
            print(f"{op:20s} {dtype:8s} {core:14s} cmsis-nn {cmsis.per:>14s} reference {ref.per:>14s}", flush=True)
    return pairs, missing


def flavours_markdown(pairs: list[tuple[Row, Row]], missing: list[str]) -> str:
    lines = [results_md.section_header(THREADS),
             "One invoke of the same single-operator model with each flavour's C kernels "
             "(`kernels=\"cmsis-nn\"`: micro_rt's CMSIS-NN-style kernels; `kernels=\"reference\"`: "
             "TFLM's reference loops in plain C, cortexm/src/mrt_ref_*.c), per kernel the reference "
             "flavour replaces (micro_rt.cortexm.ops.REFERENCE_KERNELS), default machine config. "
             "Weighted layers: cycles per MAC; others: cycles per element. Both flavours give the "
             "same output bits; `ref / cmsis` is how many times the optimized kernel's cycles the "
             "reference needs.", "",
             "| op | input type | core | model shape | cmsis-nn per | cmsis-nn stack B | reference per | "
             "reference stack B | ref / cmsis |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for cmsis, ref in pairs:
        ratio = f"{ref.cycles / cmsis.cycles:.2f}x" if cmsis.on_mcu and ref.on_mcu and cmsis.cycles else "-"
        lines.append(f"| {cmsis.op} | {cmsis.dtype} | {cmsis.core} | {cmsis.shape} | {cmsis.per} | "
                     f"{cmsis.stack_bytes} | {ref.per} | {ref.stack_bytes} | {ratio} |")
    if missing:
        lines += ["", "No single-operator model micro_rt accepts for: " + ", ".join(missing) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cores", nargs="+", default=["cortex-m0plus", "cortex-m4"])
    ap.add_argument("--only", nargs="+", help="these operators only (not with --write)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--kernels", choices=["cmsis-nn", "reference"], default="cmsis-nn",
                    help="the flavour of C kernels to measure (--write: cmsis-nn only)")
    ap.add_argument("--flavours", action="store_true",
                    help="the kernels the reference flavour replaces, both flavours side by side")
    ap.add_argument("--write", action="store_true", help="write the tables into RESULTS.md")
    a = ap.parse_args(argv)
    if a.write and a.only:
        ap.error("--write measures every kernel; drop --only")
    if a.write and a.kernels != "cmsis-nn" and not a.flavours:
        ap.error("--write keeps the cmsis-nn table; --flavours --write writes the comparison")
    from micro_rt.cortexm.ops import KERNELS
    fallback = _type_cases()
    if a.flavours:
        table = flavours_markdown(*flavour_rows(a.cores, fallback))
        print()
        print(table)
        if a.write:
            results_md.write_section("op-cycles-flavours", table)
        return 0
    rows, missing = [], []
    for op, dtype in KERNELS:
        if a.only and op not in a.only:
            continue
        for core in a.cores:
            row = measure(op, dtype, core, fallback, a.kernels)
            if row is None:
                missing.append(f"{op} {dtype}")
                break
            rows.append(row)
            print(f"{op:20s} {dtype:8s} {core:14s} {row.shape:36s} cycles={row.cycles:>10,} {row.per}", flush=True)
    table = markdown(rows, missing, a.cores, a.kernels)
    print()
    print(table)
    if a.json:
        Path(a.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    if a.write:
        results_md.write_section("op-cycles", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
