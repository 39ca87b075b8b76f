"""`micro-rt`: info, plan, fit, run, profile, optimize, boards, export, report, compare.

Exit codes (the same for every command, so CI can gate on them):
  0  the answer is yes: the model fits, the outputs agree, the profile is complete
  1  the answer is no: the model does not fit, the outputs differ from tflite-micro
  2  error in what was given (model file, option value): one line on stderr
  3  cannot tell: something the answer depends on is not accounted for (listed in the output)
  4  internal error, a bug in micro_rt: one line on stderr; --debug shows the traceback
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional, Sequence

import numpy as np

from .analysis import op_macs
from .cli_values import parse_frequency, parse_size
from .errors import InputError, MicroRtError
from .files import load_array, read_model_file
from .flavours import default_kernels
from .interpreter import Interpreter
from .model import Model, read_model
from .report import format_bytes, kernels_fields, kernels_label, plan_table
from .resolver import builtin_op_resolver
from .targets import get_target

from . import cli_parser
from .cli_parser import EXIT_CANNOT_TELL, EXIT_ERROR, EXIT_INTERNAL, EXIT_NO, EXIT_OK

__all__ = ["main", "build_parser", "parse_size", "parse_frequency"]


def _load(path: str) -> tuple[Model, bytes]:
    data = read_model_file(path)
    return read_model(data), data


def _resolve_kernels(args) -> None:
    """--kernels not given: the flavour TFLM is built with for the target (known by now: given,
    or the board's core), as the help says."""
    if args.kernels is None:
        args.kernels = default_kernels(args.target)


def _interpreter(args, data: bytes, plan_only: bool = True) -> Interpreter:
    return Interpreter.from_bytes(data, target=args.target, kernels=args.kernels,
                                  planner=getattr(args, "planner", "greedy"), plan_only=plan_only)


def _emit(args, payload: dict, text: str, tables: Optional[Callable[[dict], tuple]] = None) -> None:
    """Print the answer in --format: json (the payload, as --json always printed it), text,
    or csv/markdown from `tables(payload)` -> (summary lines, tables) (micro_rt.reports.tables)."""
    if args.format == "json":
        print(json.dumps(payload, indent=2))
    elif args.format in ("csv", "markdown") and tables is not None:
        from .reports.formats import render
        print(render(args.format, *tables(payload)))
    else:
        print(text)


def _warn(args, text: str) -> None:
    if not args.quiet:
        print(f"micro-rt: warning: {' '.join(text.split())}", file=sys.stderr)


@contextmanager
def _progress(args, label: str, total: int) -> Iterator[Optional[Callable[[int, int], None]]]:
    """A progress bar on stderr, only when stderr is a terminal (never in logs, --json or
    --quiet); yields the `progress(done, total)` callback, or None. The bar appears on the
    first call, so work that turns out not to run shows none."""
    if args.format != "text" or args.quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm
    bars: list = []

    def update(done: int, _total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, desc=label, unit="op", leave=False, dynamic_ncols=True,
                             file=sys.stderr))
        bars[0].update(done - bars[0].n)
    try:
        yield update
    finally:
        for bar in bars:
            bar.close()


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    except OSError as e:
        raise MicroRtError(f"cannot write '{path}': {e.strerror}") from None


def _refuse_directory(option: str, path: Optional[str]) -> None:
    """Before any work: an output path naming an existing directory is a usage error."""
    if path is not None and Path(path).is_dir():
        raise MicroRtError(f"{option} '{path}' is a directory; give a file name")


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
    not_simulated = sorted({op.op_name for op in sg.operators if resolver.supports(op.op_name, op.is_custom)
                            and resolver.find(op.op_name, op.is_custom, 1).not_simulated})
    payload["not_simulated_ops"] = not_simulated
    if not_simulated:
        lines.append(f"arena counted, computation not simulated (NPU): {', '.join(not_simulated)}")
    if model.metadata:
        lines.append(f"metadata: {', '.join(sorted(model.metadata))}")
    from .reports.tables import info_tables
    _emit(args, payload, "\n".join(lines), info_tables)
    return 0


