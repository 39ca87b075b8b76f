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
from pathlib import Path
from typing import Optional, Sequence

from .analysis import op_macs
from .cli_common import (emit, load_model, plan_interpreter, progress_bar, refuse_directory, resolve_kernels, warn,
                         write_text)
from .cli_emulate import cmd_emulate
from .cli_run import cmd_run
from .cli_values import parse_frequency, parse_size
from .errors import InputError, MicroRtError
from .cortexm.validation import status_lines
from .flavours import default_kernels
from .model import read_model
from .report import (OP_WIDTH, elide, format_bytes, kernels_fields, kernels_label, plan_table,
                     quantization_fields, quantization_label)
from .reports.formats import summarise_items
from .resolver import builtin_op_resolver
from .targets import get_target

from . import cli_parser
from .cli_parser import EXIT_CANNOT_TELL, EXIT_ERROR, EXIT_INTERNAL, EXIT_NO, EXIT_OK

__all__ = ["main", "build_parser", "parse_size", "parse_frequency"]


# ---- info --------------------------------------------------------------------------------
def cmd_info(args) -> int:
    model, data = load_model(args.model)
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
    def describe_io(indices):
        """A model input or output: also its name and quantization (scale, zero point)."""
        return [dict(d, name=sg.tensors[d["tensor"]].name,
                     quantization=quantization_fields(sg.tensors[d["tensor"]].quantization))
                for d in describe(indices)]

    unsupported = sorted({o["op"] for o in ops if not o["supported"]})
    weights = sum(t.nbytes for t in sg.tensors if t.is_constant)
    payload = {"model": args.model, "file_bytes": len(data), "weight_bytes": weights,
               "subgraphs": len(model.subgraphs), "inputs": describe_io(sg.inputs),
               "outputs": describe_io(sg.outputs), "total_macs": sum(o["macs"] for o in ops),
               "ops": ops, "tensors": tensors, "unsupported_ops": unsupported,
               "metadata": sorted(model.metadata)}
    lines = [f"{args.model}: {len(data)} bytes, {len(sg.operators)} operators, "
             f"{len(sg.tensors)} tensors, weights {format_bytes(weights)}, "
             f"{payload['total_macs']:,} MACs"]
    for kind in ("input", "output"):
        for i, d in enumerate(payload[f"{kind}s"]):
            lines.append(f"{kind} {i} '{d['name']}' {d['type'].lower()}{d['shape']}, "
                         f"{quantization_label(sg.tensors[d['tensor']].quantization)}")
    shapes = lambda items, noun: summarise_items(
        [f"{d['type'].lower()}{d['shape']}" for d in items], noun, separator=", ")
    width = min(max([20] + [len(o["op"]) for o in ops]), OP_WIDTH) + 2
    lines.append(f"{'#':>4}  {'op':<{width}}{'v':>2}  {'MACs':>12}  inputs -> outputs")
    for o in ops:
        flag = "" if o["supported"] else "   [no kernel]"
        lines.append(f"{o['index']:>4}  {elide(o['op'], width - 2):<{width}}{o['version']:>2}  "
                     f"{o['macs']:>12,}  {shapes(o['inputs'], 'inputs')} -> "
                     f"{shapes(o['outputs'], 'outputs')}{flag}")
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
    emit(args, payload, "\n".join(lines), info_tables)
    return 0


# ---- plan --------------------------------------------------------------------------------
def cmd_plan(args) -> int:
    from .fit_measure import ops_without_kernels
    model, data = load_model(args.model)
    resolve_kernels(args)
    it = plan_interpreter(args, data)
    plan = it.plan
    payload = dict(plan.as_dict(), **kernels_fields(args.kernels, plan.target))
    payload["unresolved_ops"] = it.unresolved
    text = plan_table(plan, args.kernels)
    missing = ops_without_kernels(it)
    if missing:
        warn(args, "no kernel for " + ", ".join(missing) + ": their op data and scratch "
              "buffers are not in these totals")
    if args.html:
        from .reports.page import plans_html
        write_text(args.html, plans_html([(f"{plan.planner} planner on {plan.target}", plan,
                                            model.main)], Path(args.model).name, model.subgraphs))
        text += f"\nlane chart written to {args.html}"
    from .reports.tables import plan_tables
    emit(args, payload, text, plan_tables)
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
                       flash_budget=getattr(args, "flash", None),
                       arena_region=getattr(args, "arena_region", None),
                       kernels=args.kernels, **common)
    args.target, args.kernels = setup.target, setup.kernels
    return setup


