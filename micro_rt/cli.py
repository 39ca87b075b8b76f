"""`micro-rt`: info, plan, fit, run, profile, optimize.

Errors a user can cause print one line and exit 2; `--debug` shows the traceback.
`fit` exits 0 when the model fits and 1 when it does not, so CI can gate on it.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from .analysis import op_macs
from .errors import MicroRtError
from .interpreter import Interpreter
from .model import MAX_MODEL_BYTES, Model, read_model
from .report import format_bytes, plan_table, plans_html
from .resolver import builtin_op_resolver
from .targets import get_target

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)(i?[bB])?\s*$")


def parse_size(text: str) -> int:
    """'256K', '1M', '1.5MiB', '8192' -> bytes (K = 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (examples: 8192, 256K, 1M)")
    scale = {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


def _load(path: str) -> tuple[Model, bytes]:
    try:
        size = Path(path).stat().st_size
        if size > MAX_MODEL_BYTES:
            raise MicroRtError(f"model '{path}' is {size} bytes, over micro_rt's "
                               f"{MAX_MODEL_BYTES}-byte limit")
        data = Path(path).read_bytes()
    except OSError as e:
        raise MicroRtError(f"cannot read model '{path}': {e.strerror}") from None
    return read_model(data), data


def _interpreter(args, data: bytes, plan_only: bool = True) -> Interpreter:
    return Interpreter.from_bytes(data, None, target=args.target, kernels=args.kernels,
                                  planner=getattr(args, "planner", "greedy"), plan_only=plan_only)


def _emit(args, payload: dict, text: str) -> None:
    print(json.dumps(payload, indent=2) if args.json else text)


# ---- info --------------------------------------------------------------------------------
def cmd_info(args) -> int:
    model, data = _load(args.model)
    sg = model.main
    resolver = builtin_op_resolver()

    def describe(indices):
        return [{"tensor": t, "shape": list(sg.tensors[t].shape), "type": sg.tensors[t].type_name}
                for t in indices if t >= 0]

    ops = [{"index": op.index, "op": op.op_name, "version": op.version, "custom": op.is_custom,
            "supported": resolver.supports(op.op_name, op.is_custom),
            "inputs": describe(op.inputs), "outputs": describe(op.outputs),
            "macs": op_macs(sg, op)} for op in sg.operators]
    tensors = [{"index": t.index, "name": t.name, "type": t.type_name, "shape": list(t.shape),
                "bytes": t.nbytes, "constant": t.is_constant, "variable": t.is_variable,
                "quantization": None if t.quantization is None else {
                    "scales": len(t.quantization.scales),
                    "quantized_dimension": t.quantization.quantized_dimension}}
               for t in sg.tensors]
    unsupported = sorted({o["op"] for o in ops if not o["supported"]})
    weights = sum(t.nbytes for t in sg.tensors if t.is_constant)
    payload = {"model": args.model, "file_bytes": len(data), "weight_bytes": weights,
               "subgraphs": len(model.subgraphs), "inputs": describe(sg.inputs),
               "outputs": describe(sg.outputs), "total_macs": sum(o["macs"] for o in ops),
               "ops": ops, "tensors": tensors, "unsupported_ops": unsupported,
               "metadata": sorted(model.metadata)}
    lines = [f"{args.model}: {len(data)} bytes, {len(sg.operators)} operators, "
             f"{len(sg.tensors)} tensors, weights {format_bytes(weights)}, "
             f"{payload['total_macs']:,} MACs"]
    fmt = lambda items: ", ".join(f"{d['type'].lower()}{d['shape']}" for d in items)
    lines.append(f"inputs: {fmt(payload['inputs'])}   outputs: {fmt(payload['outputs'])}")
    lines.append(f"{'#':>4}  {'op':<22}{'v':>2}  {'MACs':>12}  inputs -> outputs")
    for o in ops:
        flag = "" if o["supported"] else "   [no kernel]"
        lines.append(f"{o['index']:>4}  {o['op']:<22}{o['version']:>2}  {o['macs']:>12,}  "
                     f"{fmt(o['inputs'])} -> {fmt(o['outputs'])}{flag}")
    if unsupported:
        lines.append(f"not supported by micro_rt's kernels: {', '.join(unsupported)}")
    if model.metadata:
        lines.append(f"metadata: {', '.join(sorted(model.metadata))}")
    _emit(args, payload, "\n".join(lines))
    return 0


# ---- plan --------------------------------------------------------------------------------
def cmd_plan(args) -> int:
    _, data = _load(args.model)
    it = _interpreter(args, data)
    plan = it.plan
    payload = plan.as_dict()
    payload["unresolved_ops"] = it.unresolved
    text = plan_table(plan)
    if it.unresolved:
        text += "\nwarning: operators without kernels count no op data: " + "; ".join(it.unresolved)
    if args.html:
        try:
            Path(args.html).parent.mkdir(parents=True, exist_ok=True)
            Path(args.html).write_text(plans_html([(f"{plan.planner} on {plan.target}", plan)],
                                                  Path(args.model).name))
        except OSError as e:
            raise MicroRtError(f"cannot write '{args.html}': {e.strerror}") from None
        text += f"\nlane chart written to {args.html}"
    _emit(args, payload, text)
    return 0


# ---- fit ---------------------------------------------------------------------------------
def _measure_on_mcu(args, data: bytes) -> Optional[dict]:
    """One emulated inference with micro_rt's C kernels: kernel stack, firmware static data,
    and the code of the kernels the model executes. None when it cannot run there."""
    try:
        it = Interpreter.from_bytes(data, None, target=args.target, kernels="cmsis-nn", emulate=True)
    except MicroRtError:
        return None
    rng = np.random.default_rng(0)
    for i in range(it.num_inputs):
        it.set_input(_random_input(it.get_input_details(i), rng), i)
    it.invoke()
    executor = it._executor
    return {"stack_bytes": max((r.stack_bytes for r in it.last_run), default=0),
            "static_bytes": executor.static_ram_bytes(), "code_bytes": executor.code_bytes(),
            "ops_on_host": [f"{r.index} {r.op}" for r in it.last_run if not r.on_mcu]}


def cmd_fit(args) -> int:
    model, data = _load(args.model)
    it = _interpreter(args, data)
    plan = it.plan
    measured = None
    if get_target(args.target).cpu is not None and not args.no_emulate and not it.unresolved:
        measured = _measure_on_mcu(args, data)
    stack = measured["stack_bytes"] if measured else 0
    static = measured["static_bytes"] if measured else 0
    code = measured["code_bytes"] if measured else 0
    ram_used = plan.required_bytes + stack + static
    flash_used = len(data) + code
    ram_budget = args.ram
    flash_budget = args.flash
    ram_fits = ram_used <= ram_budget
    flash_fits = flash_budget is None or flash_used <= flash_budget
    fits = ram_fits and flash_fits
    payload = {
        "fits": fits,
        "target": plan.target,
        "kernels": args.kernels,
        "ram": {"budget": ram_budget, "used": ram_used, "margin": ram_budget - ram_used,
                "fits": ram_fits, "arena_bytes": plan.required_bytes, "kernel_stack_bytes": stack,
                "static_bytes": static},
        "flash": {"budget": flash_budget, "used": flash_used,
                  "margin": None if flash_budget is None else flash_budget - flash_used,
                  "fits": flash_fits, "model_bytes": len(data), "kernel_code_bytes": code},
        "arena": {"head_bytes": plan.head_bytes, "tail_bytes": plan.tail_bytes,
                  "total_bytes": plan.total_bytes, "required_bytes": plan.required_bytes},
        "measured_on_virtual_mcu": measured is not None,
        "unresolved_ops": it.unresolved,
    }

    def line(what, used, budget):
        if budget is None:
            return f"{what}: {format_bytes(used)} (no budget given)"
        margin = budget - used
        word = "fits" if margin >= 0 else "does NOT fit"
        return (f"{what}: {format_bytes(used)} of {format_bytes(budget)} -> {word}, margin "
                f"{margin:+d} B ({margin / budget:+.1%})")

    lines = [
        f"{'FITS' if fits else 'DOES NOT FIT'}: {args.model} on {plan.target} ({args.kernels} kernels)",
        line("RAM  ", ram_used, ram_budget),
        f"      arena {plan.required_bytes} (head {plan.head_bytes} + tail {plan.tail_bytes}"
        + (", + temp peak while preparing and 16-byte rounding" if plan.required_bytes > plan.total_bytes else "")
        + ")" + (f" + kernel stack {stack} + static data {static}" if measured else ""),
        line("flash", flash_used, flash_budget),
        f"      model {len(data)}" + (f" + kernel code {code}" if measured else ""),
    ]
    if measured:
        lines.append("      stack and code measured by running one inference of micro_rt's C kernels "
                     "on the virtual MCU")
        if measured["ops_on_host"]:
            lines.append("      not measured (no C kernel): " + ", ".join(measured["ops_on_host"]))
    if it.unresolved:
        lines.append(f"warning: no kernel for {'; '.join(it.unresolved)}")
    _emit(args, payload, "\n".join(lines))
    return 0 if fits else 1


# ---- run ---------------------------------------------------------------------------------
def _random_input(details: dict, rng: np.random.Generator) -> np.ndarray:
    dtype = np.dtype(details["dtype"])
    shape = tuple(int(d) for d in details["shape"])
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=np.int64).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def _dequantize(value: np.ndarray, details: dict) -> Optional[np.ndarray]:
    q = details["quantization_parameters"]
    if len(q["scales"]) != 1 or not np.issubdtype(value.dtype, np.integer):
        return None
    return (value.astype(np.float64) - float(q["zero_points"][0])) * float(q["scales"][0])


def cmd_run(args) -> int:
    _, data = _load(args.model)
    it = Interpreter.from_bytes(data, None, target=args.target, kernels=args.kernels)
    rng = np.random.default_rng(args.seed)
    inputs = []
    for i in range(it.num_inputs):
        details = it.get_input_details(i)
        if args.input and i < len(args.input):
            try:
                value = np.load(args.input[i], allow_pickle=False)
            except (OSError, ValueError, EOFError) as e:
                raise MicroRtError(f"cannot read input {i} from '{args.input[i]}' (a .npy file "
                                   f"saved with numpy.save): {e}") from None
        else:
            value = _random_input(details, rng)
        inputs.append(value)
        it.set_input(value, i)
    it.invoke()
    outputs = [it.get_output(i) for i in range(it.num_outputs)]
    payload = {"model": args.model, "seed": args.seed, "outputs": []}
    lines = []
    for i, value in enumerate(outputs):
        details = it.get_output_details(i)
        deq = _dequantize(value, details)
        entry = {"index": i, "dtype": value.dtype.name, "shape": list(value.shape),
                 "raw": value.tolist(), "dequantized": None if deq is None else deq.tolist()}
        payload["outputs"].append(entry)
        lines.append(f"output {i} {value.dtype.name}{list(value.shape)}: {np.array2string(value, threshold=64)}")
        if deq is not None:
            lines.append(f"  dequantized: {np.array2string(deq, precision=5, threshold=64)}")
    if args.check:
        from .oracle import compare_with_oracle
        agreement = compare_with_oracle(data, inputs, outputs)
        payload["check"] = agreement
        for entry in agreement:
            lines.append(f"check output {entry['index']}: {entry['verdict']}")
    _emit(args, payload, "\n".join(lines))
    if args.check and not all(e["equal"] for e in payload["check"]):
        return 1
    return 0


# ---- optimize -----------------------------------------------------------------------------
def cmd_optimize(args) -> int:
    from .optimize import check_outputs, optimize
    _, data = _load(args.model)
    result = optimize(data, target=args.target, kernels=args.kernels, time_limit=args.time_limit,
                      oracle_verify=args.oracle_verify)
    try:
        Path(args.output).write_bytes(result.data)
    except OSError as e:
        raise MicroRtError(f"cannot write '{args.output}': {e.strerror}") from None
    payload = dict(result.as_dict(), model=args.model, output=args.output, target=args.target,
                   kernels=args.kernels)
    check = None if args.no_check else check_outputs(data, result.data, seeds=range(args.seeds))
    payload["outputs_equal"] = check
    saved = result.original_head - result.predicted_head
    o, c = result.original_head, result.predicted_head
    lines = [
        f"{args.model} -> {args.output}",
        f"target: {args.target} (kernels {args.kernels})",
        f"done: {result.summary}",
        f"head (TFLM greedy, file order): {format_bytes(o)}   lower bound for the file order "
        f"{format_bytes(result.original_bound)}",
        f"head (optimized):               {format_bytes(c)}   lower bound for this order "
        f"{format_bytes(result.chosen_bound)} (efficiency "
        f"{result.chosen_bound / c if c else 1:.1%})",
        f"saved {saved} B ({saved / o if o else 0:.1%}); smallest peak of live bytes over all "
        f"operator orders: {format_bytes(result.order_bound)}"
        + (" (exact search)" if result.order_peak_exact else
           " (a lower bound: the order search was heuristic)")
        + ("; optimal" if result.optimal else ""),
        "operators " + ("reordered: " + " ".join(map(str, result.order)) if result.reordered
                        else "kept in file order"),
        f"placement: {result.placement}; offline plan for "
        f"{sum(v >= 0 for v in result.tensor_offsets)} tensors "
        "(scratch buffers are placed by TFLM around them, as simulated)",
        f"tail: {result.original_plan.tail_bytes} B -> {result.optimized_plan.tail_bytes} B",
    ] + [f"note: {n}" for n in result.notes]
    if check is not None:
        for who in ("micro_rt", "oracle"):
            if check[who] is not None:
                lines.append(f"outputs ({who}, {check['seeds']} seeded inputs): "
                             + ("bit-exact with the original" if check[who] else "DIFFER"))
    if args.html:
        Path(args.html).parent.mkdir(parents=True, exist_ok=True)
        Path(args.html).write_text(plans_html(
            [("original: file order, TFLM greedy", result.original_plan),
             (f"optimized: {result.summary}", result.optimized_plan)], Path(args.model).name))
        lines.append(f"lane charts written to {args.html}")
    _emit(args, payload, "\n".join(lines))
    if check is not None and False in (check["micro_rt"], check["oracle"]):
        return 1
    return 0


# ---- profile ------------------------------------------------------------------------------
_FREQ = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(?:[hH][zZ])?\s*$")


def parse_frequency(text: str) -> int:
    """'120MHz', '64M', '480000000' -> Hz."""
    m = _FREQ.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"'{text}' is not a clock frequency (examples: 80MHz, 480M)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    return int(float(m.group(1)) * scale)


class _ProgressBar:
    """A one-line bar on stderr, shown only once a run has taken more than a second."""

    def __init__(self, label: str):
        self.label, self.start, self.shown = label, time.monotonic(), False

    def __call__(self, done: int, total: int) -> None:
        if time.monotonic() - self.start < 1.0:
            return
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] op {done}/{total}")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 70 + "\r")
            sys.stderr.flush()