# ---- plan --------------------------------------------------------------------------------
def cmd_plan(args) -> int:
    from .fit import ops_without_kernels
    model, data = _load(args.model)
    _resolve_kernels(args)
    it = _interpreter(args, data)
    plan = it.plan
    payload = dict(plan.as_dict(), **kernels_fields(args.kernels, plan.target))
    payload["unresolved_ops"] = it.unresolved
    text = plan_table(plan, args.kernels)
    missing = ops_without_kernels(it)
    if missing:
        _warn(args, "no kernel for " + ", ".join(missing) + ": their op data and scratch "
              "buffers are not in these totals")
    if args.html:
        from .reports.page import plans_html
        _write_text(args.html, plans_html([(f"{plan.planner} planner on {plan.target}", plan,
                                            model.main)], Path(args.model).name, model.subgraphs))
        text += f"\nlane chart written to {args.html}"
    from .reports.tables import plan_tables
    _emit(args, payload, text, plan_tables)
    return EXIT_OK


# ---- fit ---------------------------------------------------------------------------------
def _board_or_target(args, **common):
    """The run setup of fit and profile: --board's core, clock, flash interface and budgets,
    each overridden by the option given, or --target (default cortex-m4); the kernels given,
    else the core's flavour."""
    from .run_setup import make_setup
    setup = make_setup(board=args.board, target=args.target, clock_hz=getattr(args, "clock", None),
                       flash_wait_states=getattr(args, "flash_wait_states", None),
                       ram_budget=getattr(args, "ram", None),
                       flash_budget=getattr(args, "flash", None), kernels=args.kernels, **common)
    args.target, args.kernels = setup.target, setup.kernels
    return setup


def cmd_fit(args) -> int:
    from .fit import assess
    setup = _board_or_target(args)
    if setup.ram_budget is None:
        raise InputError("fit needs a RAM budget: --ram SIZE, or --board NAME for the board's SRAM")
    _, data = _load(args.model)
    it = _interpreter(args, data)
    with _progress(args, f"measuring kernels of {Path(args.model).name} on {args.target}",
                   len(it.nodes)) as progress:
        report = assess(args.model, data, it, setup.ram_budget, setup.flash_budget,
                        measure=not args.no_emulate, progress=progress)
    report.board, report.budget_source = setup.board, setup.budget_source
    from .reports.tables import fit_tables
    _emit(args, report.as_dict(), report.text(), fit_tables)
    return report.exit_code


# ---- run ---------------------------------------------------------------------------------
def _dequantize(value: np.ndarray, details: dict) -> Optional[np.ndarray]:
    q = details["quantization_parameters"]
    if len(q["scales"]) != 1 or not np.issubdtype(value.dtype, np.integer):
        return None
    return (value.astype(np.float64) - float(q["zero_points"][0])) * float(q["scales"][0])


def _check(args, data: bytes, it: Interpreter, first_inputs: list, payload: dict,
           lines: list) -> bool:
    """Compare with tflite-micro on --seeds input sets: the run's own inputs, then seeded ones
    alternating uniform over each type's range and normal around the zero point."""
    from .inputs import INPUT_DISTRIBUTIONS, random_inputs
    from .tools.oracle import check_against_oracle
    given = bool(args.input)
    sets = [{"seed": args.seed, "distribution": "--input files" if given else "uniform"}]
    input_sets = [first_inputs]
    for n in range(1, args.seeds):
        kind = INPUT_DISTRIBUTIONS[n % len(INPUT_DISTRIBUTIONS)]
        sets.append({"seed": args.seed + n, "distribution": kind})
        input_sets.append(random_inputs(it, args.seed + n, kind))
    with _progress(args, "checking against tflite-micro", len(input_sets)) as progress:
        # a fresh interpreter: the oracle starts fresh, and the run's invoke moved any state
        fresh = Interpreter.from_bytes(data, target=args.target, kernels=args.kernels,
                                       emulate=args.emulate)
        agreements = check_against_oracle(data, fresh, input_sets, progress)
    equal = all(a.equal for a in agreements)
    payload["check"] = {"equal": equal, "input_sets": sets,
                        "outputs": [a.as_dict() for a in agreements]}
    first = "the inputs given (--input)" if given else f"seed {args.seed} uniform"
    lines.append(f"check against tflite-micro on {len(input_sets)} input sets: {first}"
                 + (f", then seeds {args.seed + 1}..{args.seed + len(input_sets) - 1} alternating "
                    "normal around the zero point and uniform over each type's range"
                    if len(input_sets) > 1 else ""))
    for a in agreements:
        lines.append(f"check output {a.index} ({a.dtype}, required: {a.tolerance}): {a.verdict}")
    return equal