def cmd_fit(args) -> int:
    from .fit import assess
    setup = _board_or_target(args)
    if setup.ram_budget is None:
        raise InputError("fit needs a RAM budget: --ram SIZE, or --board NAME for the board's SRAM")
    _, data = load_model(args.model)
    it = plan_interpreter(args, data)
    with progress_bar(args, f"measuring kernels of {Path(args.model).name} on {args.target}",
                   len(it.nodes)) as progress:
        report = assess(args.model, data, it, setup.ram_budget, setup.flash_budget,
                        measure=not args.no_emulate, progress=progress, layout=setup.ram_layout,
                        tflm=tflm_pricing(args))
    report.board, report.budget_source = setup.board, setup.budget_source
    from .reports.tables import fit_tables
    payload, text = report.as_dict(), report.text()
    if setup.validation is not None:        # a board answer says how far it is known to be right
        payload["validation"] = setup.validation
        text = "\n".join([text, *status_lines(setup.validation)])
    emit(args, payload, text, fit_tables)
    return report.exit_code


# ---- optimize -----------------------------------------------------------------------------
def cmd_optimize(args) -> int:
    from .optimize import check_outputs, optimize
    refuse_directory("-o/--output", args.output)
    refuse_directory("--html", args.html)
    _, data = load_model(args.model)
    resolve_kernels(args)
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
        write_text(args.html, plans_html(
            [("original: file order, TFLM greedy", result.original_plan, read_model(data).main),
             (f"optimized: {result.summary}", result.optimized_plan, read_model(result.data).main)],
            Path(args.model).name))
        lines.append(f"lane charts written to {args.html}")
    emit(args, payload, "\n".join(lines))
    if check is not None and False in (check["micro_rt"], check["oracle"]):
        return EXIT_NO
    return EXIT_OK


def tflm_pricing(args):
    """--runtime tflm: the measured TFLM costs of the answer's core (None: micro_rt's runtime)."""
    from .runtimes import tflm_pricing
    return tflm_pricing(args.runtime, args.target, args.kernels)


# ---- profile ------------------------------------------------------------------------------
def cmd_profile(args) -> int:
    """Cycles per operator; with --board also whether the model fits the board (fit's verdict
    from the same emulated inference): exit 0 only when the profile is complete and it fits,
    1 when it does not fit, 3 when the total or the fit leaves something out."""
    from .fit import FITS, DOES_NOT_FIT, assess
    from .fit_measure import kernel_measurement
    from .profile import emulated_profile, profile_table
    from .reports.tables import profile_tables
    setup = _board_or_target(args)
    if get_target(args.target).is_host:
        raise MicroRtError(f"--target {args.target}: profile emulates a Cortex-M core; choose "
                           "cortex-m0plus, cortex-m4, cortex-m7 or cortex-m33")
    model, data = load_model(args.model)
    measured = None
    tflm = tflm_pricing(args)
    with progress_bar(args, f"emulating {Path(args.model).name} on {setup.where}",
                   len(model.main.operators)) as progress:
        report, it = emulated_profile(data, args.target, setup.clock_hz,
                                      memory_system=setup.mcu_memory_system(),
                                      strict_alignment=args.strict_alignment,
                                      arena_misalign=args.arena_misalign, seed=args.seed,
                                      progress=progress, kernels=args.kernels)
        try:
            if setup.board and report["total_cycles"] is not None:
                measured = kernel_measurement(it)
        finally:
            it.close()
    if tflm is not None:
        report = tflm.profile(report)
    report = {**({"board": setup.board, "board_notes": setup.board_notes} if setup.board else {}),
              **report, "flash_wait_states": setup.flash_wait_states,
              "line_fill_cycles": setup.line_fill_cycles}
    fit = None
    if setup.board:
        report["validation"] = setup.validation
        fit = assess(args.model, data, plan_interpreter(args, data), setup.ram_budget,
                     setup.flash_budget, measured=measured, layout=setup.ram_layout, tflm=tflm)
        fit.board, fit.budget_source = setup.board, setup.budget_source
        report["fit"] = {**fit.as_dict(), "summary": fit.summary()}
    text = profile_table(report)
    head = f"board {setup.board}: " + "; ".join(setup.board_notes[1:]) if setup.board else setup.flash_note
    text = "\n".join([head, text] + ([fit.summary()] if fit else []))
    emit(args, report, text, profile_tables)
    if fit is not None and fit.verdict == DOES_NOT_FIT:
        return EXIT_NO
    if not report["complete"] or (fit is not None and fit.verdict != FITS):
        return EXIT_CANNOT_TELL
    return EXIT_OK