def cmd_profile(args) -> int:
    from .profile import profile_report, profile_table
    _, data = _load(args.model)
    options = {"clock_hz": args.clock, "flash_wait_states": args.flash_wait_states,
               "strict_alignment": args.strict_alignment, "arena_misalign": args.arena_misalign}
    it = Interpreter.from_bytes(data, None, target=args.target, kernels="cmsis-nn", emulate=True,
                                mcu_options=options)
    rng = np.random.default_rng(args.seed)
    for i in range(it.num_inputs):
        it.set_input(_random_input(it.get_input_details(i), rng), i)
    bar = _ProgressBar(f"emulating {Path(args.model).name} on {args.target}")
    try:
        it.invoke(progress=bar)
    finally:
        bar.close()
    report = profile_report(it, it.last_run, args.clock, it._executor.emulation_seconds)
    _emit(args, report, profile_table(report))
    return 0


# ---- entry point ------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="micro-rt", description=__doc__.splitlines()[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p, planner=False):
        p.add_argument("model")
        p.add_argument("--target", default="cortex-m4", help="host64, cortex-m0plus, cortex-m4, cortex-m7, cortex-m33")
        p.add_argument("--kernels", default="reference", choices=["reference", "cmsis-nn"])
        p.add_argument("--json", action="store_true")
        if planner:
            p.add_argument("--planner", default="greedy", choices=["greedy", "linear", "offline"])

    p = sub.add_parser("info", help="operators, tensors, MACs, unsupported ops")
    p.add_argument("model")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("plan", help="arena plan: lifetimes, offsets, head/tail totals")
    common(p, planner=True)
    p.add_argument("--html", metavar="FILE", help="write a lane chart of the plan")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("fit", help="does the model fit a RAM/flash budget (exit 0 yes, 1 no)")
    common(p, planner=True)
    p.add_argument("--ram", type=parse_size, required=True, help="RAM budget, e.g. 256K")
    p.add_argument("--flash", type=parse_size, default=None, help="flash budget, e.g. 1M")
    p.add_argument("--no-emulate", action="store_true",
                   help="skip the emulated inference that measures stack and kernel code")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("run", help="invoke the model on given or random inputs")
    common(p)
    p.add_argument("--input", action="append", metavar="FILE.npy", help="one per model input, in order")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", action="store_true", help="also run the tflite-micro oracle and compare")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("profile", help="cycles per operator on a virtual Cortex-M")
    p.add_argument("model")
    p.add_argument("--target", default="cortex-m4", help="cortex-m0plus, cortex-m4, cortex-m7, cortex-m33")
    p.add_argument("--clock", type=parse_frequency, default=100_000_000, help="core clock, e.g. 120MHz")
    p.add_argument("--flash-wait-states", type=int, default=0)
    p.add_argument("--strict-alignment", action="store_true",
                   help="report every unaligned access, as if UNALIGN_TRP were set")
    p.add_argument("--arena-misalign", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("optimize", help="reorder operators and write an offline memory plan")
    common(p)      # the same default target as plan and fit
    p.add_argument("-o", "--output", required=True, metavar="OUT.tflite")
    p.add_argument("--time-limit", type=float, default=10.0, metavar="S",
                   help="seconds for the order and placement searches (default 10)")
    p.add_argument("--html", metavar="FILE", help="lane charts of the original and optimized plans")
    p.add_argument("--seeds", type=int, default=3, help="seeded inputs for the output check")
    p.add_argument("--no-check", action="store_true", help="skip running both models to compare outputs")
    p.add_argument("--oracle-verify", action="store_true",
                   help="also measure candidates with the tflite-micro oracle (for ops micro_rt lacks)")
    p.set_defaults(func=cmd_optimize)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except MicroRtError as e:
        if args.debug:
            traceback.print_exc()
        message = " ".join(str(e).split())          # always one line
        print(f"micro-rt: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:      # output piped into `head` and closed: not an error
        sys.stderr.close()
        return 0
    except Exception as e:  # a bug of ours: still one line unless --debug
        if args.debug:
            raise
        print(f"micro-rt: internal error: {type(e).__name__}: {e} (rerun with --debug)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