def cmd_run(args) -> int:
    from .inputs import random_inputs
    _, data = _load(args.model)
    _resolve_kernels(args)
    it = Interpreter.from_bytes(data, target=args.target, kernels=args.kernels, emulate=args.emulate)
    inputs = random_inputs(it, args.seed)
    for i, path in enumerate((args.input or [])[:it.num_inputs]):
        try:
            inputs[i] = load_array(path)
        except (OSError, ValueError, EOFError) as e:
            raise MicroRtError(f"cannot read input {i} from '{path}' (a .npy file "
                               f"saved with numpy.save): {e}") from None
    for i, value in enumerate(inputs):
        it.set_input(value, i)
    with _progress(args, f"running {Path(args.model).name}", len(it.nodes)) as progress:
        it.invoke(progress=progress)
    outputs = [it.get_output(i) for i in range(it.num_outputs)]
    payload = {"model": args.model, "target": it.target.name,
               **kernels_fields(args.kernels, it.target.name),
               "arena_bytes": it.arena_required_bytes(),
               "executed_on": "virtual_mcu" if it.emulate else "host",
               "seed": args.seed, "outputs": []}
    ran = (f"on the virtual {it.target.name}, {args.kernels} C kernels" if it.emulate else
           "on the host's kernels" if it.target.is_host else
           f"on the host's kernels (bit-exact with the {args.kernels} C kernels, which --emulate "
           "runs)")
    lines = [f"ran {ran}, in the {payload['arena_for']} ({it.arena_required_bytes():,} B)"]
    for i, value in enumerate(outputs):
        details = it.get_output_details(i)
        deq = _dequantize(value, details)
        entry = {"index": i, "dtype": value.dtype.name, "shape": list(value.shape),
                 "raw": value.tolist(), "dequantized": None if deq is None else deq.tolist()}
        payload["outputs"].append(entry)
        lines.append(f"output {i} {value.dtype.name}{list(value.shape)}: {np.array2string(value, threshold=64)}")
        if deq is not None:
            lines.append(f"  dequantized: {np.array2string(deq, precision=5, threshold=64)}")
    equal = _check(args, data, it, inputs, payload, lines) if args.check else True
    _emit(args, payload, "\n".join(lines))
    return EXIT_OK if equal else EXIT_NO