# ---- boards --------------------------------------------------------------------------------
def cmd_boards(args) -> int:
    from .cortexm.boards import list_boards
    from .reports.boards import (boards_exit_code, boards_payload, boards_tables, boards_text,
                                 check_arena_region, check_model, measure_boards)
    _, data = load_model(args.model)        # a bad model is one error, not one per board
    catalog = list_boards(args.board_dir)
    check_arena_region(args.arena_region, catalog)
    check_model(data, [b.core for b in catalog], kernels=args.kernels or default_kernels(catalog[0].core),
                planner=args.planner)
    boards = [b.name for b in catalog]
    rows = measure_boards(args.model, data, boards, kernels=args.kernels, planner=args.planner,
                          seed=args.seed,
                          workers=args.workers, board_dirs=args.board_dir,
                          arena_region=args.arena_region, runtime=args.runtime)
    payload = boards_payload(args.model, rows, args.runtime)
    emit(args, payload, boards_text(payload), boards_tables)
    return boards_exit_code(rows)


# ---- export --------------------------------------------------------------------------------
def cmd_export(args) -> int:
    """The project, or no (exit 1, nothing written) when its image would not fit the board."""
    from .export import SEMIHOSTING_ELF, ImageTooLarge, export_project
    _, data = load_model(args.model)
    try:
        result = export_project(args.model, data, args.board, args.output, board_dirs=args.board_dir,
                                seed=args.seed, kernels=args.kernels)
    except ImageTooLarge as e:
        if args.format == "json":
            print(json.dumps({"model": args.model, "board": args.board, "exported": False,
                              "reason": str(e), "image": e.size.as_dict()}, indent=2))
        print(f"micro-rt: export: {e} (nothing written)", file=sys.stderr)
        return EXIT_NO
    image = result.image
    assert image is not None                # export_project measures it before writing anything
    payload = {"model": args.model, "board": result.board, "core": result.core, "exported": True,
               **kernels_fields(result.kernels, result.core),
               "directory": str(result.directory), "files": result.files,
               "kernel_sources": result.kernel_sources, "plan_entries": result.entries,
               "stack_bytes": result.stack_bytes, "seed": args.seed,
               "profile_cycles": result.profile_cycles,
               "profile_instructions": result.profile_instructions,
               "image": image.as_dict(), "assumed": result.assumed,
               "set_by_startup": result.set_by_startup, "left_to_user": result.left_to_user}
    flash, ram = image.flash, image.ram
    text = "\n".join([
        f"{args.model} -> {result.directory}/ for board {result.board} ({result.core}): "
        f"{result.entries} kernel calls, kernels {kernels_label(result.kernels)} from "
        f"{', '.join(result.kernel_sources)}",
        f"image: flash {flash.used:,} B of {flash.capacity:,} B, RAM {ram.used:,} B of "
        f"{ram.capacity:,} B (as board.ld places it, with the seeded test input)",
        f"build: make -C {result.directory} (arm-none-eabi-gcc); README.txt says how to "
        f"load it and read its output",
        f"profile on the virtual MCU: {result.profile_cycles:,} cycles, "
        f"{result.profile_instructions:,} instructions (seed {args.seed})",
        f"profile assumed {result.assumed}: the start-up sets that flash interface through the "
        "board's flash-control registers (mrt_board.h) and leaves the clock to you (the core "
        "runs at its reset clock); README.txt names the vendor calls and how to load the image",
        f"emulate: make -C {result.directory} semihosting, then micro-rt emulate "
        f"{result.directory}/{SEMIHOSTING_ELF} --board {result.board}"])
    emit(args, payload, text)
    return EXIT_OK


# ---- report / compare ---------------------------------------------------------------------
def _report_setup(args, board: Optional[str], target: Optional[str]):
    from .run_setup import make_setup
    return make_setup(board=board, target=target, kernels=args.kernels, planner=args.planner,
                      clock_hz=args.clock, flash_wait_states=args.flash_wait_states,
                      ram_budget=args.ram, flash_budget=args.flash, cycles=not args.no_cycles,
                      strict_alignment=args.strict_alignment, seed=args.seed,
                      optimize_seconds=getattr(args, "optimize_seconds", 0.0),
                      arena_region=getattr(args, "arena_region", None),
                      runtime=getattr(args, "runtime", "micro_rt"))


def cmd_report(args) -> int:
    from .reports.model_explorer import write_node_data
    from .reports.model_report import gather, report_text
    from .reports.page import report_page
    from .reports.tables import report_tables
    refuse_directory("-o/--output", args.output)
    model, data = load_model(args.model)
    setup = _report_setup(args, args.board, args.target)
    with progress_bar(args, f"emulating {Path(args.model).name} on {setup.target}",
                   len(model.main.operators)) as progress:
        report = gather(args.model, data, setup, progress)
    lines = [report_text(report)]
    if args.output:
        page = report_page(report, model.main)
        write_text(args.output, page)
        lines.append(f"report written to {args.output} ({len(page.encode()):,} B)")
    if args.model_explorer:
        paths = write_node_data(args.model_explorer, args.model, report.operators,
                                report.cycles_complete)
        lines.append(f"Model Explorer node data written to {args.model_explorer}: "
                     f"model-explorer {args.model} --node_data_paths="
                     + ",".join(str(p) for p in paths))
    emit(args, report.as_dict(), "\n".join(lines), lambda _: report_tables(report))
    return report.exit_code


def cmd_compare(args) -> int:
    from .reports.compare import Side, compare_dict, compare_page, compare_tables, compare_text
    from .reports.model_report import gather
    refuse_directory("--html", args.html)
    sides = []
    for path, board, target in ((args.model, args.board, args.target),
                                (args.model_b, args.board_b or (None if args.target_b else args.board),
                                 args.target_b or (None if args.board_b else args.target))):
        model, data = load_model(path)
        setup = _report_setup(args, board, target)
        with progress_bar(args, f"emulating {Path(path).name} on {setup.target}",
                       len(model.main.operators)) as progress:
            report = gather(path, data, setup, progress)
        label = f"{path} on {f'board {setup.board}' if setup.board else setup.target}"
        sides.append(Side(label, report, model.main))
    a, b = sides
    text = compare_text(a, b)
    if args.html:
        write_text(args.html, compare_page(a, b))
        text += f"\ncomparison written to {args.html}"
    emit(args, compare_dict(a, b), text, lambda _: compare_tables(a, b))
    return EXIT_OK


# ---- entry point ------------------------------------------------------------------------
COMMANDS = {"info": cmd_info, "plan": cmd_plan, "fit": cmd_fit, "run": cmd_run, "profile": cmd_profile,
            "optimize": cmd_optimize, "boards": cmd_boards, "export": cmd_export, "report": cmd_report,
            "compare": cmd_compare, "emulate": cmd_emulate}


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