# ---- optimize -----------------------------------------------------------------------------
def cmd_optimize(args) -> int:
    from .optimize import check_outputs, optimize
    _refuse_directory("-o/--output", args.output)
    _refuse_directory("--html", args.html)
    _, data = _load(args.model)
    _resolve_kernels(args)
    result = optimize(data, target=args.target, kernels=args.kernels, time_limit=args.time_limit,
                      oracle_verify=args.oracle_verify)
    try:
        Path(args.output).write_bytes(result.data)
    except OSError as e:
        raise MicroRtError(f"cannot write '{args.output}': {e.strerror}") from None
    payload = dict(result.as_dict(), model=args.model, output=args.output, target=args.target,
                   **kernels_fields(args.kernels, args.target))
    check = None if args.no_check else check_outputs(data, result.data, seeds=range(args.seeds))
    payload["outputs_equal"] = check
    saved = result.original_head - result.predicted_head
    o, c = result.original_head, result.predicted_head
    lines = [
        f"{args.model} -> {args.output}",
        f"target: {args.target} (kernels {kernels_label(args.kernels)})",
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
        from .reports.page import plans_html
        _write_text(args.html, plans_html(
            [("original: file order, TFLM greedy", result.original_plan, read_model(data).main),
             (f"optimized: {result.summary}", result.optimized_plan, read_model(result.data).main)],
            Path(args.model).name))
        lines.append(f"lane charts written to {args.html}")
    _emit(args, payload, "\n".join(lines))
    if check is not None and False in (check["micro_rt"], check["oracle"]):
        return EXIT_NO
    return EXIT_OK


# ---- profile ------------------------------------------------------------------------------
def cmd_profile(args) -> int:
    from .profile import emulated_profile, profile_table
    from .reports.tables import profile_tables
    setup = _board_or_target(args)
    if get_target(args.target).is_host:
        raise MicroRtError(f"--target {args.target}: profile emulates a Cortex-M core; choose "
                           "cortex-m0plus, cortex-m4, cortex-m7 or cortex-m33")
    model, data = _load(args.model)
    with _progress(args, f"emulating {Path(args.model).name} on {setup.where}",
                   len(model.main.operators)) as progress:
        report, it = emulated_profile(data, args.target, setup.clock_hz,
                                      flash_wait_states=setup.flash_wait_states,
                                      memory_system=setup.mcu_memory_system(),
                                      strict_alignment=args.strict_alignment,
                                      arena_misalign=args.arena_misalign, seed=args.seed,
                                      progress=progress, kernels=args.kernels)
        it.close()
    if setup.board:
        report = {"board": setup.board, "board_notes": setup.board_notes, **report}
    text = profile_table(report)
    if setup.board:
        text = "\n".join([f"board {setup.board}: " + "; ".join(setup.board_notes[1:]), text])
    _emit(args, report, text, profile_tables)
    return EXIT_OK if report["complete"] else EXIT_CANNOT_TELL


# ---- boards --------------------------------------------------------------------------------
def cmd_boards(args) -> int:
    from .cortexm.boards import list_boards
    from .reports.boards import boards_exit_code, boards_payload, boards_tables, boards_text, measure_boards
    _, data = _load(args.model)        # a bad model is one error, not one per board
    boards = [b.name for b in list_boards(args.board_dir)]
    rows = measure_boards(args.model, data, boards, kernels=args.kernels, planner=args.planner,
                          seed=args.seed, workers=args.workers, board_dirs=args.board_dir)
    payload = boards_payload(args.model, rows)
    _emit(args, payload, boards_text(payload), boards_tables)
    return boards_exit_code(rows)


# ---- export --------------------------------------------------------------------------------
def cmd_export(args) -> int:
    from .export import export_project
    _, data = _load(args.model)
    result = export_project(args.model, data, args.board, args.output, board_dirs=args.board_dir,
                            seed=args.seed, kernels=args.kernels)
    payload = {"model": args.model, "board": result.board, "core": result.core,
               **kernels_fields(result.kernels, result.core),
               "directory": str(result.directory), "files": result.files,
               "kernel_sources": result.kernel_sources, "plan_entries": result.entries,
               "stack_bytes": result.stack_bytes, "seed": args.seed,
               "profile_cycles": result.profile_cycles,
               "profile_instructions": result.profile_instructions}
    text = (f"{args.model} -> {result.directory}/ for board {result.board} ({result.core}): "
            f"{result.entries} kernel calls, kernels {kernels_label(result.kernels)} from "
            f"{', '.join(result.kernel_sources)}\n"
            f"build: make -C {result.directory} (arm-none-eabi-gcc); README.txt says how to "
            f"flash it and read its output\n"
            f"profile on the virtual MCU: {result.profile_cycles:,} cycles, "
            f"{result.profile_instructions:,} instructions (seed {args.seed})")
    _emit(args, payload, text)
    return EXIT_OK


# ---- report / compare ---------------------------------------------------------------------
def _report_setup(args, board: Optional[str], target: Optional[str]):
    from .run_setup import make_setup
    return make_setup(board=board, target=target, kernels=args.kernels, planner=args.planner,
                      clock_hz=args.clock, flash_wait_states=args.flash_wait_states,
                      ram_budget=args.ram, flash_budget=args.flash, cycles=not args.no_cycles,
                      strict_alignment=args.strict_alignment, seed=args.seed,
                      optimize_seconds=getattr(args, "optimize_seconds", 0.0))


def cmd_report(args) -> int:
    from .reports.model_explorer import write_node_data
    from .reports.model_report import gather, report_text
    from .reports.page import report_page
    from .reports.tables import report_tables
    _refuse_directory("-o/--output", args.output)
    model, data = _load(args.model)
    setup = _report_setup(args, args.board, args.target)
    with _progress(args, f"emulating {Path(args.model).name} on {setup.target}",
                   len(model.main.operators)) as progress:
        report = gather(args.model, data, setup, progress)
    lines = [report_text(report)]
    if args.output:
        page = report_page(report, model.main)
        _write_text(args.output, page)
        lines.append(f"report written to {args.output} ({len(page.encode()):,} B)")
    if args.model_explorer:
        paths = write_node_data(args.model_explorer, args.model, report.operators,
                                report.cycles_complete)
        lines.append(f"Model Explorer node data written to {args.model_explorer}: "
                     f"model-explorer {args.model} --node_data_paths="
                     + ",".join(str(p) for p in paths))
    _emit(args, report.as_dict(), "\n".join(lines), lambda _: report_tables(report))
    return report.exit_code


def cmd_compare(args) -> int:
    from .reports.compare import Side, compare_dict, compare_page, compare_tables, compare_text
    from .reports.model_report import gather
    _refuse_directory("--html", args.html)
    sides = []
    for path, board, target in ((args.model, args.board, args.target),
                                (args.model_b, args.board_b or (None if args.target_b else args.board),
                                 args.target_b or (None if args.board_b else args.target))):
        model, data = _load(path)
        setup = _report_setup(args, board, target)
        with _progress(args, f"emulating {Path(path).name} on {setup.target}",
                       len(model.main.operators)) as progress:
            report = gather(path, data, setup, progress)
        label = f"{path} on {f'board {setup.board}' if setup.board else setup.target}"
        sides.append(Side(label, report, model.main))
    a, b = sides
    text = compare_text(a, b)
    if args.html:
        _write_text(args.html, compare_page(a, b))
        text += f"\ncomparison written to {args.html}"
    _emit(args, compare_dict(a, b), text, lambda _: compare_tables(a, b))
    return EXIT_OK


# ---- entry point ------------------------------------------------------------------------
COMMANDS = {"info": cmd_info, "plan": cmd_plan, "fit": cmd_fit, "run": cmd_run, "profile": cmd_profile,
            "optimize": cmd_optimize, "boards": cmd_boards, "export": cmd_export, "report": cmd_report,
            "compare": cmd_compare}


def build_parser() -> argparse.ArgumentParser:
    return cli_parser.build_parser(COMMANDS)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.json and getattr(args, "format", "text") not in ("text", "json"):
            parser.error(f"--json is --format json; it cannot go with --format {args.format}")
    except SystemExit as e:          # --help, --version, a usage error: already printed
        return e.code if isinstance(e.code, int) else EXIT_ERROR
    args.format = "json" if args.json else getattr(args, "format", "text")
    try:
        with warnings.catch_warnings():
            if args.quiet:
                warnings.simplefilter("ignore")
            return args.func(args)
    except MicroRtError as e:
        if args.debug:
            traceback.print_exc()
        message = " ".join(str(e).split())          # always one line
        print(f"micro-rt: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:      # output piped into `head` and closed: not an error
        sys.stderr.close()
        return EXIT_OK
    except Exception as e:  # a bug of ours: still one line unless --debug
        if args.debug:
            raise
        message = " ".join(f"{type(e).__name__}: {e}".split())
        print(f"micro-rt: internal error: {message} (rerun with --debug)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
